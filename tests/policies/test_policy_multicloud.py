"""Azure and GCP through both packs: a compliant training and serving resource set per cloud draws no
verdict at all, and each mutation (one risky edit, in every spelling the packs must see through)
draws a MANDATORY verdict of the expected policy naming the resource it touched. Everything runs
through pulumi-policy's analyzer servicer (Configure/Analyze/AnalyzeStack), as `accelstack policy` does.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from accelstack.engine.policy_runner import Verdict, run_packs
from accelstack.policies.separation.taggable_kinds import TAGGABLE

Doc = dict[str, Any]
# Lowercase, with letters: Azure compares subscription ids ignoring case, and tests write them in capitals too.
TRAIN_SUB, SERVE_SUB, OTHER_SUB = (
    "1a1a1a1a-1111-4111-a111-11111111111a",
    "2b2b2b2b-2222-4222-b222-22222222222b",
    "3c3c3c3c-3333-4333-c333-33333333333c",
)
TENANT = "99999999-9999-9999-9999-999999999999"
TRAIN_PROJECT, SERVE_PROJECT, OTHER_PROJECT = "acme-train", "acme-serve", "acme-other"
READER, OWNER = "acdd72a7-3385-48ef-bd42-f606fba81ae7", "8e3af657-a8ff-443c-a75c-2fe8c4bcb635"
BLOB_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"


class Stack:
    """A v3 export under construction: the stack, one explicit pinned provider, resources."""

    def __init__(self, name: str, provider_type: str, provider_inputs: dict[str, Any]):
        self.name = name
        self.resources: list[dict[str, Any]] = []
        self.stack_urn = self.urn("pulumi:pulumi:Stack", f"accelstack-{name}")
        self.resources.append({"urn": self.stack_urn, "custom": False, "type": "pulumi:pulumi:Stack", "inputs": {}})
        provider = self.add(provider_type, f"{name}-provider", provider_inputs, provider=None)
        self.provider_ref = f"{provider['urn']}::{provider['id']}"

    def urn(self, type_: str, name: str) -> str:
        return f"urn:pulumi:{self.name}::accelstack::{type_}::{name}"

    def add(
        self,
        type_: str,
        name: str,
        inputs: dict[str, Any],
        *,
        provider: Any = "stack",
        protect: bool = False,
        links: dict[str, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """`links` maps an input to the resource it points at (value, if unset, and property dependency)."""
        inputs = tagged(type_, self.name, copy.deepcopy(inputs))
        deps = {}
        for key, target in (links or {}).items():
            inputs.setdefault(key, target["outputs"]["id"])
            deps[key] = [target["urn"]]
        entry = {
            "urn": self.urn(type_, name),
            "custom": True,
            "id": f"/resources/{name}-id",
            "type": type_,
            "inputs": inputs,
            "outputs": {**copy.deepcopy(inputs), "id": f"/resources/{name}-id"},
            "parent": self.stack_urn,
            "protect": protect,
            "dependencies": sorted({u for urns in deps.values() for u in urns}),
            "propertyDependencies": deps,
        }
        if provider == "stack":
            entry["provider"] = getattr(self, "provider_ref", None)
        self.resources.append(entry)
        return entry

    def doc(self) -> Doc:
        return {"version": 3, "deployment": {"resources": self.resources}}


def tagged(type_: str, stack: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """An Azure resource of a taggable kind carries its stack's tags, as accelstack's components tag each (azure-native
    has no provider default tags); the gcp provider stamps its labels (defaultLabels) itself."""
    if type_ in TAGGABLE[AZ] and "tags" not in inputs:
        return {**inputs, "tags": {"accelstack:workload": stack.split("-")[1], "accelstack:stack": stack}}
    return inputs


def context(cloud: str, workload: str) -> dict[str, Any]:
    training, serving = (TRAIN_SUB, SERVE_SUB) if cloud == "azure" else (TRAIN_PROJECT, SERVE_PROJECT)
    return {
        "workload": workload,
        "trainingAccounts": [training],
        "servingAccounts": [serving],
        "allowedRegions": ["eastus", "us-central1"],
        # GCS names carry no project: the weights' bucket is training's, as the runner says from the spec.
        **({"trainingStores": [f"{TRAIN_PROJECT}-artifacts"]} if cloud == "gcp" else {}),
        # Azure: the account holding the weights (serving.model.weightsUri's host), as the runner says from the spec.
        **({"artifactStores": ["acmecheckpoints"]} if cloud == "azure" else {}),
    }


def models_only(bucket: str) -> dict[str, str]:
    """The condition accelstack's serving replicas read training's weights under (components/gcp/serving/identity.py)."""
    return {
        "title": "models-prefix-only",
        "expression": f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/models/") || '
        '(resource.type == "storage.googleapis.com/Bucket" && '
        'api.getAttribute("storage.googleapis.com/objectListPrefix", "").startsWith("models/"))',
    }


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --- Azure ----------------------------------------------------------------------------------------

AZ = "azure-native"


def subnet_id(subscription: str, subnet: str) -> str:
    return (
        f"/subscriptions/{subscription}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/"
        f"subnets/{subnet}"
    )


# The object ids Azure gives each side's nodes identity (role assignments name a principal by it).
NODES_PRINCIPAL = {
    "training": "4d4d4d4d-4444-4444-8444-44444444444d",
    "serving": "5e5e5e5e-5555-4555-9555-55555555555e",
}
BLOB_READ = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read"
BLOB_PATH = "@Resource[Microsoft.Storage/storageAccounts/blobServices/containers/blobs:path]"


def identity_id(subscription: str, name: str) -> str:
    return f"/subscriptions/{subscription}/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}"


def models_condition(prefix: str) -> str:
    """An ABAC condition limiting blob reads (not listing) to `prefix`
    (learn.microsoft.com/azure/role-based-access-control/conditions-format)."""
    return (
        f"((!(ActionMatches{{'{BLOB_READ}'}} AND NOT SubOperationMatches{{'Blob.List'}})) "
        f"OR ({BLOB_PATH} StringStartsWith '{prefix}'))"
    )


def azure_stack(workload: str) -> Stack:
    sub = TRAIN_SUB if workload == "training" else SERVE_SUB
    s = Stack(
        f"azure-{workload}", f"pulumi:providers:{AZ}", {"subscriptionId": sub, "tenantId": TENANT, "location": "eastus"}
    )
    s.add(f"{AZ}:resources:ResourceGroup", "rg", {"resourceGroupName": "rg", "location": "eastus"}, protect=True)
    vnet = s.add(f"{AZ}:network:VirtualNetwork", "vnet", {"addressSpace": {"addressPrefixes": ["10.0.0.0/16"]}})
    nodes_subnet = s.add(
        f"{AZ}:network:Subnet", "nodes", {"addressPrefix": "10.0.1.0/24"}, links={"virtualNetworkName": vnet}
    )
    identity = s.add(f"{AZ}:managedidentity:UserAssignedIdentity", "nodes-identity", {"resourceName": "nodes"})
    # What Azure answers for a new identity: its ARM id and the object id role assignments name.
    identity["outputs"].update({"id": identity_id(sub, "nodes"), "principalId": NODES_PRINCIPAL[workload]})
    s.add(
        f"{AZ}:keyvault:Vault",
        "vault",
        {
            "vaultName": "acmevault",
            "properties": {"tenantId": TENANT, "enableRbacAuthorization": True, "enablePurgeProtection": True},
        },
        protect=True,
    )
    key = s.add(f"{AZ}:keyvault:Key", "data-key", {"keyName": "data", "properties": {"kty": "RSA"}}, protect=True)
    account = s.add(
        f"{AZ}:storage:StorageAccount",
        "checkpointsacct",
        {
            "accountName": "acmecheckpoints",
            "allowBlobPublicAccess": False,
            "allowSharedKeyAccess": False,  # identities only: keys would go around the read path's condition
            "publicNetworkAccess": "Enabled",
            "networkRuleSet": {
                "defaultAction": "Deny",
                "virtualNetworkRules": [
                    {"virtualNetworkResourceId": subnet_id(sub, "nodes")},
                    # training only: the serving replicas' subnet, admitted to read the published models
                    *(
                        [{"virtualNetworkResourceId": subnet_id(SERVE_SUB, "replicas")}]
                        if workload == "training"
                        else []
                    ),
                ],
                "ipRules": [{"iPAddressOrRange": "203.0.113.0/24"}],  # an office's range: narrow, allowed
            },
            "minimumTlsVersion": "TLS1_2",
            "enableHttpsTrafficOnly": True,
            "encryption": {
                "keySource": "Microsoft.Keyvault",
                "keyVaultProperties": {"keyName": "data", "keyVaultUri": "https://acmevault.vault.azure.net/"},
                "requireInfrastructureEncryption": True,
            },
        },
        protect=True,
        links={"encryption": key},
    )
    s.add(
        f"{AZ}:storage:BlobContainer",
        "checkpoints",
        {"containerName": "checkpoints", "publicAccess": "None"},
        protect=True,
        links={"accountName": account},
    )
    s.add(
        f"{AZ}:storage:BlobServiceProperties",
        "blob-settings",
        {
            "isVersioningEnabled": True,
            "deleteRetentionPolicy": {"enabled": True, "days": 30},
            "containerDeleteRetentionPolicy": {"enabled": True, "days": 30},
        },
        links={"accountName": account},
    )
    s.add(
        f"{AZ}:authorization:RoleAssignment",
        "nodes-read-checkpoints",
        {
            "scope": f"/subscriptions/{sub}/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/acmecheckpoints",
            "roleDefinitionId": f"/subscriptions/{sub}/providers/Microsoft.Authorization/roleDefinitions/{BLOB_READER}",
            "principalId": NODES_PRINCIPAL[workload],
            "principalType": "ServicePrincipal",
        },
    )
    nic_config = {
        "name": "nic",
        "primary": True,
        "enableAcceleratedNetworking": True,
        "ipConfigurations": [{"name": "ip", "subnet": {"id": nodes_subnet["outputs"]["id"]}}],
    }
    vmss = {
        "sku": {"name": "Standard_ND96isr_H100_v5", "capacity": 2},
        "virtualMachineProfile": {
            "priority": "Spot" if workload == "training" else "Regular",
            "osProfile": {
                "computerNamePrefix": "n",
                "adminUsername": "azureuser",
                "customData": b64("#!/bin/bash\necho hi\n"),
            },
            "networkProfile": {"networkInterfaceConfigurations": [nic_config]},
        },
    }
    if workload == "training":
        s.add(
            f"{AZ}:storagecache:AmlFilesystem",
            "lustre",
            {
                "storageCapacityTiB": 16,
                "encryptionSettings": {
                    "keyEncryptionKey": {
                        "keyUrl": "https://acmevault.vault.azure.net/keys/data",
                        "sourceVault": {
                            "id": f"/subscriptions/{sub}/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/acmevault"
                        },
                    }
                },
            },
            protect=True,
        )
        s.add(f"{AZ}:compute:ProximityPlacementGroup", "ppg", {})
        s.add(f"{AZ}:compute:VirtualMachineScaleSet", "gpu-nodes", vmss)
        s.add(
            f"{AZ}:network:NetworkSecurityGroup",
            "nodes-nsg",
            {
                "securityRules": [
                    {
                        "name": "vnet",
                        "direction": "Inbound",
                        "access": "Allow",
                        "protocol": "*",
                        "sourceAddressPrefix": "VirtualNetwork",
                        "destinationPortRange": "*",
                        "priority": 100,
                    }
                ]
            },
        )
        return s
    # serving
    nsg = s.add(
        f"{AZ}:network:NetworkSecurityGroup",
        "gateway-nsg",
        {
            "securityRules": [
                {
                    "name": "https",
                    "direction": "Inbound",
                    "access": "Allow",
                    "protocol": "Tcp",
                    "sourceAddressPrefix": "Internet",
                    "destinationPortRange": "443",
                    "priority": 100,
                },
                {
                    "name": "gwm",
                    "direction": "Inbound",
                    "access": "Allow",
                    "protocol": "Tcp",
                    "sourceAddressPrefix": "GatewayManager",
                    "destinationPortRange": "65200-65535",
                    "priority": 110,
                },
            ]
        },
    )
    gw_subnet = s.add(
        f"{AZ}:network:Subnet",
        "gateway-subnet",
        {"addressPrefix": "10.0.2.0/24", "networkSecurityGroup": {"id": nsg["outputs"]["id"]}},
        links={"virtualNetworkName": vnet, "networkSecurityGroup": nsg},
    )
    pip = s.add(
        f"{AZ}:network:PublicIPAddress",
        "gateway-ip",
        {"sku": {"name": "Standard"}, "publicIPAllocationMethod": "Static"},
    )
    waf = s.add(
        f"{AZ}:network:WebApplicationFirewallPolicy",
        "waf",
        {
            "policySettings": {"state": "Enabled", "mode": "Prevention"},
            "managedRules": {"managedRuleSets": [{"ruleSetType": "OWASP", "ruleSetVersion": "3.2"}]},
            "customRules": [
                {
                    "name": "rate",
                    "priority": 1,
                    "ruleType": "RateLimitRule",
                    "action": "Block",
                    "rateLimitThreshold": 100,
                    "rateLimitDuration": "OneMin",
                    "groupByUserSession": [{"groupByVariables": [{"variableName": "ClientAddr"}]}],
                    "matchConditions": [],
                }
            ],
        },
    )
    gateway = s.add(
        f"{AZ}:network:ApplicationGateway",
        "gateway",
        {
            "sku": {"name": "WAF_v2", "tier": "WAF_v2"},
            "sslPolicy": {"policyType": "Predefined", "policyName": "AppGwSslPolicy20220101S"},
            "gatewayIPConfigurations": [{"name": "gw", "subnet": {"id": gw_subnet["outputs"]["id"]}}],
            "frontendIPConfigurations": [{"name": "public", "publicIPAddress": {"id": pip["outputs"]["id"]}}],
            "httpListeners": [{"name": "https", "protocol": "Https"}, {"name": "http", "protocol": "Http"}],
            "redirectConfigurations": [
                {"name": "to-https", "redirectType": "Permanent", "targetListener": {"id": "/x/httpListeners/https"}}
            ],
            "requestRoutingRules": [
                {
                    "name": "main",
                    "httpListener": {"id": "/x/httpListeners/https"},
                    "backendAddressPool": {"id": "/x/pool"},
                },
                {
                    "name": "redirect",
                    "httpListener": {"id": "/x/httpListeners/http"},
                    "redirectConfiguration": {"id": "/x/redirectConfigurations/to-https"},
                },
            ],
        },
        links={"firewallPolicy": waf, "gatewayIPConfigurations": gw_subnet},
    )
    s.add(
        f"{AZ}:monitor:DiagnosticSetting",
        "gateway-logs",
        {
            "logs": [
                {"category": c, "enabled": True}
                for c in ("ApplicationGatewayAccessLog", "ApplicationGatewayFirewallLog")
            ],
            "storageAccountId": f"/subscriptions/{sub}/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/acmelogs",
        },
        links={"resourceUri": gateway},
    )
    namespace = s.add(
        f"{AZ}:servicebus:Namespace",
        "bus",
        {"sku": {"name": "Premium"}, "minimumTlsVersion": "1.2", "disableLocalAuth": True},
    )
    s.add(
        f"{AZ}:servicebus:Queue",
        "requests",
        {"deadLetteringOnMessageExpiration": True, "maxDeliveryCount": 5},
        links={"namespaceName": namespace},
    )
    group = s.add(f"{AZ}:compute:VirtualMachineScaleSet", "replicas", vmss)
    s.add(
        f"{AZ}:standbypool:StandbyVirtualMachinePool",
        "standby",
        {"virtualMachineState": "Deallocated"},
        links={"attachedVirtualMachineScaleSetId": group},
    )
    trigger = {
        "metricName": "ActiveMessages",
        "metricNamespace": "Microsoft.ServiceBus/namespaces",
        "metricResourceUri": "/subscriptions/x/providers/Microsoft.ServiceBus/namespaces/bus",
        "operator": "GreaterThan",
        "threshold": 10,
        "timeAggregation": "Average",
        "statistic": "Average",
        "timeGrain": "PT1M",
        "timeWindow": "PT5M",
    }
    s.add(
        f"{AZ}:monitor:AutoscaleSetting",
        "replicas-autoscale",
        {
            "enabled": True,
            "profiles": [
                {"name": "queue", "rules": [{"metricTrigger": trigger, "scaleAction": {"direction": "Increase"}}]}
            ],
        },
        links={"targetResourceUri": group},
    )
    # serving reads training's artifacts: a reader role on a scope in the training subscription.
    s.add(
        f"{AZ}:authorization:RoleAssignment",
        "read-training-artifacts",
        {
            "scope": f"/subscriptions/{TRAIN_SUB}/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/acmeartifacts",
            "roleDefinitionId": f"/subscriptions/{TRAIN_SUB}/providers/Microsoft.Authorization/roleDefinitions/{BLOB_READER}",
            "principalId": NODES_PRINCIPAL[workload],
            "principalType": "ServicePrincipal",
            # Azure ABAC: blob reads only under the artifact prefix (the serving stack's own condition's shape).
            "condition": models_condition("models/"),
            "conditionVersion": "2.0",
        },
    )
    return s


# --- GCP ------------------------------------------------------------------------------------------


def gcp_stack(workload: str) -> Stack:
    project = TRAIN_PROJECT if workload == "training" else SERVE_PROJECT
    s = Stack(
        f"gcp-{workload}",
        "pulumi:providers:gcp",
        {
            "project": project,
            "region": "us-central1",
            "defaultLabels": json.dumps({"accelstack-workload": workload, "accelstack-stack": f"gcp-{workload}"}),
        },
    )
    network = s.add("gcp:compute/network:Network", "vpc", {"autoCreateSubnetworks": False})
    s.add(
        "gcp:compute/subnetwork:Subnetwork",
        "nodes",
        {"ipCidrRange": "10.0.0.0/20", "privateIpGoogleAccess": True},
        links={"network": network},
    )
    router = s.add("gcp:compute/router:Router", "router", {}, links={"network": network})
    s.add("gcp:compute/routerNat:RouterNat", "nat", {"natIpAllocateOption": "AUTO_ONLY"}, links={"router": router})
    s.add("gcp:projects/service:Service", "compute-api", {"service": "compute.googleapis.com", "project": project})
    ring = s.add("gcp:kms/keyRing:KeyRing", "ring", {"location": "us-central1"})
    key = s.add(
        "gcp:kms/cryptoKey:CryptoKey", "data-key", {"rotationPeriod": "7776000s"}, protect=True, links={"keyRing": ring}
    )
    s.add("gcp:serviceaccount/account:Account", "nodes-sa", {"accountId": "nodes"})
    s.add(
        "gcp:storage/bucket:Bucket",
        "checkpoints",
        {
            "name": f"{project}-checkpoints",
            "location": "US-CENTRAL1",
            "publicAccessPrevention": "enforced",
            "uniformBucketLevelAccess": True,
            "versioning": {"enabled": True},
            "encryption": {"defaultKmsKeyName": key["outputs"]["id"]},
        },
        protect=True,
    )
    s.add(
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        "nodes-write-checkpoints",
        {
            "bucket": f"{project}-checkpoints",
            "role": "roles/storage.objectUser",
            "member": f"serviceAccount:nodes@{project}.iam.gserviceaccount.com",
        },
    )
    s.add(
        "gcp:compute/firewall:Firewall",
        "internal",
        {"direction": "INGRESS", "sourceRanges": ["10.0.0.0/8"], "allows": [{"protocol": "all"}]},
        links={"network": network},
    )
    s.add(
        "gcp:compute/firewall:Firewall",
        "iap-ssh",
        {"direction": "INGRESS", "sourceRanges": ["35.235.240.0/20"], "allows": [{"protocol": "tcp", "ports": ["22"]}]},
        links={"network": network},
    )
    template = {
        "machineType": "a3-highgpu-8g",
        "networkInterfaces": [{"subnetwork": "nodes", "nicType": "GVNIC"}],
        "scheduling": {
            "onHostMaintenance": "TERMINATE",
            "automaticRestart": False,
            "provisioningModel": "SPOT" if workload == "training" else "STANDARD",
        },
        "metadata": json.dumps({"startup-script": "#!/bin/bash\necho hi\n", "enable-oslogin": "TRUE"}),
    }
    if workload == "training":
        s.add(
            "gcp:lustre/instance:Instance",
            "lustre",
            {"instanceId": "lustre", "capacityGib": "18000", "kmsKey": key["outputs"]["id"]},
            protect=True,
        )
        s.add(
            "gcp:compute/resourcePolicy:ResourcePolicy",
            "compact",
            {"groupPlacementPolicy": {"collocation": "COLLOCATED"}},
        )
        s.add("gcp:compute/instanceTemplate:InstanceTemplate", "gpu-template", template)
        return s
    # serving
    s.add(
        "gcp:compute/firewall:Firewall",
        "health-checks",
        {
            "direction": "INGRESS",
            "sourceRanges": ["35.191.0.0/16", "130.211.0.0/22"],
            "allows": [{"protocol": "tcp", "ports": ["8000"]}],
        },
        links={"network": network},
    )
    tmpl = s.add("gcp:compute/regionInstanceTemplate:RegionInstanceTemplate", "replica-template", template)
    group = s.add(
        "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
        "replicas",
        {"baseInstanceName": "r", "versions": [{"instanceTemplate": "t"}]},
        links={"versions": tmpl},
    )
    s.add(
        "gcp:compute/regionAutoscaler:RegionAutoscaler",
        "replicas-autoscaler",
        {
            "autoscalingPolicy": {
                "minReplicas": 1,
                "maxReplicas": 4,
                "metrics": [
                    {
                        "name": "pubsub.googleapis.com/subscription/num_undelivered_messages",
                        "singleInstanceAssignment": 10,
                    }
                ],
            }
        },
        links={"target": group},
    )
    topic = s.add("gcp:pubsub/topic:Topic", "requests", {"kmsKeyName": key["outputs"]["id"]})
    dlq = s.add("gcp:pubsub/topic:Topic", "requests-dlq", {"kmsKeyName": key["outputs"]["id"]})
    s.add(
        "gcp:pubsub/subscription:Subscription",
        "requests-sub",
        {"deadLetterPolicy": {"deadLetterTopic": dlq["outputs"]["id"], "maxDeliveryAttempts": 5}},
        links={"topic": topic, "deadLetterPolicy": dlq},
    )
    s.add("gcp:pubsub/subscription:Subscription", "requests-dlq-sub", {}, links={"topic": dlq})
    armor = s.add(
        "gcp:compute/securityPolicy:SecurityPolicy",
        "armor",
        {
            "rules": [
                {
                    "action": "throttle",
                    "priority": 1000,
                    "match": {"versionedExpr": "SRC_IPS_V1", "config": {"srcIpRanges": ["*"]}},
                    "rateLimitOptions": {
                        "conformAction": "allow",
                        "exceedAction": "deny(429)",
                        "enforceOnKey": "IP",
                        "rateLimitThreshold": {"count": 100, "intervalSec": 60},
                    },
                },
                {
                    "action": "allow",
                    "priority": 2147483647,
                    "match": {"versionedExpr": "SRC_IPS_V1", "config": {"srcIpRanges": ["*"]}},
                },
            ]
        },
    )
    hc = s.add(
        "gcp:compute/healthCheck:HealthCheck", "hc", {"httpHealthCheck": {"port": 8000, "requestPath": "/health"}}
    )
    backend = s.add(
        "gcp:compute/backendService:BackendService",
        "backend",
        {
            "loadBalancingScheme": "EXTERNAL_MANAGED",
            "protocol": "HTTP",
            "logConfig": {"enable": True, "sampleRate": 1.0},
        },
        links={"securityPolicy": armor, "healthChecks": hc},
    )
    urlmap = s.add("gcp:compute/uRLMap:URLMap", "urlmap", {}, links={"defaultService": backend})
    redirect = s.add(
        "gcp:compute/uRLMap:URLMap", "redirect", {"defaultUrlRedirect": {"httpsRedirect": True, "stripQuery": False}}
    )
    policy = s.add("gcp:compute/sSLPolicy:SSLPolicy", "tls", {"minTlsVersion": "TLS_1_2", "profile": "MODERN"})
    cert = s.add(
        "gcp:compute/managedSslCertificate:ManagedSslCertificate", "cert", {"managed": {"domains": ["api.example.com"]}}
    )
    https = s.add(
        "gcp:compute/targetHttpsProxy:TargetHttpsProxy",
        "https",
        {"sslCertificates": [cert["outputs"]["id"]]},
        links={"urlMap": urlmap, "sslPolicy": policy},
    )
    http = s.add("gcp:compute/targetHttpProxy:TargetHttpProxy", "http", {}, links={"urlMap": redirect})
    address = s.add("gcp:compute/globalAddress:GlobalAddress", "ip", {})
    s.add(
        "gcp:compute/globalForwardingRule:GlobalForwardingRule",
        "https-rule",
        {"loadBalancingScheme": "EXTERNAL_MANAGED", "portRange": "443"},
        links={"target": https, "ipAddress": address},
    )
    s.add(
        "gcp:compute/globalForwardingRule:GlobalForwardingRule",
        "http-rule",
        {"loadBalancingScheme": "EXTERNAL_MANAGED", "portRange": "80"},
        links={"target": http, "ipAddress": address},
    )
    # serving reads training's artifacts: objectViewer on a training bucket (not the stack's).
    s.add(
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        "read-training-artifacts",
        {
            "bucket": f"{TRAIN_PROJECT}-artifacts",
            "role": "roles/storage.objectViewer",
            "member": f"serviceAccount:replicas@{SERVE_PROJECT}.iam.gserviceaccount.com",
            "condition": models_only(f"{TRAIN_PROJECT}-artifacts"),
        },
    )
    return s


STACKS: dict[str, Callable[[], Stack]] = {
    "azure-training": lambda: azure_stack("training"),
    "azure-serving": lambda: azure_stack("serving"),
    "gcp-training": lambda: gcp_stack("training"),
    "gcp-serving": lambda: gcp_stack("serving"),
}


def verdicts(stack: str, doc: Doc) -> list[Verdict]:
    cloud, workload = stack.split("-")
    return run_packs(doc, context=context(cloud, workload))


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_the_compliant_sets_draw_no_verdict(stack: str) -> None:
    found = verdicts(stack, STACKS[stack]().doc())
    assert [v.line() for v in found] == []


# --- mutations ------------------------------------------------------------------------------------


def find(doc: Doc, name: str) -> dict[str, Any]:
    matches = [r for r in doc["deployment"]["resources"] if r["urn"].endswith(f"::{name}")]
    assert len(matches) == 1, name
    return matches[0]


def put(name: str, path: str, value: Any, *, delete: bool = False) -> Callable[[Doc], None]:
    """Set (or delete) inputs.<path> and outputs.<path> of one resource (`a.0.b` indexes lists)."""

    def mutate(doc: Doc) -> None:
        resource = find(doc, name)
        for side in ("inputs", "outputs"):
            node = resource[side]
            keys = path.split(".")
            for key in keys[:-1]:
                node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
            if delete:
                node.pop(keys[-1], None)
            elif isinstance(node, list) and int(keys[-1]) == len(node):
                node.append(value)
            elif isinstance(node, list):
                node[int(keys[-1])] = value
            else:
                node[keys[-1]] = value

    return mutate


def retype(name: str, type_: str) -> Callable[[Doc], None]:
    """Re-spell a resource with an alias or API-version token (same API object)."""

    def mutate(doc: Doc) -> None:
        resource = find(doc, name)
        old = resource["type"]
        resource["type"] = type_
        resource["urn"] = resource["urn"].replace(f"::{old}::", f"::{type_}::")

    return mutate


def add(stack_name: str, type_: str, name: str, inputs: dict[str, Any], **links: str) -> Callable[[Doc], None]:
    inputs = tagged(type_, stack_name, inputs)

    def mutate(doc: Doc) -> None:
        provider = next(r for r in doc["deployment"]["resources"] if r["type"].startswith("pulumi:providers:"))
        deps = {k: [find(doc, target)["urn"]] for k, target in links.items()}
        doc["deployment"]["resources"].append(
            {
                "urn": f"urn:pulumi:{stack_name}::accelstack::{type_}::{name}",
                "custom": True,
                "id": f"{name}-id",
                "type": type_,
                "inputs": copy.deepcopy(inputs),
                "outputs": {**copy.deepcopy(inputs), "id": f"{name}-id"},
                "provider": f"{provider['urn']}::{provider['id']}",
                "protect": False,
                "dependencies": [u for us in deps.values() for u in us],
                "propertyDependencies": deps,
            }
        )

    return mutate


def both(*mutations: Callable[[Doc], None]) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        for m in mutations:
            m(doc)

    return mutate


@dataclass(frozen=True)
class Mutation:
    id: str
    stack: str
    apply: Callable[[Doc], None]
    policy: str  # the policy (or its -final twin) that must give a mandatory verdict
    resource: str  # the name the verdict must carry (in its URN or message)


def m(id: str, stack: str, apply: Callable[[Doc], None], policy: str, resource: str) -> Mutation:
    return Mutation(id, stack, apply, policy, resource)


AZT, AZS, GCT, GCS = "azure-training", "azure-serving", "gcp-training", "gcp-serving"
NIC_IP = "virtualMachineProfile.networkProfile.networkInterfaceConfigurations.0.ipConfigurations.0"
CUSTOM_DATA = "virtualMachineProfile.osProfile.customData"
INTERNET_SSH = {
    "name": "ssh",
    "direction": "Inbound",
    "access": "Allow",
    "protocol": "Tcp",
    "destinationPortRange": "22",
    "priority": 90,
}
PROVIDER_AZ = "azure-training-provider"
MUTATIONS = [
    # --- Azure: public storage, every spelling ---
    m(
        "az-blob-public",
        AZT,
        put("checkpointsacct", "allowBlobPublicAccess", True),
        "no-public-buckets",
        "checkpointsacct",
    ),
    m(
        "az-blob-public-unset",
        AZT,
        put("checkpointsacct", "allowBlobPublicAccess", None, delete=True),
        "no-public-buckets",
        "checkpointsacct",
    ),
    m(
        "az-network-open",
        AZT,
        put("checkpointsacct", "networkRuleSet.defaultAction", "Allow"),
        "no-public-buckets",
        "checkpointsacct",
    ),
    m(
        "az-network-unset",
        AZT,
        put("checkpointsacct", "networkRuleSet", None, delete=True),
        "no-public-buckets",
        "checkpointsacct",
    ),
    m(
        "az-network-ip-rule-internet",
        AZT,
        put("checkpointsacct", "networkRuleSet.ipRules.1", {"iPAddressOrRange": "0.0.0.0/0", "action": "Allow"}),
        "no-public-buckets",
        "checkpointsacct",
    ),
    m(
        "az-network-ip-rule-half-internet",
        AZT,
        put("checkpointsacct", "networkRuleSet.ipRules.0", {"value": "128.0.0.0/1"}),
        "no-public-buckets",
        "checkpointsacct",
    ),
    # --- Azure: keys and local users that go around the grants (and the read path's condition) ---
    m(
        "az-shared-key-on",
        AZT,
        put("checkpointsacct", "allowSharedKeyAccess", True),
        "store-keys-only-where-needed",
        "checkpointsacct",
    ),
    m(
        "az-shared-key-left-out",
        AZS,
        put("checkpointsacct", "allowSharedKeyAccess", None, delete=True),
        "store-keys-only-where-needed",
        "checkpointsacct",
    ),
    m(
        "az-artifact-account-sftp",
        AZT,
        put("checkpointsacct", "isSftpEnabled", True),
        "store-keys-only-where-needed",
        "checkpointsacct",
    ),
    m(
        "az-network-serving-subnet-on-another-account",
        AZT,
        put("checkpointsacct", "accountName", "acmedatasets"),
        "cross-account-network-admission",
        "checkpointsacct",
    ),
    # --- Azure: whose networks a storage firewall lets in ---
    m(
        "az-network-foreign-subnet",
        AZT,
        put(
            "checkpointsacct",
            "networkRuleSet.virtualNetworkRules.2",
            {"virtualNetworkResourceId": subnet_id(OTHER_SUB, "x")},
        ),
        "cross-account-network-admission",
        "checkpointsacct",
    ),
    m(
        "az-network-foreign-subnet-api-spelling",
        AZT,
        put("checkpointsacct", "networkRuleSet.virtualNetworkRules.0", {"id": subnet_id(OTHER_SUB.upper(), "x")}),
        "cross-account-network-admission",
        "checkpointsacct",
    ),
    m(
        "az-network-training-subnet-in-serving",
        AZS,
        put(
            "checkpointsacct",
            "networkRuleSet.virtualNetworkRules.1",
            {"virtualNetworkResourceId": subnet_id(TRAIN_SUB, "nodes")},
        ),
        "cross-account-network-admission",
        "checkpointsacct",
    ),
    m(
        "az-network-wildcard-resource-instance",
        AZT,
        put(
            "checkpointsacct",
            "networkRuleSet.resourceAccessRules",
            [
                {
                    "tenantId": TENANT,
                    "resourceId": "/subscriptions/*/resourceGroups/*/providers/Microsoft.Synapse/workspaces/*",
                }
            ],
        ),
        "cross-account-network-admission",
        "checkpointsacct",
    ),
    m(
        "az-network-unparsable-subnet",
        AZT,
        put("checkpointsacct", "networkRuleSet.virtualNetworkRules.0", {"virtualNetworkResourceId": "x"}),
        "cross-account-network-admission",
        "checkpointsacct",
    ),
    m("az-container-blob", AZT, put("checkpoints", "publicAccess", "Blob"), "no-public-buckets", "checkpoints"),
    m(
        "az-container-container",
        AZT,
        put("checkpoints", "publicAccess", "Container"),
        "no-public-buckets",
        "checkpoints",
    ),
    m(
        "az-storage-api-version-token",
        AZT,
        both(
            retype("checkpointsacct", f"{AZ}:storage/v20230101:StorageAccount"),
            put("checkpointsacct", "allowBlobPublicAccess", True),
        ),
        "no-public-buckets",
        "checkpointsacct",
    ),
    # --- Azure: encryption ---
    m(
        "az-cmek-dropped",
        AZT,
        put("checkpointsacct", "encryption.keySource", "Microsoft.Storage"),
        "bucket-encryption",
        "checkpointsacct",
    ),
    m(
        "az-cmek-no-key-name",
        AZT,
        put("checkpointsacct", "encryption.keyVaultProperties", None, delete=True),
        "encryption-at-rest",
        "checkpointsacct",
    ),
    m("az-lustre-no-cmk", AZT, put("lustre", "encryptionSettings", None, delete=True), "bucket-encryption", "lustre"),
    # --- Azure: TLS ---
    m("az-storage-tls10", AZT, put("checkpointsacct", "minimumTlsVersion", "TLS1_0"), "min-tls-1-2", "checkpointsacct"),
    m(
        "az-storage-tls-unset",
        AZT,
        put("checkpointsacct", "minimumTlsVersion", None, delete=True),
        "min-tls-1-2",
        "checkpointsacct",
    ),
    m(
        "az-storage-http",
        AZT,
        put("checkpointsacct", "enableHttpsTrafficOnly", False),
        "min-tls-1-2",
        "checkpointsacct",
    ),
    m("az-bus-tls11", AZS, put("bus", "minimumTlsVersion", "1.1"), "min-tls-1-2", "bus"),
    m("az-bus-shared-keys", AZS, put("bus", "disableLocalAuth", False), "queue-identity-auth", "bus"),
    m("az-bus-local-auth-unset", AZS, put("bus", "disableLocalAuth", None, delete=True), "queue-identity-auth", "bus"),
    m("az-bus-local-auth-string", AZS, put("bus", "disableLocalAuth", "false"), "queue-identity-auth", "bus"),
    m(
        "az-gateway-old-policy",
        AZS,
        put("gateway", "sslPolicy.policyName", "AppGwSslPolicy20150501"),
        "min-tls-1-2",
        "gateway",
    ),
    m(
        "az-gateway-custom-tls11",
        AZS,
        put("gateway", "sslPolicy", {"policyType": "CustomV2", "minProtocolVersion": "TLSv1_1"}),
        "min-tls-1-2",
        "gateway",
    ),
    m("az-gateway-no-policy", AZS, put("gateway", "sslPolicy", None, delete=True), "min-tls-1-2", "gateway"),
    m(
        "az-http-listener-serves",
        AZS,
        put("gateway", "requestRoutingRules.1.redirectConfiguration", None, delete=True),
        "https-listeners",
        "gateway",
    ),
    # --- Azure: public IPs on nodes ---
    m(
        "az-vmss-public-ip",
        AZT,
        put("gpu-nodes", f"{NIC_IP}.publicIPAddressConfiguration", {"name": "pip"}),
        "no-public-ip-on-nodes",
        "gpu-nodes",
    ),
    m(
        "az-vm-public-ip",
        AZT,
        add(
            AZT,
            f"{AZ}:compute:VirtualMachine",
            "head",
            {
                "networkProfile": {
                    "networkInterfaceConfigurations": [
                        {
                            "name": "n",
                            "ipConfigurations": [{"name": "ip", "publicIPAddressConfiguration": {"name": "pip"}}],
                        }
                    ]
                }
            },
        ),
        "no-public-ip-on-nodes",
        "head",
    ),
    m(
        "az-nic-public-ip",
        AZT,
        add(
            AZT,
            f"{AZ}:network:NetworkInterface",
            "head-nic",
            {"ipConfigurations": [{"name": "ip", "publicIPAddress": {"id": "/pip"}}]},
        ),
        "no-public-ip-on-nodes",
        "head-nic",
    ),
    m(
        "az-ml-compute-public-ip",
        AZT,
        add(
            AZT,
            f"{AZ}:machinelearningservices:Compute",
            "aml",
            {"properties": {"computeType": "AmlCompute", "properties": {"vmPriority": "Dedicated"}}},
        ),
        "no-public-ip-on-nodes",
        "aml",
    ),
    m(
        "az-ml-workspace-public",
        AZT,
        add(AZT, f"{AZ}:machinelearningservices:Workspace", "aml-ws", {"publicNetworkAccess": "Enabled"}),
        "managed-ml-private",
        "aml-ws",
    ),
    m(
        "az-ml-workspace-access-unset",
        AZT,
        add(AZT, f"{AZ}:machinelearningservices:Workspace", "aml-ws-default", {"sku": {"name": "Basic"}}),
        "managed-ml-private",
        "aml-ws-default",
    ),
    m(
        "az-ml-compute-local-auth",
        AZT,
        add(
            AZT,
            f"{AZ}:machinelearningservices:Compute",
            "aml-keys",
            {"properties": {"computeType": "AmlCompute", "properties": {"enableNodePublicIp": False}}},
        ),
        "managed-ml-private",
        "aml-keys",
    ),
    m(
        "az-ml-datastore-sas",
        AZT,
        add(
            AZT,
            f"{AZ}:machinelearningservices:Datastore",
            "aml-store",
            {"properties": {"datastoreType": "AzureBlob", "credentials": {"credentialsType": "Sas"}}},
        ),
        "managed-ml-private",
        "aml-store",
    ),
    m(
        "az-ml-datastore-old-kind-account-key",
        AZT,
        add(
            AZT,
            f"{AZ}:machinelearningservices:MachineLearningDatastore",
            "aml-old-store",
            {"properties": {"credentials": {"credentialsType": "AccountKey"}}},
        ),
        "managed-ml-private",
        "aml-old-store",
    ),
    # --- Azure: NSG ingress ---
    m(
        "az-nsg-ssh-internet",
        AZT,
        put("nodes-nsg", "securityRules.1", {**INTERNET_SSH, "sourceAddressPrefix": "Internet"}),
        "no-internet-ingress",
        "nodes-nsg",
    ),
    m(
        "az-nsg-ssh-star",
        AZT,
        put("nodes-nsg", "securityRules.1", {**INTERNET_SSH, "sourceAddressPrefix": "*"}),
        "no-internet-ingress",
        "nodes-nsg",
    ),
    m(
        "az-nsg-ssh-split-range",
        AZT,
        put("nodes-nsg", "securityRules.1", {**INTERNET_SSH, "sourceAddressPrefixes": ["0.0.0.0/1", "128.0.0.0/1"]}),
        "no-internet-ingress",
        "nodes-nsg",
    ),
    m(
        "az-nsg-service-tag",
        AZT,
        put("nodes-nsg", "securityRules.1", {**INTERNET_SSH, "sourceAddressPrefix": "AzureCloud"}),
        "no-internet-ingress",
        "nodes-nsg",
    ),
    m(
        "az-security-rule-resource",
        AZT,
        add(AZT, f"{AZ}:network:SecurityRule", "open-ssh", {**INTERNET_SSH, "sourceAddressPrefix": "0.0.0.0/0"}),
        "no-internet-ingress",
        "open-ssh",
    ),
    m(
        "az-https-in-training",
        AZT,
        put(
            "nodes-nsg",
            "securityRules.1",
            {**INTERNET_SSH, "destinationPortRange": "443", "sourceAddressPrefix": "Internet"},
        ),
        "no-internet-ingress",
        "nodes-nsg",
    ),
    m(
        "az-gateway-nsg-all-ports",
        AZS,
        put("gateway-nsg", "securityRules.0.destinationPortRange", "*"),
        "no-internet-ingress",
        "gateway-nsg",
    ),
    m(
        "az-https-nsg-on-replicas",
        AZS,
        add(
            AZS,
            f"{AZ}:network:NetworkSecurityGroup",
            "replicas-nsg",
            {"securityRules": [{**INTERNET_SSH, "destinationPortRange": "443", "sourceAddressPrefix": "Internet"}]},
        ),
        "internet-ingress-only-to-load-balancer",
        "replicas-nsg",
    ),
    m(
        "az-https-rule-on-replicas",
        AZS,
        add(
            AZS,
            f"{AZ}:network:SecurityRule",
            "replicas-https",
            {**INTERNET_SSH, "destinationPortRange": "443", "sourceAddressPrefix": "Internet"},
        ),
        "internet-ingress-only-to-load-balancer",
        "replicas-https",
    ),
    # --- Azure: versioning and lifecycle ---
    m(
        "az-versioning-off",
        AZT,
        put("blob-settings", "isVersioningEnabled", False),
        "bucket-versioning",
        "blob-settings",
    ),
    m(
        "az-versioning-missing",
        AZT,
        lambda d: d["deployment"]["resources"].remove(find(d, "blob-settings")),
        "bucket-versioning",
        "checkpoints",
    ),
    m(
        "az-lifecycle-deletes-current",
        AZT,
        add(
            AZT,
            f"{AZ}:storage:ManagementPolicy",
            "expire",
            {
                "policy": {
                    "rules": [
                        {
                            "name": "old",
                            "enabled": True,
                            "type": "Lifecycle",
                            "definition": {
                                "actions": {"baseBlob": {"delete": {"daysAfterModificationGreaterThan": 30}}}
                            },
                        }
                    ]
                }
            },
            accountName="checkpointsacct",
        ),
        "no-scheduled-data-loss",
        "expire",
    ),
    m(
        "az-vault-purgeable",
        AZT,
        put("vault", "properties.enablePurgeProtection", False),
        "encryption-at-rest",
        "vault",
    ),
    m("az-resource-other-region", AZT, put("vnet", "location", "westeurope"), "allowed-regions", "vnet"),
    m("az-provider-other-region", AZT, put(PROVIDER_AZ, "location", "westeurope"), "allowed-regions", PROVIDER_AZ),
    # --- Azure: WAF ---
    m(
        "az-no-waf",
        AZS,
        both(
            put("gateway", "firewallPolicy", None, delete=True),
            lambda d: find(d, "gateway")["propertyDependencies"].pop("firewallPolicy"),
        ),
        "waf-rate-limit",
        "gateway",
    ),
    m(
        "az-public-lb-bypasses-waf",
        AZS,
        add(
            AZS,
            f"{AZ}:network:LoadBalancer",
            "direct",
            {
                "frontendIPConfigurations": [{"name": "f", "publicIPAddress": {"id": "/pip"}}],
                "loadBalancingRules": [{"name": "https", "frontendPort": 443}],
            },
        ),
        "waf-rate-limit",
        "direct",
    ),
    m("az-tagged-other-side", AZS, put("bus", "tags", {"accelstack:workload": "training"}), "workload-tags", "bus"),
    m(
        "gcp-labelled-other-side",
        GCS,
        put("requests", "labels", {"accelstack-workload": "training"}),
        "workload-tags",
        "requests",
    ),
    m(
        "gcp-provider-no-labels",
        GCS,
        put("gcp-serving-provider", "defaultLabels", None, delete=True),
        "workload-tags",
        "gcp-serving-provider",
    ),
    m("az-waf-no-rate-limit", AZS, put("waf", "customRules.0.ruleType", "MatchRule"), "waf-rate-limit", "waf"),
    m("az-waf-rate-limit-off", AZS, put("waf", "customRules.0.state", "Disabled"), "waf-rate-limit", "waf"),
    m("az-waf-detection", AZS, put("waf", "policySettings.mode", "Detection"), "waf-rate-limit", "waf"),
    # --- Azure: dead-lettering ---
    m("az-no-dlq-on-expiry", AZS, put("requests", "deadLetteringOnMessageExpiration", False), "queue-dlq", "requests"),
    m("az-delivery-count-unset", AZS, put("requests", "maxDeliveryCount", None, delete=True), "queue-dlq", "requests"),
    m("az-delivery-count-huge", AZS, put("requests", "maxDeliveryCount", 2000), "queue-dlq", "requests"),
    m(
        "az-topic-subscription",
        AZS,
        add(AZS, f"{AZ}:servicebus:Subscription", "fanout", {"maxDeliveryCount": 5}),
        "queue-dlq",
        "fanout",
    ),
    # --- Azure: Spot ---
    m("az-spot-serving", AZS, put("replicas", "virtualMachineProfile.priority", "Spot"), "no-spot-serving", "replicas"),
    m(
        "az-low-priority-serving",
        AZS,
        put("replicas", "virtualMachineProfile.priority", "Low"),
        "no-spot-serving",
        "replicas",
    ),
    m(
        "az-spot-training-no-checkpoints",
        AZT,
        both(
            put("checkpoints", "containerName", "data"),
            retype("checkpoints", f"{AZ}:storage:BlobContainer"),
            lambda d: _rename(d, "checkpoints", "datasets"),
        ),
        "spot-training-needs-checkpoints",
        "gpu-nodes",
    ),
    # --- Azure: autoscale on the queue, never CPU ---
    m(
        "az-autoscale-cpu",
        AZS,
        put("replicas-autoscale", "profiles.0.rules.0.metricTrigger.metricName", "Percentage CPU"),
        "serving-scales-on-queue-depth",
        "replicas",
    ),
    m(
        "az-autoscale-insights-token-cpu",
        AZS,
        both(
            retype("replicas-autoscale", f"{AZ}:insights:AutoscaleSetting"),
            put("replicas-autoscale", "profiles.0.rules.0.metricTrigger.metricName", "Percentage CPU"),
        ),
        "serving-scales-on-queue-depth",
        "replicas",
    ),
    m(
        "az-autoscale-disabled",
        AZS,
        put("replicas-autoscale", "enabled", False),
        "serving-scales-on-queue-depth",
        "replicas",
    ),
    # --- Azure: stateful protected ---
    m(
        "az-storage-unprotected",
        AZT,
        lambda d: find(d, "checkpointsacct").update(protect=False),
        "protect-stateful",
        "checkpointsacct",
    ),
    m("az-key-unprotected", AZT, lambda d: find(d, "data-key").update(protect=False), "protect-stateful", "data-key"),
    m(
        "az-disk-unprotected",
        AZT,
        add(AZT, f"{AZ}:compute:Disk", "scratch", {"diskSizeGB": 100}),
        "protect-stateful",
        "scratch",
    ),
    # --- Azure: secrets in custom data ---
    m(
        "az-custom-data-key",
        AZT,
        put("gpu-nodes", CUSTOM_DATA, b64(f"#!/bin/bash\ncat > /k <<EOF\n{PEM}EOF\n")),
        "no-secrets-in-user-data",
        "gpu-nodes",
    ),
    m(
        "az-user-data-munge",
        AZT,
        put(
            "gpu-nodes",
            "virtualMachineProfile.userData",
            b64("echo " + "A" * 60 + " | base64 -d > /etc/munge/munge.key\n"),
        ),
        "no-secrets-in-user-data",
        "gpu-nodes",
    ),
    # --- Azure: identity and separation ---
    m(
        "az-owner-role",
        AZT,
        put(
            "nodes-read-checkpoints",
            "roleDefinitionId",
            f"/subscriptions/{TRAIN_SUB}/providers/Microsoft.Authorization/roleDefinitions/{OWNER}",
        ),
        "iam-least-privilege",
        "nodes-read-checkpoints",
    ),
    m(
        "az-sas-manage",
        AZS,
        add(AZS, f"{AZ}:servicebus:QueueAuthorizationRule", "workers-key", {"rights": ["Listen", "Send", "Manage"]}),
        "iam-least-privilege",
        "workers-key",
    ),
    m(
        "az-role-definition-star",
        AZT,
        add(
            AZT,
            f"{AZ}:authorization:RoleDefinition",
            "god",
            {"permissions": [{"actions": ["*"]}], "assignableScopes": [f"/subscriptions/{TRAIN_SUB}"]},
        ),
        "iam-least-privilege",
        "god",
    ),
    m(
        "az-cross-sub-write",
        AZS,
        put(
            "read-training-artifacts",
            "roleDefinitionId",
            f"/x/roleDefinitions/{'ba92f5b4-2d11-453d-a403-e96b0029c9fe'}",
        ),
        "cross-account-read-only",
        "read-training-artifacts",
    ),
    m(
        "az-cross-sub-outsider",
        AZS,
        put("read-training-artifacts", "scope", f"/subscriptions/{OTHER_SUB}/resourceGroups/rg"),
        "cross-account-read-only",
        "read-training-artifacts",
    ),
    m(
        # ARM ids ignore case: a capitalised scope is the same subscription, not "no subscription"
        "az-cross-sub-outsider-capitalised-scope",
        AZS,
        put("read-training-artifacts", "scope", f"/Subscriptions/{OTHER_SUB.upper()}/resourceGroups/rg"),
        "cross-account-read-only",
        "read-training-artifacts",
    ),
    # A management group or the tenant root reaches every subscription under it, the other side's included.
    m(
        "az-role-assignment-at-management-group",
        AZS,
        put("read-training-artifacts", "scope", "/providers/Microsoft.Management/managementGroups/acme"),
        "cross-account-read-only",
        "read-training-artifacts",
    ),
    m(
        "az-role-assignment-at-tenant-root",
        AZT,
        put("nodes-read-checkpoints", "scope", "/"),
        "cross-account-read-only",
        "nodes-read-checkpoints",
    ),
    m(
        "az-training-grants-serving-sub",
        AZT,
        put("nodes-read-checkpoints", "scope", f"/subscriptions/{SERVE_SUB}"),
        "cross-account-read-only",
        "nodes-read-checkpoints",
    ),
    m(
        "az-role-definition-at-management-group",
        AZT,
        add(
            AZT,
            f"{AZ}:authorization:RoleDefinition",
            "reader3",
            {
                "permissions": [{"actions": ["Microsoft.Storage/*/read"]}],
                "assignableScopes": ["/providers/Microsoft.Management/managementGroups/acme"],
            },
        ),
        "cross-account-read-only",
        "reader3",
    ),
    m(
        "az-role-definition-other-sub",
        AZT,
        add(
            AZT,
            f"{AZ}:authorization:RoleDefinition",
            "reader2",
            {
                "permissions": [{"actions": ["Microsoft.Storage/*/read"]}],
                "assignableScopes": [f"/subscriptions/{SERVE_SUB}"],
            },
        ),
        "cross-account-read-only",
        "reader2",
    ),
    m("az-provider-serving-sub", AZT, put(PROVIDER_AZ, "subscriptionId", SERVE_SUB), "provider-account", PROVIDER_AZ),
    # A GUID names its subscription in any case: the serving subscription in capitals is still serving's.
    m(
        "az-provider-serving-sub-capitals",
        AZT,
        put(PROVIDER_AZ, "subscriptionId", SERVE_SUB.upper()),
        "provider-account",
        PROVIDER_AZ,
    ),
    m(
        "az-provider-unpinned",
        AZT,
        put(PROVIDER_AZ, "subscriptionId", None, delete=True),
        "provider-account",
        PROVIDER_AZ,
    ),
    m("az-no-provider", AZT, lambda d: find(d, "vnet").pop("provider"), "explicit-provider", "vnet"),
    m("az-unknown-kind", AZT, add(AZT, f"{AZ}:web:WebApp", "app", {}), "known-resource-kinds", "app"),
    m(
        "az-lustre-in-serving",
        AZS,
        add(
            AZS,
            f"{AZ}:storagecache:AmlFilesystem",
            "lustre",
            {"encryptionSettings": {"keyEncryptionKey": {"keyUrl": "k"}}},
        ),
        "workload-resource-kinds",
        "lustre",
    ),
    m(
        "az-gateway-in-training",
        AZT,
        add(
            AZT,
            f"{AZ}:network:ApplicationGateway",
            "gw",
            {"frontendIPConfigurations": [{"publicIPAddress": {"id": "/pip"}}]},
        ),
        "workload-resource-kinds",
        "gw",
    ),
    # --- GCP: public buckets, every spelling ---
    m(
        "gcp-pap-inherited",
        GCT,
        put("checkpoints", "publicAccessPrevention", "inherited"),
        "no-public-buckets",
        "checkpoints",
    ),
    m(
        "gcp-pap-unset",
        GCT,
        put("checkpoints", "publicAccessPrevention", None, delete=True),
        "no-public-buckets",
        "checkpoints",
    ),
    m("gcp-ubla-off", GCT, put("checkpoints", "uniformBucketLevelAccess", False), "no-public-buckets", "checkpoints"),
    m(
        "gcp-all-users-member",
        GCT,
        put("nodes-write-checkpoints", "member", "allUsers"),
        "no-public-buckets",
        "nodes-write-checkpoints",
    ),
    m(
        "gcp-all-auth-users-binding",
        GCT,
        add(
            GCT,
            "gcp:storage/bucketIAMBinding:BucketIAMBinding",
            "viewers",
            {
                "bucket": f"{TRAIN_PROJECT}-checkpoints",
                "role": "roles/storage.objectViewer",
                "members": ["allAuthenticatedUsers"],
            },
        ),
        "no-public-buckets",
        "viewers",
    ),
    m(
        "gcp-all-users-policy",
        GCT,
        add(
            GCT,
            "gcp:storage/bucketIAMPolicy:BucketIAMPolicy",
            "policy",
            {
                "bucket": f"{TRAIN_PROJECT}-checkpoints",
                "policyData": json.dumps(
                    {"bindings": [{"role": "roles/storage.objectViewer", "members": ["allUsers"]}]}
                ),
            },
        ),
        "no-public-buckets",
        "policy",
    ),
    m(
        "gcp-all-users-topic",
        GCS,
        add(
            GCS,
            "gcp:pubsub/topicIAMMember:TopicIAMMember",
            "pub",
            {"topic": "requests", "role": "roles/pubsub.publisher", "member": "allUsers"},
        ),
        "no-public-buckets",
        "pub",
    ),
    # --- GCP: encryption ---
    m(
        "gcp-bucket-google-key",
        GCT,
        put("checkpoints", "encryption", None, delete=True),
        "bucket-encryption",
        "checkpoints",
    ),
    m("gcp-lustre-google-key", GCT, put("lustre", "kmsKey", None, delete=True), "bucket-encryption", "lustre"),
    m("gcp-topic-google-key", GCS, put("requests", "kmsKeyName", None, delete=True), "bucket-encryption", "requests"),
    # --- GCP: TLS ---
    m("gcp-ssl-policy-tls10", GCS, put("tls", "minTlsVersion", "TLS_1_0"), "min-tls-1-2", "tls"),
    m("gcp-ssl-policy-unset", GCS, put("tls", "minTlsVersion", None, delete=True), "min-tls-1-2", "tls"),
    m(
        "gcp-proxy-no-ssl-policy",
        GCS,
        both(
            put("https", "sslPolicy", None, delete=True),
            lambda d: find(d, "https")["propertyDependencies"].pop("sslPolicy"),
        ),
        "min-tls-1-2",
        "https",
    ),
    m(
        "gcp-http-proxy-serves",
        GCS,
        put("redirect", "defaultUrlRedirect.httpsRedirect", False),
        "http-only-redirects",
        "http",
    ),
    # --- GCP: public IPs on nodes ---
    m(
        "gcp-template-access-config",
        GCT,
        put("gpu-template", "networkInterfaces.0.accessConfigs", [{"networkTier": "PREMIUM"}]),
        "no-public-ip-on-nodes",
        "gpu-template",
    ),
    m(
        "gcp-template-ipv6-access",
        GCT,
        put("gpu-template", "networkInterfaces.0.ipv6AccessConfigs", [{"networkTier": "PREMIUM"}]),
        "no-public-ip-on-nodes",
        "gpu-template",
    ),
    m(
        "gcp-instance-access-config",
        GCT,
        add(GCT, "gcp:compute/instance:Instance", "head", {"networkInterfaces": [{"accessConfigs": [{}]}]}),
        "no-public-ip-on-nodes",
        "head",
    ),
    # --- GCP: firewall ---
    m("gcp-ssh-world", GCT, put("iap-ssh", "sourceRanges", ["0.0.0.0/0"]), "no-internet-ingress", "iap-ssh"),
    m(
        "gcp-no-source-means-world",
        GCT,
        put("internal", "sourceRanges", None, delete=True),
        "no-internet-ingress",
        "internal",
    ),
    m(
        "gcp-split-range",
        GCT,
        put("internal", "sourceRanges", ["0.0.0.0/1", "128.0.0.0/1"]),
        "no-internet-ingress",
        "internal",
    ),
    m("gcp-ipv6-world", GCT, put("internal", "sourceRanges", ["::/0"]), "no-internet-ingress", "internal"),
    m(
        "gcp-iap-range-all-ports",
        GCT,
        put("iap-ssh", "allows", [{"protocol": "all"}]),
        "no-internet-ingress",
        "iap-ssh",
    ),
    m(
        "gcp-https-world-serving",
        GCS,
        put("health-checks", "sourceRanges", ["0.0.0.0/0"]),
        "no-internet-ingress",
        "health-checks",
    ),
    # --- GCP: WAF ---
    m(
        "gcp-no-armor",
        GCS,
        lambda d: (
            find(d, "backend")["propertyDependencies"].pop("securityPolicy")
            and find(d, "backend")["inputs"].pop("securityPolicy")
            and find(d, "backend")["outputs"].pop("securityPolicy")
        ),
        "waf-rate-limit",
        "backend",
    ),
    m("gcp-armor-no-throttle", GCS, put("armor", "rules.0.action", "allow"), "waf-rate-limit", "armor"),
    m("gcp-armor-preview", GCS, put("armor", "rules.0.preview", True), "waf-rate-limit", "armor"),
    # --- GCP: dead-lettering ---
    m(
        "gcp-no-dead-letter",
        GCS,
        both(
            put("requests-sub", "deadLetterPolicy", None, delete=True),
            lambda d: find(d, "requests-sub")["propertyDependencies"].pop("deadLetterPolicy"),
        ),
        "queue-dlq",
        "requests-sub",
    ),
    m(
        "gcp-delivery-attempts-200",
        GCS,
        put("requests-sub", "deadLetterPolicy.maxDeliveryAttempts", 200),
        "queue-dlq",
        "requests-sub",
    ),
    # --- GCP: Spot ---
    m(
        "gcp-spot-serving",
        GCS,
        put("replica-template", "scheduling.provisioningModel", "SPOT"),
        "no-spot-serving",
        "replica-template",
    ),
    # --- GCP: OS Login stays on (every spelling of "off") ---
    m(
        "gcp-oslogin-false",
        GCT,
        put("gpu-template", "metadata", json.dumps({"enable-oslogin": "FALSE"})),
        "os-login-not-disabled",
        "gpu-template",
    ),
    m(
        "gcp-oslogin-lowercase-key",
        GCT,
        put("gpu-template", "metadata", {"Enable-OSLogin": "false"}),
        "os-login-not-disabled",
        "gpu-template",
    ),
    m(
        "gcp-oslogin-zero-on-head",
        GCT,
        add(GCT, "gcp:compute/instance:Instance", "head", {"metadata": {"enable-oslogin": "0"}}),
        "os-login-not-disabled",
        "head",
    ),
    m(
        "gcp-preemptible-serving",
        GCS,
        put("replica-template", "scheduling.preemptible", True),
        "no-spot-serving",
        "replica-template",
    ),
    m(
        "gcp-flex-start-serving",
        GCS,
        put("replica-template", "scheduling.provisioningModel", "flex_start"),
        "no-spot-serving",
        "replica-template",
    ),
    m(
        "gcp-spot-training-no-checkpoints",
        GCT,
        both(put("checkpoints", "name", f"{TRAIN_PROJECT}-data"), lambda d: _rename(d, "checkpoints", "datasets")),
        "spot-training-needs-checkpoints",
        "gpu-template",
    ),
    # --- GCP: autoscale on the backlog, never CPU ---
    m(
        "gcp-autoscale-cpu",
        GCS,
        put("replicas-autoscaler", "autoscalingPolicy.cpuUtilization", {"target": 0.6}),
        "serving-scales-on-queue-depth",
        "replicas",
    ),
    m(
        "gcp-autoscale-default-cpu",
        GCS,
        put("replicas-autoscaler", "autoscalingPolicy.metrics", []),
        "serving-scales-on-queue-depth",
        "replicas",
    ),
    m("gcp-versioning-off", GCT, put("checkpoints", "versioning.enabled", False), "bucket-versioning", "checkpoints"),
    m(
        "gcp-versioning-missing",
        GCT,
        put("checkpoints", "versioning", None, delete=True),
        "bucket-versioning",
        "checkpoints",
    ),
    m(
        "gcp-lifecycle-deletes-live",
        GCT,
        put("checkpoints", "lifecycleRules", [{"action": {"type": "Delete"}, "condition": {"age": 30}}]),
        "no-scheduled-data-loss",
        "checkpoints",
    ),
    m(
        "gcp-impersonates-serving",
        GCT,
        put("gcp-training-provider", "impersonateServiceAccount", f"deploy@{SERVE_PROJECT}.iam.gserviceaccount.com"),
        "provider-account",
        "gcp-training-provider",
    ),
    m("gcp-resource-other-region", GCT, put("nodes", "region", "europe-west4"), "allowed-regions", "nodes"),
    # --- GCP: state, secrets, privilege ---
    m(
        "gcp-bucket-unprotected",
        GCT,
        lambda d: find(d, "checkpoints").update(protect=False),
        "protect-stateful",
        "checkpoints",
    ),
    m(
        "gcp-bucket-force-destroy",
        GCT,
        put("checkpoints", "forceDestroy", True),
        "no-scheduled-data-loss",
        "checkpoints",
    ),
    m(
        "gcp-startup-script-key",
        GCT,
        put("gpu-template", "metadata", json.dumps({"startup-script": f"cat > /k <<EOF\n{PEM}EOF\n"})),
        "no-secrets-in-user-data",
        "gpu-template",
    ),
    m(
        "gcp-startup-script-key-as-map",
        GCT,
        put("gpu-template", "metadata", {"startup-script": f"cat > /k <<EOF\n{PEM}EOF\n"}),
        "no-secrets-in-user-data",
        "gpu-template",
    ),
    m(
        "gcp-user-data-key",
        GCT,
        put(
            "gpu-template",
            "metadata",
            json.dumps(
                {"user-data": f"#cloud-config\nwrite_files:\n- path: /etc/munge/munge.key\n  content: {'A' * 60}\n"}
            ),
        ),
        "no-secrets-in-user-data",
        "gpu-template",
    ),
    m(
        "gcp-metadata-startup-script",
        GCT,
        add(GCT, "gcp:compute/instance:Instance", "head", {"metadataStartupScript": PEM}),
        "no-secrets-in-user-data",
        "head",
    ),
    m(
        "gcp-dynamic-secret",
        GCT,
        add(GCT, "pulumi-python:dynamic:Resource", "lustre-import", {"token": PEM}),
        "no-secrets-in-user-data",
        "lustre-import",
    ),
    m(
        "gcp-project-editor",
        GCT,
        add(
            GCT,
            "gcp:projects/iAMMember:IAMMember",
            "editor",
            {
                "project": TRAIN_PROJECT,
                "role": "roles/editor",
                "member": "serviceAccount:nodes@acme-train.iam.gserviceaccount.com",
            },
        ),
        "iam-least-privilege",
        "editor",
    ),
    m(
        "gcp-project-act-as",
        GCT,
        add(
            GCT,
            "gcp:projects/iAMBinding:IAMBinding",
            "actas",
            {
                "project": TRAIN_PROJECT,
                "role": "roles/iam.serviceAccountUser",
                "members": ["serviceAccount:nodes@acme-train.iam.gserviceaccount.com"],
            },
        ),
        "iam-least-privilege",
        "actas",
    ),
    # --- GCP: separation ---
    m(
        "gcp-provider-serving-project",
        GCT,
        put("gcp-training-provider", "project", SERVE_PROJECT),
        "provider-account",
        "gcp-training-provider",
    ),
    m(
        "gcp-provider-unpinned",
        GCT,
        put("gcp-training-provider", "project", None, delete=True),
        "provider-account",
        "gcp-training-provider",
    ),
    m("gcp-resource-other-project", GCT, put("compute-api", "project", OTHER_PROJECT), "pinned-project", "compute-api"),
    m(
        "gcp-cross-project-write",
        GCS,
        put("read-training-artifacts", "role", "roles/storage.objectAdmin"),
        "cross-account-read-only",
        "read-training-artifacts",
    ),
    m(
        "gcp-cross-project-binding",
        GCS,
        add(
            GCS,
            "gcp:storage/bucketIAMBinding:BucketIAMBinding",
            "train-admin",
            {
                "bucket": f"{TRAIN_PROJECT}-checkpoints",
                "role": "roles/storage.admin",
                "members": ["serviceAccount:replicas@acme-serve.iam.gserviceaccount.com"],
            },
        ),
        "cross-account-read-only",
        "train-admin",
    ),
    m(
        "gcp-training-grants-serving-write",
        GCT,
        put("nodes-write-checkpoints", "member", "serviceAccount:replicas@acme-serve.iam.gserviceaccount.com"),
        "cross-account-read-only",
        "nodes-write-checkpoints",
    ),
    # The serving project's App Engine default account: named after its project, not under iam.gserviceaccount.com.
    m(
        "gcp-training-grants-serving-app-engine-account",
        GCT,
        put("nodes-write-checkpoints", "member", "serviceAccount:acme-serve@appspot.gserviceaccount.com"),
        "cross-account-read-only",
        "nodes-write-checkpoints",
    ),
    m(
        "gcp-grant-to-outsider",
        GCT,
        put("nodes-write-checkpoints", "member", "serviceAccount:x@acme-other.iam.gserviceaccount.com"),
        "cross-account-read-only",
        "nodes-write-checkpoints",
    ),
    m(
        "gcp-project-grant-elsewhere",
        GCT,
        add(
            GCT,
            "gcp:projects/iAMMember:IAMMember",
            "elsewhere",
            {
                "project": SERVE_PROJECT,
                "role": "roles/viewer",
                "member": "serviceAccount:nodes@acme-train.iam.gserviceaccount.com",
            },
        ),
        "cross-account-read-only",
        "elsewhere",
    ),
    m("gcp-no-provider", GCT, lambda d: find(d, "vpc").pop("provider"), "explicit-provider", "vpc"),
    m("gcp-unknown-kind", GCT, add(GCT, "gcp:cloudrun/service:Service", "run", {}), "known-resource-kinds", "run"),
    m(
        "gcp-subscription-in-training",
        GCT,
        add(
            GCT,
            "gcp:pubsub/subscription:Subscription",
            "jobs",
            {"deadLetterPolicy": {"deadLetterTopic": "t", "maxDeliveryAttempts": 5}},
        ),
        "workload-resource-kinds",
        "jobs",
    ),
    m(
        "gcp-placement-in-serving",
        GCS,
        add(
            GCS,
            "gcp:compute/resourcePolicy:ResourcePolicy",
            "compact",
            {"groupPlacementPolicy": {"collocation": "COLLOCATED"}},
        ),
        "workload-resource-kinds",
        "compact",
    ),
    m(
        "gcp-lb-in-training",
        GCT,
        add(GCT, "gcp:compute/globalForwardingRule:GlobalForwardingRule", "lb", {"portRange": "443"}),
        "workload-resource-kinds",
        "lb",
    ),
]


LEGITIMATE: list[tuple[str, str, Callable[[Doc], None]]] = [
    (
        "az-nsg-from-vnet",
        AZT,
        put("nodes-nsg", "securityRules.1", {**INTERNET_SSH, "sourceAddressPrefix": "10.0.0.0/8"}),
    ),
    (
        "az-nsg-deny-internet",
        AZT,
        put("nodes-nsg", "securityRules.1", {**INTERNET_SSH, "access": "Deny", "sourceAddressPrefix": "Internet"}),
    ),
    ("az-storage-private-endpoint-only", AZT, put("checkpointsacct", "publicNetworkAccess", "Disabled")),
    (
        # a second serving reader's subnet, its id in capitals (ARM ids are case-insensitive)
        "az-network-second-serving-subnet",
        AZT,
        put(
            "checkpointsacct",
            "networkRuleSet.virtualNetworkRules.2",
            {"virtualNetworkResourceId": subnet_id(SERVE_SUB, "b").upper()},
        ),
    ),
    (
        "az-network-narrow-ip-rule",
        AZT,
        put("checkpointsacct", "networkRuleSet.ipRules.0", {"iPAddressOrRange": "198.51.100.7"}),
    ),
    (
        "az-gateway-custom-tls12",
        AZS,
        put("gateway", "sslPolicy", {"policyType": "CustomV2", "minProtocolVersion": "TLSv1_2"}),
    ),
    (
        "az-lifecycle-noncurrent-only",
        AZT,
        add(
            AZT,
            f"{AZ}:storage:ManagementPolicy",
            "tidy",
            {
                "policy": {
                    "rules": [
                        {
                            "name": "v",
                            "enabled": True,
                            "type": "Lifecycle",
                            "definition": {"actions": {"version": {"delete": {"daysAfterCreationGreaterThan": 30}}}},
                        }
                    ]
                }
            },
            accountName="checkpointsacct",
        ),
    ),
    ("az-api-version-token", AZT, retype("vnet", f"{AZ}:network/v20240501:VirtualNetwork")),
    (
        "az-sas-listen-send",
        AZS,
        add(AZS, f"{AZ}:servicebus:QueueAuthorizationRule", "workers-key", {"rights": ["Listen", "Send"]}),
    ),
    (
        "az-global-dns-zone",
        AZT,
        add(
            AZT,
            f"{AZ}:privatedns:PrivateZone",
            "blob-dns",
            {"location": "global", "privateZoneName": "privatelink.blob.core.windows.net"},
        ),
    ),
    (
        "gcp-impersonates-own-deployer",
        GCT,
        put("gcp-training-provider", "impersonateServiceAccount", f"deploy@{TRAIN_PROJECT}.iam.gserviceaccount.com"),
    ),
    (
        "gcp-lifecycle-archived-only",
        GCT,
        put(
            "checkpoints",
            "lifecycleRules",
            [{"action": {"type": "Delete"}, "condition": {"withState": "ARCHIVED", "numNewerVersions": 3}}],
        ),
    ),
    (
        "gcp-snapshot-schedule-in-serving",
        GCS,
        add(
            GCS,
            "gcp:compute/resourcePolicy:ResourcePolicy",
            "snapshots",
            {"snapshotSchedulePolicy": {"schedule": {"dailySchedule": {"daysInCycle": 1, "startTime": "04:00"}}}},
        ),
    ),
    (
        "gcp-source-tags-only",
        GCT,
        both(put("internal", "sourceRanges", None, delete=True), put("internal", "sourceTags", ["slurm"])),
    ),
    (
        "az-own-side-tags",
        AZS,
        put("bus", "tags", {"accelstack:workload": "serving", "accelstack:stack": "azure-serving"}),
    ),
    ("gcp-own-side-labels", GCS, put("requests", "labels", {"accelstack-workload": "serving"})),
    ("gcp-ssl-policy-tls13", GCS, put("tls", "minTlsVersion", "TLS_1_3")),
    (
        "gcp-google-service-agent",
        GCS,
        add(
            GCS,
            "gcp:pubsub/topicIAMMember:TopicIAMMember",
            "dlq-publisher",
            {
                "topic": "requests-dlq",
                "role": "roles/pubsub.publisher",
                "member": "serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com",
            },
        ),
    ),
    (
        "gcp-training-shares-artifacts",
        GCT,
        add(
            GCT,
            "gcp:storage/bucketIAMMember:BucketIAMMember",
            "serving-reads",
            {
                "bucket": f"{TRAIN_PROJECT}-checkpoints",
                "role": "roles/storage.objectViewer",
                "member": f"serviceAccount:replicas@{SERVE_PROJECT}.iam.gserviceaccount.com",
                "condition": models_only(f"{TRAIN_PROJECT}-checkpoints"),
            },
        ),
    ),
    ("gcp-serving-autoscaler-bounds", GCS, put("replicas-autoscaler", "autoscalingPolicy.maxReplicas", 8)),
    # The stack's own subscription in capitals is still its own (Azure compares subscription ids ignoring case).
    ("azure-training-provider-sub-capitals", AZT, put(PROVIDER_AZ, "subscriptionId", TRAIN_SUB.upper())),
]


@pytest.mark.parametrize(("stack", "change"), [(s, c) for _, s, c in LEGITIMATE], ids=[i for i, _, _ in LEGITIMATE])
def test_legitimate_changes_draw_no_verdict(stack: str, change: Callable[[Doc], None]) -> None:
    doc = STACKS[stack]().doc()
    change(doc)
    assert [v.line() for v in verdicts(stack, doc)] == []


def _rename(doc: Doc, old: str, new: str) -> None:
    resource = find(doc, old)
    resource["urn"] = resource["urn"].rsplit("::", 1)[0] + f"::{new}"


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[x.id for x in MUTATIONS])
def test_each_mutation_is_caught_naming_its_resource(mutation: Mutation) -> None:
    doc = STACKS[mutation.stack]().doc()
    mutation.apply(doc)
    found = verdicts(mutation.stack, doc)
    hits = [
        v
        for v in found
        if v.mandatory
        and v.policy in (mutation.policy, f"{mutation.policy}-final")
        and (v.urn.endswith(f"::{mutation.resource}") or mutation.resource in v.message)
    ]
    assert hits, "\n".join(v.line() for v in found) or "no verdict at all"


@pytest.mark.parametrize("stack", [AZT, AZS])
def test_one_subscription_in_two_cases_is_not_two_disjoint_accounts(stack: str) -> None:
    """trainingAccounts and servingAccounts naming one subscription, once in capitals, would let both sides deploy
    to it; the separation pack compares GUIDs ignoring case, as Azure does."""
    cloud, workload = stack.split("-")
    overlapping = {**context(cloud, workload), "servingAccounts": [SERVE_SUB, TRAIN_SUB.upper()]}
    found = run_packs(STACKS[stack]().doc(), context=overlapping)
    assert [v for v in found if v.policy == "disjoint-accounts" and TRAIN_SUB in v.message and v.mandatory]


def test_mutation_ids_are_unique() -> None:
    assert len({x.id for x in MUTATIONS}) == len(MUTATIONS)
