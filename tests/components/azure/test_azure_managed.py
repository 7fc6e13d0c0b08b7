"""The managed alternative on Azure (`training.scheduler.kind: managed`): an Azure Machine Learning workspace and
AmlCompute cluster, previewed from the shipped Azure training example with the scheduler switched.

What an operator relies on: Azure accepts the cluster (a no-public-IP cluster needs the workspace's private
endpoint first), nothing is reachable from the internet or takes keys, the cluster is the stack's VM size in
the stack's subnet scaling to zero, the job template asks for every node and GPU, the packs judge the new
kinds (and catch the careless edits), and a day-2 resize replaces nothing.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack import outputs
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.engine.replacement import (
    DELETE,
    DELETE_FIRST,
    REPLACE,
    UPDATE,
    known_type,
    plan_changes,
    replacing_changes,
)
from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "stacks" / "Pulumi.azure-training.yaml"
MANAGED = ("training.scheduler.kind=managed", "training.storage.lustre=null")
ML = "azure-native:machinelearningservices"
WORKSPACE, COMPUTE, DATASTORE = f"{ML}:Workspace", f"{ML}:Compute", f"{ML}:Datastore"
COMPONENT, ENVIRONMENT = f"{ML}:ComponentVersion", f"{ML}:EnvironmentVersion"
ENDPOINT, ZONE_GROUP = "azure-native:network:PrivateEndpoint", "azure-native:network:PrivateDnsZoneGroup"
ACCOUNT = "azure-native:storage:StorageAccount"
NODES_ID = "azure-native:managedidentity:UserAssignedIdentity"


@cache
def managed(*extra: str) -> PreviewResult:
    return preview_stack(EXAMPLE, [*MANAGED, *extra], REPO)


def one(result: PreviewResult, type_token: str, name: str | None = None) -> Any:
    found = [r for r in result.resources if r.type == type_token and (name is None or r.name == name)]
    assert len(found) == 1, f"{type_token} {name or ''}: {[r.name for r in found]}"
    return found[0]


def test_the_cluster_is_the_stacks_vm_size_in_its_subnet_with_no_public_address_or_keys():
    result = managed()
    compute = one(result, COMPUTE)
    props = compute.inputs["properties"]
    inner = props["properties"]
    assert props["computeType"] == "AmlCompute"
    assert props["disableLocalAuth"] is True
    assert inner["vmSize"] == "Standard_ND96isr_H100_v5"
    assert inner["vmPriority"] == "Dedicated"
    assert inner["enableNodePublicIp"] is False
    assert inner["remoteLoginPortPublicAccess"] == "Disabled"
    assert inner["subnet"]["id"] == result.stack_outputs["subnetId"]
    # Nodes exist while jobs run: 0..count, never above the quota the stack plans for.
    assert inner["scaleSettings"]["minNodeCount"] == 0
    assert inner["scaleSettings"]["maxNodeCount"] == 4
    (identity,) = compute.inputs["identity"]["userAssignedIdentities"]
    assert identity.endswith("/azure-training-nodes-id")  # read datasets, write checkpoints, never delete


def test_azure_is_given_the_private_endpoint_before_a_no_public_ip_cluster():
    """ "Provided EnableNodePublicIp 'False' requires workspace private endpoint": the cluster waits for the
    endpoint, its DNS zone group and the zone links."""
    result = managed()
    compute, endpoint, group = one(result, COMPUTE), one(result, ENDPOINT), one(result, ZONE_GROUP)
    assert endpoint.urn in compute.dependencies and group.urn in compute.dependencies
    (connection,) = endpoint.inputs["privateLinkServiceConnections"]
    assert connection["groupIds"] == ["amlworkspace"]
    zones = [r for r in result.resources if r.type == "azure-native:privatedns:PrivateZone"]
    assert sorted(z.inputs["privateZoneName"] for z in zones) == [
        "privatelink.api.azureml.ms",
        "privatelink.notebooks.azure.net",
    ]
    assert all(z.inputs["location"] == "global" for z in zones)
    links = [r for r in result.resources if r.type == "azure-native:privatedns:VirtualNetworkLink"]
    assert {link.inputs["virtualNetwork"]["id"] for link in links} == {result.stack_outputs["networkId"]}
    assert {link.urn for link in links} <= set(compute.dependencies)


def test_the_workspace_is_private_identity_only_and_keeps_its_records_in_its_own_protected_account():
    result = managed()
    workspace = one(result, WORKSPACE)
    assert workspace.inputs["publicNetworkAccess"] == "Disabled"
    assert workspace.inputs["systemDatastoresAuthMode"] == "identity"
    assert workspace.protect and workspace.retain_on_delete
    accounts = {r.urn: r for r in result.resources if r.type == ACCOUNT}
    (own,) = [a for a in accounts.values() if a.name == "azure-training-aml"]
    assert workspace.inputs["storageAccount"] == own.outputs.get("id", workspace.inputs["storageAccount"])
    assert own.inputs["allowSharedKeyAccess"] is False and own.protect
    assert own.inputs["encryption"]["keySource"] == "Microsoft.Keyvault"


def test_jobs_reach_data_through_identity_datastores_not_lustre():
    result = managed()
    stores = {r.inputs["name"]: r.inputs["properties"] for r in result.resources if r.type == DATASTORE}
    assert sorted(stores) == ["checkpoints", "datasets"]
    assert {s["credentials"]["credentialsType"] for s in stores.values()} == {"None"}
    assert stores["datasets"]["containerName"] == "datasets"
    assert not [r for r in result.resources if r.type == "azure-native:storagecache:AmlFilesystem"]
    assert not [r for r in result.resources if r.type == "azure-native:compute:VirtualMachineScaleSet"]


def test_the_job_template_asks_for_every_node_and_gpu_and_a_new_version_for_new_content():
    spec = one(managed(), COMPONENT).inputs["properties"]["componentSpec"]
    assert spec["resources"]["instance_count"] == 4
    assert spec["distribution"] == {"type": "pytorch", "process_count_per_instance": 8}
    assert spec["environment"].startswith("azureml:accelstack-training:")
    assert (
        one(managed(), COMPONENT).inputs["version"]
        != one(managed("training.nodes.count=8"), COMPONENT).inputs["version"]
    )


def test_spot_is_low_priority():
    inner = one(managed("training.nodes.capacity=spot"), COMPUTE).inputs["properties"]["properties"]
    assert inner["vmPriority"] == "LowPriority"


def test_the_outputs_are_the_managed_contract():
    result = managed()
    holding = {outputs.CHECKPOINTS, outputs.SCHEDULER, outputs.MANAGED_SCHEDULER}
    exported = {k for k in result.stack_outputs if k not in outputs.LEGACY_NAMES}
    assert exported == set(outputs.expected_keys("training", holding))
    assert result.stack_outputs["scheduler"] == "azure-ml"


def test_both_packs_pass_and_every_kind_is_known_and_tabled():
    result = managed()
    assert [v.line() for v in policy_verdicts(result.export, result.spec)] == []
    assert sorted({r.type for r in result.resources if r.custom and not known_type(r.type)}) == []


def _entry(doc: dict[str, Any], type_token: str) -> dict[str, Any]:
    (found,) = [r for r in doc["deployment"]["resources"] if r["type"] == type_token]
    return found


def _sides(resource: dict[str, Any]) -> list[dict[str, Any]]:
    return [resource[key] for key in ("inputs", "outputs") if key in resource]


@pytest.mark.parametrize(
    ("mutation", "type_token", "policy"),
    [
        ("workspace-public", WORKSPACE, "managed-ml-private"),
        ("compute-local-auth", COMPUTE, "managed-ml-private"),
        ("compute-public-ip", COMPUTE, "no-public-ip-on-nodes"),
        ("compute-ssh-open", COMPUTE, "no-public-ip-on-nodes"),
        ("datastore-account-key", DATASTORE, "managed-ml-private"),
        ("workspace-unprotected", WORKSPACE, "protect-stateful"),
    ],
)
def test_a_careless_edit_of_the_managed_stack_is_caught(mutation, type_token, policy):
    result = managed()
    doc = copy.deepcopy(result.export)
    if type_token == DATASTORE:
        resource = next(r for r in doc["deployment"]["resources"] if r["type"] == DATASTORE)
    else:
        resource = _entry(doc, type_token)
    for side in _sides(resource):
        if mutation == "workspace-public":
            side["publicNetworkAccess"] = "Enabled"
        elif mutation == "compute-local-auth":
            side["properties"]["disableLocalAuth"] = False
        elif mutation == "compute-public-ip":
            side["properties"]["properties"]["enableNodePublicIp"] = True
        elif mutation == "compute-ssh-open":
            side["properties"]["properties"]["remoteLoginPortPublicAccess"] = "Enabled"
        elif mutation == "datastore-account-key":
            side["properties"]["credentials"] = {"credentialsType": "AccountKey", "secrets": {"key": "redacted"}}
    if mutation == "workspace-unprotected":
        resource["protect"] = False
    verdicts = policy_verdicts(doc, result.spec)
    assert any(v.mandatory and v.urn == resource["urn"] and v.policy == policy for v in verdicts), [
        v.line() for v in verdicts
    ]


def test_a_resize_updates_the_cluster_in_place_and_a_new_size_replaces_only_the_cluster():
    before, after = one(managed(), COMPUTE).inputs, one(managed("training.nodes.count=16"), COMPUTE).inputs
    assert after["properties"]["properties"]["scaleSettings"]["maxNodeCount"] == 16
    assert replacing_changes(COMPUTE, before, after, []) == []
    bigger = one(managed("training.nodes.instanceType=Standard_ND96amsr_A100_v4"), COMPUTE).inputs
    assert replacing_changes(COMPUTE, before, bigger, []) == ["properties.properties.vmSize"]
    workspace = one(managed(), WORKSPACE).inputs
    assert replacing_changes(WORKSPACE, workspace, one(managed("training.nodes.count=16"), WORKSPACE).inputs, []) == []


def _errors(*overrides: str) -> dict[str, str]:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    with pytest.raises(SpecError) as caught:
        parse_spec(raw, "azure-training")
    return {p.path: p.message for p in caught.value.problems}


def test_lustre_and_a_reservation_are_refused_with_the_managed_scheduler_at_their_paths():
    assert "Lustre client" in _errors("training.scheduler.kind=managed")["training.storage.lustre"]
    reservation = (
        "/subscriptions/3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c/resourceGroups/rg/providers/"
        "Microsoft.Compute/capacityReservationGroups/crg"
    )
    problems = _errors(*MANAGED, "training.nodes.count=1", f"training.nodes.reservationId={reservation}")
    assert "capacity reservation group" in problems["training.nodes.reservationId"]
    parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(MANAGED)), "azure-training")  # valid without


def test_day_2_the_cluster_grows_in_place_a_new_size_replaces_it_delete_first_and_old_templates_stay():
    """AmlCompute accepts only scale-setting updates: a new size is a replacement, deleted first (its name is
    fixed; it holds no data). New job templates are new versions; the old ones are retained for past jobs."""
    base = managed()
    grown = {c.name: c for c in plan_changes(base.resources, managed("training.nodes.count=16").resources)}
    assert grown["azure-training-aml-nodes"].action == UPDATE
    template = grown["azure-training-aml-component"]
    assert template.action == REPLACE and "version" in template.replacing and template.retain_on_delete
    assert one(base, ENVIRONMENT).retain_on_delete

    resized = {
        c.name: c
        for c in plan_changes(
            base.resources, managed("training.nodes.instanceType=Standard_ND96amsr_A100_v4").resources
        )
    }
    cluster = resized["azure-training-aml-nodes"]
    assert cluster.action == REPLACE and cluster.order == DELETE_FIRST
    assert cluster.replacing == ["properties.properties.vmSize"]
    stateful = {"azure-native:storage:StorageAccount", WORKSPACE, "azure-native:keyvault:Vault"}
    assert [c.name for c in resized.values() if c.type in stateful and c.action in (REPLACE, DELETE)] == []


def test_the_vault_firewall_admits_the_clusters_subnet():
    """The workspace keeps its secrets in the stack's vault (Azure Machine Learning is a trusted service the
    firewall's bypass lets through); the cluster's nodes reach it from their subnet, which the vault lists."""
    result = managed()
    acls = one(result, "azure-native:keyvault:Vault").inputs["properties"]["networkAcls"]
    subnet = one(result, COMPUTE).inputs["properties"]["properties"]["subnet"]["id"]
    assert acls["defaultAction"] == "Deny" and acls["bypass"] == "AzureServices"
    assert subnet in [rule["id"] for rule in acls["virtualNetworkRules"]]
