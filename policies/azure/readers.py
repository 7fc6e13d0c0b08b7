"""How the packs read azure-native resources: one small pure function per rule, each naming the
trusted rule it mirrors (Checkov CKV_AZURE_xx, Trivy AVD-AZU-xxxx, a Microsoft doc) or saying it is ours.

Properties arrive camelCase as the engine sends them (the SDK's wire names: `allowBlobPublicAccess`,
`publicIPAddressConfiguration`, `deadLetteringOnMessageExpiration`). Resource checks take the
pulumi-policy args and yield messages; stack checks take every resource and yield (urn, message).
The packs reach them through the Azure vendor entry (policies/azure/__init__.py).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from typing import Any

from .. import concepts
from ..common import as_list, refers_to, truthy, urn_name
from ..links import referrers_of, targets_of
from ..readers import count_of, get, is_public_range, items_at, name_of
from ..vendor import tokens_of
from .concepts import AZURE

CLOUD = "azure-native"

STORAGE_ACCOUNT = tokens_of(AZURE, "storage-account")
CONTAINER = tokens_of(AZURE, "bucket")
SCALE_SET, VM = "azure-native:compute:VirtualMachineScaleSet", "azure-native:compute:VirtualMachine"
NIC = "azure-native:network:NetworkInterface"
ML_COMPUTE = tokens_of(AZURE, "fleet")
ML_WORKSPACE = tokens_of(AZURE, "ml-workspace")
ML_DATASTORE = tokens_of(AZURE, "ml-datastore")
NSG, SECURITY_RULE = "azure-native:network:NetworkSecurityGroup", "azure-native:network:SecurityRule"
APP_GATEWAY = "azure-native:network:ApplicationGateway"
LOAD_BALANCER = "azure-native:network:LoadBalancer"
WAF_POLICY = "azure-native:network:WebApplicationFirewallPolicy"
SB_NAMESPACE = "azure-native:servicebus:Namespace"
SB_QUEUES = tokens_of(AZURE, "queue")  # queues and topic subscriptions
AUTOSCALE = tokens_of(AZURE, "scaling-policy")
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
ROLE_DEFINITION = "azure-native:authorization:RoleDefinition"
KEYS = tokens_of(AZURE, "key")
KEY_VAULT = "azure-native:keyvault:Vault"
SAS_RULES = tokens_of(AZURE, "queue-policy")
AML_FILESYSTEM = "azure-native:storagecache:AmlFilesystem"
MYSQL_SERVER = "azure-native:dbformysql:Server"


def _kind(resource: Any) -> str:
    return concepts.canonical(resource.resource_type)


def _last_segment(resource_id: Any) -> str:
    return str(resource_id or "").rstrip("/").rsplit("/", 1)[-1]


# --- encryption at rest ---------------------------------------------------------------------------


def check_encryption_at_rest(resource: Any) -> Iterable[str]:
    """Azure encrypts every storage account and managed disk at rest and it cannot be turned off
    (https://learn.microsoft.com/azure/storage/common/storage-service-encryption); what can go wrong
    is a customer-managed key setting that names no key (Checkov CKV2_AZURE_1 wants CMK on storage),
    or a vault whose keys can be purged."""
    if _kind(resource) == KEY_VAULT:
        # Without purge protection a deleted vault can be purged at once, and with it the keys every
        # customer-managed-key store needs to decrypt (Checkov CKV_AZURE_42, Trivy AVD-AZU-0016).
        if not truthy(get(resource.props, "properties", "enablePurgeProtection")):
            yield f"key vault {name_of(resource)} has no purge protection (properties.enablePurgeProtection)"
    elif _kind(resource) in STORAGE_ACCOUNT:
        encryption = resource.props.get("encryption")
        if str(get(encryption, "keySource") or "").lower() == "microsoft.keyvault" and not get(
            encryption, "keyVaultProperties", "keyName"
        ):
            yield f"storage account {name_of(resource)} uses keySource Microsoft.Keyvault without keyVaultProperties.keyName"


def check_customer_keys(resources: Sequence[Any], data_pattern: str) -> Iterable[tuple[str, str]]:
    """Where the stack has its own Key Vault key, data stores use it: storage accounts named like
    data (`kmsBucketPattern`) take keySource Microsoft.Keyvault (Checkov CKV2_AZURE_1), the Lustre file system takes encryptionSettings.keyEncryptionKey
    (https://learn.microsoft.com/azure/azure-managed-lustre/customer-managed-encryption-keys).
    Without a key in the stack, Microsoft-managed keys (always on) are the documented default."""
    if not concepts.of(resources, "key", cloud=CLOUD):
        return
    for account in (r for r in resources if _kind(r) in STORAGE_ACCOUNT):
        names = [urn_name(account.urn), str(account.props.get("accountName") or "")]
        if not any(re.search(data_pattern, n, re.IGNORECASE) for n in names):
            continue
        if str(get(account.props, "encryption", "keySource") or "").lower() != "microsoft.keyvault":
            yield (
                account.urn,
                f"storage account {name_of(account)} holds data but encrypts with Microsoft-managed keys while the "
                "stack has a Key Vault key: set encryption.keySource Microsoft.Keyvault",
            )
        # The second, infrastructure layer of AES-256 (https://learn.microsoft.com/azure/storage/common/infrastructure-encryption-enable).
        if not truthy(get(account.props, "encryption", "requireInfrastructureEncryption")):
            yield (
                account.urn,
                f"storage account {name_of(account)} holds data without infrastructure encryption while the stack "
                "has a Key Vault key: set encryption.requireInfrastructureEncryption true",
            )
    # MySQL flexible server: dataEncryption with a Key Vault key (learn.microsoft.com/azure/mysql/flexible-server/
    # concepts-customer-managed-key; Checkov CKV2_AZURE_16's intent for MySQL).
    for server in (r for r in resources if _kind(r) == MYSQL_SERVER):
        encryption = server.props.get("dataEncryption") or {}
        if str(get(encryption, "type") or "") != "AzureKeyVault" or not get(encryption, "primaryKeyURI"):
            yield (
                server.urn,
                f"MySQL server {name_of(server)} does not encrypt with the stack's Key Vault key (dataEncryption)",
            )
    for fs in (r for r in resources if _kind(r) == AML_FILESYSTEM):
        if not get(fs.props, "encryptionSettings", "keyEncryptionKey", "keyUrl"):
            yield (
                fs.urn,
                f"Lustre file system {name_of(fs)} has no encryptionSettings.keyEncryptionKey while the stack has a Key Vault key",
            )


# --- public exposure ------------------------------------------------------------------------------


# An ipRules entry wider than a /16 (65,536 addresses) is an internet audience, not an office or a NAT: with
# defaultAction Deny, `0.0.0.0/0` (or 0.0.0.0/1 + 128.0.0.0/1) is the public endpoint again.
NARROWEST_WIDE_PREFIX = 16


def _wide_range(value: str) -> bool:
    try:
        network = ipaddress.ip_network(value.strip(), strict=False)
    except ValueError:
        return False  # Azure refuses what is not an address or range; not this rule's to report
    return network.prefixlen < NARROWEST_WIDE_PREFIX


def check_no_public_storage(resource: Any) -> Iterable[str]:
    """No anonymous blob access: the account sets allowBlobPublicAccess false explicitly (the default
    was true before API 2023-01-01; Checkov CKV_AZURE_190, Trivy AVD-AZU-0007), its public endpoint is
    closed or denies by default (publicNetworkAccess Disabled, or networkRuleSet.defaultAction Deny:
    Checkov CKV_AZURE_59 / CKV_AZURE_35, Trivy AVD-AZU-0012), and no container is public
    (publicAccess Blob/Container: Checkov CKV_AZURE_34)."""
    kind, props, name = _kind(resource), resource.props, name_of(resource)
    if kind in STORAGE_ACCOUNT:
        if props.get("allowBlobPublicAccess") is None or truthy(props.get("allowBlobPublicAccess")):
            yield f"storage account {name} does not set allowBlobPublicAccess false (anonymous blob reads)"
        network = str(props.get("publicNetworkAccess") or "Enabled")
        if network.lower() != "disabled" and str(get(props, "networkRuleSet", "defaultAction") or "Allow") != "Deny":
            yield (
                f"storage account {name} is reachable from the internet (publicNetworkAccess {network}, "
                "networkRuleSet.defaultAction not Deny)"
            )
        elif network.lower() != "disabled":
            for rule in items_at(get(props, "networkRuleSet") or {}, "ipRules"):
                value = str(rule.get("iPAddressOrRange") or rule.get("value") or "")
                if _wide_range(value):
                    yield (
                        f"storage account {name} lets the internet range {value} through its firewall (ipRules); "
                        f"admit a /{NARROWEST_WIDE_PREFIX} or narrower range, or a subnet by rule"
                    )
    elif kind == MYSQL_SERVER:  # private access only (Checkov CKV_AZURE_53, Trivy AVD-AZU-0022)
        if str(get(props, "network", "publicNetworkAccess") or "Enabled").lower() != "disabled":
            yield f"MySQL server {name} is reachable from the internet (network.publicNetworkAccess not Disabled)"
    elif kind in CONTAINER:
        access = str(props.get("publicAccess") or "None")
        if access != "None":
            yield f"blob container {name} allows anonymous access (publicAccess {access})"


# --- TLS ------------------------------------------------------------------------------------------

# App Gateway predefined policies and their minimum protocol
# (https://learn.microsoft.com/azure/application-gateway/application-gateway-ssl-policy-overview).
APPGW_POLICY_MIN = {
    "AppGwSslPolicy20150501": "TLSv1_0",
    "AppGwSslPolicy20170401": "TLSv1_1",
    "AppGwSslPolicy20170401S": "TLSv1_2",
    "AppGwSslPolicy20220101": "TLSv1_2",
    "AppGwSslPolicy20220101S": "TLSv1_2",
}
TLS12 = ("TLSv1_2", "TLSv1_3")


def check_min_tls(resource: Any) -> Iterable[str]:
    """TLS 1.2+ only: storage accounts minimumTlsVersion TLS1_2 (its default is TLS1_0 on older APIs;
    Checkov CKV_AZURE_44, Trivy AVD-AZU-0011) and HTTPS only (CKV_AZURE_3, AVD-AZU-0008); Service Bus
    namespaces minimumTlsVersion 1.2 (https://learn.microsoft.com/azure/service-bus-messaging/transport-layer-security-enforce-minimum-version);
    Application Gateways name a TLS 1.2+ SSL policy (the default before API 2023-02-01 was
    AppGwSslPolicy20150501, TLS 1.0; Checkov CKV_AZURE_217-style)."""
    kind, props, name = _kind(resource), resource.props, name_of(resource)
    if kind in STORAGE_ACCOUNT:
        if str(props.get("minimumTlsVersion") or "TLS1_0") not in ("TLS1_2", "TLS1_3"):
            yield f"storage account {name} accepts TLS below 1.2 (minimumTlsVersion {props.get('minimumTlsVersion')})"
        if props.get("enableHttpsTrafficOnly") is not None and not truthy(props.get("enableHttpsTrafficOnly")):
            yield f"storage account {name} accepts plain HTTP (enableHttpsTrafficOnly false)"
    elif kind == SB_NAMESPACE:
        if str(props.get("minimumTlsVersion") or "1.0") not in ("1.2", "1.3"):
            yield f"Service Bus namespace {name} accepts TLS below 1.2 (minimumTlsVersion {props.get('minimumTlsVersion')})"
    elif kind == APP_GATEWAY:
        policy = props.get("sslPolicy")
        if policy is None:
            yield f"application gateway {name} names no sslPolicy; use AppGwSslPolicy20220101S or minProtocolVersion TLSv1_2"
            return
        minimum = (
            APPGW_POLICY_MIN.get(str(get(policy, "policyName")))
            if str(get(policy, "policyType") or "") == "Predefined"
            else get(policy, "minProtocolVersion")
        )
        if minimum not in TLS12:
            yield f"application gateway {name} SSL policy allows {minimum or 'an unknown minimum'} (TLS 1.2+ only)"


def check_identity_auth(resource: Any) -> Iterable[str]:
    """Service Bus namespaces accept Microsoft Entra identities only: disableLocalAuth true, so no shared access
    signature key can send or receive (Azure Policy built-in "Azure Service Bus namespaces should have local
    authentication methods disabled", cfb11c26-f069-4c14-8e36-56c394dae5af). Absent is the service's default:
    local auth on."""
    if _kind(resource) == SB_NAMESPACE and not truthy(resource.props.get("disableLocalAuth")):
        yield (
            f"Service Bus namespace {name_of(resource)} accepts shared access keys (disableLocalAuth "
            f"{resource.props.get('disableLocalAuth')}); set disableLocalAuth true and grant identities roles"
        )


def check_ml_workspace_private(resource: Any) -> Iterable[str]:
    """An Azure Machine Learning workspace is not reachable from the internet: publicNetworkAccess Disabled
    (Checkov CKV_AZURE_144). Absent is the service's default: Enabled."""
    if _kind(resource) in ML_WORKSPACE:
        access = str(resource.props.get("publicNetworkAccess") or "")
        if access.lower() != "disabled":
            yield f"ML workspace {name_of(resource)} is reachable from the internet (publicNetworkAccess {access or 'unset'})"


def check_ml_compute_local_auth(resource: Any) -> Iterable[str]:
    """An Azure ML compute cluster takes identities only: properties.disableLocalAuth true (Checkov
    CKV_AZURE_142). Absent is the service's default: local auth on."""
    if _kind(resource) in ML_COMPUTE and not truthy(get(resource.props, "properties", "disableLocalAuth")):
        yield f"ML compute {name_of(resource)} accepts local (key) authentication (properties.disableLocalAuth must be true)"


def check_ml_datastore_identity(resource: Any) -> Iterable[str]:
    """An Azure ML datastore stores no credential: credentials.credentialsType None, so jobs reach the data with
    the compute's identity and its roles (identity-based data access,
    https://learn.microsoft.com/azure/machine-learning/how-to-identity-based-service-authentication). An account
    key, SAS or service principal secret would be readable by everyone who can read the workspace's datastores.
    Ours."""
    if _kind(resource) in ML_DATASTORE:
        kind = str(get(resource.props, "properties", "credentials", "credentialsType") or "")
        if kind.lower() != "none":
            yield f"ML datastore {name_of(resource)} stores a credential (credentialsType {kind or 'unset'}); use None (identity-based access)"


def check_https_listeners(resource: Any) -> Iterable[str]:
    """Application Gateway listeners are HTTPS; an HTTP listener only redirects (every routing rule on
    it has a redirectConfiguration). Ours (Checkov CKV_AZURE_217's intent)."""
    if _kind(resource) != APP_GATEWAY:
        return
    rules = items_at(resource.props, "requestRoutingRules")
    for listener in items_at(resource.props, "httpListeners"):
        protocol = str(listener.get("protocol") or "Http")
        if protocol.lower() == "https":
            continue
        lname = str(listener.get("name"))
        on_it = [r for r in rules if _last_segment(get(r, "httpListener", "id")) == lname]
        if not on_it or any(not get(r, "redirectConfiguration", "id") for r in on_it):
            yield f"application gateway {name_of(resource)}: HTTP listener {lname} must only redirect to HTTPS"


# --- ingress --------------------------------------------------------------------------------------

# Service tags that are not the internet (https://learn.microsoft.com/azure/virtual-network/service-tags-overview).
# GatewayManager must reach an App Gateway v2 subnet on 65200-65535
# (https://learn.microsoft.com/azure/application-gateway/configuration-infrastructure#network-security-groups).
PRIVATE_TAGS = frozenset({"virtualnetwork", "azureloadbalancer", "gatewaymanager"})
INTERNET_TAGS = frozenset({"*", "internet", "any"})


def _is_public_source(source: str, is_public_range: Any) -> bool:
    value = source.strip()
    if value.lower() in INTERNET_TAGS:
        return True
    if value.lower() in PRIVATE_TAGS:
        return False
    if re.match(r"^[0-9a-fA-F:.]+(/\d+)?$", value):
        return bool(is_public_range(value))
    return True  # any other service tag (AzureCloud, a region's tag) spans public addresses


def _ports(rule: Any) -> list[str]:
    return [str(p) for p in as_list(rule.get("destinationPortRange")) + as_list(rule.get("destinationPortRanges"))]


def internet_rules(resource: Any, is_public_range: Any) -> list[tuple[str, list[str], str]]:
    """(protocol, destination ports, source) of every inbound Allow rule open to the internet."""
    kind = _kind(resource)
    rules = (
        items_at(resource.props, "securityRules") if kind == NSG else [resource.props] if kind == SECURITY_RULE else []
    )
    found = []
    for rule in rules:
        if str(rule.get("direction") or "") != "Inbound" or str(rule.get("access") or "") != "Allow":
            continue
        sources = [
            str(s) for s in as_list(rule.get("sourceAddressPrefix")) + as_list(rule.get("sourceAddressPrefixes"))
        ]
        for source in sources:
            if _is_public_source(source, is_public_range):
                found.append((str(rule.get("protocol") or "*"), _ports(rule), source))
    return found


def web_only(protocol: str, ports: list[str]) -> bool:
    return protocol.lower() == "tcp" and bool(ports) and all(p in ("443", "80") for p in ports)


# --- nodes ----------------------------------------------------------------------------------------


def _public_ip_configs(interfaces: Iterable[Any]) -> list[str]:
    return [
        str(ip.get("name") or interface.get("name"))
        for interface in interfaces
        for ip in items_at(interface, "ipConfigurations")
        if ip.get("publicIPAddressConfiguration") is not None or ip.get("publicIPAddress") is not None
    ]


def check_no_public_ip(resource: Any) -> Iterable[str]:
    """Nodes get no public IP: scale-set and VM network interface configurations carry no
    publicIPAddressConfiguration (ours, the scale-set spelling of CKV_AZURE_119), a
    network interface binds no publicIPAddress (CKV_AZURE_119), and Azure ML compute clusters set
    enableNodePublicIp false (its default is true: https://learn.microsoft.com/azure/machine-learning/how-to-secure-training-vnet)."""
    kind, props, name = _kind(resource), resource.props, name_of(resource)
    if kind == SCALE_SET:
        interfaces = items_at(get(props, "virtualMachineProfile", "networkProfile"), "networkInterfaceConfigurations")
        for config in _public_ip_configs(interfaces):
            yield f"scale set {name} gives nodes a public IP (ipConfiguration {config} publicIPAddressConfiguration)"
    elif kind == VM:
        for config in _public_ip_configs(items_at(props.get("networkProfile"), "networkInterfaceConfigurations")):
            yield f"virtual machine {name} gets a public IP (ipConfiguration {config})"
    elif kind == NIC:
        for config in _public_ip_configs([props]):
            yield f"network interface {name} binds a public IP (ipConfiguration {config})"
    elif kind in ML_COMPUTE:
        inner = get(props, "properties", "properties")
        if get(inner, "enableNodePublicIp") is None or truthy(get(inner, "enableNodePublicIp")):
            yield f"ML compute {name} gives nodes public IPs (properties.properties.enableNodePublicIp must be false)"
        if str(get(inner, "remoteLoginPortPublicAccess") or "") == "Enabled":
            yield f"ML compute {name} opens SSH to the internet (remoteLoginPortPublicAccess Enabled)"


def user_data(resource: Any) -> list[tuple[str, Any]]:
    """(where, base64 text) of a node's custom data and user data (both base64 on the wire)."""
    kind, props = _kind(resource), resource.props
    profile = get(props, "virtualMachineProfile") if kind == SCALE_SET else props if kind == VM else None
    if profile is None:
        return []
    return [
        ("customData", get(profile, "osProfile", "customData")),
        ("userData", get(profile, "userData")),
    ]


# --- capacity and scaling -------------------------------------------------------------------------

QUEUE_METRICS = frozenset({"activemessages", "messages"})  # Service Bus metrics (Microsoft.ServiceBus/namespaces)
# Without a queue: the requests each healthy backend receives at the Application Gateway (already per host).
GATEWAY_METRICS = frozenset({"avgrequestcountperhealthyhost"})
CPU_METRICS = frozenset({"percentage cpu"})  # the VM/VMSS host metric


def _triggers(setting: Any) -> list[Any]:
    return [
        get(rule, "metricTrigger")
        for profile in items_at(setting.props, "profiles")
        for rule in items_at(profile, "rules")
        if get(rule, "metricTrigger") is not None
    ]


def _served_from(trigger: Any, namespace: str) -> bool:
    """The trigger reads a metric of a `namespace` resource (by its metric namespace or its resource id)."""
    where = (str(get(trigger, "metricNamespace") or ""), str(get(trigger, "metricResourceUri") or ""))
    return any(namespace in text.lower() for text in where)


def scaling_problems(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Serving scale sets scale on the requests they own: the Service Bus queue (ActiveMessages on a
    Microsoft.ServiceBus resource, https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-common-metrics#commonly-used-service-bus-metrics)
    or, without a queue, the Application Gateway's AvgRequestCountPerHealthyHost; never on Percentage CPU. A
    disabled autoscale setting does not scale at all; a scale set no autoscale setting names, with a capacity of
    at least 1, is a fixed fleet and passes."""
    settings = [r for r in resources if _kind(r) in AUTOSCALE]
    for group in (r for r in resources if _kind(r) == SCALE_SET):
        linked = referrers_of(group, settings, "targetResourceUri", keys=("id",))
        triggers = [(s, t) for s in linked if truthy(s.props.get("enabled", True)) for t in _triggers(s)]
        cpu = sorted({name_of(s) for s, t in triggers if str(get(t, "metricName") or "").lower() in CPU_METRICS})
        owned = [
            t
            for _, t in triggers
            if (str(get(t, "metricName") or "").lower() in QUEUE_METRICS and _served_from(t, "microsoft.servicebus"))
            or (
                str(get(t, "metricName") or "").lower() in GATEWAY_METRICS
                and _served_from(t, "microsoft.network/applicationgateways")
            )
        ]
        capacity = count_of(get(group.props, "sku", "capacity"))
        if cpu:
            yield group.urn, f"replica group {name_of(group)} scales on CPU ({', '.join(cpu)}); scale on queue depth"
        elif not linked and capacity is not None and capacity >= 1:
            continue  # a fixed fleet: nothing scales it
        elif not owned:
            yield (
                group.urn,
                f"replica group {name_of(group)} has no enabled autoscale rule on the requests its replicas own "
                "(metricName ActiveMessages on Microsoft.ServiceBus/namespaces, or without a queue "
                "AvgRequestCountPerHealthyHost on Microsoft.Network/applicationGateways), and is not a fixed fleet",
            )


# --- queues ---------------------------------------------------------------------------------------

MAX_DELIVERIES = 100  # beyond this a poison request loops for hours; Pub/Sub caps at 100 too (ours)


def queue_dlq_problems(resource: Any) -> Iterable[str]:
    """Service Bus moves a message to the queue's dead-letter subqueue after maxDeliveryCount
    deliveries; expired messages are dropped unless deadLetteringOnMessageExpiration is true
    (https://learn.microsoft.com/azure/service-bus-messaging/service-bus-dead-letter-queues). Both are
    set explicitly: an expired inference request must stay inspectable. Ours."""
    if _kind(resource) not in SB_QUEUES:
        return
    props, name = resource.props, name_of(resource)
    if not truthy(props.get("deadLetteringOnMessageExpiration")):
        yield f"queue {name} drops expired messages (deadLetteringOnMessageExpiration must be true)"
    count = props.get("maxDeliveryCount")
    if count is None or not 1 <= int(count) <= MAX_DELIVERIES:
        yield f"queue {name} maxDeliveryCount is {count}; set it (1-{MAX_DELIVERIES}) so poison requests dead-letter"


# --- web application firewall ---------------------------------------------------------------------


def _public_frontends(resource: Any) -> bool:
    return any(
        get(f, "publicIPAddress", "id") or get(f, "publicIPAddress")
        for f in items_at(resource.props, "frontendIPConfigurations")
    )


def internet_facing(resource: Any) -> bool:
    """An application gateway or load balancer with a public frontend."""
    return _kind(resource) in (APP_GATEWAY, LOAD_BALANCER) and _public_frontends(resource)


# --- identity and cross-subscription grants -------------------------------------------------------

# Built-in role ids (https://learn.microsoft.com/azure/role-based-access-control/built-in-roles).
OWNER, CONTRIBUTOR = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635", "b24988ac-6180-42a0-ab88-20f7382dd24c"
USER_ACCESS_ADMIN = "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9"
RBAC_ADMIN = "f58310d9-a9f6-439a-9e8d-f62e7b41a168"
BROAD_ROLES = {
    OWNER: "Owner",
    CONTRIBUTOR: "Contributor",
    USER_ACCESS_ADMIN: "User Access Administrator",
    RBAC_ADMIN: "Role Based Access Control Administrator",
}
SUBSCRIPTION = re.compile(r"^/subscriptions/([0-9a-f-]{36})(?:/|$)", re.IGNORECASE)  # ARM ids ignore case


def subscription_of(resource_id: Any) -> str | None:
    match = SUBSCRIPTION.match(str(resource_id or ""))
    return match.group(1).lower() if match else None


def role_of(assignment_props: Any) -> str:
    return _last_segment(assignment_props.get("roleDefinitionId")).lower()


def check_least_privilege(resource: Any) -> Iterable[str]:
    """No Owner / Contributor / access-administrator role assignments (they can grant themselves
    anything; Checkov CKV_AZURE_39-style) and no custom role with `*` actions (Checkov CKV_AZURE_39)."""
    kind, props, name = _kind(resource), resource.props, name_of(resource)
    if kind == ROLE_ASSIGNMENT:
        role = role_of(props)
        if role in BROAD_ROLES:
            yield f"role assignment {name} grants {BROAD_ROLES[role]}; grant the narrowest built-in or custom role"
    elif kind in SAS_RULES:
        # A Manage key can delete the queue and mint other keys; workers need Listen/Send only
        # (https://learn.microsoft.com/azure/service-bus-messaging/service-bus-sas#rights-required-for-service-bus-operations).
        if "Manage" in [str(r) for r in as_list(props.get("rights"))]:
            yield f"Service Bus authorization rule {name} carries Manage rights; give workers Listen/Send"
    elif kind == ROLE_DEFINITION:
        for permission in items_at(props, "permissions"):
            actions = [str(a) for a in as_list(permission.get("actions"))]
            if "*" in actions + [str(a) for a in as_list(permission.get("dataActions"))]:
                yield f"role definition {name} allows every action (*)"
                continue
            # Writing role assignments or definitions (or any Microsoft.Authorization write) is User Access
            # Administrator's power: its holder grants itself anything (an escalation that is neither `*` nor Owner).
            escalating = [
                a
                for a in actions
                if a.lower().startswith(("microsoft.authorization/", "*/")) and not a.lower().endswith("/read")
            ]
            if escalating:
                yield f"role definition {name} can change who can do what ({', '.join(escalating)})"


def ingress_owner_problems(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Internet-open NSG rules sit only on the NSG of an internet-facing application gateway's
    subnet (never on the nodes' or replicas'). Ours (Trivy AVD-AZU-0047 permits none at all)."""
    nsgs = [r for r in resources if _kind(r) == NSG]
    subnets = [r for r in resources if _kind(r) == SUBNET]
    gateways = [r for r in resources if _kind(r) == APP_GATEWAY and _public_frontends(r)]

    def fronts(gateway: Any, subnet: Any) -> bool:
        ids = {get(c, "subnet", "id") for c in items_at(gateway.props, "gatewayIPConfigurations")}
        return refers_to(gateway, "gatewayIPConfigurations", subnet, keys=("id",)) or subnet.props.get("id") in ids

    for resource in resources:
        if not internet_rules(resource, is_public_range):
            continue
        if _kind(resource) == NSG:
            owners = [resource]
        else:
            owners = targets_of(resource, "networkSecurityGroupName", nsgs, keys=("networkSecurityGroupName", "id"))
        for nsg in owners or [resource]:
            guarded = referrers_of(nsg, subnets, "networkSecurityGroup", keys=("id",))
            if not any(fronts(g, s) for g in gateways for s in guarded):
                yield (
                    resource.urn,
                    f"{name_of(resource)} opens network security group {name_of(nsg)} to the internet, but it guards no "
                    "internet-facing application gateway's subnet",
                )


SUBNET = "azure-native:network:Subnet"
