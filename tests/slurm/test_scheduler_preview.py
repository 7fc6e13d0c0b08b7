"""accelstack.components.aws.scheduler under Pulumi mocks: Slurm head + munge secret, and the Batch variant."""

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
    assert head.inputs["monitoring"] is True  # one-minute metrics (Checkov CKV_AWS_126)
    assert head.provider.startswith(aws_provider_urn(cap))
    volume = cap.one("aws:ebs/volume:Volume")
    assert volume.protect and volume.inputs["encrypted"] is True and volume.inputs["kmsKeyId"]
    assert cap.one("aws:ec2/volumeAttachment:VolumeAttachment").inputs["deviceName"] == "/dev/sdf"
    assert cap.stack_outputs["slurmHeadAddress"] == head.inputs["privateIp"]


def test_munge_key_is_a_secret_in_secrets_manager_readable_only_by_the_node_role(slurm_capture):
    cap = slurm_capture
    key = cap.one("random:index/randomBytes:RandomBytes")
    assert key.inputs["length"] >= 32
    assert key.protect  # regenerating it would cut every daemon off from the others
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
            "Resource": [cap.stack_outputs["mungeKeySecret"]],
        }
    ]


def test_compute_nodes_boot_into_slurm_without_the_key(slurm_capture):
    template = next(
        r for r in slurm_capture.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("nodes")
    )
    user_data = base64.b64decode(template.inputs["userData"]).decode()
    assert user_data.startswith("#cloud-config")
    head_ip = slurm_capture.stack_outputs["slurmHeadAddress"]
    assert f"{head_ip} aws-training-head" in user_data
    assert "slurmd --systemd -Z --conf-server aws-training-head:6817" in user_data
    assert "secretsmanager get-secret-value" in user_data and "secret:" not in user_data.split("--secret-id")[0]
    # The stack exports where the key is, never the key.
    assert [k for k in slurm_capture.stack_outputs if "munge" in k.lower()] == ["mungeKeySecretArn", "mungeKeySecret"]


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
    cap = slurm_capture_of(
        () if lustre else ("training.storage.lustre=null", "training.storage.checkpoints.path=/scratch/ckpt")
    )
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


# --- what a real `pulumi up` would reject or get wrong (review against the AWS/provider docs) -----


def test_head_image_is_a_resolved_ami_id_that_never_forces_a_replacement(slurm_capture):
    # `resolve:ssm:` in an Instance's ami fails with a root_block_device (DescribeImages rejects the
    # alias) and reads back as ami-..., replacing the head on every `up`.
    head = slurm_capture.one("aws:ec2/instance:Instance")
    assert head.inputs["ami"].startswith("ami-")
    assert "ami" in head.ignore_changes and head.delete_before_replace


def test_head_image_lookup_reads_canonicals_parameter_for_the_head_architecture():
    from accelstack.components.aws.mocks import AwsMocks

    class Recording(AwsMocks):
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []
            self.providers: list[str] = []

        def call(self, args):
            if args.token == "aws:ssm/getParameter:getParameter":
                self.names.append(args.args["name"])
                self.providers.append(args.provider)
            return super().call(args)

    raw = apply_overrides(
        read_stack_file(ROOT / "stacks" / "Pulumi.aws-training.yaml"),
        ["training.scheduler.headNode.instanceType=m7g.xlarge"],
    )
    cloud = Recording()
    capture(PROGRAM, config_for_pulumi(raw), stack="aws-training", mocks=cloud)
    assert cloud.names == ["/aws/service/canonical/ubuntu/server/24.04/stable/current/arm64/hvm/ebs-gp3/ami-id"]
    # Through the stack's explicit provider (its account and Region), not a default provider.
    (provider,) = cloud.providers
    assert "$pulumi:providers:aws::" in provider


def test_state_volume_detaches_only_from_a_stopped_head(slurm_capture):
    attachment = slurm_capture.one("aws:ec2/volumeAttachment:VolumeAttachment")
    assert attachment.inputs["stopInstanceBeforeDetaching"] is True


@pytest.fixture(scope="module")
def batch_capture():
    return preview("training.scheduler.kind=managed")


def test_batch_environment_leaves_security_groups_to_the_efa_interfaces(batch_capture):
    # Batch: "Either compute environment Security Groups or Network Interfaces in Launch template
    # are exclusively allowed"; the interfaces carry the cluster group.
    resources = batch_capture.one("aws:batch/computeEnvironment:ComputeEnvironment").inputs["computeResources"]
    assert "securityGroupIds" not in resources
    assert resources["type"] == "EC2"
    template = next(
        r for r in batch_capture.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("batch")
    )
    cluster = next(
        r for r in batch_capture.by_type("aws:ec2/securityGroup:SecurityGroup") if r.name.endswith("-net-cluster")
    )
    assert all(i["securityGroups"] == [cluster.id] for i in template.inputs["networkInterfaces"])


def test_batch_template_encrypts_the_ecs_images_real_root_and_leaves_the_image_to_batch(batch_capture):
    template = next(
        r for r in batch_capture.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("batch")
    )
    assert "imageId" not in template.inputs  # Batch picks ECS_AL2023_NVIDIA from image_type
    [root] = template.inputs["blockDeviceMappings"]
    assert root["deviceName"] == "/dev/xvda"  # Amazon Linux root: /dev/sda1 would be a spare 512 GiB volume
    assert root["ebs"]["encrypted"] == "true" and root["ebs"]["kmsKeyId"]
    resources = batch_capture.one("aws:batch/computeEnvironment:ComputeEnvironment").inputs["computeResources"]
    assert resources["ec2Configurations"] == [{"imageType": "ECS_AL2023_NVIDIA"}]
    names = [r.name for r in batch_capture.by_type("aws:ec2/launchTemplate:LaunchTemplate")]
    assert names == ["aws-training-batch"]  # Batch runs the fleet: no node-group template beside it


@pytest.mark.parametrize(("instance_type", "efa"), [("p5.48xlarge", 32), ("p4d.24xlarge", 4)])
def test_batch_jobs_get_every_efa_device(instance_type, efa):
    cap = preview("training.scheduler.kind=managed", f"training.nodes.instanceType={instance_type}")
    nodes = json.loads(cap.one("aws:batch/jobDefinition:JobDefinition").inputs["nodeProperties"])
    devices = nodes["nodeRangeProperties"][0]["container"]["linuxParameters"]["devices"]
    assert [d["hostPath"] for d in devices] == [f"/dev/infiniband/uverbs{i}" for i in range(efa)]
    assert all(d["containerPath"] == d["hostPath"] and d["permissions"] == ["READ", "WRITE", "MKNOD"] for d in devices)


def test_batch_refuses_spot_because_multinode_jobs_cannot_run_on_it():
    from accelstack.spec import SpecError, parse_spec

    raw = apply_overrides(
        read_stack_file(ROOT / "stacks" / "Pulumi.aws-training.yaml"),
        ["training.scheduler.kind=managed", "training.nodes.capacity=spot"],
    )
    with pytest.raises(SpecError, match=r"training\.nodes\.capacity: spot is not supported"):
        parse_spec(raw, "aws-training")
    with pytest.raises(Exception, match=r"training\.nodes\.capacity: spot is not supported"):
        preview("training.scheduler.kind=managed", "training.nodes.capacity=spot")


def test_batch_nodes_install_the_efa_software_before_the_ecs_agent(batch_capture):
    """AWS Batch's EFA guide needs the EFA driver loaded on the image: a cloud-boothook (it runs early,
    before the ECS agent starts, as aws-samples/aws-batch-efa does) runs the EFA installer once."""
    import base64
    import email

    template = next(
        r for r in batch_capture.by_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("batch")
    )
    message = email.message_from_string(base64.b64decode(template.inputs["userData"]).decode())
    parts = {p.get_content_type(): p.get_payload() for p in message.walk() if not p.is_multipart()}
    assert list(parts) == ["text/cloud-boothook", "text/cloud-config"]  # the boothook first
    hook = parts["text/cloud-boothook"]
    assert "cloud-init-per once" in hook and "./efa_installer.sh -y" in hook
    assert "https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz" in hook
    assert "dnf install -y lustre-client" in parts["text/cloud-config"]
    assert "amazon-linux-extras" not in parts["text/cloud-config"]  # Amazon Linux 2 only
