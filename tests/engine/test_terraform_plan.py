"""The Terraform plan view of the shipped stacks (`accelstack export --format terraform-plan`): the
shape scanners read (`terraform show -json`), the type and field mapping, and the references
Checkov's cross-resource checks follow. Checkov itself reads these plans in tests/scan (make scan)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.engine.cloud_tables import terraform_tables
from accelstack.engine.export import REDACTED, deployment_v3
from accelstack.engine.terraform_plan import snake_case, terraform_name, terraform_plan
from accelstack.spec.loader import read_stack_file

REPO = Path(__file__).resolve().parents[2]
STACKS = ["aws-training", "aws-finetune", "aws-serving"]


@cache
def export(stack: str) -> dict:
    raw = read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml")
    return deployment_v3(capture(REPO / "__main__.py", config_for_pulumi(raw), stack=stack))


@cache
def plan(stack: str):
    return terraform_plan(export(stack))


def planned(stack: str, tf_type: str) -> dict[str, dict]:
    return {
        r["name"]: r for r in plan(stack).document["planned_values"]["root_module"]["resources"] if r["type"] == tf_type
    }


def configured(stack: str, address: str) -> dict:
    [entry] = [r for r in plan(stack).document["configuration"]["root_module"]["resources"] if r["address"] == address]
    return entry["expressions"]


def change(stack: str, address: str) -> dict:
    [entry] = [r for r in plan(stack).document["resource_changes"] if r["address"] == address]
    return entry["change"]


@pytest.mark.parametrize("stack", STACKS)
def test_every_managed_resource_of_the_shipped_stacks_has_a_terraform_type(stack: str) -> None:
    custom = [
        r
        for r in export(stack)["deployment"]["resources"]
        if r["custom"] and not r["type"].startswith("pulumi:providers:")
    ]
    assert plan(stack).unmapped == []
    assert len(plan(stack).document["planned_values"]["root_module"]["resources"]) == len(custom)
    assert {r["type"] for r in custom} <= terraform_tables().types.keys()


@pytest.mark.parametrize("stack", STACKS)
def test_plan_shape_is_terraform_show_json(stack: str) -> None:
    document = plan(stack).document
    assert document["format_version"] == "1.2" and document["terraform_version"]
    resources = document["planned_values"]["root_module"]["resources"]
    addresses = [r["address"] for r in resources]
    assert len(addresses) == len(set(addresses)), "addresses are unique"
    for resource in resources:
        assert resource["address"] == f"{resource['type']}.{resource['name']}"
        assert resource["mode"] == "managed"
        assert resource["provider_name"].startswith("registry.terraform.io/hashicorp/")
    assert [c["address"] for c in document["resource_changes"]] == addresses
    assert all(
        c["change"]["actions"] == ["create"] and c["change"]["before"] is None for c in document["resource_changes"]
    )
    assert [c["address"] for c in document["configuration"]["root_module"]["resources"]] == addresses
    assert document["configuration"]["provider_config"]["aws"]["expressions"]["region"]["constant_value"]


def test_references_replace_ids_like_a_first_terraform_plan() -> None:
    """The public access block names its bucket by reference, as `bucket = aws_s3_bucket.x.id` would:
    unknown in `values`, known in `after_unknown`, a references expression in `configuration`."""
    [name] = [n for n in planned("aws-training", "aws_s3_bucket_public_access_block") if "datasets" in n]
    block = planned("aws-training", "aws_s3_bucket_public_access_block")[name]
    assert "bucket" not in block["values"]
    assert block["values"]["block_public_acls"] is True
    assert change("aws-training", block["address"])["after_unknown"]["bucket"] is True
    assert configured("aws-training", block["address"])["bucket"] == {
        "references": ["aws_s3_bucket.aws-training-storage-datasets.id", "aws_s3_bucket.aws-training-storage-datasets"]
    }
    rules = planned("aws-training", "aws_vpc_security_group_ingress_rule")
    rule = rules["aws-training-net-cluster-from-self"]
    expressions = configured("aws-training", rule["address"])
    assert expressions["security_group_id"]["references"][0] == "aws_security_group.aws-training-net-cluster.id"
    assert (
        expressions["referenced_security_group_id"]["references"][0] == "aws_security_group.aws-training-net-cluster.id"
    )


def test_nested_reference_and_blocks_become_lists() -> None:
    [encryption] = [
        r
        for n, r in planned("aws-training", "aws_s3_bucket_server_side_encryption_configuration").items()
        if "datasets" in n
    ]
    [rule] = encryption["values"]["rule"]  # Pulumi's `rules` is Terraform's `rule` block
    assert rule["apply_server_side_encryption_by_default"] == [{"sse_algorithm": "aws:kms"}]
    nested = configured("aws-training", encryption["address"])["rule"][0]["apply_server_side_encryption_by_default"][0]
    assert nested["kms_master_key_id"]["references"][0] == "aws_kms_key.aws-training-storage-key.arn"
    [acl] = planned("aws-serving", "aws_wafv2_web_acl").values()
    assert acl["values"]["default_action"] == [{"allow": [{}]}]
    assert acl["values"]["rule"][0]["statement"][0]["rate_based_statement"][0]["aggregate_key_type"] == "IP"


def test_maps_keep_their_keys_and_numbers_are_integers() -> None:
    [vpc] = planned("aws-training", "aws_vpc").values()
    assert vpc["values"]["tags"] == {"Name": "aws-training-net-vpc"}
    [template] = [t for n, t in planned("aws-serving", "aws_launch_template").items()]
    tags = template["values"]["tag_specifications"][0]["tags"]
    assert tags["accelstack:workload"] == "serving", "a map's keys are data, never snake_cased"
    ports = {
        r["values"].get("from_port") for r in planned("aws-serving", "aws_vpc_security_group_ingress_rule").values()
    }
    assert 443 in ports and all(isinstance(p, int) for p in ports if p is not None)
    [group] = planned("aws-training", "aws_autoscaling_group").values()
    assert {"key": "Name", "value": "aws-training-node", "propagate_at_launch": True} in group["values"]["tag"]
    assert change("aws-training", group["address"])["after_unknown"]["vpc_zone_identifier"] == [True]


def test_secrets_never_reach_the_plan() -> None:
    text = json.dumps(plan("aws-training").document)
    assert REDACTED not in text and "ciphertext" not in text
    [version] = planned("aws-training", "aws_secretsmanager_secret_version").values()
    assert "secret_binary" not in version["values"]
    assert version["sensitive_values"] == {"secret_binary": True}


def test_a_resource_without_terraform_type_is_listed_not_guessed() -> None:
    document = json.loads(json.dumps(export("aws-serving")))
    [queue] = [r for r in document["deployment"]["resources"] if r["type"] == "aws:sqs/queue:Queue"][:1]
    queue["type"] = "aws:sqs/notAType:NotAType"
    result = terraform_plan(document)
    assert result.unmapped == [queue["urn"]]
    assert queue["urn"] not in result.addresses


def test_same_name_twice_keeps_both_resources() -> None:
    document = json.loads(json.dumps(export("aws-serving")))
    resources = document["deployment"]["resources"]
    [first, second] = [r for r in resources if r["type"] == "aws:lb/listener:Listener"]
    # Pulumi URNs are unique by parent type chain + name: the same name under another component.
    second["urn"] = first["urn"].replace("ServingService$", "ServingNetwork$")
    addresses = [r["address"] for r in terraform_plan(document).document["planned_values"]["root_module"]["resources"]]
    assert len(addresses) == len(set(addresses))
    assert {"aws_lb_listener.aws-serving-https", "aws_lb_listener.aws-serving-https_2"} <= set(addresses) or {
        "aws_lb_listener.aws-serving-http-redirect",
        "aws_lb_listener.aws-serving-http-redirect_2",
    } <= set(addresses)


@pytest.mark.parametrize(
    ("pulumi_name", "terraform"),
    [
        ("applyServerSideEncryptionByDefault", "apply_server_side_encryption_by_default"),
        ("cidrIpv4", "cidr_ipv4"),
        ("httpPutResponseHopLimit", "http_put_response_hop_limit"),
        ("kmsKeyId", "kms_key_id"),
        ("enableDnsHostnames", "enable_dns_hostnames"),
        ("s3", "s3"),
        ("tags", "tags"),
    ],
)
def test_snake_case(pulumi_name: str, terraform: str) -> None:
    assert snake_case(pulumi_name) == terraform


def test_terraform_name_is_an_identifier() -> None:
    assert terraform_name("aws-training-net") == "aws-training-net"
    assert terraform_name("9lives") == "_9lives"
    assert terraform_name("a.b/c") == "a_b_c"


def test_only_the_input_the_engine_linked_becomes_a_reference() -> None:
    """An ingress rule's description equal to its group's description is text, not a reference:
    only `securityGroupId` depends on the group."""
    document = json.loads(json.dumps(export("aws-serving")))
    resources = document["deployment"]["resources"]
    [rule] = [r for r in resources if r["urn"].endswith("::aws-serving-alb-in-443")]
    [group] = [r for r in resources if r["urn"] in rule["propertyDependencies"]["securityGroupId"]]
    rule["inputs"]["description"] = group["outputs"]["description"]
    result = terraform_plan(document)
    [planned_rule] = [
        r
        for r in result.document["planned_values"]["root_module"]["resources"]
        if r["address"] == "aws_vpc_security_group_ingress_rule.aws-serving-alb-in-443"
    ]
    assert planned_rule["values"]["description"] == group["outputs"]["description"]
    assert "security_group_id" not in planned_rule["values"]


def test_same_named_resources_of_two_types_are_told_apart() -> None:
    """The training NAT's Elastic IP and its public subnet share a name (so their mock ids match): the
    gateway's allocation_id must still reference the EIP and its subnet_id the subnet."""
    [nat] = planned("aws-training", "aws_nat_gateway").values()
    expressions = configured("aws-training", nat["address"])
    assert expressions["allocation_id"]["references"][0] == "aws_eip.aws-training-net-nat.id"
    assert expressions["subnet_id"]["references"][0] == "aws_subnet.aws-training-net-nat.id"


def test_an_input_unknown_at_preview_still_references_the_one_resource_behind_it() -> None:
    """The head's instance profile name is unknown under preview, but the engine recorded which profile it
    comes from: Checkov's "IAM role attached to the instance" (CKV2_AWS_41) follows that reference."""
    [head] = [r for n, r in planned("aws-training", "aws_instance").items() if n.endswith("-head")]
    assert configured("aws-training", head["address"])["iam_instance_profile"]["references"] == [
        "aws_iam_instance_profile.aws-training-head.id",
        "aws_iam_instance_profile.aws-training-head",
    ]
