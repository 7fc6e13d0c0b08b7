"""`accelstack cost`: what each column holds, jobs priced by their hours, the serving profile and
volumes, camelCase JSON, and the assumptions beside the figures. Numbers worked by hand from
accelstack.clouds.aws.prices (us-east-1): g6e.12xlarge $10.49264/h, 60% spot discount; g6e.xlarge
$1.861/h; m7i.xlarge $0.2016/h; gp3 $0.08/GB-month, $0.005 per IOPS above 3000, $0.04 per MiB/s above 125.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.examples import WORKLOAD_EXAMPLES

REPO = Path(__file__).resolve().parents[2]


def cost(*args: str):
    result = CliRunner().invoke(app, ["cost", "--project-dir", str(REPO), *args], env={"COLUMNS": "400"})
    return result


def cost_json(*args: str) -> dict:
    result = cost(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys(v)}
    return set()


def test_finetune_is_priced_by_its_job_hours_from_the_spec():
    """trainingTokens 2e8, LoRA: 4 x 8.03e9 x 2e8 = 6.424e18 FLOPs / (1 x 4 x 362e12 x 0.4 = 5.792e14 FLOP/s)
    = 11,091 s = 3.08 h, as `advise` estimates. Spot: 10.49264 x 0.4 = $4.197/h x 3.08 h = $12.9 compute."""
    stack = cost_json("aws-finetune")["stacks"]["aws-finetune"]
    assert stack["computeHours"] == pytest.approx(3.08, abs=0.01)
    assert stack["computeHoursSource"].startswith("training.model.trainingTokens: 4 x 8.03 B params x 2e+08 tokens")
    assert stack["training"]["computeUsd"] == pytest.approx(3.08 * 10.49264 * 0.4, abs=0.1)
    assert stack["totalUsd"] < 20
    # --hours wins: 10 h x $4.197 = $42.0 compute.
    assert cost_json("aws-finetune", "--hours", "10")["stacks"]["aws-finetune"]["training"]["computeUsd"] == pytest.approx(
        41.97, abs=0.1)  # fmt: skip


def test_without_a_job_length_a_month_is_priced_and_said_so():
    stack = cost_json("aws-training")["stacks"]["aws-training"]
    assert stack["computeHours"] == 730 and "a month at 24x7 (no job length" in stack["computeHoursSource"]


def test_serving_month_is_compute_plus_running_and_warm_pool_volumes():
    """aws-serving 1..8 replicas: profile ceil(8 x share) -> 118 replica-hours/day; compute 118 x 730/24 x
    $1.861 = $6,679.4. Root volume 200 GiB gp3, 4000 IOPS, 1000 MiB/s: 16 + 1000 x 0.005 + 875 x 0.04 =
    $56/month; running 118/24 x 56 = $275.3; warm pool 6 x 56 = $336. Month = $7,290.7."""
    s = cost_json("aws-serving")["stacks"]["aws-serving"]["serving"]
    assert s["replicaHoursPerDay"] == 118 == sum(s["replicasByHour"]) and len(s["replicasByHour"]) == 24
    assert s["computeMonthlyUsd"] == pytest.approx(118 * 730 / 24 * 1.861, abs=0.01)
    assert s["volumeMonthlyUsd"] == 56.0 and s["warmPool"] == 6 and s["warmPoolMonthlyUsd"] == 336.0
    assert s["runningVolumesMonthlyUsd"] == pytest.approx(118 / 24 * 56, abs=0.01)
    assert s["monthlyUsd"] == pytest.approx(6679.43 + 275.33 + 336, abs=0.05)


def test_json_keys_are_all_camel_case_and_unpriced_items_are_listed():
    data = cost_json(*WORKLOAD_EXAMPLES)
    snake = sorted(k for k in keys(data) if "_" in k)
    assert snake == []
    assert {"NAT gateway (hourly + per GB)", "ALB (hourly + LCU)", "WAF (web ACL, rules, requests)", "SQS requests"} <= set(
        data["notPriced"])  # fmt: skip


def test_table_headers_legend_and_assumptions_beside_the_figures():
    result = cost(*WORKLOAD_EXAMPLES)
    assert result.exit_code == 0, result.output
    text = re.sub(r"\s+", " ", result.output)
    for header in ("job hours (wall)", "assumptions", "compute", "Lustre + object store", "head node", "job total", "per month 24x7",
                   "replica-hours per day", "compute/month", "volumes/month", "lifetime"):  # fmt: skip
        assert header in text
    assert (
        "job total = compute (nodes x price x wall hours) + Lustre + object store (S3, Blob, GCS) + head node" in text
    )
    finetune = cost_json("aws-finetune")["stacks"]["aws-finetune"]["assumptions"]  # aws-finetune is spot
    assert "spot interruptions 20%/month per node and 60% off on-demand" in finetune
    # The table folds long cells across lines; the same text is in --json "assumptions".
    training = cost_json("aws-training")["stacks"]["aws-training"]["assumptions"]
    assert "job MTBF 1584 h (node MTBF 6335 h)" in training and "(1172 MB/s: Lustre PERSISTENT_2 4800 GiB" in training
    assert "sum of replicas by hour 00-23 [2 2 2 2 2 2 3 4 6 7 8 8 8 8 8 8 7 6 6 5 4 4 3 3]" in text
    assert "not priced: NAT gateway" in text and "1 node x g6e.12xlarge" in text and "1 nodes" not in text


def test_a_stated_load_sets_the_peak_of_the_serving_profile():
    """5 req/s needs 6 replicas (tests/planner/test_serving_load.py: ceil(5 / 0.842) = ceil(5.94)), within 1..8: the
    profile peaks at 6. ceil(6 x shares) = [2 2 2 2 2 2 3 3 5 6 6 6 6 6 6 6 6 5 4 4 3 3 3 2] = 95 replica-hours/day
    (118 at max 8)."""
    load = "serving.load={requestsPerSecond: 5, inputTokens: 1000, outputTokens: 250}"
    stack = cost_json("aws-serving", "--set", load)["stacks"]["aws-serving"]
    by_hour = [2, 2, 2, 2, 2, 2, 3, 3, 5, 6, 6, 6, 6, 6, 6, 6, 6, 5, 4, 4, 3, 3, 3, 2]
    assert stack["serving"]["replicasByHour"] == by_hour
    assert stack["serving"]["replicaHoursPerDay"] == 95 and stack["profileBasis"].endswith(
        "peak 6 = replicas serving.load needs within min..max"
    )
    assert stack["load"]["replicas"] == 6


@pytest.mark.parametrize(
    ("stack", "volume"),
    [
        ("aws-serving", "EBS gp3 200 GiB, 4000 IOPS, 1000 MiB/s"),
        ("gcp-serving", "pd-balanced "),
        ("azure-serving", "Premium SSD "),
    ],
)
def test_the_root_volume_is_named_as_its_cloud_sells_it(stack, volume):
    """IOPS and throughput are said only where the cloud bills them apart (gp3); no AWS word on another cloud."""
    root = cost_json(stack)["stacks"][stack]["rootVolume"]
    assert root.startswith(volume), root
    if not stack.startswith("aws"):
        assert "gp3" not in root and "IOPS" not in root


def test_a_serving_stacks_footer_names_only_what_it_uses():
    """Friction 30: a GCP serving stack's footer listed Managed Lustre, Filestore and a4 as not priced."""
    serving = cost_json("gcp-serving")
    listed = " ".join(serving["notPriced"])
    assert "Pub/Sub" in listed and "Cloud Armor" in listed and "Cloud NAT" in listed
    assert "Managed Lustre" not in listed and "Filestore" not in listed and "a4-highgpu-8g" not in listed
    assert serving["stacks"]["gcp-serving"]["notPriced"] == serving["notPriced"]
    text = re.sub(r"\s+", " ", cost("gcp-serving").output)
    assert "not priced: external Application Load Balancer" in text and "Managed Lustre" not in text


@pytest.mark.parametrize(
    ("stack", "present", "absent"),
    [
        ("gcp-training", "Managed Lustre", "Pub/Sub (throughput)"),
        ("azure-training", "Azure Managed Lustre", "Service Bus"),
        ("azure-serving", "Service Bus", "Azure Managed Lustre"),
        ("aws-training", "NAT gateway", "SQS requests"),
        ("aws-serving", "SQS requests", "FSx"),
        ("oci-training", "File Storage with Lustre", "BM.GPU.H200.8"),
    ],
)
def test_each_stack_lists_the_lines_of_its_own_workload(stack: str, present: str, absent: str) -> None:
    listed = cost_json(stack)["stacks"][stack]["notPriced"]
    assert any(present in line for line in listed) and not any(absent in line for line in listed), listed


def test_a_machine_with_no_price_is_listed_only_for_the_stack_running_it() -> None:
    from accelstack.clouds import registry
    from accelstack.clouds.not_priced import not_priced_for

    lines = registry.get("gcp").prices.not_priced
    assert any(line.startswith("a4-highgpu-8g") for line in not_priced_for(lines, "training", ["a4-highgpu-8g"]))
    assert not any(line.startswith("a4-highgpu-8g") for line in not_priced_for(lines, "training", ["a3-megagpu-8g"]))
