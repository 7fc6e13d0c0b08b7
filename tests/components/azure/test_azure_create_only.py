"""What Azure takes only at creation, handled as such on a day-2 change (azure review F5, F6): Spot is set when a
scale set is created, so a switch replaces it; a conditioned role assignment cannot coexist with its replacement
(same principal, role and scope: RoleAssignmentExists), so the old one goes first."""

from __future__ import annotations

from stack_edits import deployed, replacements, updated

from accelstack.engine.replacement import CREATE_FIRST, REPLACE, UPDATE, plan_changes

NODES = "azure-native:compute:VirtualMachineScaleSet"


def test_a_spot_switch_replaces_the_node_scale_set() -> None:
    found = replacements("azure-training", ("training.nodes.capacity=spot",))
    assert any("VirtualMachineScaleSet" in line and "virtualMachineProfile.priority" in line for line in found), found
    [nodes] = [
        r
        for r in updated("azure-training", ("training.nodes.capacity=spot",)).resources
        if r.type == "azure-native:compute:VirtualMachineScaleSet" and r.name.endswith("-nodes")
    ]
    assert "virtualMachineProfile.priority" in nodes.request.replaceOnChanges


def test_a_new_model_replaces_the_conditioned_read_grant_delete_first() -> None:
    weights = "serving.model.weightsUri=https://acmetrainckpts.blob.core.windows.net/checkpoints/models/llama-3.1-8b-v2"
    found = replacements("azure-serving", (weights,))
    assert any("RoleAssignment" in line and "condition" in line for line in found), found
    conditioned = [
        r
        for r in deployed("azure-serving")[0].resources
        if r.type.endswith("RoleAssignment") and r.inputs.get("condition")
    ]
    assert conditioned and all(r.delete_before_replace for r in conditioned)
    plain = [
        r
        for r in deployed("azure-serving")[0].resources
        if r.type.endswith("RoleAssignment") and not r.inputs.get("condition")
    ]
    assert plain and not any(r.delete_before_replace for r in plain)  # only where the condition forces it


def test_managed_lustre_is_encrypted_with_a_2048_bit_rsa_key() -> None:
    """Managed Lustre takes a 2048-bit RSA key and no other (azure review F3): the key its encryption settings
    name, found through the engine's dependencies, is that."""
    resources = deployed("azure-training")[0].resources
    by_urn = {r.urn: r for r in resources}
    [file_system] = [r for r in resources if r.type == "azure-native:storagecache:AmlFilesystem"]
    keys = [by_urn[u] for u in file_system.property_dependencies.get("encryptionSettings", [])]
    keys = [k for k in keys if k.type == "azure-native:keyvault:Key"]
    assert keys, "the file system's encryption key"
    assert [(k.inputs["properties"]["kty"], k.inputs["properties"]["keySize"]) for k in keys] == [("RSA", 2048)]


def test_evicted_spot_nodes_are_restored_to_the_count() -> None:
    """Eviction Delete shrinks a scale set for good unless Try & restore brings it back (review M6)."""
    spot = updated("azure-training", ("training.nodes.capacity=spot",)).resources
    [nodes] = [r for r in spot if r.type == "azure-native:compute:VirtualMachineScaleSet" and r.name.endswith("-nodes")]
    assert nodes.inputs["virtualMachineProfile"]["evictionPolicy"] == "Delete"
    assert nodes.inputs["spotRestorePolicy"] == {"enabled": True, "restoreTimeout": "PT1H"}
    regular = deployed("azure-training")[0].resources
    [nodes] = [
        r for r in regular if r.type == "azure-native:compute:VirtualMachineScaleSet" and r.name.endswith("-nodes")
    ]
    assert "spotRestorePolicy" not in nodes.inputs


def node_set_change(*overrides: str):
    """What `pulumi up` does to the node scale set after the edit, as `accelstack diff` plans it."""
    changes = plan_changes(deployed("azure-training")[0].resources, updated("azure-training", overrides).resources)
    [change] = [c for c in changes if c.type == NODES and c.name.endswith("-nodes")]
    return change


def test_a_new_vm_size_replaces_the_node_scale_set_create_first() -> None:
    """In place, ARM changes the model only (Manual upgrades): the running nodes would keep the old size while Slurm
    already names the new GPU, in one placement group (azure review R8). A new size is a new scale set."""
    change = node_set_change("training.nodes.instanceType=Standard_ND96amsr_A100_v4")  # offered in eastus
    assert (change.action, change.order) == (REPLACE, CREATE_FIRST)
    assert "sku.name" in change.replacing
    # A new node count is still the same scale set, resized in place.
    resized = node_set_change("training.nodes.count=6")
    assert resized.action == UPDATE and "sku.name" not in resized.replacing


def test_the_checkpoint_writer_role_name_is_unique_in_the_tenant() -> None:
    """Custom role names are unique across a tenant (azure review R9): two subscriptions of one tenant deploying
    stacks of the same name must not ask for the same role name."""

    def role_name(subscription: str) -> str:
        edit = (f"account.subscriptionId={subscription}", f"separation.trainingAccounts=[{subscription}]")
        resources = updated("azure-training", edit).resources
        [role] = [r for r in resources if r.type == "azure-native:authorization:RoleDefinition"]
        return str(role.inputs["roleName"])

    first, second = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    assert role_name(first) != role_name(second)
    assert "azure-training" in role_name(first)
