"""The real program (`__main__.py`) on the Azure training example, captured under Azure's mocks.

What an operator relies on: the nodes are one InfiniBand scale set Azure will accept, no node is reachable
from the internet, the HPC Cache resource provider holds its roles before Managed Lustre is created, the
Lustre subnet is sized for the file system, Spot is configured as Azure takes it, checkpoints can be written
but never deleted by the nodes, and no day-2 edit replaces or deletes anything that holds data.
"""

from __future__ import annotations

import base64
import ipaddress
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
import stack_edits
import yaml
from propagation_waits import granted, wait_seconds, waits_of

from accelstack.clouds.azure import catalog
from accelstack.components.azure.mocks import mocks as azure_mocks
from accelstack.components.azure.storage import (
    KEY_VAULT_CRYPTO_SERVICE_ENCRYPTION_USER,
    STORAGE_ACCOUNT_CONTRIBUTOR,
    STORAGE_BLOB_DATA_CONTRIBUTOR,
    STORAGE_BLOB_DATA_READER,
)
from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[3]
MAIN = REPO / "__main__.py"
EXAMPLE = REPO / "stacks" / "Pulumi.azure-training.yaml"
STACK = "azure-training"

VMSS = "azure-native:compute:VirtualMachineScaleSet"
AMLFS = "azure-native:storagecache:AmlFilesystem"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
SUBNET = "azure-native:network:Subnet"
NSG = "azure-native:network:NetworkSecurityGroup"
HEAD = "azure-native:compute:VirtualMachine"
# What holds data or key material on Azure (until the policy concept table knows these kinds).
AZURE_STATEFUL = frozenset(
    {
        "azure-native:storage:StorageAccount",
        "azure-native:storage:BlobContainer",
        "azure-native:storage:BlobServiceProperties",
        "azure-native:storage:ManagementPolicy",
        "azure-native:keyvault:Vault",
        "azure-native:keyvault:Key",
        "azure-native:keyvault:Secret",
        AMLFS,
        "azure-native:compute:Disk",
    }
)


@cache
def stack(*overrides: str) -> Capture:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    return capture(MAIN, config_for_pulumi(raw), stack=STACK, mocks=azure_mocks(raw["account"]))


def only(cap: Capture, type_token: str, name: str | None = None) -> Registration:
    found = [r for r in cap.resources if r.type == type_token and (name is None or r.name == name)]
    assert len(found) == 1, f"expected one {type_token} {name or ''}, found {[r.name for r in found]}"
    return found[0]


def by_urn(cap: Capture) -> dict[str, Registration]:
    return {r.urn: r for r in cap.resources}


def role_id(registration: Registration) -> str:
    return str(registration.inputs["roleDefinitionId"]).rsplit("/", 1)[-1]


# --- the InfiniBand scale set -----------------------------------------------------------------------


def test_nodes_are_one_uniform_single_placement_group_scale_set_azure_accepts_for_infiniband():
    cap = stack()
    vmss = only(cap, VMSS)
    inputs = vmss.inputs
    assert [r.type for r in cap.resources].count(VMSS) == 1  # InfiniBand joins one scale set's VMs only
    assert inputs["orchestrationMode"] == "Uniform"
    assert inputs["singlePlacementGroup"] is True
    assert inputs["platformFaultDomainCount"] == 1
    assert inputs["overprovision"] is False  # extra VMs would join the fabric and Slurm, then vanish
    assert inputs["upgradePolicy"] == {"mode": "Manual"}
    assert inputs["sku"] == {"name": "Standard_ND96isr_H100_v5", "tier": "Standard", "capacity": 4}
    assert inputs["zones"] == ["1"]
    profile = inputs["virtualMachineProfile"]
    image = profile["storageProfile"]["imageReference"]
    assert (image["publisher"], image["offer"], image["sku"]) == ("microsoft-dsvm", "ubuntu-hpc", "2404")
    (nic,) = profile["networkProfile"]["networkInterfaceConfigurations"]
    assert nic["enableAcceleratedNetworking"] is True
    assert all("publicIPAddressConfiguration" not in ip for ip in nic["ipConfigurations"])
    assert profile["priority"] == "Regular" and "evictionPolicy" not in profile


def test_the_scale_set_scales_by_capacity_not_by_resources():
    small, large = stack(), stack("training.nodes.count=100")
    assert len(small.resources) == len(large.resources)
    assert only(large, VMSS).inputs["sku"]["capacity"] == 100


def test_spot_nodes_are_evicted_by_delete_and_never_for_price():
    profile = only(stack("training.nodes.capacity=spot"), VMSS).inputs["virtualMachineProfile"]
    assert profile["priority"] == "Spot"
    assert profile["evictionPolicy"] == "Delete"  # frees the low-priority quota; Deallocate would keep it
    assert profile["billingProfile"] == {"maxPrice": -1}


def test_spot_nodes_watch_scheduled_events_for_their_own_preempt():
    profile = only(stack("training.nodes.capacity=spot"), VMSS).inputs["virtualMachineProfile"]
    cloud_config = base64.b64decode(profile["osProfile"]["customData"]).decode()
    assert "/metadata/scheduledevents?api-version=2020-07-01" in cloud_config
    assert "accelstack-spot-watcher.service" in cloud_config


# --- Managed Lustre and its prerequisites ------------------------------------------------------------


def test_hpc_cache_provider_holds_both_roles_on_the_dataset_account_before_lustre_is_created():
    cap = stack()
    resources = by_urn(cap)
    lustre = only(cap, AMLFS)
    account = only(cap, "azure-native:storage:StorageAccount", "azure-training-storage-datasets")
    assert not [u for u in lustre.dependencies if resources[u].type == ROLE_ASSIGNMENT], "grants, propagated"
    grants = [r for r in granted(cap, lustre) if r.type == ROLE_ASSIGNMENT]
    principal = read_stack_file(EXAMPLE)["account"]["hpcCachePrincipalId"]
    provider_grants = {role_id(g) for g in grants if g.inputs["principalId"] == principal}
    assert provider_grants == {STORAGE_ACCOUNT_CONTRIBUTOR, STORAGE_BLOB_DATA_CONTRIBUTOR}
    assert all(g.inputs["scope"] == account.outputs["id"] for g in grants if g.inputs["principalId"] == principal)
    # The provider's roles wait as long as Managed Lustre documents; the keys' roles as long as Key Vault does.
    waits = {w.name: wait_seconds(w) for w in waits_of(cap, lustre)}
    assert waits == {
        "azure-training-storage-hpc-cache-propagation": catalog.RBAC_PROPAGATION_SECONDS,
        "azure-training-storage-storage-id-key-propagation": catalog.KEY_VAULT_RBAC_PROPAGATION_SECONDS,
        "azure-training-storage-storage-id-lustre-key-propagation": catalog.KEY_VAULT_RBAC_PROPAGATION_SECONDS,
    }


def test_lustre_imports_the_dataset_prefix_with_a_separate_logging_container():
    cap = stack()
    settings = only(cap, AMLFS).inputs["hsm"]["settings"]
    data = only(cap, "azure-native:storage:BlobContainer", "azure-training-storage-datasets")
    assert settings["container"] == data.outputs["id"]
    assert settings["loggingContainer"] != settings["container"]
    assert settings["importPrefixesInitial"] == ["/corpus"]
    account = only(cap, "azure-native:storage:StorageAccount", "azure-training-storage-datasets").inputs
    assert account["allowSharedKeyAccess"] is True and account["isHnsEnabled"] is False


def test_lustre_takes_the_sku_capacity_and_zone_the_spec_names():
    inputs = only(stack(), AMLFS).inputs
    assert inputs["sku"] == {"name": "AMLFS-Durable-Premium-500"}
    assert inputs["storageCapacityTiB"] == 8
    assert inputs["zones"] == ["1"]


@pytest.mark.parametrize(
    ("capacity_gib", "tier", "prefix"),
    [
        (8192, "AMLFS-Durable-Premium-500", 27),
        (49152, "AMLFS-Durable-Premium-500", 25),
        (131072, "AMLFS-Durable-Premium-250", 24),
    ],
)
def test_the_lustre_subnet_is_dedicated_and_sized_for_the_capacity(capacity_gib, tier, prefix):
    throughput = catalog.AMLFS_SKUS[tier].throughput_mbps_per_tib
    cap = stack(
        f"training.storage.lustre.capacityGiB={capacity_gib}",
        f"training.storage.lustre.tier={tier}",
        f"training.storage.lustre.throughputPerTiB={throughput}",
    )
    lustre_subnet = only(cap, SUBNET, "azure-training-net-lustre")
    nodes_subnet = only(cap, SUBNET, "azure-training-net-nodes")
    network = ipaddress.ip_network(lustre_subnet.inputs["addressPrefix"])
    assert network.prefixlen == prefix
    assert not network.overlaps(ipaddress.ip_network(nodes_subnet.inputs["addressPrefix"]))
    assert only(cap, AMLFS).inputs["filesystemSubnet"] == lustre_subnet.outputs["id"]


def test_the_lustre_subnet_admits_only_lustre_ports_from_the_vnet():
    rules = only(stack(), NSG, "azure-training-net-lustre-nsg").inputs["securityRules"]
    from_vnet = [r for r in rules if r["access"] == "Allow" and r["sourceAddressPrefix"] == "VirtualNetwork"]
    assert sorted(r["destinationPortRange"] for r in from_vnet) == ["1019-1023", "988"]
    denied = {r["sourceAddressPrefix"] for r in rules if r["access"] == "Deny"}
    assert denied == {"VirtualNetwork", "Internet"}


def test_no_internet_ingress_to_the_nodes_and_no_public_address_but_the_nat_gateways():
    cap = stack()
    rules = only(cap, NSG, "azure-training-net-nodes-nsg").inputs["securityRules"]
    assert any(r["access"] == "Deny" and r["sourceAddressPrefix"] == "Internet" for r in rules)
    public = [r for r in cap.resources if r.type == "azure-native:network:PublicIPAddress"]
    nat = only(cap, "azure-native:network:NatGateway")
    assert [p.outputs["id"] for p in public] == [a["id"] for a in nat.inputs["publicIpAddresses"]]


# --- identities and data-plane roles -----------------------------------------------------------------


def test_nodes_read_datasets_and_write_checkpoints_but_cannot_delete_them():
    cap = stack()
    # The mocks answer one principal id for every identity: the nodes' grants are the ones named for them.
    grants = [r for r in cap.resources if r.type == ROLE_ASSIGNMENT and r.name.startswith("azure-training-nodes-")]
    assert len(grants) == 3  # datasets, checkpoints, the munge key
    dataset = only(cap, "azure-native:storage:BlobContainer", "azure-training-storage-datasets")
    reads = [g for g in grants if g.inputs["scope"] == dataset.outputs["id"]]
    assert [role_id(g) for g in reads] == [STORAGE_BLOB_DATA_READER]
    writer = only(cap, "azure-native:authorization:RoleDefinition")
    (permission,) = writer.inputs["permissions"]
    assert not any("delete" in action.lower() for action in permission["dataActions"] + permission["actions"])
    assert any(action.endswith("blobs/write") for action in permission["dataActions"])
    checkpoints = only(cap, "azure-native:storage:BlobContainer", "azure-training-storage-checkpoints")
    (write,) = [g for g in grants if g.inputs["scope"] == checkpoints.outputs["id"]]
    assert role_id(write) == writer.inputs["roleDefinitionId"]  # the custom role, not Blob Data Contributor
    assert write.inputs["roleDefinitionId"].startswith("/subscriptions/3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c/providers/")
    # No grant of the nodes reaches beyond a container or the one secret.
    assert all("/containers/" in g.inputs["scope"] or "/secrets/" in g.inputs["scope"] for g in grants)


def test_the_scale_set_boots_only_after_its_roles_and_the_file_system_exist():
    cap = stack()
    resources = by_urn(cap)
    vmss = only(cap, VMSS)
    waits_for = {resources[urn].type for urn in vmss.dependencies if urn in resources}
    assert ROLE_ASSIGNMENT in waits_for and AMLFS in waits_for


def test_storage_encrypts_with_the_stack_key_only_after_its_identity_may_use_it():
    cap = stack()
    resources = by_urn(cap)
    for account in (r for r in cap.resources if r.type == "azure-native:storage:StorageAccount"):
        assert account.inputs["encryption"]["keySource"] == "Microsoft.Keyvault"
        assert not [u for u in account.dependencies if resources[u].type == ROLE_ASSIGNMENT], "the grant, propagated"
        assert [role_id(g) for g in granted(cap, account)] == [KEY_VAULT_CRYPTO_SERVICE_ENCRYPTION_USER]
    checkpoints = only(cap, "azure-native:storage:StorageAccount", "azure-training-storage-checkpoints").inputs
    assert checkpoints["allowSharedKeyAccess"] is False
    assert checkpoints["minimumTlsVersion"] == "TLS1_2" and checkpoints["allowBlobPublicAccess"] is False


def test_checkpoints_are_versioned_and_soft_deleted():
    props = only(stack(), "azure-native:storage:BlobServiceProperties").inputs
    assert props["isVersioningEnabled"] is True
    assert props["deleteRetentionPolicy"] == {"enabled": True, "days": 30}
    assert props["containerDeleteRetentionPolicy"] == {"enabled": True, "days": 30}


# --- stateful resources -------------------------------------------------------------------------------


def test_everything_that_holds_data_or_keys_is_protected_and_retained():
    stateful = [r for r in stack().resources if r.type in AZURE_STATEFUL]
    assert {r.type for r in stateful} == AZURE_STATEFUL
    assert [r.name for r in stateful if not (r.protect and r.retain_on_delete)] == []


@pytest.mark.parametrize("label", sorted(stack_edits.DAY_2_CHANGES["azure-training"]))
def test_day_2_changes_keep_every_azure_stateful_resource(label, monkeypatch):
    monkeypatch.setattr(
        stack_edits, "is_stateful", lambda t: t in AZURE_STATEFUL or t in stack_edits.STATEFUL_LOCAL_TYPES
    )
    assert stack_edits.losses(STACK, stack_edits.DAY_2_CHANGES[STACK][label]) == []


def test_a_lustre_resize_is_reported_as_a_loss(monkeypatch):
    """Guards the guard: Managed Lustre cannot change capacity in place, so growing it replaces it."""
    monkeypatch.setattr(stack_edits, "is_stateful", lambda t: t in AZURE_STATEFUL)
    lost = stack_edits.losses(STACK, ("training.storage.lustre.capacityGiB=12288",))
    assert any(AMLFS in line for line in lost)


# --- the head node and the cloud-init Azure receives -------------------------------------------------


def test_the_head_keeps_its_state_disk_and_address_across_a_rebuild():
    cap = stack()
    head = only(cap, HEAD)
    (disk,) = head.inputs["storageProfile"]["dataDisks"]
    assert disk["createOption"] == "Attach" and disk["deleteOption"] == "Detach" and disk["lun"] == 0
    nic = only(cap, "azure-native:network:NetworkInterface")
    (ip,) = nic.inputs["ipConfigurations"]
    assert ip["privateIPAllocationMethod"] == "Static"
    head_config = base64.b64decode(head.inputs["osProfile"]["customData"]).decode()
    assert "/dev/disk/azure/scsi1/lun0" in head_config
    assert (
        ip["privateIPAddress"]
        in base64.b64decode(only(cap, VMSS).inputs["virtualMachineProfile"]["osProfile"]["customData"]).decode()
    )


def test_the_head_copies_lustre_checkpoints_to_their_container_without_deleting():
    head = only(stack(), HEAD)
    text = base64.b64decode(head.inputs["osProfile"]["customData"]).decode()
    config = yaml.safe_load(text)
    files = {f["path"]: f["content"] for f in config["write_files"]}
    service = files["/etc/systemd/system/accelstack-checkpoint-export.service"]
    script = files[service.split("ExecStart=/usr/bin/env ", 1)[1].split()[0]]
    assert "source_dir=/lustre/checkpoints" in script
    assert "destination=https://acmetrainckpts.blob.core.windows.net/checkpoints/" in script
    # AzCopy copies (never sync --delete-destination) and never overwrites an exported object.
    assert script.count("azcopy copy") == 2 and script.count("--overwrite=false") == 2 and "delete" not in script
    assert "RequiresMountsFor=/lustre/checkpoints" in service
    assert config["ssh_pwauth"] is False


@pytest.mark.skipif(shutil.which("cloud-init") is None, reason="needs cloud-init on PATH")
@pytest.mark.parametrize("capacity", ["on-demand", "spot"])
def test_cloud_init_accepts_what_azure_boots_the_head_and_nodes_with(tmp_path, capacity):
    cap = stack(f"training.nodes.capacity={capacity}")
    documents = {
        "head": only(cap, HEAD).inputs["osProfile"]["customData"],
        "nodes": only(cap, VMSS).inputs["virtualMachineProfile"]["osProfile"]["customData"],
    }
    for role, data in documents.items():
        path = tmp_path / f"{role}.yaml"
        path.write_bytes(base64.b64decode(data))
        result = subprocess.run(["cloud-init", "schema", "--config-file", str(path)], capture_output=True, text=True)
        assert result.returncode == 0, f"{role}: {result.stdout}{result.stderr}"


def test_one_node_launches_into_its_capacity_reservation_group():
    group = (
        "/subscriptions/3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c/resourceGroups/capacity/providers/"
        "Microsoft.Compute/capacityReservationGroups/nd-h100"
    )
    vmss = only(stack("training.nodes.count=1", f"training.nodes.reservationId={group}"), VMSS).inputs
    assert vmss["virtualMachineProfile"]["capacityReservation"] == {"capacityReservationGroup": {"id": group}}
    assert vmss["singlePlacementGroup"] is False  # what a Uniform scale set needs to use the reservation


# --- serving's read path through the checkpoint account's firewall ----------------------------------------


def _admitted(account: Registration) -> list[str]:
    return [r["virtualNetworkResourceId"] for r in account.inputs["networkRuleSet"]["virtualNetworkRules"]]


def test_the_checkpoint_account_admits_the_serving_replicas_subnets_and_the_dataset_account_does_not():
    """Serving replicas in another subscription read the published models from the checkpoint account; its
    firewall (default Deny) must list their subnet or the reads are refused whatever their role says."""
    readers = read_stack_file(EXAMPLE)["training"]["artifactReaderSubnets"]
    cap = stack()
    checkpoints = only(cap, "azure-native:storage:StorageAccount", "azure-training-storage-checkpoints")
    datasets = only(cap, "azure-native:storage:StorageAccount", "azure-training-storage-datasets")
    assert checkpoints.inputs["networkRuleSet"]["defaultAction"] == "Deny"
    assert _admitted(checkpoints)[1:] == readers and len(_admitted(checkpoints)) == 1 + len(readers)
    assert not set(readers) & set(_admitted(datasets))  # datasets stay training's alone
    assert _admitted(checkpoints)[0] == _admitted(datasets)[0]  # the nodes' subnet, on both


def test_without_reader_subnets_only_the_nodes_subnet_is_admitted():
    cap = stack("training.artifactReaderSubnets=[]")
    checkpoints = only(cap, "azure-native:storage:StorageAccount", "azure-training-storage-checkpoints")
    assert len(_admitted(checkpoints)) == 1


def test_the_checkpoint_account_admits_the_other_clouds_readers_addresses_and_only_it():
    """Replicas on AWS or Google Cloud read through their NAT from the internet: the checkpoint account's firewall
    admits their egress addresses by IP rule; the dataset account, and the shipped example, admit no address."""
    addresses = ["52.1.2.3", "34.118.4.0/30"]
    cap = stack(
        'separation.servingAccounts=["7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098", "aws:222222222222"]',
        'training.artifactReaderAddresses=["52.1.2.3", "34.118.4.0/30"]',
    )
    checkpoints = only(cap, "azure-native:storage:StorageAccount", "azure-training-storage-checkpoints")
    datasets = only(cap, "azure-native:storage:StorageAccount", "azure-training-storage-datasets")
    rules = checkpoints.inputs["networkRuleSet"]
    assert rules["ipRules"] == [{"iPAddressOrRange": address, "action": "Allow"} for address in addresses]
    assert rules["defaultAction"] == "Deny" and checkpoints.inputs["publicNetworkAccess"] == "Enabled"
    assert _admitted(checkpoints)[1:] == read_stack_file(EXAMPLE)["training"]["artifactReaderSubnets"]
    assert "ipRules" not in datasets.inputs["networkRuleSet"]
    workspace_and_others = [r for r in cap.by_type("azure-native:storage:StorageAccount") if r.name != checkpoints.name]
    assert all("ipRules" not in r.inputs["networkRuleSet"] for r in workspace_and_others)
    shipped = only(stack(), "azure-native:storage:StorageAccount", "azure-training-storage-checkpoints")
    assert "ipRules" not in shipped.inputs["networkRuleSet"]


# --- the vault's firewall -----------------------------------------------------------------------------

VAULT = "azure-native:keyvault:Vault"


def _vault_admits(cap: Capture) -> list[str]:
    acls = only(cap, VAULT).inputs["properties"]["networkAcls"]
    assert acls["defaultAction"] == "Deny" and acls["bypass"] == "AzureServices" and not acls.get("ipRules")
    return [rule["id"] for rule in acls["virtualNetworkRules"]]


def _subnet_ids(cap: Capture) -> dict[str, Registration]:
    return {subnet.id: subnet for subnet in cap.resources if subnet.type == SUBNET}


def test_the_vault_admits_every_subnet_whose_machines_or_file_system_read_it_and_nothing_else():
    """The head reads the munge key and Slurm's configuration, the nodes the munge key: each through the
    vault's firewall from its own subnet, which must be listed and carry the Microsoft.KeyVault service
    endpoint (Azure refuses a virtual network rule for a subnet without it). The file system's subnet too."""
    cap = stack()
    nic = only(cap, "azure-native:network:NetworkInterface")
    head_subnet = nic.inputs["ipConfigurations"][0]["subnet"]["id"]
    profile = only(cap, VMSS).inputs["virtualMachineProfile"]["networkProfile"]
    (node_nic,) = profile["networkInterfaceConfigurations"]
    node_subnet = node_nic["ipConfigurations"][0]["subnet"]["id"]
    lustre_subnet = only(cap, AMLFS).inputs["filesystemSubnet"]
    admitted = _vault_admits(cap)
    assert sorted(admitted) == sorted({head_subnet, node_subnet, lustre_subnet})
    subnets = _subnet_ids(cap)
    for subnet_id in admitted:
        endpoints = [e["service"] for e in subnets[subnet_id].inputs.get("serviceEndpoints") or []]
        assert "Microsoft.KeyVault" in endpoints, subnets[subnet_id].name
    # The vault waits for the subnets it names (the rules are checked when the vault is written).
    vault = only(cap, VAULT)
    subnet_urns = {subnets[s].urn for s in admitted}
    assert subnet_urns <= set(vault.dependencies).union(*vault.property_dependencies.values())


def test_without_lustre_the_vault_admits_only_the_nodes_subnet():
    cap = stack("training.storage.lustre=null", "training.storage.checkpoints.path=null")
    assert not [r for r in cap.resources if r.type == AMLFS]
    (admitted,) = _vault_admits(cap)
    assert _subnet_ids(cap)[admitted].name == "azure-training-net-nodes"
