"""Which Azure resource provider each azure-native resource type is created through (pure data).

A subscription serves a resource type only once its provider's namespace is registered in it; a call to an
unregistered one is refused with MissingSubscriptionRegistration (learn.microsoft.com/azure/azure-resource-
manager/troubleshooting/error-register-resource-provider). azure-native has no resource that registers a
namespace (its `features` module registers preview features, `providerhub` hosts providers of your own), but
its ARM client keeps azcore's registration policy on (provider/pkg/azure/client_azcore.go builds the pipeline
with `armruntime.NewPipeline` and does not set `DisableRPRegistration`): on that error it registers the namespace
and polls up to 5 minutes (azcore arm/runtime/policy_register_rp.go defaults), if the deployer may
`<namespace>/register/action` (Contributor and Owner may). A namespace that takes longer (Microsoft.StandbyPool:
"Registration can take up to 30 minutes", standby pools overview) fails that `up`: register it beforehand.

Rows are by azure-native module (the type token's middle part); a type missing here is reported by the tests,
never guessed. Microsoft.Resources and Microsoft.Authorization are registered in every subscription.
"""

from __future__ import annotations

from accelstack.clouds.base import AccountServices

# Registered for you, but slower than the provider's 5-minute wait: `az provider register --wait` first.
SLOW_TO_REGISTER = ("Microsoft.StandbyPool",)

PROVIDER_BY_TYPE_PREFIX: dict[str, tuple[str, ...]] = {
    "azure-native:authorization:": ("Microsoft.Authorization",),
    "azure-native:resources:": ("Microsoft.Resources",),
    "azure-native:compute:": ("Microsoft.Compute",),
    "azure-native:network:": ("Microsoft.Network",),
    "azure-native:privatedns:": ("Microsoft.Network",),  # privateDnsZones are Microsoft.Network types
    "azure-native:keyvault:": ("Microsoft.KeyVault",),
    "azure-native:managedidentity:": ("Microsoft.ManagedIdentity",),
    "azure-native:storage:": ("Microsoft.Storage",),
    "azure-native:storagecache:": ("Microsoft.StorageCache",),  # Azure Managed Lustre (amlFilesystems)
    "azure-native:monitor:": ("Microsoft.Insights",),  # autoscale settings, metric alerts, diagnostic settings
    "azure-native:servicebus:": ("Microsoft.ServiceBus",),
    "azure-native:standbypool:": ("Microsoft.StandbyPool",),
    "azure-native:machinelearningservices:": ("Microsoft.MachineLearningServices",),
}

ACCOUNT_SERVICES = AccountServices(
    kind="resource provider",
    by_type_prefix=PROVIDER_BY_TYPE_PREFIX,
    enabled_by_stack=False,
    note=(
        "azure-native registers an unregistered one on first use and waits up to 5 minutes (the deployer needs "
        "<namespace>/register/action, in Contributor)"
    ),
    slow=SLOW_TO_REGISTER,
    slow_note="can take 30 minutes to register: run `az provider register --namespace <namespace> --wait` first",
)
