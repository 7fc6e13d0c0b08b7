"""`accelstack diff`: what `pulumi up` would do to a deployed shipped stack after a realistic edit."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.engine.capture import Registration
from accelstack.engine.replacement import CREATE_FIRST, DELETE_FIRST, plan_changes

REPO = Path(__file__).resolve().parents[2]
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
BUCKET = "aws:s3/bucket:Bucket"
GROUP = "aws:autoscaling/group:Group"


@cache
def diff(stack: str, *edits: str):
    """(exit code, the `--json -` document or None, stdout, stderr) of `accelstack diff STACK --set ...`."""
    args = ["diff", stack, "--project-dir", str(REPO), "--json", "-"]
    for edit in edits:
        args += ["--set", edit]
    result = CliRunner().invoke(app, args)
    try:
        document = json.loads(result.stdout)
    except json.JSONDecodeError:
        document = None
    return result.exit_code, document, result.stdout, result.stderr


def by_name(document: dict, type_token: str) -> dict[str, dict]:
    return {change["name"]: change for change in document["changes"] if change["type"] == type_token}


def test_more_nodes_update_the_group_in_place_and_leave_data_alone() -> None:
    code, document, _, stderr = diff("aws-training", "training.nodes.count=8")
    assert code == 0, stderr
    assert not document["blocked"]
    group = by_name(document, GROUP)["aws-training-nodes"]
    assert group["action"] == "update"
    assert group["before"]["desiredCapacity"] == 4 and group["after"]["desiredCapacity"] == 8
    touched = {change["type"] for change in document["changes"]}
    assert not touched & {LUSTRE, BUCKET, "aws:kms/key:Key", "aws:ebs/volume:Volume"}
    assert "to update" in stderr  # with --json -, the lines go to stderr and stdout is only the document
    # As docs/deploying.md says: slurm.conf (MaxNodeCount) changes in the SSM parameter, updated in place; the head's user
    # data does not, so the controller is not rebuilt (it applies the parameter with `scontrol reconfigure`).
    assert "aws-training-head" not in by_name(document, "aws:ec2/instance:Instance")
    config = by_name(document, "aws:ssm/parameter:Parameter")["aws-training-slurm-config"]
    assert config["action"] == "update" and config["changed"] == ["value"]
    assert document["summary"]["replace"] == 0


def test_persistent_2_to_1_replaces_the_protected_lustre_and_is_blocked() -> None:
    code, document, _, stderr = diff(
        "aws-training",
        "training.storage.lustre.tier=PERSISTENT_1",
        "training.storage.lustre.throughputPerTiB=200",
    )
    assert code == 1
    assert document["blocked"]
    lustre = by_name(document, LUSTRE)["aws-training-storage-lustre"]
    assert lustre["action"] == "replace" and lustre["protect"] and lustre["blocked"]
    assert "deploymentType" in lustre["replacing"]
    assert "perUnitStorageThroughput" not in lustre["replacing"]  # the tier changes in place
    assert "BLOCKED: aws-training-storage-lustre" in stderr and "is protected and would be replaced" in stderr


def test_a_new_vpc_cidr_reaches_lustre_through_its_subnet() -> None:
    """The replacement cascades: new VPC -> new subnet (new id) -> Lustre's subnetIds change -> replace."""
    code, document, _, _ = diff("aws-training", "training.network.vpcCidr=10.40.0.0/16")
    assert code == 1
    assert by_name(document, "aws:ec2/vpc:Vpc")["aws-training-net-vpc"]["action"] == "replace"
    assert by_name(document, "aws:ec2/subnet:Subnet")["aws-training-net-cluster"]["order"] == CREATE_FIRST
    lustre = by_name(document, LUSTRE)["aws-training-storage-lustre"]
    assert lustre["blocked"] and "subnetIds" in lustre["replacing"]


def test_renaming_the_checkpoint_bucket_is_a_delete_first_replacement_and_blocked() -> None:
    code, document, _, _ = diff("aws-training", "training.storage.checkpoints.uri=s3://acme-train-checkpoints-v2")
    assert code == 1
    buckets = by_name(document, BUCKET)
    [renamed] = [b for b in buckets.values() if b["action"] == "replace"]
    # The program names the bucket itself, so the new one cannot exist beside the old one.
    assert renamed["order"] == DELETE_FIRST and renamed["blocked"]
    assert renamed["after"]["bucket"] == "acme-train-checkpoints-v2"


def test_serving_replica_bounds_are_an_update() -> None:
    code, document, _, stderr = diff("aws-serving", "serving.replicas.min=2", "serving.replicas.max=32")
    assert code == 0, stderr
    assert document["summary"]["replace"] == 0 and document["summary"]["delete"] == 0
    group = next(change for change in document["changes"] if change["type"] == GROUP)
    assert group["action"] == "update" and group["after"]["maxSize"] == 32


def test_edited_file_is_compared_with_the_stack_file(tmp_path, runner) -> None:
    text = (REPO / "stacks" / "Pulumi.aws-finetune.yaml").read_text()
    edited = tmp_path / "Pulumi.aws-finetune.yaml"
    edited.write_text(text.replace("capacity: spot", "capacity: on-demand"))
    assert edited.read_text() != text
    result = runner.invoke(app, ["diff", "aws-finetune", "--file", str(edited), "--project-dir", str(REPO)])
    assert result.exit_code == 0, result.output
    assert "aws-finetune: update" in result.stdout
    assert re.search(
        r"update +aws-finetune-nodes  aws:ec2/launchTemplate:LaunchTemplate  .*instanceMarketOptions", result.stdout
    )


def test_no_edit_is_a_usage_error(runner) -> None:
    result = runner.invoke(app, ["diff", "aws-training", "--project-dir", str(REPO)])
    assert result.exit_code == 2
    assert "nothing to compare" in result.stderr
    assert "Traceback" not in result.output


def test_an_invalid_edit_names_the_edited_version_and_runs_nothing(runner) -> None:
    result = runner.invoke(app, ["diff", "aws-training", "--set", "training.nodes.count=0", "--project-dir", str(REPO)])
    assert result.exit_code == 2
    assert result.stderr.startswith("aws-training (edited): training.nodes.count")
    assert "to update" not in result.output and "Traceback" not in result.output


def _registration(name: str, type_token: str, inputs: dict, **options) -> Registration:
    provider = options.pop("provider", "urn:pulumi:providers:aws::prov::prov-id")
    return Registration(
        urn=f"urn:{type_token}::{name}",
        type=type_token,
        name=name,
        custom=True,
        parent="",
        provider=provider,
        dependencies=[],
        property_dependencies={},
        protect=options.get("protect", False),
        retain_on_delete=False,
        delete_before_replace=options.get("delete_before_replace", False),
        ignore_changes=options.get("ignore", []),
        additional_secret_outputs=[],
        inputs=inputs,
    )


@pytest.mark.parametrize(
    ("type_token", "before", "after", "action"),
    [
        (LUSTRE, {"storageCapacity": 4800}, {"storageCapacity": 9600}, "update"),  # grows in place
        (LUSTRE, {"storageCapacity": 4800}, {"storageCapacity": 2400}, "replace"),  # a shrink replaces
        (LUSTRE, {"perUnitStorageThroughput": 250}, {"perUnitStorageThroughput": 500}, "update"),
        ("aws:ec2/instance:Instance", {"userData": "a"}, {"userData": "b"}, "update"),  # stop/start
        (
            "aws:ec2/instance:Instance",
            {"userData": "a", "userDataReplaceOnChange": True},
            {"userData": "b", "userDataReplaceOnChange": True},
            "replace",
        ),
        ("aws:ec2/subnet:Subnet", {"availabilityZone": "us-east-1a"}, {"availabilityZone": "us-east-1b"}, "replace"),
        ("aws:kms/key:Key", {"description": "a"}, {"description": "b"}, "update"),
        ("aws:kms/key:Key", {"keyUsage": "ENCRYPT_DECRYPT"}, {"keyUsage": "SIGN_VERIFY"}, "replace"),
    ],
)
def test_replace_forcing_rules(type_token: str, before: dict, after: dict, action: str) -> None:
    [change] = plan_changes([_registration("r", type_token, before)], [_registration("r", type_token, after)])
    assert change.action == action


def test_an_ignored_property_changes_nothing() -> None:
    subnet = "aws:ec2/subnet:Subnet"
    old = _registration("s", subnet, {"availabilityZone": "us-east-1a"})
    new = _registration("s", subnet, {"availabilityZone": "us-east-1b"}, ignore=["availabilityZone"])
    assert plan_changes([old], [new])[0].action == "same"


def test_a_replaced_provider_replaces_what_it_manages() -> None:
    provider_type = "pulumi:providers:aws"
    old_provider = _registration("prov", provider_type, {"region": "us-east-1"}, provider="")
    new_provider = _registration("prov", provider_type, {"region": "us-west-2"}, provider="")
    old_key = _registration("key", "aws:kms/key:Key", {"description": "a"}, protect=True)
    new_key = _registration("key", "aws:kms/key:Key", {"description": "a"}, protect=True)
    changes = {c.name: c for c in plan_changes([old_provider, old_key], [new_provider, new_key])}
    assert changes["prov"].action == "replace"
    assert changes["key"].action == "replace" and changes["key"].replacing == ["provider"] and changes["key"].blocked


def test_replacement_order() -> None:
    group = GROUP
    named = plan_changes([_registration("g", group, {"name": "a"})], [_registration("g", group, {"name": "b"})])[0]
    assert named.order == DELETE_FIRST  # the program set the name itself
    volume = "aws:ebs/volume:Volume"
    auto = plan_changes(
        [_registration("v", volume, {"availabilityZone": "a"})], [_registration("v", volume, {"availabilityZone": "b"})]
    )[0]
    assert auto.order == CREATE_FIRST
    forced = plan_changes(
        [_registration("v", volume, {"availabilityZone": "a"})],
        [_registration("v", volume, {"availabilityZone": "b"}, delete_before_replace=True)],
    )[0]
    assert forced.order == DELETE_FIRST


def test_created_and_deleted_resources() -> None:
    bucket = _registration("b", BUCKET, {"bucket": "x"}, protect=True)
    queue = _registration("q", "aws:sqs/queue:Queue", {})
    changes = {c.name: c for c in plan_changes([bucket], [queue])}
    assert changes["b"].action == "delete" and changes["b"].blocked
    assert changes["q"].action == "create" and not changes["q"].blocked


def test_secrets_are_redacted_in_the_document() -> None:
    secret_version = "aws:secretsmanager/secretVersion:SecretVersion"
    sig = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}
    old = _registration("s", secret_version, {"secretBinary": {**sig, "value": "old-key"}})
    new = _registration("s", secret_version, {"secretBinary": {**sig, "value": "new-key"}})
    [change] = plan_changes([old], [new])
    text = json.dumps(change.to_json())
    assert change.action == "replace"
    assert "old-key" not in text and "new-key" not in text


# A new model version on every cloud: the replicas' template changes, and the diff says what happens to the replicas
# already serving (the AWS instance refresh and the proactive MIG update replace them; on Azure the user data is in
# the scale set's model, which a new scale set replaces, create-first).
NEW_WEIGHTS = {
    "aws-serving": ("s3://acme-train-checkpoints/models/llama-3.1-8b-instruct-v2/", "replaced by instance refresh"),
    "gcp-serving": ("gs://acme-train-checkpoints/models/llama-3.1-8b-instruct-v2/", "replaced by MIG update"),
    "azure-serving": (
        "https://acmetrainckpts.blob.core.windows.net/checkpoints/models/llama-3.1-8b-instruct-v2",
        "1 instance replaced by a new scale set (create-first) (virtualMachineProfile changed)",
    ),
}


@pytest.mark.parametrize("stack", sorted(NEW_WEIGHTS))
def test_a_new_model_says_what_happens_to_the_running_replicas(stack: str) -> None:
    uri, outcome = NEW_WEIGHTS[stack]
    code, document, _, stderr = diff(stack, f"serving.model.weightsUri={uri}")
    assert code == 0, stderr
    (rollout,) = document["rollouts"]
    assert rollout["group"] == f"{stack}-replicas"
    line = next(line for line in stderr.splitlines() if line.startswith(f"{stack}: rolls") or " keeps " in line)
    assert outcome in line, line
    assert document["baseline"] == "stack file"


def test_updates_that_only_carry_the_config_digest_fold_into_one_line() -> None:
    code, document, _, stderr = diff("aws-training", "training.storage.lustre.capacityGiB=9600")
    assert code == 0, stderr
    folded = [change["name"] for change in document["changes"] if change.get("digestOnly")]
    assert folded == ["aws-training-nodes"] and by_name(document, GROUP)["aws-training-nodes"]["digestOnly"]
    lines = stderr.splitlines()
    assert not any(re.match(rf"aws-training: update +aws-training-nodes +{GROUP}", line) for line in lines)
    assert (
        "aws-training: 1 resource only takes the new config digest (tags, labels, user data): aws-training-nodes (Group)"
        in lines
    )
    # The Lustre resize itself and the launch template's changed user data (a new checkpoint interval) stay lines.
    assert any(line.startswith("aws-training: update") and LUSTRE in line for line in lines)
