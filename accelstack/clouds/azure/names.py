"""What an Azure stack's name becomes, and each resource's naming rule: the one place the Azure components and the
spec rules take names from (`accelstack.clouds.naming`).

Rules: learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules ("Naming rules and
restrictions for Azure resources"), per resource provider, and each service's own page where it says more.
Globally unique names (Key Vault, storage accounts) carry a digest of the subscription, so two subscriptions
deploying one stack name do not collide. azure-native auto-names the rest (the logical name and 8 random
characters), so their rules bound the stack name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

from accelstack.clouds.naming import DerivedName, NameRule
from accelstack.spec.accounts import AzureAccount
from accelstack.spec.catalog_rules import stack_names
from accelstack.spec.models import ServingStack, StackSpec, TrainingStack

# Microsoft.KeyVault/vaults: 3-24 letters, digits and hyphens, a letter first, a letter or digit last, no
# consecutive hyphens; globally unique.
KEY_VAULT = NameRule(
    "Key Vault name",
    r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]",
    max_length=24,
    min_length=3,
    source="Naming rules for Azure resources, Microsoft.KeyVault",
    summary="letters, digits and hyphens, a letter first and a letter or digit last",
    no_consecutive_hyphens=True,
)
# Microsoft.Storage/storageAccounts: 3-24 lowercase letters and digits; globally unique.
STORAGE_ACCOUNT = NameRule(
    "storage account name", r"[a-z0-9]+", max_length=24, min_length=3, summary="lowercase letters and digits only"
)
# Microsoft.MachineLearningServices/workspaces: 3-33 letters, digits, hyphens and underscores, a letter or digit first.
ML_WORKSPACE = NameRule(
    "Machine Learning workspace name", r"[A-Za-z0-9][A-Za-z0-9_-]*", max_length=33, min_length=3, lowercase=False
)
# Microsoft.StandbyPool/standbyVirtualMachinePools: ^[a-zA-Z0-9-]{3,24}$ (the API's pattern).
STANDBY_POOL = NameRule("standby pool name", r"[A-Za-z0-9-]+", max_length=24, min_length=3, lowercase=False)
# Microsoft.ServiceBus/namespaces: 6-50 letters, digits and hyphens, a letter first, a letter or digit last.
SERVICE_BUS_NAMESPACE = NameRule(
    "Service Bus namespace name",
    r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]",
    max_length=50,
    min_length=6,
    source="Naming rules for Azure resources, Microsoft.ServiceBus",
    summary="letters, digits and hyphens, a letter first and a letter or digit last",
    forbidden_suffixes=("-sb", "-mgmt"),
    lowercase=False,
)
# Microsoft.Network (virtual networks, subnets, NSGs, NAT gateways, public IPs, gateways): 1-80 (virtual networks
# 2-64) letters, digits, underscores, periods and hyphens, a letter or digit first, a letter, digit or _ last.
NETWORK_RESOURCE = NameRule(
    "network resource name", r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9_]", max_length=80, lowercase=False
)
VIRTUAL_NETWORK = NameRule(
    "virtual network name", NETWORK_RESOURCE.pattern, max_length=64, min_length=2, lowercase=False
)
# Microsoft.Compute virtualMachines / virtualMachineScaleSets (Linux): 1-64; no underscore first, no period or
# hyphen last. The VM's computer name (its hostname) is at most 64 on Linux.
LINUX_VM = NameRule(
    "Linux VM or scale set name", r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9_]", max_length=64, lowercase=False
)
# Microsoft.Resources/resourceGroups: 1-90 letters, digits, underscores, parentheses, hyphens, periods, not
# ending with a period.
RESOURCE_GROUP = NameRule("resource group name", r"[\w().-]*[\w()-]", max_length=90, lowercase=False)
# Microsoft.StorageCache/amlFilesystems: the API's pattern ^[0-9a-zA-Z][-0-9a-zA-Z_]{0,78}[0-9a-zA-Z]$.
AMLFS = NameRule(
    "Managed Lustre file system name", r"[0-9A-Za-z][-0-9A-Za-z_]{0,78}[0-9A-Za-z]", max_length=80, lowercase=False
)
# Microsoft.DBforMySQL/flexibleServers: 3-63 lowercase letters, digits and hyphens, not starting or ending with a
# hyphen; globally unique (the server's DNS name, <name>.mysql.database.azure.com).
MYSQL_SERVER = NameRule(
    "MySQL flexible server name",
    r"[a-z0-9][a-z0-9-]*[a-z0-9]",
    max_length=63,
    min_length=3,
    source="Naming rules for Azure resources, Microsoft.DBforMySQL",
    summary="lowercase letters, digits and hyphens, a letter or digit first and last",
)
# Microsoft.ManagedIdentity/userAssignedIdentities: 3-128, a letter or digit first, then letters, digits, - and _.
MANAGED_IDENTITY = NameRule(
    "managed identity name", r"[A-Za-z0-9][A-Za-z0-9_-]*", max_length=128, min_length=3, lowercase=False
)


def subscription_of(spec: StackSpec) -> str:
    account = spec.account
    return account.subscription_id if isinstance(account, AzureAccount) else ""


def vault_name(stack: str, subscription_id: str) -> str:
    """The stack's name and a digest of the subscription. A stack name that is already a valid start keeps its
    vault name (the vault is protected: a new name would replace it); one starting with a digit gets a "kv"
    prefix, and runs of hyphens become one."""
    digest = hashlib.sha256(subscription_id.encode()).hexdigest()[:6]
    stem = re.sub(r"-{2,}", "-", stack)
    if not stem[:1].isalpha():
        stem = f"kv{stem}"
    return f"{stem[:14].rstrip('-')}-{digest}-kv"


def mysql_server_name(stack: str, subscription_id: str) -> str:
    """slurmdbd's MySQL server: the stack's lowercase letters, digits and hyphens and a digest of the subscription
    (its DNS name is global)."""
    stem = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "", stack.lower())).strip("-")[:40].rstrip("-") or "s"
    return f"{stem}-{hashlib.sha256(subscription_id.encode()).hexdigest()[:6]}-slurmdbd"


def workspace_name(stack: str) -> str:
    return f"{stack[:29].rstrip('-_')}-aml"


def workspace_storage_name(stack: str, subscription_id: str) -> str:
    """The stack's letters and a digest of the subscription and stack, so two subscriptions (or stacks) never
    collide."""
    letters = re.sub(r"[^a-z0-9]", "", stack.lower())[:14]
    digest = hashlib.sha256(f"{subscription_id}:{stack}".encode()).hexdigest()[:6]
    return f"{letters}{digest}ml"


def logs_account_name(stack: str, subscription_id: str) -> str:
    """The stack's letters and digits and a digest of the subscription."""
    letters = "".join(c for c in stack.lower() if c.isalnum())[:12]
    return f"{letters}logs{hashlib.sha256(subscription_id.encode()).hexdigest()[:8]}"


def standby_pool_name(stack: str, digest: str) -> str:
    """One pool per VM profile: `<stack>-sb-<digest>` (a 7-character digest), within the pool's 24 characters."""
    return f"{stack[: STANDBY_POOL.max_length - 12].rstrip('-')}-sb-{digest}"


def resource_group_name(stack: str) -> str:
    return f"{stack}-rg"


@stack_names(workload="training")
def training_names(spec: TrainingStack) -> Iterator[DerivedName]:
    stack, subscription = spec.stack, subscription_of(spec)
    yield DerivedName("the resource group", resource_group_name(stack), RESOURCE_GROUP)
    yield DerivedName("the Key Vault", vault_name(stack, subscription), KEY_VAULT)
    yield DerivedName("the virtual network", f"{stack}-net-vnet", VIRTUAL_NETWORK, autonamed=True)
    yield DerivedName("the nodes' network security group", f"{stack}-net-lustre-nsg", NETWORK_RESOURCE, autonamed=True)
    yield DerivedName("the nodes' scale set", f"{stack}-nodes", LINUX_VM, autonamed=True)
    yield DerivedName("the storage identity", f"{stack}-storage-storage-id", MANAGED_IDENTITY, autonamed=True)
    if spec.training.scheduler.kind == "slurm":
        yield DerivedName("the Slurm head VM", f"{stack}-head", LINUX_VM, autonamed=True)
        yield DerivedName("the Slurm head's computer name", f"{stack}-head", LINUX_VM)
        if spec.training.scheduler.accounting == "database":
            yield DerivedName("slurmdbd's MySQL server", mysql_server_name(stack, subscription), MYSQL_SERVER)
    if spec.training.scheduler.kind == "managed":
        yield DerivedName("the Machine Learning workspace", workspace_name(stack), ML_WORKSPACE)
        yield DerivedName(
            "the workspace's storage account", workspace_storage_name(stack, subscription), STORAGE_ACCOUNT
        )
    if spec.training.storage.lustre is not None:
        yield DerivedName("the Managed Lustre file system", f"{stack}-storage-lustre", AMLFS, autonamed=True)


@stack_names(workload="serving")
def serving_names(spec: ServingStack) -> Iterator[DerivedName]:
    stack, subscription = spec.stack, subscription_of(spec)
    serving = spec.serving
    yield DerivedName("the resource group", resource_group_name(stack), RESOURCE_GROUP)
    yield DerivedName("the virtual network", f"{stack}-net-vnet", VIRTUAL_NETWORK, autonamed=True)
    yield DerivedName(
        "the replicas' network security group", f"{stack}-net-replicas-nsg", NETWORK_RESOURCE, autonamed=True
    )
    yield DerivedName("the application gateway", f"{stack}-gateway", NETWORK_RESOURCE)
    yield DerivedName("the replicas' scale set", f"{stack}-replicas", LINUX_VM, autonamed=True)
    yield DerivedName("the replicas' identity", f"{stack}-id-replicas", MANAGED_IDENTITY, autonamed=True)
    if serving.admission.kind == "queue":
        yield DerivedName("the Service Bus namespace", f"{stack}-queue-sb", SERVICE_BUS_NAMESPACE, autonamed=True)
    if serving.replicas.warm_pool:
        yield DerivedName("the standby pool", standby_pool_name(stack, "0" * 7), STANDBY_POOL)
    if serving.load_balancer.access_logs:
        yield DerivedName("the access-log storage account", logs_account_name(stack, subscription), STORAGE_ACCOUNT)
