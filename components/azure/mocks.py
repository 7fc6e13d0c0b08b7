"""How Azure answers a program run under Pulumi mocks: the one table behind `accelstack preview` (the
engine's offline capture) and `accelstack.testing.mocks("azure")` (a user's own unit tests).

Invokes get camelCase answers for the stack's subscription and tenant (a snake_case key would reach the
SDK as None). Resources echo their inputs plus what Azure computes and the components read: `name`
(azure-native auto-names at the provider, which mocks do not run) and an ARM resource id in the stack's
subscription, built from the type token (`azure-native:storage:StorageAccount` ->
`/subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Storage/storageAccounts/<name>`).

Answers are deterministic (the golden exports pin them).
"""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import pulumi

from accelstack.components.propagation import SLEEP, mock_sleep
from accelstack.components.recipes.landing import STACK_REFERENCE, landing_reference_outputs

DEFAULT_SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
DEFAULT_TENANT_ID = "11111111-1111-1111-1111-111111111111"
DEFAULT_LOCATION = "eastus"
MOCK_PRINCIPAL_ID = "22222222-2222-2222-2222-222222222222"
CLOCK = "time:index/static:Static"
MOCK_CLOCK = "2026-12-05T12:00:00Z"

# azure-native module -> the Resource Manager namespace its resources live in (where it is not
# "Microsoft." + the module's name with its first letter up).
NAMESPACES = {
    "authorization": "Microsoft.Authorization",
    "compute": "Microsoft.Compute",
    "keyvault": "Microsoft.KeyVault",
    "machinelearningservices": "Microsoft.MachineLearningServices",
    "managedidentity": "Microsoft.ManagedIdentity",
    "monitor": "Microsoft.Insights",
    "insights": "Microsoft.Insights",
    "network": "Microsoft.Network",
    "operationalinsights": "Microsoft.OperationalInsights",
    "servicebus": "Microsoft.ServiceBus",
    "standbypool": "Microsoft.StandbyPool",
    "storage": "Microsoft.Storage",
    "storagecache": "Microsoft.StorageCache",
}


def arm_type(type_token: str) -> tuple[str, str]:
    """`azure-native:storage:StorageAccount` -> ("Microsoft.Storage", "storageAccounts")."""
    _, module, name = type_token.split(":")
    namespace = NAMESPACES.get(module, f"Microsoft.{module[:1].upper()}{module[1:]}")
    plural = name[:1].lower() + name[1:]
    if plural.endswith("y") and not plural.endswith("ey"):
        plural = plural[:-1] + "ies"
    elif plural.endswith("s"):
        plural += "es"  # publicIPAddresses
    else:
        plural += "s"
    return namespace, plural


class AzureMocks(pulumi.runtime.Mocks):
    """Answers like Azure would at preview. Subclass and override `call` or `new_resource` (calling
    `super()` for the rest) to model a subscription that differs."""

    def __init__(
        self,
        subscription_id: str = DEFAULT_SUBSCRIPTION_ID,
        tenant_id: str = DEFAULT_TENANT_ID,
        location: str = DEFAULT_LOCATION,
    ):
        self.subscription_id = subscription_id
        self.tenant_id = tenant_id
        self.location = location

    def resource_id(self, type_token: str, name: str, resource_group: str | None) -> str:
        if type_token == "azure-native:resources:ResourceGroup":
            return f"/subscriptions/{self.subscription_id}/resourceGroups/{name}"
        namespace, plural = arm_type(type_token)
        group = f"/resourceGroups/{resource_group}" if resource_group else ""
        return f"/subscriptions/{self.subscription_id}{group}/providers/{namespace}/{plural}/{name}"

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ == "random:index/randomBytes:RandomBytes":
            # Random bytes are computed: answer fixed ones (zeros of the asked length) so what derives from
            # them (the admin SSH public key) is known in a preview, and the goldens are deterministic.
            raw = bytes(int(args.inputs.get("length") or 32))
            outputs.setdefault("base64", base64.b64encode(raw).decode())
            outputs.setdefault("hex", raw.hex())
        if args.typ == SLEEP:
            return mock_sleep(args)
        if args.typ == CLOCK:  # set at create (a budget's first month): a fixed instant keeps previews deterministic
            return MOCK_CLOCK, {**outputs, "id": MOCK_CLOCK, "rfc3339": MOCK_CLOCK}
        if args.typ == STACK_REFERENCE:  # a landing stack's outputs: this subscription, either side
            return f"{args.name}-id", landing_reference_outputs(args, self.subscription_id)
        landing = self.landing_resource(args.typ, args.name, outputs)
        if landing is not None:
            return landing
        if not args.typ.startswith("azure-native:"):
            return f"{args.name}-id", outputs
        name = args.typ.split(":")[2]
        # The resource's own name input is `<camelName>Name` (storageAccountName, vmScaleSetName, ...).
        own = name[:1].lower() + name[1:] + "Name"
        short = re.sub(r"[^A-Za-z0-9-]", "", args.name)
        resource_name = str(args.inputs.get(own) or args.inputs.get("name") or short)
        outputs.setdefault("name", resource_name)
        resource_id = self.resource_id(args.typ, resource_name, args.inputs.get("resourceGroupName"))
        resource_id = self.child_resource_id(args.typ, resource_name, args.inputs) or resource_id
        outputs.setdefault("id", resource_id)
        outputs.setdefault("location", args.inputs.get("location", self.location))
        identity = args.inputs.get("identity")
        if isinstance(identity, Mapping) and "SystemAssigned" in str(identity.get("type", "")):
            outputs["identity"] = {**identity, "principalId": MOCK_PRINCIPAL_ID, "tenantId": self.tenant_id}
        if isinstance(identity, Mapping) and isinstance(identity.get("userAssignedIdentities"), list):
            # Azure answers the user-assigned identities as a map by resource id (the SDK's output type).
            assigned = {
                str(i): {"principalId": MOCK_PRINCIPAL_ID, "clientId": MOCK_PRINCIPAL_ID}
                for i in identity["userAssignedIdentities"]
            }
            outputs["identity"] = {**outputs.get("identity", identity), "userAssignedIdentities": assigned}
        outputs.update(self.computed_training_outputs(args.typ, resource_name, outputs))
        if args.typ == "azure-native:managedidentity:UserAssignedIdentity":
            outputs.setdefault("principalId", MOCK_PRINCIPAL_ID)
            outputs.setdefault("clientId", MOCK_PRINCIPAL_ID)
            outputs.setdefault("tenantId", self.tenant_id)
        return resource_id, outputs

    def landing_resource(
        self, type_token: str, name: str, outputs: dict[str, Any]
    ) -> tuple[str, dict[str, Any]] | None:
        """A landing stack's tenant-level resources (components/azure/landing.py), with the ids ARM gives them."""
        if type_token == "azure-native:management:ManagementGroup":
            group_id = f"/providers/Microsoft.Management/managementGroups/{outputs.get('groupId', name)}"
            return group_id, {**outputs, "id": group_id, "name": outputs.get("groupId", name)}
        if type_token == "azure-native:subscription:Alias":
            # ARM assigns the subscription id: a GUID fixed by the alias name, so previews are deterministic.
            digest = hashlib.sha256(str(outputs.get("aliasName", name)).encode()).digest()[:16]
            subscription = str(uuid.UUID(bytes=digest, version=4))
            alias_id = f"/providers/Microsoft.Subscription/aliases/{outputs.get('aliasName', name)}"
            properties = {**outputs.get("properties", {}), "subscriptionId": subscription}
            return alias_id, {
                **outputs,
                "id": alias_id,
                "name": outputs.get("aliasName", name),
                "properties": properties,
            }
        scoped = {
            "azure-native:authorization:PolicyAssignment": (
                "policyAssignmentName",
                "Microsoft.Authorization/policyAssignments",
            ),
            "azure-native:consumption:Budget": ("budgetName", "Microsoft.Consumption/budgets"),
        }.get(type_token)
        if scoped is None or not isinstance(outputs.get("scope"), str):
            return None
        own = str(outputs.get(scoped[0], name))
        resource_id = f"{outputs['scope']}/providers/{scoped[1]}/{own}"
        return resource_id, {**outputs, "id": resource_id, "name": own}

    # Resources that live under a parent (type token -> parent's input, the parent's ARM type, the child's segment).
    CHILD_RESOURCES: ClassVar[dict[str, tuple[str, str, str]]] = {
        "azure-native:keyvault:Key": ("vaultName", "Microsoft.KeyVault/vaults", "keys"),
        "azure-native:keyvault:Secret": ("vaultName", "Microsoft.KeyVault/vaults", "secrets"),
        "azure-native:storage:BlobContainer": (
            "accountName",
            "Microsoft.Storage/storageAccounts",
            "blobServices/default/containers",
        ),
        "azure-native:network:Subnet": ("virtualNetworkName", "Microsoft.Network/virtualNetworks", "subnets"),
    }

    def child_resource_id(self, type_token: str, name: str, inputs: Mapping[str, Any]) -> str | None:
        """The ARM id of a child resource (a vault's key, an account's container, a VNet's subnet)."""
        child = self.CHILD_RESOURCES.get(type_token)
        if child is None or not inputs.get(child[0]):
            return None
        parent_input, parent_type, segment = child
        group = inputs.get("resourceGroupName")
        return (
            f"/subscriptions/{self.subscription_id}/resourceGroups/{group}/providers/{parent_type}/"
            f"{inputs[parent_input]}/{segment}/{name}"
        )

    def computed_training_outputs(self, type_token: str, name: str, outputs: Mapping[str, Any]) -> dict[str, Any]:
        """What Azure computes for the training resources the components read: a vault's URI, a key's and a
        secret's URIs, a Managed Lustre file system's MGS address (first address after the subnet's five
        reserved ones is Azure's own; the mock answers a fixed private address)."""
        if type_token == "azure-native:keyvault:Vault":
            properties = dict(outputs.get("properties") or {})
            properties.setdefault("vaultUri", f"https://{name}.vault.azure.net/")
            return {"properties": properties}
        if type_token == "azure-native:keyvault:Key":
            uri = f"https://{outputs.get('vaultName')}.vault.azure.net/keys/{name}"
            return {"keyUri": uri, "keyUriWithVersion": f"{uri}/0123456789abcdef0123456789abcdef"}
        if type_token == "azure-native:keyvault:Secret":
            # Resource Manager never returns a secret's value, only its URIs.
            uri = f"https://{outputs.get('vaultName')}.vault.azure.net/secrets/{name}"
            return {"properties": {"secretUri": uri, "secretUriWithVersion": f"{uri}/0123456789abcdef"}}
        if type_token == "azure-native:dbformysql:Server":
            return {"fullyQualifiedDomainName": f"{name}.mysql.database.azure.com"}
        if type_token == "azure-native:network:PublicIPAddress":
            # A static Standard address is allocated at creation (TEST-NET-2, never routed).
            return {"ipAddress": "198.51.100.10"}
        if type_token == "azure-native:servicebus:Namespace":
            return {"serviceBusEndpoint": f"https://{name}.servicebus.windows.net:443/"}
        if type_token == "azure-native:storagecache:AmlFilesystem":
            return {
                "clientInfo": {
                    "mgsAddress": "10.0.128.4",
                    "mountCommand": "sudo mount -t lustre -o noatime,flock 10.0.128.4@tcp:/lustrefs /lustre",
                    "lustreVersion": "2.15",
                }
            }
        return {}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        if args.token == "azure-native:authorization:getClientConfig":
            return {
                "clientId": MOCK_PRINCIPAL_ID,
                "objectId": MOCK_PRINCIPAL_ID,
                "subscriptionId": self.subscription_id,
                "tenantId": self.tenant_id,
            }, []
        # failures must be a list: MockMonitor iterates it (None raises TypeError on any invoke).
        return {}, []


def mocks(account: Mapping[str, Any] | None = None) -> AzureMocks:
    """Azure's mocks for a stack's account block as a stack file writes it
    (`{"subscriptionId": ..., "tenantId": ..., "location": ...}`)."""
    account = account or {}
    return AzureMocks(
        subscription_id=str(account.get("subscriptionId") or DEFAULT_SUBSCRIPTION_ID),
        tenant_id=str(account.get("tenantId") or DEFAULT_TENANT_ID),
        location=str(account.get("location") or DEFAULT_LOCATION),
    )
