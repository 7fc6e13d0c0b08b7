"""Guards the guards: each conformance check sees the problem it exists for, planted in a copy of a
real preview (a check that cannot fail would let a new cloud pass by accident)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from checks import (
    TAG_CARRIERS,
    output_problems,
    protect_problems,
    provider_problems,
    required_tags,
    resource_counts,
    tag_problems,
    tag_values,
)
from cloud_stacks import STACKS, preview

from accelstack import outputs
from accelstack.engine.capture import Registration

SERVING = STACKS / "Pulumi.aws-serving.yaml"
BUCKET = "aws:s3/bucket:Bucket"
GROUP = "aws:autoscaling/group:Group"


def serving() -> list[Registration]:
    return [dataclasses.replace(r) for r in preview(SERVING).resources]


def edited(resources: list[Registration], resource_type: str, **changes: object) -> list[Registration]:
    """The resources with the first one of `resource_type` changed."""
    index = next(i for i, r in enumerate(resources) if r.type == resource_type)
    resources[index] = dataclasses.replace(resources[index], **changes)
    return resources


def test_a_resource_without_a_provider_is_seen() -> None:
    resources = edited(serving(), BUCKET, provider="")
    [problem] = provider_problems(resources)
    assert problem.startswith(BUCKET) and "no provider" in problem


def test_a_default_provider_is_seen() -> None:
    resources = serving()
    bucket = next(r for r in resources if r.type == BUCKET)
    default = "urn:pulumi:aws-serving::accelstack::pulumi:providers:aws::default_7_0_0"
    resources = edited(resources, BUCKET, provider=f"{default}::some-id")
    assert provider_problems(resources) == [
        f"{BUCKET} {bucket.name}: provider {default} is not one the stack registers"
    ]


def test_provider_default_tags_missing_are_seen_on_every_resource_they_reach() -> None:
    resources = serving()
    provider = next(r for r in resources if r.type == "pulumi:providers:aws")
    resources = edited(resources, provider.type, inputs={**provider.inputs, "defaultTags": json.dumps({"tags": {}})})
    problems, checked = tag_problems(resources, "serving", "aws-serving")
    # Two problems (workload, stack) on each, but the autoscaling group: default tags never reach it, it lists its own.
    assert len(problems) == 2 * (checked - 1)
    assert not any(p.startswith(GROUP) for p in problems)


def test_a_group_missing_its_own_stack_tag_is_seen() -> None:
    resources = serving()
    group = next(r for r in resources if r.type == GROUP)
    tags = [t for t in group.inputs["tags"] if t["key"] != "accelstack:stack"]
    resources = edited(resources, GROUP, inputs={**group.inputs, "tags": tags})
    problems, _ = tag_problems(resources, "serving", "aws-serving")
    assert problems == [f"{GROUP} {group.name}: tag accelstack:stack is missing, wants 'aws-serving'"]


def test_a_wrong_workload_tag_is_seen() -> None:
    problems, _ = tag_problems(serving(), "training", "aws-serving")
    assert problems and all("accelstack:workload is 'serving', wants 'training'" in p for p in problems)


def test_a_package_without_a_tag_carrier_is_seen() -> None:
    resources = serving()
    bucket = next(r for r in resources if r.type == BUCKET)
    resources = edited(resources, BUCKET, type="acme:storage/bucket:Bucket")
    problems, _ = tag_problems(resources, "serving", "aws-serving")
    assert problems == [f"acme:storage/bucket:Bucket {bucket.name}: package 'acme' has no row in TAG_CARRIERS"]


def test_tag_spellings_per_package() -> None:
    assert required_tags(TAG_CARRIERS["gcp"], "training", "gcp-training") == {
        "accelstack-workload": "training",
        "accelstack-stack": "gcp-training",
    }
    assert tag_values(["accelstack:workload=serving", "team"]) == {"accelstack:workload": "serving"}
    assert tag_values('{"a": "b"}') == {"a": "b"}


def test_an_unprotected_bucket_is_seen() -> None:
    resources = edited(serving(), BUCKET, protect=False)
    [problem] = protect_problems(resources)
    assert problem.startswith(BUCKET) and problem.endswith("not protected")


def test_missing_and_extra_outputs_are_seen() -> None:
    queued = {outputs.ADMISSION_QUEUE, outputs.AUTOSCALED, outputs.EGRESS_ADMITTED}
    exported = set(outputs.SERVING_OUTPUTS) - {"endpoint"} | {"replicaCount"}
    assert output_problems(exported, "serving", queued) == [
        f"missing output endpoint: {outputs.SERVING_OUTPUTS['endpoint'].meaning}",
        "unexpected output replicaCount: not in the serving contract (accelstack/outputs.py)",
    ]
    # A fixed fleet admitting on its replicas has no queue and no scaling target to report.
    assert output_problems(set(outputs.SERVING_OUTPUTS), "serving", set()) == [
        "unexpected output backlogPerInstanceTarget: only when scaling:backlog",
        "unexpected output deadLetterQueue: only when admission:queue",
        "unexpected output egressAddresses: only when weights:admitted-by-address",
        "unexpected output requestQueue: only when admission:queue",
        "unexpected output responseQueue: only when admission:queue",
    ]
    slurm_only = outputs.expected_keys("training", {outputs.SLURM})
    holding = {outputs.SLURM, outputs.SCHEDULER, outputs.NODE_GROUP}
    assert output_problems(slurm_only | {"lustreAddress"}, "training", holding) == [
        "missing output nodeGroup: the group of GPU nodes the stack scales",
        "missing output scheduler: which scheduler runs jobs: slurm, or the cloud's managed batch service",
        "unexpected output lustreAddress: only when parallel-file-system",
    ]
    # A legacy name passes only beside its new name, and only when the cloud declares it.
    legacy = {"mungeKeySecretArn": "mungeKeySecret", "lustreDnsName": "lustreAddress"}
    full = outputs.expected_keys("training", holding)
    assert output_problems(full | {"mungeKeySecretArn"}, "training", holding, legacy) == []
    assert output_problems(full | {"mungeKeySecretArn"}, "training", holding) == [
        "unexpected output mungeKeySecretArn: not in the training contract (accelstack/outputs.py)"
    ]
    assert output_problems(full | {"lustreDnsName"}, "training", holding, legacy) == [
        "missing output mungeKeySecretArn: the old name of mungeKeySecret",
        "unexpected output lustreDnsName: not in the training contract (accelstack/outputs.py)",
    ]


def test_the_contract_refuses_unknown_workloads_and_conditions() -> None:
    with pytest.raises(ValueError, match="unknown workload 'batch'; allowed: training, serving"):
        outputs.expected_keys("batch", ())
    with pytest.raises(ValueError, match=r"unknown output conditions \['lustre'\]"):
        outputs.expected_keys("training", {"lustre"})


def test_every_contract_condition_is_a_known_one() -> None:
    for contract in outputs.CONTRACTS.values():
        assert {key.when for key in contract.values()} <= outputs.CONDITIONS


def test_a_graph_that_grows_is_seen() -> None:
    resources = serving()
    grown = [*resources, dataclasses.replace(next(r for r in resources if r.type == GROUP), urn="urn:another")]
    assert resource_counts(grown) != resource_counts(resources)
