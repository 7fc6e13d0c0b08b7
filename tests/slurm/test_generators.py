"""Slurm generators: what slurm.conf, gres.conf, the dynamic node line and node cloud-init say."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from accelstack.components import slurm
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

STACK_FILE = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.aws-training.yaml"


def spec_for(*overrides: str, partitions: list[dict] | None = None):
    raw = apply_overrides(read_stack_file(STACK_FILE), list(overrides))
    if partitions is not None:
        raw["training"]["scheduler"]["partitions"] = partitions
    return parse_spec(raw, "aws-training")


def conf_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_slurm_conf_names_no_compute_node_and_joins_partitions_by_feature():
    spec = spec_for()
    text = slurm.slurm_conf(spec, slurm.nodes_for(spec))
    lines = conf_lines(text)
    assert not any(line.startswith("NodeName=") for line in lines)
    assert "NodeSet=ns_compute Feature=compute" in lines
    assert "PartitionName=gpu Nodes=ns_compute MaxTime=7-00:00:00 Default=YES State=UP" in lines
    assert "PartitionName=debug Nodes=ns_compute MaxTime=01:00:00 Default=NO State=UP" in lines
    for setting in (
        "ClusterName=aws-training",
        "SlurmctldHost=aws-training-head",
        "SlurmctldParameters=enable_configless",
        "AuthType=auth/munge",
        "SelectType=select/cons_tres",
        "GresTypes=gpu",
        "JobRequeue=1",
        "ReturnToService=2",
        "TreeWidth=65533",
        "MaxNodeCount=8",  # 4 nodes plus one replacement generation
    ):
        assert setting in lines


def test_partition_features_become_nodesets_and_node_features():
    spec = spec_for(
        partitions=[
            {"name": "big", "maxTime": "2-00:00:00", "features": ["nvl"]},
            {"name": "short", "maxTime": "30", "default": True},
        ]
    )
    lines = conf_lines(slurm.slurm_conf(spec, slurm.nodes_for(spec)))
    assert "NodeSet=ns_nvl Feature=nvl" in lines
    assert "PartitionName=big Nodes=ns_nvl MaxTime=2-00:00:00 Default=NO State=UP" in lines
    assert "PartitionName=short Nodes=ns_compute MaxTime=30 Default=YES State=UP" in lines
    assert "Feature=compute,p5,h100,nvl" in slurm.dynamic_node_conf(spec, slurm.nodes_for(spec)).split()


@pytest.mark.parametrize(
    ("instance_type", "gres_line", "node_gres"),
    [
        ("p5.48xlarge", "Name=gpu Type=h100 File=/dev/nvidia[0-7]", "Gres=gpu:h100:8"),
        ("p4d.24xlarge", "Name=gpu Type=a100 File=/dev/nvidia[0-7]", "Gres=gpu:a100:8"),
        ("g6e.12xlarge", "Name=gpu Type=l40s File=/dev/nvidia[0-3]", "Gres=gpu:l40s:4"),
        ("g5.8xlarge", "Name=gpu Type=a10g File=/dev/nvidia[0-0]", "Gres=gpu:a10g:1"),
    ],
)
def test_gres_lines_follow_the_accelerator_table(instance_type, gres_line, node_gres):
    spec = spec_for(f"training.nodes.instanceType={instance_type}", "training.nodes.count=2")
    assert gres_line in conf_lines(slurm.gres_conf(spec, slurm.nodes_for(spec)))
    assert node_gres in slurm.dynamic_node_conf(spec, slurm.nodes_for(spec)).split()


def test_trainium_nodes_have_no_gpu_gres():
    spec = spec_for("training.nodes.instanceType=trn1.32xlarge", "training.nodes.count=2")
    assert not any(line.startswith("Name=") for line in conf_lines(slurm.gres_conf(spec, slurm.nodes_for(spec))))
    node = slurm.dynamic_node_conf(spec, slurm.nodes_for(spec))
    assert "Gres=" not in node
    assert "trainium" in node


def test_dynamic_node_line_is_a_configless_slurmd_with_memory_headroom():
    spec = spec_for()
    # p5.48xlarge: 2048 GiB, 95% schedulable (ParallelCluster's default).
    assert (
        slurm.dynamic_node_conf(spec, slurm.nodes_for(spec))
        == "Feature=compute,p5,h100 Gres=gpu:h100:8 RealMemory=1992294"
    )
    command = slurm.slurmd_command(spec, slurm.nodes_for(spec), "aws-training-head")
    assert command == (
        "/usr/sbin/slurmd --systemd -Z --conf-server aws-training-head:6817 "
        '--conf "NodeAddr=$NODE_ADDR Feature=compute,p5,h100 Gres=gpu:h100:8 RealMemory=1992294"'
    )


def test_placeholders_mark_deploy_time_values():
    spec = spec_for()
    artifacts = slurm.render_all(spec, slurm.nodes_for(spec))
    compute = artifacts["compute.cloud-init.yaml"]
    head = artifacts["head.cloud-init.yaml"]
    assert "${HEAD_ADDRESS} aws-training-head" in compute
    assert "${LUSTRE_DNS}@tcp:/${LUSTRE_MOUNT_NAME} /fsx lustre noatime,flock" in compute
    # The references go through the platform's commands: AWS reads the secret by ARN, finds the volume by id.
    assert "--secret-id '${MUNGE_KEY_SECRET}'" in head
    assert 'device="/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_${STATE_VOLUME}"' in head


FAKE_KEY = base64.b64encode(b"\x01" * 128).decode()


@pytest.mark.parametrize("capacity", ["on-demand", "spot"])
def test_cloud_init_documents_are_cloud_config_yaml_and_carry_no_secret(capacity):
    spec = spec_for(f"training.nodes.capacity={capacity}")
    values = slurm.DeployValues(
        head_address="10.20.15.249",
        lustre_dns_name="fs-1.fsx.us-east-1.amazonaws.com",
        lustre_mount_name="abcdefgh",
        munge_key_secret="arn:aws:secretsmanager:us-east-1:1:secret:k",
        state_volume="vol-0abc",
    )
    for text in (
        slurm.head_cloud_init(spec, slurm.nodes_for(spec), values),
        slurm.compute_cloud_init(spec, slurm.nodes_for(spec), values),
    ):
        assert text.startswith("#cloud-config\n")
        doc = yaml.safe_load(text)
        assert isinstance(doc, dict) and doc["runcmd"]
        assert FAKE_KEY not in text
        assert "munge.key" in text  # written at boot from the secret store, 0400 munge
        assert "aws secretsmanager get-secret-value --region us-east-1 --secret-id" in text
        assert "BEGIN" not in text and "SecretString" not in text
    compute = yaml.safe_load(slurm.compute_cloud_init(spec, slurm.nodes_for(spec), values))
    setup = next(f for f in compute["write_files"] if f["path"] == slurm.COMPUTE_SETUP_PATH)["content"]
    assert ("systemctl enable --now accelstack-spot-watcher.service" in setup) == (capacity == "spot")
    head = yaml.safe_load(slurm.head_cloud_init(spec, slurm.nodes_for(spec), values))
    assert head["hostname"] == "aws-training-head"
    paths = {f["path"] for f in head["write_files"]}
    # Slurm's configuration files come from the configuration object (a change must not rebuild the head),
    # installed by this script before slurmctld starts.
    assert not {"/etc/slurm/slurm.conf", "/etc/slurm/gres.conf", "/etc/slurm/cgroup.conf"} & paths
    assert "/usr/local/sbin/accelstack-slurm-config" in paths


def test_watcher_uses_imdsv2_drains_with_reason_and_requeues():
    spec = spec_for()
    script = slurm.spot_watcher_script(spec, slurm.nodes_for(spec))
    assert script.startswith("#!/bin/bash\n")
    assert '-X PUT -H "X-aws-ec2-metadata-token-ttl-seconds' in script
    assert '"$endpoint/latest/meta-data/$1"' in script and "notice=$(imds spot/instance-action)" in script
    assert 'state=DRAIN reason="spot interruption notice: $1"' in script
    assert 'scancel --signal="$SIGNAL" --full' in script
    assert 'scontrol requeue "$job"' in script
    assert 'POLL="${POLL_SECONDS:-5}"' in script


def test_serving_stack_is_refused():
    raw = read_stack_file(STACK_FILE.with_name("Pulumi.aws-serving.yaml"))
    spec = parse_spec(raw, "aws-serving")
    with pytest.raises(ValueError, match="Slurm needs accelstack:training"):
        slurm.slurm_conf(spec, slurm.nodes_for(spec))
