"""Serving config validation: each bad input is rejected (or warned about) naming its config path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accelstack.spec.loader import read_stack_file
from accelstack.spec.problems import Level
from tests.spec.spec_helpers import DELETE, all_problems, edited

SERVING_STACK = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.aws-serving.yaml"


def serving_raw():
    return read_stack_file(SERVING_STACK)


def test_example_serving_stack_is_clean():
    assert all_problems(serving_raw()) == []


@pytest.mark.parametrize(
    ("edits", "path", "level", "fragment"),
    [
        # GPU memory: a 70B model at bf16 on one 24 GiB A10G.
        (
            {"serving.model.name": "meta-llama/Llama-3.1-70B-Instruct", "serving.replicas.instanceType": "g5.xlarge"},
            "serving.replicas.instanceType",
            Level.ERROR,
            "needs ~141 GB weights",
        ),
        (
            {"serving.model.name": "llama-3-70b", "serving.replicas.instanceType": "g5.xlarge"},
            "serving.replicas.instanceType",
            Level.ERROR,
            "g5.xlarge has 1 x 24 GiB A10G",
        ),
        # Unknown architecture: the weights alone are checked from parametersBillion.
        (
            {
                "serving.model.name": "acme-custom",
                "serving.model.parametersBillion": 100,
                "serving.replicas.instanceType": "g6e.xlarge",
            },
            "serving.replicas.instanceType",
            Level.ERROR,
            "needs ~200 GB weights",
        ),
        (
            {"serving.model.name": "acme-custom"},
            "serving.model.parametersBillion",
            Level.WARNING,
            "cannot tell the size",
        ),
        (
            {"serving.replicas.instanceType": "m7i.2xlarge"},
            "serving.replicas.instanceType",
            Level.ERROR,
            "not a supported accelerated",
        ),
        ({"serving.replicas.tensorParallel": 2}, "serving.replicas.tensorParallel", Level.ERROR, "exceeds the 1 L40S"),
        ({"serving.replicas.capacity": "spot"}, "serving.replicas.capacity", Level.ERROR, "allowed: on-demand"),
        (
            {"serving.replicas.capacity": "capacity-block"},
            "serving.replicas.capacity",
            Level.ERROR,
            "not allowed for serving",
        ),
        (
            {"serving.loadBalancer.certificate": "my-cert"},
            "serving.loadBalancer.certificate",
            Level.ERROR,
            "not an ACM certificate ARN",
        ),
        (
            {
                "serving.loadBalancer.certificate": "arn:aws:acm:eu-west-1:222222222222:certificate/0b6a3f2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b"
            },
            "serving.loadBalancer.certificate",
            Level.ERROR,
            "certificate is in eu-west-1 but the load balancer is in us-east-1",
        ),
        (
            {"serving.loadBalancer.healthPath": "health"},
            "serving.loadBalancer.healthPath",
            Level.ERROR,
            "must start with /",
        ),
        (
            {"serving.admission.maxDepth": 100000},
            "serving.admission.maxDepth",
            Level.WARNING,
            "lower maxDepth to <= 2400",
        ),
        ({"serving.slo.targetSeconds": 600}, "serving.slo.targetSeconds", Level.ERROR, "exceeds the request TTL"),
        (
            {"serving.slo.targetSeconds": 0.5},
            "serving.slo.targetSeconds",
            Level.ERROR,
            "below the per-request service time",
        ),
        (
            # gs:// is another cloud's store, a cross-cloud handoff (weights_on_another_cloud); no cloud's is ftp://
            {"serving.model.weightsUri": "ftp://bucket/models/x/"},
            "serving.model.weightsUri",
            Level.ERROR,
            "allowed scheme: s3://",
        ),
        (
            {"serving.model.weightsUri": "s3://acme-train-checkpoints"},
            "serving.model.weightsUri",
            Level.ERROR,
            "names a whole bucket",
        ),
        (
            {"serving.model.adapters.1.name": "acme-support"},
            "serving.model.adapters.1.name",
            Level.ERROR,
            "duplicate adapter",
        ),
        (
            {"serving.artifactAccount": "333333333333"},
            "serving.artifactAccount",
            Level.ERROR,
            "not one of separation.trainingAccounts",
        ),
        (
            {"serving.artifactAccount": "222222222222"},
            "serving.artifactAccount",
            Level.ERROR,
            "not one of separation.trainingAccounts",
        ),
        ({"serving.artifactAccount": DELETE}, "serving.artifactAccount", Level.WARNING, "not set"),
        (
            {"serving.replicas.min": 5, "serving.replicas.max": 2},
            "serving.replicas",
            Level.ERROR,
            "must not exceed max",
        ),
        (
            {
                "serving.network": {
                    "vpcId": "vpc-00000001",
                    "subnetIds": ["subnet-0000000a"],
                    "publicSubnetIds": ["subnet-0000000e", "subnet-0000000f"],
                }
            },
            "serving.network.subnetIds",
            Level.ERROR,
            "at least 2 AZs",
        ),
        (
            {"serving.network": {"vpcId": "vpc-00000001", "subnetIds": ["subnet-0000000a", "subnet-0000000b"]}},
            "serving.network.publicSubnetIds",
            Level.ERROR,
            "public subnets in at least 2 AZs",
        ),
        (
            {"serving.network": {"vpcId": "vpc-00000001", "subnetId": "subnet-0000000a"}},
            "serving.network.subnetId",
            Level.ERROR,
            "use subnetIds",
        ),
        (
            {"serving.network.availabilityZone": "us-east-1a"},
            "serving.network.availabilityZone",
            Level.ERROR,
            "pins serving to one AZ",
        ),
        ({"serving.network.vpcCidr": "10.30.0.0/26"}, "serving.network.vpcCidr", Level.ERROR, "too small"),
        ({"serving.replicas.warmPool": 20}, "serving.replicas.warmPool", Level.WARNING, "never used"),
        # ELB names: 32 characters, the target group's is "<stack>-replicas-<7 random>".
        ({"stack": "acme-llama-serving"}, "stack", Level.ERROR, "at most 15"),
        ({"stack": "internal"}, "stack", Level.ERROR, "start with 'internal-'"),
    ],
)
def test_bad_serving_config(edits, path, level, fragment):
    problems = all_problems(edited(serving_raw(), edits))
    matching = [p for p in problems if p.path == path and fragment in p.message]
    assert matching, f"no {path} problem containing {fragment!r}; got: {[str(p) for p in problems]}"
    assert matching[0].level is level


@pytest.mark.parametrize(
    "edits",
    [
        # 70B fits at fp8 across the 8 x 48 GiB of a g6e.48xlarge; at int4 on 4 x 48 GiB.
        {
            "serving.model.name": "meta-llama/Llama-3.1-70B-Instruct",
            "serving.replicas.instanceType": "g6e.48xlarge",
            "serving.model.precision": "fp8",
        },
        {
            "serving.model.name": "meta-llama/Llama-3.1-70B-Instruct",
            "serving.replicas.instanceType": "g6e.12xlarge",
            "serving.model.precision": "int4",
        },
        {"serving.replicas.min": 0},
        {"stack": "acme-llama-prod"},  # 15 characters: "acme-llama-prod-replicas-1234567" is exactly 32
        {"stack": "internals"},
        {
            "serving.network": {
                "vpcId": "vpc-00000001",
                "subnetIds": ["subnet-0000000a", "subnet-0000000b"],
                "publicSubnetIds": ["subnet-0000000e", "subnet-0000000f"],
            }
        },
    ],
)
def test_good_serving_variants_have_no_errors(edits):
    problems = all_problems(edited(serving_raw(), edits))
    assert [str(p) for p in problems if p.level is Level.ERROR] == []


def test_a_stated_service_time_far_from_the_loads_says_what_it_still_sizes():
    """With serving.load stated the request-rate targets use the modelled service time; the warning names what the
    stated serviceSeconds still sizes and the exact line to set (new-user trial 3, friction 24)."""
    raw = edited(
        serving_raw(),
        {
            "serving.load": {"requestsPerSecond": 20, "inputTokens": 1000, "outputTokens": 500},
            "serving.slo.serviceSeconds": 0.5,
        },
    )
    [warning] = [p for p in all_problems(raw) if p.path == "serving.slo.serviceSeconds"]
    assert warning.level is Level.WARNING
    for fragment in ("visibility timeout (serviceSeconds x 6)", "warm pool's burst", "too short"):
        assert fragment in warning.message
    assert re.search(r"set serving\.slo\.serviceSeconds: \d+\.\d$", warning.message), warning.message
