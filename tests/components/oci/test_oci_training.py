"""The real program (`__main__.py`) on the oci-training example, captured under OCI's mocks.

What an operator relies on: one cluster network with one instance pool in one availability domain, its nodes
launched with the RDMA agent plugins and no public address; Lustre provisioned at exactly the OCI step the spec's
GiB names, linked to the dataset prefix without overwriting; every stateful resource protected; every resource in
the stack's compartment (the tenancy holds only the dynamic group and the Lustre service policy); and `validate`
refusing what OCI refuses at create time.
"""

from __future__ import annotations

import base64
from functools import cache
from pathlib import Path

import pytest

from accelstack.clouds.oci import catalog
from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file

REPO = Path(__file__).resolve().parents[3]
MAIN = REPO / "__main__.py"
EXAMPLE = REPO / "stacks" / "Pulumi.oci-training.yaml"
STACK = "oci-training"
TENANCY = "ocid1.tenancy.oc1..aaaaaaaaacmetenancy"
COMPARTMENT = "ocid1.compartment.oc1..aaaaaaaaacmetrain"


@cache
def run(*overrides: str) -> Capture:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    return capture(MAIN, config_for_pulumi(raw), stack=STACK)


def spec_errors(*overrides: str) -> str:
    with pytest.raises(SpecError) as caught:
        parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), STACK)
    return str(caught.value)


def one(cap: Capture, type_token: str, suffix: str = "") -> Registration:
    found = [r for r in cap.by_type(type_token) if r.name.endswith(suffix)]
    assert len(found) == 1, [r.name for r in cap.by_type(type_token)]
    return found[0]


def test_one_cluster_network_of_one_pool_in_one_domain_with_the_rdma_plugins():
    cap = run()
    cluster = one(cap, "oci:Core/clusterNetwork:ClusterNetwork").inputs
    [pool] = cluster["instancePools"]
    assert pool["size"] == 2
    assert cluster["placementConfiguration"]["availabilityDomain"] == "Uocm:US-ASHBURN-AD-1"
    config = one(cap, "oci:Core/instanceConfiguration:InstanceConfiguration").inputs
    launch = config["instanceDetails"]["launchDetails"]
    assert launch["shape"] == "BM.GPU.H100.8"
    assert launch["availabilityDomain"] == cluster["placementConfiguration"]["availabilityDomain"]
    plugins = {p["name"]: p["desiredState"] for p in launch["agentConfig"]["pluginsConfigs"]}
    assert plugins == {"Compute HPC RDMA Authentication": "ENABLED", "Compute HPC RDMA Auto-Configuration": "ENABLED"}
    assert launch["createVnicDetails"]["assignPublicIp"] is False
    assert "preemptibleInstanceConfig" not in launch and "capacityReservationId" not in launch
    # The nodes boot the Slurm generator's cloud-init, base64 as OCI's user_data takes it.
    assert base64.b64decode(launch["metadata"]["user_data"]).decode().startswith("#cloud-config")


def test_a_capacity_reservation_reaches_the_launch_details():
    reservation = "ocid1.capacityreservation.oc1.us-ashburn-1.aaaaaaaaexample"
    cap = run(f"training.nodes.reservationId={reservation}")
    launch = one(cap, "oci:Core/instanceConfiguration:InstanceConfiguration").inputs["instanceDetails"]
    assert launch["launchDetails"]["capacityReservationId"] == reservation


def test_lustre_is_the_exact_oci_step_linked_without_overwriting_and_protected():
    cap = run()
    lustre = one(cap, "oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem")
    assert lustre.inputs["capacityInGbs"] == 31_200  # 29,057 GiB as the spec states it
    assert lustre.inputs["performanceTier"] == "MBPS_PER_TB_125"
    assert len(lustre.inputs["fileSystemName"]) <= catalog.LUSTRE_NAME_MAX
    assert lustre.protect and lustre.retain_on_delete
    link = one(cap, "oci:Lustre/fileStorageObjectStorageLink:FileStorageObjectStorageLink").inputs
    assert link["objectStoragePrefix"] == "acmetenancy:/acme-train-datasets/corpus"
    assert link["isOverwrite"] is False and link["fileSystemPath"] == "/datasets"
    policy = one(cap, "oci:Identity/policy:Policy", "-lustre-service").inputs
    # In the stack's compartment, not the tenancy (a tenancy-wide grant would reach the serving compartment).
    assert policy["compartmentId"] == COMPARTMENT
    assert (
        f"allow service lustrefs to use virtual-network-family in compartment id {COMPARTMENT}" in policy["statements"]
    )


def test_a_new_import_trigger_changes_the_link_trigger_only():
    before = one(run(), "oci:Lustre/fileStorageObjectStorageLink:FileStorageObjectStorageLink").inputs
    after_cap = run("training.storage.lustre.importTrigger=corpus-v2")
    after = one(after_cap, "oci:Lustre/fileStorageObjectStorageLink:FileStorageObjectStorageLink").inputs
    assert before["startImportFromObjectTrigger"] != after["startImportFromObjectTrigger"]
    # Only the trigger follows the edit (the config digest tag is the cluster network's alone).
    moved = {"startImportFromObjectTrigger"}
    assert {k: v for k, v in before.items() if k not in moved} == {k: v for k, v in after.items() if k not in moved}
    network = one(after_cap, "oci:Core/clusterNetwork:ClusterNetwork").inputs["freeformTags"]
    assert (
        network["accelstack-config-digest"]
        != one(run(), "oci:Core/clusterNetwork:ClusterNetwork").inputs["freeformTags"]["accelstack-config-digest"]
    )


def test_stateful_resources_are_protected_and_checkpoints_versioned():
    cap = run()
    stateful = [
        one(cap, "oci:ObjectStorage/bucket:Bucket", "-datasets"),
        one(cap, "oci:ObjectStorage/bucket:Bucket", "-checkpoints"),
        one(cap, "oci:Kms/vault:Vault"),
        one(cap, "oci:Kms/key:Key"),
        one(cap, "oci:Vault/secret:Secret"),
        one(cap, "oci:Core/volume:Volume"),
    ]
    assert all(r.protect and r.retain_on_delete for r in stateful), [r.name for r in stateful if not r.protect]
    assert one(cap, "oci:ObjectStorage/bucket:Bucket", "-checkpoints").inputs["versioning"] == "Enabled"


def test_every_resource_is_in_the_stack_compartment_and_only_the_dynamic_group_is_in_the_tenancy():
    cap = run()
    placed = {
        (r.type, r.name): r.inputs.get("compartmentId") for r in cap.resources if r.custom and r.type.startswith("oci:")
    }
    in_tenancy = {key for key, compartment in placed.items() if compartment == TENANCY}
    assert in_tenancy == {("oci:Identity/dynamicGroup:DynamicGroup", "oci-training-nodes")}
    others = {key: c for key, c in placed.items() if key not in in_tenancy and c is not None}
    assert set(others.values()) == {COMPARTMENT}
    provider = one(cap, "pulumi:providers:oci").inputs
    assert provider["tenancyOcid"] == TENANCY and provider["region"] == "us-ashburn-1"


def test_the_nodes_may_create_but_never_delete_checkpoints():
    policy = one(run(), "oci:Identity/policy:Policy", "-nodes").inputs["statements"]
    checkpoints = [s for s in policy if "acme-train-checkpoints" in s and "objects" in s]
    assert checkpoints and all("OBJECT_DELETE" not in s and "OBJECT_OVERWRITE" not in s for s in checkpoints)
    assert all("OBJECT_CREATE" in s for s in checkpoints)


def test_the_head_reads_its_slurm_config_from_its_own_metadata_and_is_private():
    head = one(run(), "oci:Core/instance:Instance", "-head")
    assert head.inputs["createVnicDetails"]["assignPublicIp"] == "false"
    assert head.inputs["createVnicDetails"]["privateIp"] == "10.60.0.10"
    assert catalog.SLURM_CONFIG_METADATA_KEY in head.inputs["metadata"]
    assert head.inputs["shapeConfig"] == {"ocpus": 4, "memoryInGbs": 32}


@pytest.mark.parametrize(
    ("overrides", "path", "words"),
    [
        (("training.nodes.capacity=spot",), "training.nodes.capacity", "cluster networks do not offer preemptible"),
        (("training.storage.lustre.capacityGiB=30000",), "training.storage.lustre.capacityGiB", "31200 GB (29057 GiB)"),
        (("training.nodes.reservationId=cr-0123",), "training.nodes.reservationId", "capacity reservation OCID"),
        (("training.nodes.reservationId=ocid1.capacityreservation.oc1.phx.aaaaaaaaexample",),
         "training.nodes.reservationId", "names region 'phx', the stack deploys to us-ashburn-1"),
        (("training.network.availabilityZone=us-ashburn-1a",), "training.network.availabilityZone", "allowed: 1, 2, 3"),
        # Tokyo has one domain (catalog.AVAILABILITY_DOMAINS): a second is refused at its key, not at preview.
        (("account.region=ap-tokyo-1", 'training.network.availabilityZone="2"'), "training.network.availabilityZone",
         "ap-tokyo-1 has 1 availability domain; allowed: 1"),
        # Lustre's servers take up to 60 addresses per 100 TB of the nodes' subnet: 19 at 31,200 GB, past a /28's 13.
        (("training.network.vpcCidr=10.60.0.0/27",), "training.network.vpcCidr",
         "2 nodes + 1 Slurm head + 19 File Storage with Lustre (31,200 GB"),
        (("training.network.vpcCidr=10.60.0.0/26", "training.storage.lustre.capacityGiB=116229"),
         "training.network.vpcCidr", "75 File Storage with Lustre (124,800 GB"),
        (("training.scheduler.headNode.instanceType=n2-standard-8",), "training.scheduler.headNode.instanceType",
         "VM.Standard.E5.Flex"),
        (("training.storage.datasets.uri=s3://acme/corpus",), "training.storage.datasets.uri", "oci"),
        (("training.nodes.instanceType=BM.GPU.A100-v2.8",), "training.nodes.instanceType", "BM.GPU.H100.8"),
    ],
)  # fmt: skip
def test_validate_refuses_what_oci_refuses_at_create_time(overrides, path, words):
    message = spec_errors(*overrides)
    assert path in message and words in message, message


def test_a_subnet_holding_lustres_addresses_validates():
    """The boundary of the address rule above: a /26 VCN's /27 subnet holds 2 nodes, the head and Lustre's 19."""
    raw = apply_overrides(read_stack_file(EXAMPLE), ["training.network.vpcCidr=10.60.0.0/26"])
    assert parse_spec(raw, STACK).training.network.vpc_cidr == "10.60.0.0/26"
    assert [catalog.lustre_addresses(gb) for gb in (31_200, 100_000, 124_800)] == [19, 60, 75]


def test_every_capacity_step_converts_back_to_its_gb_exactly():
    for gb, gib in zip(catalog.LUSTRE_STEPS_GB, catalog.LUSTRE_STEPS_GIB, strict=True):
        assert catalog.gb_for_gib(gib) == gb
        # The GiB stated never exceeds what OCI provisions, and misses it by less than one GiB.
        assert 0 <= gb * 10**9 - gib * 2**30 < 2**30
    assert catalog.LUSTRE_STEPS_GB[:3] == (31_200, 41_600, 52_000)
    assert 124_800 in catalog.LUSTRE_STEPS_GB and 166_400 in catalog.LUSTRE_STEPS_GB
    assert 135_200 not in catalog.LUSTRE_STEPS_GB  # +10,400 stops at 124,800
    with pytest.raises(ValueError):
        catalog.gb_for_gib(30_000)
