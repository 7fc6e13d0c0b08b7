"""Azure serving rules: what Application Gateway, its WAF policy, Service Bus, Compute and standby pools would
reject at create time, or what the serving components cannot build, checked at the config path before anything
exists. They run for azure stacks only (the Azure registration names this module in `Cloud.rules`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from accelstack.spec.accounts import AzureAccount
from accelstack.spec.models import ServingStack
from accelstack.spec.problems import Problem
from accelstack.spec.validators import rule

# The HTTPS listener's certificate lives in Key Vault; the gateway reads it with its managed identity, which
# needs Key Vault Secrets User on the certificate's secret (learn.microsoft.com/azure/application-gateway/
# key-vault-certs). A secret URI (https://<vault>.vault.azure.net/secrets/<name>) does not say which resource
# group holds the vault, and a role assignment's scope must, so the spec names the secret by its ARM id:
# /subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.KeyVault/vaults/<vault>/secrets/<name>. Vault
# names 3-24 letters, digits and hyphens; secret names 1-127 letters, digits and hyphens (Key Vault "Object
# identifiers"). A Key Vault certificate's secret has the certificate's name.
KEY_VAULT_SECRET_RESOURCE_ID = re.compile(
    r"^/subscriptions/(?P<subscription>[0-9a-fA-F-]{36})/resourceGroups/(?P<group>[-\w.()]{1,90})/providers/"
    r"Microsoft\.KeyVault/vaults/(?P<vault>[a-zA-Z][a-zA-Z0-9-]{1,22}[a-zA-Z0-9])/secrets/(?P<secret>[a-zA-Z0-9-]{1,127})$",
    re.IGNORECASE,
)
# WAF_v2 rate-limit rules count per one or five minutes (RateLimitDuration OneMin / FiveMins:
# learn.microsoft.com/azure/web-application-firewall/ag/rate-limiting-overview).
RATE_LIMIT_DURATIONS = {60: "OneMin", 300: "FiveMins"}
# Service Bus: maxDeliveryCount at least 1 (the API's minimum); TTL as an ISO 8601 duration with no
# practical maximum (servicebus Queue docs). The lock is at most 5 minutes (PT5M).
SERVICE_BUS_MAX_LOCK_SECONDS = 300
# Application Gateway v2 needs a dedicated subnet; /24 is Microsoft's recommendation for v2, which scales
# to 125 instances and keeps addresses for private frontends (application-gateway/configuration-infrastructure).
GATEWAY_SUBNET_PREFIX = 24
# The serving VNet: the gateway subnet and the replicas' subnet are /24 at least each.
MIN_SERVING_VNET_PREFIX = 23


def rate_limit_duration(window_seconds: int) -> str | None:
    return RATE_LIMIT_DURATIONS.get(window_seconds)


def certificate_secret(certificate: str) -> re.Match[str] | None:
    return KEY_VAULT_SECRET_RESOURCE_ID.match(certificate)


@rule(workload="serving")
def listener_certificate_from_key_vault(spec: ServingStack) -> Iterator[Problem]:
    """The HTTPS listener's certificate is a Key Vault secret named by its ARM id, in the serving
    subscription (the gateway's identity is granted read on it there; a grant in another subscription
    would cross the stack's separation)."""
    serving = spec.serving
    match = certificate_secret(serving.load_balancer.certificate)
    if match is None:
        yield Problem(
            "serving.loadBalancer.certificate",
            f"{serving.load_balancer.certificate!r} is not a Key Vault secret's resource id; allowed: "
            "/subscriptions/<subscription>/resourceGroups/<group>/providers/Microsoft.KeyVault/vaults/<vault>/"
            "secrets/<certificate name> (the vault's id, az keyvault show -n <vault> --query id, then "
            "/secrets/<certificate name>)",
        )
        return
    account = spec.account
    if isinstance(account, AzureAccount) and match["subscription"].lower() != account.subscription_id.lower():
        yield Problem(
            "serving.loadBalancer.certificate",
            f"the certificate's vault is in subscription {match['subscription']}, not the serving subscription "
            f"{account.subscription_id}; import the certificate into a vault of the serving subscription",
        )


@rule(workload="serving")
def serving_new_network_only(spec: ServingStack) -> Iterator[Problem]:
    """The Azure serving components build their own VNet (the Application Gateway needs a dedicated subnet);
    an existing VNet is not supported yet. The VNet holds two /24 subnets at least."""
    serving = spec.serving
    network = serving.network
    if network.vpc_id is not None:
        yield Problem(
            "serving.network.vpcId",
            "an existing VNet is not supported on azure yet; remove vpcId/subnetIds/publicSubnetIds and set vpcCidr",
        )
    elif network.vpc_cidr is not None and ipaddress.ip_network(network.vpc_cidr).prefixlen > MIN_SERVING_VNET_PREFIX:
        yield Problem(
            "serving.network.vpcCidr",
            f"{network.vpc_cidr} is too small: the Application Gateway's dedicated /{GATEWAY_SUBNET_PREFIX} and the "
            f"replicas' subnet need a /{MIN_SERVING_VNET_PREFIX} or larger",
        )


@rule(workload="serving")
def standby_pool_needs_its_principal(spec: ServingStack) -> Iterator[Problem]:
    """A standby pool creates and starts VMs as the "Standby Pool Resource Provider" service principal,
    which needs Virtual Machine Contributor, Network Contributor and Managed Identity Operator on the
    resource group (learn.microsoft.com/azure/virtual-machine-scale-sets/standby-pools-configure-permissions):
    its object id differs per tenant, so the account names it when replicas.warmPool is not 0."""
    serving = spec.serving
    account = spec.account
    if not isinstance(account, AzureAccount) or serving.replicas.warm_pool == 0:
        return
    if account.standby_pool_principal_id is None:
        yield Problem(
            "account.standbyPoolPrincipalId",
            "required for the standby pool (serving.replicas.warmPool is not 0): the object id of the "
            '"Standby Pool Resource Provider" service principal in your tenant (az ad sp list --display-name '
            '"Standby Pool Resource Provider" --query [].id -o tsv); or set serving.replicas.warmPool: 0',
        )


@rule(workload="serving")
def one_replica_at_least(spec: ServingStack) -> Iterator[Problem]:
    """The autoscale rule divides the queue's ActiveMessages by the instance count: with no instance there is
    no per-instance backlog to act on, so an empty group would never wake. Keep one replica in service."""
    if spec.serving.replicas.min < 1:
        yield Problem(
            "serving.replicas.min",
            "0: on azure the group scales on the backlog per instance, which an empty group does not have; "
            "allowed: 1 or more (standby VMs keep the cost of spare replicas low)",
        )
