"""The real program (`__main__.py`) on the gcp-training example, captured under GCP's mocks.

What an operator relies on: every GPU NIC of the machine type is attached to its own sized VPC (a dark NIC is
lost bandwidth nobody sees), no node is reachable from the internet, Spot and reservations are configured as
Compute Engine takes them, Managed Lustre is created only after its peering and key grant and is staged from
the dataset prefix only after its service agent can read it, checkpoints can be written but never deleted by
the nodes, and everything holding data is protected and encrypted with the stack's key.
"""

from __future__ import annotations

import ipaddress
from functools import cache
from pathlib import Path

import pytest
from propagation_waits import granted, wait_seconds, waits_of

from accelstack.clouds.gcp import catalog
from accelstack.clouds.gcp.rules import address_plan
from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file

REPO = Path(__file__).resolve().parents[3]
MAIN = REPO / "__main__.py"
EXAMPLE = REPO / "stacks" / "Pulumi.gcp-training.yaml"
STACK = "gcp-training"

TEMPLATE = "gcp:compute/instanceTemplate:InstanceTemplate"
GROUP = "gcp:compute/instanceGroupManager:InstanceGroupManager"
NETWORK = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
LUSTRE = "gcp:lustre/instance:Instance"
BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_GRANT = "gcp:storage/bucketIAMMember:BucketIAMMember"
POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"
IMPORT = "pulumi-python:dynamic:Resource"
LUSTRE_AGENT = "serviceAccount:service-123456789012@gcp-sa-lustre.iam.gserviceaccount.com"


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


def by_urn(cap: Capture) -> dict[str, Registration]:
    return {r.urn: r for r in cap.resources}


def network_of(cap: Capture, interface: dict) -> Registration:
    """The Network registration a template interface's `network` (a mock id) names."""
    (network,) = [r for r in cap.by_type(NETWORK) if r.outputs.get("id") == interface["network"]]
    return network


@pytest.mark.parametrize(
    ("machine", "gvnics", "mrdma", "mtu"),
    [
        ("a3-highgpu-8g", 5, 0, 8244),
        ("a3-megagpu-8g", 9, 0, 8244),
        ("a3-ultragpu-8g", 2, 8, 8896),
        ("a4-highgpu-8g", 2, 8, 8896),
    ],
)
def test_every_gpu_nic_of_the_machine_type_is_attached_in_its_own_network(machine, gvnics, mrdma, mtu):
    cap = run(f"training.nodes.instanceType={machine}")
    interfaces = one(cap, TEMPLATE).inputs["networkInterfaces"]
    assert [i["nicType"] for i in interfaces] == ["GVNIC"] * gvnics + ["MRDMA"] * mrdma
    assert len(interfaces) == catalog.ACCELERATED_INSTANCES[machine].network_cards
    # One VPC per gVNIC (GCP refuses two NICs of a VM in one VPC); the MRDMA NICs share the one RoCE VPC.
    gvnic_networks = {i["network"] for i in interfaces[:gvnics]}
    assert len(gvnic_networks) == gvnics
    assert len({i["subnetwork"] for i in interfaces}) == len(interfaces)
    assert network_of(cap, interfaces[0]).inputs["mtu"] == 8896  # the system network: the same on every type
    for interface in interfaces[1:]:
        assert network_of(cap, interface).inputs["mtu"] == mtu
    for interface in interfaces:
        assert "accessConfigs" not in interface and "ipv6AccessConfigs" not in interface
    if mrdma:
        (roce,) = {i["network"] for i in interfaces[gvnics:]}
        profile = network_of(cap, {"network": roce}).inputs["networkProfile"]
        assert profile == "projects/acme-train/global/networkProfiles/us-central1-a-vpc-roce"


def test_a3_ultra_and_a4_boot_from_hyperdisk_and_a3_mega_from_persistent_ssd():
    assert one(run("training.nodes.instanceType=a4-highgpu-8g"), TEMPLATE).inputs["disks"][0]["diskType"] == (
        "hyperdisk-balanced"
    )
    assert one(run(), TEMPLATE).inputs["disks"][0]["diskType"] == "pd-ssd"


def test_fabric_subnets_hold_every_node_and_never_overlap_the_system_network():
    cap = run("training.nodes.count=64")
    ranges = [ipaddress.ip_network(s.inputs["ipCidrRange"]) for s in cap.by_type(SUBNET)]
    assert all(not a.overlaps(b) for i, a in enumerate(ranges) for b in ranges[i + 1 :])
    fabric = [r for r in ranges if r != address_plan("10.50.0.0/16").nodes]
    assert all(r.num_addresses - 4 >= 64 for r in fabric)
    peering = one(cap, "gcp:compute/globalAddress:GlobalAddress").inputs
    peering_range = ipaddress.ip_network(f"{peering['address']}/{int(peering['prefixLength'])}")
    assert peering["purpose"] == "VPC_PEERING" and all(not peering_range.overlaps(r) for r in ranges)


def test_a_cidr_too_small_for_the_node_count_is_refused_at_its_path_with_the_size_that_fits():
    message = spec_errors("training.network.vpcCidr=10.50.0.0/18", "training.nodes.count=300")
    assert "training.network.vpcCidr: 10.50.0.0/18: each fabric subnet holds 252 nodes, fewer than 300" in message
    assert "use a /17 or larger" in message
    assert "an IPv4 /18 or larger is needed" in spec_errors("training.network.vpcCidr=10.50.0.0/20")


def test_the_group_is_one_fixed_size_zonal_group_that_never_replaces_nodes_mid_job():
    cap = run()
    group = one(cap, GROUP).inputs
    assert group["targetSize"] == 4 and group["zone"] == "us-central1-a"
    assert group["updatePolicy"]["type"] == "OPPORTUNISTIC"
    assert "autoHealingPolicies" not in group
    assert len(cap.by_type(TEMPLATE)) == len(run("training.nodes.count=64").by_type(TEMPLATE)) == 1


def test_spot_nodes_are_spot_and_deleted_on_preemption_and_placed_by_a_workload_policy():
    cap = run()
    scheduling = one(cap, TEMPLATE).inputs["scheduling"]
    assert scheduling["provisioningModel"] == "SPOT" and scheduling["preemptible"] is True
    assert scheduling["automaticRestart"] is False and scheduling["onHostMaintenance"] == "TERMINATE"
    assert scheduling["instanceTerminationAction"] == "DELETE"
    # Said outright: unset, a template consumes ANY matching reservation.
    assert one(cap, TEMPLATE).inputs["reservationAffinity"] == {"type": "NO_RESERVATION"}
    policy = one(cap, POLICY)
    assert policy.inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT"}
    assert one(cap, GROUP).inputs["resourcePolicies"]["workloadPolicy"] == policy.outputs["selfLink"]


def test_a_specific_reservation_is_consumed_by_name_and_on_demand_nodes_live_through_maintenance_restarts():
    cap = run("training.nodes.capacity=on-demand", "training.nodes.reservationId=a3mega-block-1")
    template = one(cap, TEMPLATE).inputs
    assert template["reservationAffinity"] == {
        "type": "SPECIFIC_RESERVATION",
        "specificReservation": {"key": "compute.googleapis.com/reservation-name", "values": ["a3mega-block-1"]},
    }
    assert template["scheduling"]["provisioningModel"] == "STANDARD"
    assert cap.by_type(POLICY), "reservation-backed A3 nodes are placed densely too"


def test_a_calendar_mode_block_runs_reservation_bound_vms():
    cap = run("training.nodes.capacity=capacity-block", "training.nodes.reservationId=a3mega-calendar-1")
    scheduling = one(cap, TEMPLATE).inputs["scheduling"]
    assert scheduling["provisioningModel"] == "RESERVATION_BOUND"
    assert scheduling["instanceTerminationAction"] == "DELETE"


def test_flex_start_nodes_come_all_at_once_through_one_resize_request_for_the_run_time():
    """DWS flex-start in a MIG (cloud.google.com/compute/docs/instance-groups/about-resize-requests-mig): the
    group starts empty and the resize request adds every node when Google grants them, for maxRunHours; the
    stack never sizes the group back to 0 afterwards, and a failed VM is left to Slurm."""
    cap = run("training.nodes.capacity=flex-start", "training.nodes.maxRunHours=72")
    template = one(cap, TEMPLATE).inputs
    assert template["scheduling"]["provisioningModel"] == "FLEX_START"
    assert template["scheduling"]["instanceTerminationAction"] == "DELETE"
    assert template["reservationAffinity"] == {"type": "NO_RESERVATION"}
    group = one(cap, GROUP)
    assert group.inputs["targetSize"] == 0 and "targetSize" in group.ignore_changes
    assert group.inputs["instanceLifecyclePolicy"] == {"defaultActionOnFailure": "DO_NOTHING"}
    request = one(cap, "gcp:compute/resizeRequest:ResizeRequest")
    assert request.inputs["resizeBy"] == 4 and request.inputs["requestedRunDuration"] == {"seconds": "259200"}
    assert request.inputs["instanceGroupManager"] == group.outputs["name"]
    assert request.inputs["zone"] == "us-central1-a"
    assert group.urn in request.dependencies  # created after the group it grows
    # Without flex-start, no request and the group holds count nodes.
    assert run().by_type("gcp:compute/resizeRequest:ResizeRequest") == []


def test_on_demand_nodes_without_a_reservation_get_no_workload_policy_and_a_warning():
    cap = run("training.nodes.capacity=on-demand")
    assert cap.by_type(POLICY) == []
    spec = parse_spec(apply_overrides(read_stack_file(EXAMPLE), ["training.nodes.capacity=on-demand"]), STACK)
    assert spec is not None  # a warning, not an error


def test_lustre_waits_for_its_peering_and_key_and_takes_the_neutral_keys_as_strings():
    cap = run()
    lustre = one(cap, LUSTRE)
    assert lustre.inputs["capacityGib"] == "18000" and lustre.inputs["perUnitStorageThroughput"] == "1000"
    assert lustre.inputs["location"] == "us-central1-a" and lustre.inputs["filesystem"] == "lustrefs"
    urns = by_urn(cap)
    waits_for = {urns[u].type for u in lustre.dependencies}
    assert "gcp:servicenetworking/connection:Connection" in waits_for
    # Its agent's key grant, propagated: Managed Lustre checks the key when the instance is created.
    grants = [g for g in granted(cap, lustre) if g.type == "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"]
    assert [g.inputs["member"] for g in grants] == [LUSTRE_AGENT]
    assert [wait_seconds(w) for w in waits_of(cap, lustre)] == [catalog.IAM_PROPAGATION_SECONDS]
    assert lustre.protect and lustre.retain_on_delete


def test_the_import_runs_after_the_lustre_agent_can_read_the_dataset_prefix():
    cap = run()
    (staging,) = cap.by_type(IMPORT)
    assert staging.inputs["gcs_uri"] == "gs://acme-train-datasets/corpus/"
    assert staging.inputs["lustre_path"] == "/datasets"
    urns = by_urn(cap)
    assert not [u for u in staging.dependencies if urns[u].type == BUCKET_GRANT], "the grant, propagated"
    readers = [g for g in granted(cap, staging) if g.type == BUCKET_GRANT]
    assert [(g.inputs["bucket"], g.inputs["role"], g.inputs["member"]) for g in readers] == [
        ("acme-train-datasets", "roles/storage.objectViewer", LUSTRE_AGENT)
    ]
    assert one(cap, LUSTRE).urn in staging.dependencies
    assert staging.urn in one(cap, GROUP).dependencies, "nodes boot after the dataset is on Lustre"


def test_the_import_acts_as_the_deploy_service_account_the_provider_impersonates():
    """One identity for the whole `up` (gcp review R7): the provider's impersonated account is the import's too."""
    deployer = "accelstack-deploy@acme-train.iam.gserviceaccount.com"
    cap = run(f"account.deployServiceAccount={deployer}")
    [provider] = [r for r in cap.resources if r.type == "pulumi:providers:gcp"]
    assert provider.inputs["impersonateServiceAccount"] == deployer
    assert one(cap, IMPORT).inputs["impersonate_service_account"] == deployer
    assert "impersonate_service_account" not in one(run(), IMPORT).inputs


def test_nodes_read_datasets_and_write_checkpoints_but_cannot_delete_them():
    cap = run()
    nodes = one(cap, "gcp:serviceaccount/account:Account", "-nodes").outputs["member"]
    granted = sorted(
        (g.inputs["bucket"], g.inputs["role"]) for g in cap.by_type(BUCKET_GRANT) if g.inputs["member"] == nodes
    )
    assert granted == [
        ("acme-train-checkpoints", "roles/storage.objectCreator"),
        ("acme-train-checkpoints", "roles/storage.objectViewer"),
        ("acme-train-datasets", "roles/storage.objectViewer"),
    ]
    template = one(cap, TEMPLATE).inputs
    assert template["serviceAccount"]["email"].startswith("gcp-training-nodes@")


def test_checkpoints_are_versioned_soft_deleted_encrypted_and_only_old_versions_expire():
    bucket = one(run("training.storage.checkpoints.noncurrentVersionDays=60"), BUCKET, "-checkpoints")
    props = bucket.inputs
    assert props["versioning"] == {"enabled": True}
    assert props["softDeletePolicy"]["retentionDurationSeconds"] == str(60 * 86400)
    (rule,) = props["lifecycleRules"]
    assert rule["action"]["type"] == "Delete"
    assert rule["condition"] == {"daysSinceNoncurrentTime": 60, "withState": "ARCHIVED"}
    assert props["publicAccessPrevention"] == "enforced" and props["uniformBucketLevelAccess"] is True
    assert props["encryption"]["defaultKmsKeyName"].endswith("/cryptoKeys/gcp-training-data")
    assert bucket.protect and bucket.retain_on_delete


def test_the_head_keeps_its_state_disk_and_reserved_address_across_a_rebuild():
    cap = run()
    disk = one(cap, "gcp:compute/disk:Disk", "-slurmctld-state")
    assert disk.protect and disk.retain_on_delete
    assert disk.inputs["diskEncryptionKey"]["kmsKeySelfLink"].endswith("/cryptoKeys/gcp-training-data")
    head = one(cap, "gcp:compute/instance:Instance", "-head")
    (attached,) = head.inputs["attachedDisks"]
    assert attached["deviceName"] == "slurmctld-state" and attached["source"] == disk.outputs["id"]
    address = one(cap, "gcp:compute/address:Address", "-head").inputs
    assert address["addressType"] == "INTERNAL" and address["address"] == "10.50.0.10"
    assert head.inputs["networkInterfaces"][0]["networkIp"] == "10.50.0.10"
    assert head.delete_before_replace
    assert "/dev/disk/by-id/google-slurmctld-state" in head.inputs["metadata"]["user-data"]


def test_no_internet_ingress_on_any_network_and_ssh_only_through_iap():
    cap = run("training.nodes.instanceType=a3-highgpu-8g")
    denies = [f for f in cap.by_type(FIREWALL) if f.inputs.get("denies")]
    gvnic_networks = {n.outputs["id"] for n in cap.by_type(NETWORK) if "networkProfile" not in n.inputs}
    assert {f.inputs["network"] for f in denies} == gvnic_networks
    for rule in cap.by_type(FIREWALL):
        if rule.inputs.get("allows"):
            sources = rule.inputs["sourceRanges"]
            assert all(ipaddress.ip_network(s).is_private for s in sources) or sources == ["35.235.240.0/20"]
            assert rule.inputs["priority"] < denies[0].inputs["priority"]


@pytest.mark.parametrize(
    ("overrides", "path", "says"),
    [
        (("training.nodes.instanceType=a3-megagpu-16g",), "training.nodes.instanceType", "allowed: a4-highgpu-8g"),
        (("training.nodes.instanceType=g2-standard-48",), "training.nodes.instanceType", "no GPU network between VMs"),
        (("training.nodes.reservationId=my-block",), "training.nodes.reservationId", "Spot VMs cannot consume"),
        (("training.nodes.capacity=capacity-block",), "training.nodes.reservationId", "calendar-mode future"),
        (
            ("training.nodes.capacity=on-demand", "training.nodes.reservationId=Bad_Name"),
            "training.nodes.reservationId",
            "projects/<project>/reservations/<name>",
        ),
        (
            ("training.scheduler.headNode.instanceType=m7i.2xlarge",),
            "training.scheduler.headNode.instanceType",
            "n2-standard-8",
        ),
        # Cluster Director (managed): its machine types, capacity, login node and partitions.
        (
            ("training.scheduler.kind=managed", "training.nodes.instanceType=a3-highgpu-8g"),
            "training.nodes.instanceType",
            "not offered by Cluster Director",
        ),
        (
            ("training.scheduler.kind=managed", "training.nodes.capacity=on-demand"),
            "training.nodes.capacity",
            "no on-demand GPU nodes",
        ),
        (
            ("training.scheduler.kind=managed", "training.scheduler.headNode.instanceType=n2-standard-64"),
            "training.scheduler.headNode.instanceType",
            "n2-standard-2, -4, -8, -16 or -32",
        ),
        (("training.scheduler.kind=managed",), "training.scheduler.partitions[1].maxTime", "take no MaxTime"),
        (
            ("training.scheduler.kind=managed", 'training.scheduler.partitions=[{"name": "GPU_big"}]'),
            "training.scheduler.partitions[0].name",
            "lowercase letters, digits and '-'",
        ),
        (
            ("training.scheduler.kind=managed", "training.scheduler.partitions=[]"),
            "training.scheduler.partitions",
            "at least one partition",
        ),
        # DWS flex-start: a run time, seven days at most, no reservation.
        (("training.nodes.capacity=flex-start",), "training.nodes.maxRunHours", "needs maxRunHours"),
        (
            ("training.nodes.capacity=flex-start", "training.nodes.maxRunHours=200"),
            "training.nodes.maxRunHours",
            "allowed: 1 to 168",
        ),
        (
            ("training.nodes.capacity=spot", "training.nodes.maxRunHours=24"),
            "training.nodes.maxRunHours",
            "flex-start only",
        ),
        (
            ("training.nodes.capacity=flex-start", "training.nodes.maxRunHours=24", "training.nodes.reservationId=r1"),
            "training.nodes.reservationId",
            "takes no reservation",
        ),
        (("training.network.availabilityZone=europe-west4-a",), "training.network.availabilityZone", "us-central1-a"),
        (("training.storage.datasets.uri=gs://Acme_Data/corpus",), "training.storage.datasets.uri", "bucket name"),
        (
            ("training.storage.datasets.uri=gs://google-data/corpus",),
            "training.storage.datasets.uri",
            "not starting with 'goog'",
        ),
        (("training.storage.lustre.capacityGiB=10000",), "training.storage.lustre.capacityGiB", "9000"),
        (
            ("training.network.vpcId=projects/acme-train/global/networks/shared", "training.network.subnetId=nodes"),
            "training.network.vpcId",
            "not supported",
        ),
    ],
)
def test_what_google_would_reject_is_refused_at_its_config_path(overrides, path, says):
    message = spec_errors(*overrides)
    line = next((line for line in message.splitlines() if path in line), "")
    assert says in line, message


@pytest.mark.parametrize(
    ("bucket", "ok"),
    [
        ("acme-goog-data", True),  # 'goog' inside a name is fine; only the prefix is reserved
        ("googdata", False),
        ("acme-g00gle-data", False),
        ("acme-google", False),
        ("192.168.5.4", False),
        ("acme.train.data", True),
        ("ab", False),
        ("-acme", False),
    ],
)
def test_bucket_names_follow_cloud_storages_naming_rules(bucket, ok):
    overrides = (f"training.storage.datasets.uri=gs://{bucket}/corpus",)
    if ok:
        assert parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), STACK)
    else:
        assert "training.storage.datasets.uri" in spec_errors(*overrides)


def test_the_zone_is_required_because_zone_letters_differ_per_region():
    message = spec_errors("training.network.availabilityZone=null")
    assert "training.network.availabilityZone: name the zone" in message and "us-central1-b" in message


@pytest.mark.parametrize("stack", ["a-very-long-stack-name-for-research-x", "0train"])
def test_service_account_and_lustre_ids_are_valid_and_distinct_for_any_stack_name(stack):
    from accelstack.components.gcp.provider import resource_id

    ids = {suffix: resource_id(stack, suffix, 30) for suffix in ("nodes", "head", "replica")}
    assert len(set(ids.values())) == 3
    for value in [*ids.values(), resource_id(stack, "lustre", 63)]:
        assert value[0].isalpha() and value[-1].isalnum() and len(value) >= 6
    assert all(len(v) <= 30 for v in ids.values())
