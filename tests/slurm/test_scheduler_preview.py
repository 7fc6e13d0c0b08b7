"""components.aws.scheduler under Pulumi mocks: Slurm head + munge secret, and the Batch variant."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.spec.loader import apply_overrides, read_stack_file

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "__main__.py"


def preview(*overrides: str):
    raw = apply_overrides(read_stack_file(ROOT / "stacks" / "Pulumi.aws-training.yaml"), list(overrides))
    return capture(PROGRAM, config_for_pulumi(raw), stack="aws-training")


@pytest.fixture(scope="module")
def slurm_capture():
    return preview()


def aws_provider_urn(cap) -> str:
    provider = next(r for r in cap.resources if r.type == "pulumi:providers:aws")
    return provider.urn


def test_slurm_head_is_private_imdsv2_encrypted_with_protected_state_volume(slurm_capture):
    cap = slurm_capture
    head = cap.one("aws:ec2/instance:Instance")
    assert head.inputs["associatePublicIpAddress"] is False
    assert head.inputs["metadataOptions"]["httpTokens"] == "required"
    assert head.inputs["rootBlockDevice"]["encrypted"] is True
    assert head.inputs["userDataReplaceOnChange"] is True
    assert head.provider.startswith(aws_provider_urn(cap))
    volume = cap.one("aws:ebs/volume:Volume")
    assert volume.protect and volume.inputs["encrypted"] is True and volume.inputs["kmsKeyId"]
    assert cap.one("aws:ec2/volumeAttachment:VolumeAttachment").inputs["deviceName"] == "/dev/sdf"
    assert cap.stack_outputs["slurmHeadAddress"] == head.inputs["privateIp"]


def test_munge_key_is_a_secret_in_secrets_manager_readable_only_by_the_node_role(slurm_capture):
    cap = slurm_capture
    key = cap.one("random:index/randomBytes:RandomBytes")
    assert key.inputs["length"] >= 32
    secret = cap.one("aws:secretsmanager/secret:Secret")
    assert secret.inputs["kmsKeyId"]
    version = cap.one("aws:secretsmanager/secretVersion:SecretVersion")
    assert "secretBinary" in version.additional_secret_outputs
    policy = next(r for r in cap.by_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("read-munge-key"))
    statement = json.loads(policy.inputs["policy"])["Statement"]
    assert statement == [
        {
            "Sid": "ReadMungeKey",
            "Effect": "Allow",
            "Action": ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
            "Resource": [cap.stack_outputs["mungeKeySecretArn"]],
        }
    ]


def test_compute_nodes_boot_into_slurm_without_the_key(slurm_capture):
    template = next(r for r in slurm_capture.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("nodes"))
    user_data = base64.b64decode(template.inputs["userData"]).decode()
    assert user_data.startswith("#cloud-config")
    head_ip = slurm_capture.stack_outputs["slurmHeadAddress"]
    assert f"{head_ip} aws-training-head" in user_data
    assert "slurmd -D -s -Z --conf-server aws-training-head:6817" in user_data
    assert "secretsmanager get-secret-value" in user_data and "secret:" not in user_data.split("--secret-id")[0]
    # The stack exports where the key is, never the key.
    assert [k for k in slurm_capture.stack_outputs if "munge" in k.lower()] == ["mungeKeySecretArn"]


def test_slurm_ports_open_only_between_head_and_cluster_groups(slurm_capture):
    rules = [
        r
        for r in slurm_capture.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
        if "-head" in r.name
    ]
    ports = {(r.name.split("aws-training-")[-1], r.inputs["fromPort"], r.inputs["toPort"]) for r in rules}
    assert ("head-from-cluster-slurmctld", 6817, 6817) in ports
    assert ("cluster-from-head-slurmd", 6818, 6818) in ports
    assert ("head-from-cluster-srun", 60001, 63000) in ports
    for rule in rules:
        assert "cidrIpv4" not in rule.inputs  # only security-group references, never address ranges
        assert rule.inputs["referencedSecurityGroupId"]


@pytest.mark.parametrize(("lustre", "expected"), [(True, {988, 1018}), (False, set())])
def test_lustre_ports_open_between_head_and_cluster_only_with_lustre(lustre, expected):
    cap = slurm_capture_of(() if lustre else ("training.storage.lustre=null", "training.storage.checkpoints.path=/scratch/ckpt"))
    rules = cap.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    assert {r.inputs["fromPort"] for r in rules if "-lustre-" in r.name} == expected


def slurm_capture_of(overrides):
    return preview("training.nodes.count=1", *overrides)


def test_managed_scheduler_is_batch_multinode_on_the_efa_launch_template():
    cap = preview("training.scheduler.kind=managed")
    assert not cap.by_type("aws:autoscaling/group:Group")
    assert not cap.by_type("aws:ec2/instance:Instance")
    env = cap.one("aws:batch/computeEnvironment:ComputeEnvironment")
    resources = env.inputs["computeResources"]
    assert env.inputs["type"] == "MANAGED"
    assert resources["minVcpus"] == 0 and resources["maxVcpus"] == 4 * 192
    assert resources["instanceTypes"] == ["p5.48xlarge"]
    assert resources["placementGroup"] and len(resources["subnets"]) == 1
    template = next(r for r in cap.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("batch"))
    interfaces = template.inputs["networkInterfaces"]
    # Every network card carries an EFA (the primary as efa, the rest efa-only): 32 on p5.48xlarge.
    assert sum(1 for i in interfaces if i.get("interfaceType") in ("efa", "efa-only")) == 32
    assert "Content-Type: multipart/mixed" in base64.b64decode(template.inputs["userData"]).decode()
    job = cap.one("aws:batch/jobDefinition:JobDefinition")
    assert job.inputs["type"] == "multinode"
    nodes = json.loads(job.inputs["nodeProperties"])
    container = nodes["nodeRangeProperties"][0]["container"]
    assert nodes["numNodes"] == 4
    assert {"type": "GPU", "value": "8"} in container["resourceRequirements"]
    assert container["mountPoints"] == [{"sourceVolume": "lustre", "containerPath": "/fsx", "readOnly": False}]
    assert cap.one("aws:batch/jobQueue:JobQueue").inputs["state"] == "ENABLED"
