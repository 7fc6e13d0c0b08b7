"""Filestore for small GCP clusters (`training.storage.lustre.tier: filestore-zonal`): NFS on the same private
services access connection as Managed Lustre, where Lustre's 9,000 GiB minimum would oversize the cluster.

What an operator relies on: the tier's sizes are Filestore's (refused at the config path otherwise), the share
is encrypted with the stack's key and protected twice, every node mounts it over NFS, the dataset is copied in
by the head (Filestore has no link to Cloud Storage) and checkpoints out, never deleting, and growing it
replaces nothing.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from propagation_waits import granted, wait_seconds, waits_of

from accelstack.clouds import registry
from accelstack.clouds.gcp import catalog as gcp_catalog
from accelstack.components import slurm
from accelstack.components.gcp.node_platform import GcpNodePlatform
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.engine.replacement import DELETE, REPLACE, plan_changes
from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "stacks" / "Pulumi.gcp-training.yaml"
# A small cluster: 2 nodes fine-tuning an 8B model on a 500 GiB corpus.
SMALL = (
    "training.nodes.count=2",
    "training.model.preset=llama-3.1-8b",
    "training.storage.datasets.sizeGiB=500",
    "training.storage.lustre.tier=filestore-zonal",
    "training.storage.lustre.capacityGiB=1536",
    "training.storage.lustre.throughputPerTiB=null",
)
FILESTORE = "gcp:filestore/instance:Instance"


@cache
def small(*extra: str) -> PreviewResult:
    return preview_stack(EXAMPLE, [*SMALL, *extra], REPO)


def one(result: PreviewResult, type_token: str, name: str | None = None) -> Any:
    found = [r for r in result.resources if r.type == type_token and (name is None or r.name == name)]
    assert len(found) == 1, f"{type_token}: {[r.name for r in found]}"
    return found[0]


def spec_of(*overrides: str) -> Any:
    return parse_spec(apply_overrides(read_stack_file(EXAMPLE), [*SMALL, *overrides]), "gcp-training")


def test_the_share_is_zonal_encrypted_reached_through_private_services_access_and_protected_twice():
    result = small()
    share = one(result, FILESTORE)
    inputs = share.inputs
    assert inputs["tier"] == "ZONAL" and inputs["location"] == "us-central1-a"
    assert inputs["fileShares"] == {"name": "shared", "capacityGb": 1536}
    (network,) = inputs["networks"]
    assert network["connectMode"] == "PRIVATE_SERVICE_ACCESS"
    assert network["network"] == result.stack_outputs["networkId"]
    assert inputs["kmsKeyName"] == result.stack_outputs["encryptionKey"]
    assert inputs["deletionProtectionEnabled"] is True
    assert share.protect and share.retain_on_delete
    urns = {r.urn: r for r in result.resources}
    waits_for = {urns[u].name for u in share.dependencies}
    assert "gcp-training-lustre-psa" in waits_for  # the peering exists first
    # and Filestore's agent may use the key: its grant has propagated
    assert [g.name for g in granted(result, share)] == ["gcp-training-key-filestore"]
    assert [wait_seconds(w) for w in waits_of(result, share)] == [gcp_catalog.IAM_PROPAGATION_SECONDS]
    grant = one(result, "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "gcp-training-key-filestore").inputs
    assert grant["member"] == "serviceAccount:service-123456789012@cloud-filer.iam.gserviceaccount.com"
    assert not [r for r in result.resources if r.type == "gcp:lustre/instance:Instance"]
    assert not [r for r in result.resources if r.type == "pulumi-python:dynamic:Resource"]  # no Lustre import


def test_every_node_mounts_the_share_over_nfs_at_the_mount_path():
    result = small()
    assert result.stack_outputs["lustreAddress"] == "172.16.0.2"
    assert result.stack_outputs["lustreMountName"] == "shared"
    template = one(result, "gcp:compute/instanceTemplate:InstanceTemplate").inputs
    user_data = template["metadata"]["user-data"]
    assert "172.16.0.2:/shared /lustre nfs hard,noatime,nconnect=7,_netdev" in user_data
    assert "command -v mount.nfs" in user_data and "apt-get install -y nfs-common" in user_data
    assert "@tcp:/" not in user_data  # not a Lustre mount


def test_the_head_copies_the_dataset_in_and_checkpoints_out_and_may_read_the_dataset_bucket():
    result = small()
    head = one(result, "gcp:compute/instance:Instance").inputs["metadata"]["user-data"]
    assert "gcloud storage rsync --recursive --quiet gs://acme-train-datasets/corpus/ /lustre/datasets/" in head
    assert "systemctl start --no-block accelstack-dataset-import.service" in head
    assert "source_dir=/lustre/checkpoints" in head and "gcloud storage rsync --recursive --no-clobber" in head
    assert "delete" not in " ".join(line for line in head.splitlines() if "rsync" in line)
    grants = [
        r.inputs
        for r in result.resources
        if r.type == "gcp:storage/bucketIAMMember:BucketIAMMember" and r.name == "gcp-training-head-datasets"
    ]
    assert grants == [
        {
            "bucket": "acme-train-datasets",
            "role": "roles/storage.objectViewer",
            "member": "serviceAccount:gcp-training-head@acme-train.iam.gserviceaccount.com",
        }
    ]


def test_the_import_unit_is_valid_systemd_and_the_head_script_parses(tmp_path):
    spec = spec_of()
    nodes = slurm.Nodes(GcpNodePlatform(), None)
    units = slurm.dataset_import_units(spec, nodes)
    assert list(units) == ["accelstack-dataset-import.service"]
    unit = units["accelstack-dataset-import.service"]
    assert "RequiresMountsFor=/lustre/datasets" in unit and "Type=oneshot" in unit
    script = slurm.head_setup_script(spec, nodes, slurm.DeployValues.placeholders())
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    # A Lustre tier imports by itself: no unit then.
    lustre = parse_spec(apply_overrides(read_stack_file(EXAMPLE), []), "gcp-training")
    assert slurm.dataset_import_units(lustre, nodes) == {}


def test_cluster_director_imports_the_share_and_its_login_node_stages_the_dataset():
    result = small("training.scheduler.kind=managed", 'training.scheduler.partitions=[{"name": "gpu"}]')
    cluster = one(result, "gcp:hypercomputecluster/cluster:Cluster").inputs
    share = one(result, FILESTORE)
    (storage,) = cluster["storageResources"]
    assert storage["config"] == {"existingFilestore": {"filestore": share.outputs["id"]}}
    login = cluster["orchestrator"]["slurm"]["loginNodes"]["startupScript"]
    assert "systemctl start --no-block accelstack-dataset-import.service" in login
    subprocess.run(["bash", "-n"], input=login, text=True, check=True)


def test_both_packs_pass():
    result = small()
    assert [v.line() for v in policy_verdicts(result.export, result.spec)] == []


@pytest.mark.parametrize(
    ("overrides", "path", "says"),
    [
        (("training.storage.lustre.capacityGiB=1000",), "training.storage.lustre.capacityGiB", "multiple of 256"),
        (("training.storage.lustre.capacityGiB=10240",), "training.storage.lustre.capacityGiB", "up to 9984"),
        (("training.storage.lustre.throughputPerTiB=250",), "training.storage.lustre.throughputPerTiB", ""),
        (("training.scheduler.kind=none",), "training.storage.lustre.tier", "no node copies it in"),
    ],
)
def test_what_filestore_cannot_take_is_refused_at_its_path(overrides, path, says):
    with pytest.raises(SpecError) as caught:
        spec_of(*overrides)
    problems = {p.path: p.message for p in caught.value.problems}
    assert path in problems and says in problems[path], problems


def test_the_tier_fixes_its_throughput_per_tib_from_filestores_performance_table():
    tier = registry.get("gcp").parallel_fs_tier("filestore-zonal")
    assert tier is not None and tier.protocol == "nfs" and not tier.imports_from_object_store
    assert tier.baseline_throughput_per_tib == 92  # 88 MiB/s write per TiB


def test_day_2_growing_the_share_updates_it_in_place_and_nothing_stateful_is_replaced():
    changes = plan_changes(small().resources, small("training.storage.lustre.capacityGiB=2048").resources)
    (share,) = [c for c in changes if c.type == FILESTORE]
    assert share.action not in (REPLACE, DELETE), share.replacing
    stateful = {FILESTORE, "gcp:storage/bucket:Bucket", "gcp:kms/cryptoKey:CryptoKey", "gcp:compute/disk:Disk"}
    assert [c.name for c in changes if c.type in stateful and c.action in (REPLACE, DELETE)] == []
