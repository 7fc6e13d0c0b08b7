"""Pure pieces of the AWS training components: subnet carving, EFA interfaces, policies, cloud-init."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime, timedelta

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from accelstack.components.aws.network import carve_training_subnets
from accelstack.components.aws.node_platform import FSX_LUSTRE_CLIENT_INSTALL
from accelstack.components.aws.storage import (
    artifact_reader_statements,
    bucket_policy_document,
    dra_paths_overlap,
    kms_key_policy,
    lustre_relative_path,
    parse_s3_uri,
)
from accelstack.components.aws.training import (
    NetworkInterface,
    capacity_block_plan,
    efa_network_interfaces,
    instance_policy_document,
    market_options,
    needs_placement_group,
)
from accelstack.components.recipes.training import lustre_client_cloud_config
from accelstack.components.slurm import lustre_source


@st.composite
def vpc_cidrs(draw) -> str:
    prefix = draw(st.integers(min_value=16, max_value=27))
    address = draw(st.integers(min_value=0, max_value=2**32 - 1))
    return str(ipaddress.ip_network((address, prefix), strict=False))


@given(vpc_cidrs())
def test_carved_subnets_fit_the_vpc_and_never_overlap(cidr: str) -> None:
    vpc = ipaddress.ip_network(cidr)
    subnets = carve_training_subnets(cidr)
    cluster, public = ipaddress.ip_network(subnets.cluster), ipaddress.ip_network(subnets.public)
    assert cluster.subnet_of(vpc) and public.subnet_of(vpc)
    assert not cluster.overlaps(public)
    assert cluster.prefixlen == max(20, vpc.prefixlen + 1)
    assert public.prefixlen == 28  # AWS's smallest subnet


def test_default_vpc_gets_a_slash_20_cluster_subnet() -> None:
    subnets = carve_training_subnets("10.20.0.0/16")
    assert subnets.cluster == "10.20.0.0/20"
    assert subnets.public == "10.20.255.240/28"


def test_vpc_too_small_for_two_subnets_names_the_config_path() -> None:
    with pytest.raises(ValueError, match=r"training\.network\.vpcCidr"):
        carve_training_subnets("10.0.0.0/28")


@pytest.mark.parametrize(("instance_type", "efa"), [("p5.48xlarge", 32), ("p4d.24xlarge", 4)])
def test_every_network_card_gets_one_efa_interface(instance_type: str, efa: int) -> None:
    interfaces = efa_network_interfaces(instance_type)
    efa_cards = [i.network_card_index for i in interfaces if i.interface_type]
    assert sorted(efa_cards) == list(range(efa))  # one EFA device per card, every card
    primary, *others = interfaces
    assert (primary.network_card_index, primary.device_index, primary.interface_type) == (0, 0, None)
    assert [(i.network_card_index, i.device_index) for i in others] == [(0, 1)] + [(c, 0) for c in range(1, efa)]
    assert all(i.interface_type == "efa-only" for i in others)


@pytest.mark.parametrize("instance_type", ["p5.48xlarge", "g6e.12xlarge"])
def test_one_node_gets_no_efa(instance_type: str) -> None:
    """EFA only carries traffic between nodes; a one-node stack gets one plain interface."""
    assert efa_network_interfaces(instance_type, 1) == [NetworkInterface(0, 0, None)]


def test_one_card_instance_keeps_the_single_efa_interface() -> None:
    assert efa_network_interfaces("g6e.12xlarge", 4) == [NetworkInterface(0, 0, "efa")]


@pytest.mark.parametrize(
    ("count", "capacity", "expected"),
    [
        (4, "on-demand", True),
        (4, "spot", True),
        (1, "on-demand", False),
        (1, "spot", False),
        (4, "capacity-block", False),
    ],
)
def test_placement_group_only_where_it_helps(count: int, capacity: str, expected: bool) -> None:
    assert needs_placement_group(count, capacity) is expected


BLOCK_START = datetime(2027, 3, 1, 11, 30, tzinfo=UTC)
BLOCK_END = datetime(2027, 3, 8, 11, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("now", "size", "out", "scale_in"),
    [
        # Before the block: zero now, out at the start, in 40 min before the end.
        (BLOCK_START - timedelta(days=2), 0, BLOCK_START, BLOCK_END - timedelta(minutes=40)),
        # Minutes before the start: too late to schedule, launch now (EC2 retries until the start).
        (BLOCK_START - timedelta(minutes=5), 8, None, BLOCK_END - timedelta(minutes=40)),
        (BLOCK_START + timedelta(days=1), 8, None, BLOCK_END - timedelta(minutes=40)),
        # Within the last 50 minutes, or after: zero, nothing scheduled.
        (BLOCK_END - timedelta(minutes=45), 0, None, None),
        (BLOCK_END + timedelta(days=1), 0, None, None),
    ],
)
def test_capacity_block_plan(now, size, out, scale_in) -> None:
    plan = capacity_block_plan(BLOCK_START, BLOCK_END, now, 8)
    assert (plan.size_now, plan.scale_out_at, plan.scale_in_at) == (size, out, scale_in)
    if plan.scale_in_at is not None:
        # The AWS rule the lead encodes: at zero more than 30 minutes before the end.
        assert BLOCK_END - plan.scale_in_at > timedelta(minutes=30)


def test_instance_without_efa_gets_one_plain_interface() -> None:
    [interface] = efa_network_interfaces("g5.xlarge")
    assert interface.interface_type is None and interface.device_index == 0


def test_unknown_instance_type_lists_allowed_ones() -> None:
    with pytest.raises(ValueError, match=r"training\.nodes\.instanceType.*p5\.48xlarge"):
        efa_network_interfaces("p9.mega")


def _s3_statements(document: dict) -> list[dict]:
    def actions(statement: dict) -> list[str]:
        value = statement["Action"]
        return [value] if isinstance(value, str) else value

    return [s for s in document["Statement"] if any(a.startswith("s3:") for a in actions(s))]


def test_instance_policy_is_scoped_to_stack_buckets_and_never_deletes() -> None:
    document = instance_policy_document("arn:aws:s3:::d", "arn:aws:s3:::c", "arn:aws:kms:us-east-1:1:key/k")
    for statement in document["Statement"]:
        resources = statement["Resource"]
        assert "*" not in resources
        assert all(r.startswith(("arn:aws:s3:::d", "arn:aws:s3:::c", "arn:aws:kms:")) for r in resources)
        assert "s3:*" not in statement["Action"]
        assert "s3:DeleteObject" not in statement["Action"]
    writes = [s for s in _s3_statements(document) if "s3:PutObject" in s["Action"]]
    assert [w["Resource"] for w in writes] == [["arn:aws:s3:::c/*"]]  # datasets are read-only


def test_instance_policy_without_checkpoints_grants_no_writes() -> None:
    document = instance_policy_document("arn:aws:s3:::d", None, "arn:aws:kms:us-east-1:1:key/k")
    assert not any("s3:PutObject" in s["Action"] for s in document["Statement"])


def test_artifact_readers_get_prefix_limited_read_only_access() -> None:
    statements = artifact_reader_statements("arn:aws:s3:::ckpt", "models/", ["222222222222"])
    assert {a for s in statements for a in [s["Action"]]} == {"s3:GetObject", "s3:ListBucket"}
    get, listing = statements
    assert get["Resource"] == "arn:aws:s3:::ckpt/models/*"
    assert get["Principal"] == {"AWS": ["arn:aws:iam::222222222222:root"]}
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["models/*"]}}
    assert artifact_reader_statements("arn:aws:s3:::ckpt", "models/", []) == []


def test_key_policy_lets_readers_decrypt_only_through_s3() -> None:
    policy = kms_key_policy("111111111111", "us-east-1", ["222222222222"])
    [reader] = [s for s in policy["Statement"] if s["Sid"] == "ArtifactReadersDecryptThroughS3"]
    assert reader["Action"] == ["kms:Decrypt", "kms:DescribeKey"]
    assert reader["Condition"] == {"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}}
    wide = [s for s in policy["Statement"] if s["Principal"] == {"AWS": "*"}]
    assert wide and all(s["Condition"]["StringEquals"]["kms:CallerAccount"] == "111111111111" for s in wide)
    # Only service-linked roles (Auto Scaling's for EBS, FSx's S3-access role): no ordinary principal
    # of the account decrypts without a KMS grant in its own IAM policy.
    assert all(
        s["Condition"]["ArnLike"] == {"aws:PrincipalArn": "arn:aws:iam::111111111111:role/aws-service-role/*"}
        for s in wide
    )


def test_bucket_policy_always_denies_plain_http() -> None:
    import json

    document = json.loads(bucket_policy_document("arn:aws:s3:::b", [{"Sid": "x"}]))
    deny = document["Statement"][0]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert deny["Resource"] == ["arn:aws:s3:::b", "arn:aws:s3:::b/*"]
    assert document["Statement"][1] == {"Sid": "x"}


@pytest.mark.parametrize(
    ("uri", "expected"),
    [("s3://bucket", ("bucket", "")), ("s3://bucket/a/b/", ("bucket", "a/b"))],
)
def test_parse_s3_uri(uri: str, expected: tuple[str, str]) -> None:
    assert parse_s3_uri(uri, "x") == expected


def test_non_s3_uri_names_the_config_path() -> None:
    with pytest.raises(ValueError, match=r"training\.storage\.datasets\.uri"):
        parse_s3_uri("gs://bucket", "training.storage.datasets.uri")


def test_checkpoint_path_is_made_relative_to_the_lustre_mount() -> None:
    assert lustre_relative_path("/fsx/checkpoints", "/fsx", "p") == "/checkpoints"
    assert lustre_relative_path("/fsx/a/b/", "/fsx/", "p") == "/a/b"
    with pytest.raises(ValueError, match="under the Lustre mount"):
        lustre_relative_path("/scratch/ckpt", "/fsx", "training.storage.checkpoints.path")
    with pytest.raises(ValueError, match="Lustre root"):
        lustre_relative_path("/fsx", "/fsx", "training.storage.checkpoints.path")


def test_dra_paths_overlap_when_nested() -> None:
    assert dra_paths_overlap("/datasets", "/datasets/ckpt")
    assert dra_paths_overlap("/data", "/data")
    assert not dra_paths_overlap("/data", "/datasets")


def test_lustre_cloud_config_mounts_with_flock_and_noatime() -> None:
    text = lustre_client_cloud_config(
        lustre_source("fs-1.fsx.us-east-1.amazonaws.com", "abcdefgh"), "/fsx", FSX_LUSTRE_CLIENT_INSTALL
    )
    assert text.startswith("#cloud-config\n")
    config = yaml.safe_load(text)
    [fstab] = config["write_files"]
    assert fstab["path"] == "/etc/fstab" and fstab["append"] is True
    source, path, fstype, options, *_ = fstab["content"].split()
    assert (source, path, fstype) == ("fs-1.fsx.us-east-1.amazonaws.com@tcp:/abcdefgh", "/fsx", "lustre")
    assert {"noatime", "flock"} <= set(options.split(","))
    assert config["runcmd"][-1] == ["mount", "/fsx"]


def test_capacity_block_needs_a_reservation() -> None:
    with pytest.raises(ValueError, match=r"training\.nodes\.reservationId"):
        market_options("capacity-block", None)
    market, reservation = market_options("capacity-block", "cr-0123")
    assert market.market_type == "capacity-block"
    assert reservation.capacity_reservation_target.capacity_reservation_id == "cr-0123"
    assert market_options("on-demand", None) == (None, None)


@pytest.mark.integration
def test_lustre_cloud_config_passes_cloud_init_schema(tmp_path) -> None:
    import shutil
    import subprocess

    if shutil.which("cloud-init") is None:
        pytest.skip("cloud-init is not installed")
    path = tmp_path / "user-data"
    path.write_text(
        lustre_client_cloud_config(
            lustre_source("fs-1.fsx.us-east-1.amazonaws.com", "abcdefgh"), "/fsx", FSX_LUSTRE_CLIENT_INSTALL
        )
    )
    result = subprocess.run(["cloud-init", "schema", "-c", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


# --- checkpoint version retention: spec bounds and the short-window warning --------------------


def _training_raw(**checkpoints):
    from pathlib import Path

    from accelstack.spec.loader import read_stack_file

    raw = read_stack_file(Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.aws-training.yaml")
    raw["training"]["storage"]["checkpoints"].update(checkpoints)
    return raw


@pytest.mark.parametrize("days", [0, -1, 40_000])
def test_noncurrent_version_days_out_of_range_is_an_error_naming_the_path(days: int) -> None:
    from accelstack.spec import SpecError, parse_spec

    with pytest.raises(SpecError, match=r"training\.storage\.checkpoints\.noncurrentVersionDays"):
        parse_spec(_training_raw(noncurrentVersionDays=days), "aws-training")


@pytest.mark.parametrize(("days", "warned"), [(1, True), (6, True), (7, False), (30, False)])
def test_short_noncurrent_version_window_warns(days: int, warned: bool) -> None:
    from accelstack.spec import parse_spec
    from accelstack.spec.validators import checkpoint_versions_kept_long_enough

    spec = parse_spec(_training_raw(noncurrentVersionDays=days), "aws-training")
    problems = list(checkpoint_versions_kept_long_enough(spec))
    assert bool(problems) == warned
    assert all(
        p.path == "training.storage.checkpoints.noncurrentVersionDays" and p.level.name == "WARNING" for p in problems
    )


def test_the_short_version_window_warning_agrees_with_the_guardrails_pack_default() -> None:
    from accelstack.policies.guardrails.rules import CONFIG
    from accelstack.spec.validators import NONCURRENT_DAYS_SHORT

    assert CONFIG["minRetentionDays"]["default"] == NONCURRENT_DAYS_SHORT
