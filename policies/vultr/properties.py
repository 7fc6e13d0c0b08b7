"""Vultr's guarded kinds (ediri-vultr), property by property (policies/schema.py): judged by the named pack rules
(as traced by `python -m accelstack.engine.schema_report --trace`), inert with the reason, or unjudged with why it
matters (none is). Vultr has no IAM: nothing here grants; what matters is what the internet reaches and what a node
carries."""

from __future__ import annotations

NAMING = "inert: naming and display only"
TUNING = "inert: placement, sizing, scheduling or health probing: no access, exposure or data-protection meaning"
IMAGE = "inert: what the node boots (an image, snapshot, ISO or app): no access or exposure meaning of its own"
ACCOUNT_ONLY = (
    "inert: a resource of the API key's own account (Vultr has no cross-account sharing of VPCs, keys or scripts)"
)
STATELESS = "inert: the serving nodes are stateless (their weights come from Object Storage on every boot)"
# The reachability view takes every node to have a public address, whatever these say (it fails closed).
PUBLIC_ALWAYS = "inert: the packs take every Vultr node to be reachable on a public address"
READ_AS_SOURCE = "internet-reaches-only-the-front-door, no-internet-ingress, no-network-path-across-sides"
# A startup script by id runs on boot like userData: judged over the stack (one of this stack's is read like userData,
# any other fails closed); Marketplace app variables feed an app's boot code the packs cannot read: set, they fail.
SCRIPT_ID = "no-secrets-in-user-data-final"
APP_VARIABLES = "no-secrets-in-user-data, no-secrets-in-user-data-final"

PROPERTIES: dict[str, dict[str, str]] = {
    "vultr:index/instance:Instance": {
        "plan": TUNING,
        "region": "allowed-regions",
        "activationEmail": NAMING,
        "appId": IMAGE,
        "appVariables": APP_VARIABLES,
        "backups": STATELESS,
        "backupsSchedule": TUNING,
        "ddosProtection": TUNING,
        "disablePublicIpv4": PUBLIC_ALWAYS,
        "enableIpv6": PUBLIC_ALWAYS,
        "firewallGroupId": "internet-reaches-only-the-front-door, no-network-path-across-sides",
        "hostname": NAMING,
        "imageId": IMAGE,
        "ipxeChainUrl": IMAGE,
        "isoId": IMAGE,
        "label": NAMING,
        "osId": IMAGE,
        "reservedIpId": TUNING,
        "scriptId": SCRIPT_ID,
        "snapshotId": IMAGE,
        "sshKeyIds": ACCOUNT_ONLY,
        "tags": "workload-tags",
        "userData": "no-secrets-in-user-data, no-secrets-in-user-data-final",
        "userScheme": TUNING,
        "vpc2Ids": ACCOUNT_ONLY,
        "vpcIds": ACCOUNT_ONLY,
    },
    "vultr:index/bareMetalServer:BareMetalServer": {
        "plan": TUNING,
        "region": "allowed-regions",
        "activationEmail": NAMING,
        "appId": IMAGE,
        "appVariables": APP_VARIABLES,
        "enableIpv6": PUBLIC_ALWAYS,
        "hostname": NAMING,
        "imageId": IMAGE,
        "label": NAMING,
        "mdiskMode": TUNING,
        "osId": IMAGE,
        "persistentPxe": IMAGE,
        "reservedIpv4": TUNING,
        "scriptId": SCRIPT_ID,
        "snapshotId": IMAGE,
        "sshKeyIds": ACCOUNT_ONLY,
        "tags": "workload-tags",
        "userData": "no-secrets-in-user-data, no-secrets-in-user-data-final",
        "userScheme": TUNING,
        "vpc2Ids": ACCOUNT_ONLY,
        "vpcId": ACCOUNT_ONLY,
    },
    "vultr:index/loadBalancer:LoadBalancer": {
        "forwardingRules": "https-listeners, internet-reaches-only-the-front-door, no-network-path-across-sides",
        "region": "allowed-regions",
        "attachedInstances": TUNING,
        "balancingAlgorithm": TUNING,
        "cookieName": NAMING,
        "firewallRules": "inert: the front door's own allow list (it narrows who reaches the public load balancer)",
        "healthCheck": TUNING,
        "label": NAMING,
        "proxyProtocol": TUNING,
        "ssl": "https-listeners",
        "sslRedirect": "https-listeners",
        "vpc": ACCOUNT_ONLY,
    },
    "vultr:index/firewallGroup:FirewallGroup": {"description": NAMING},
    "vultr:index/firewallRule:FirewallRule": {
        "firewallGroupId": "internet-reaches-only-the-front-door",
        "ipType": "inert: the subnet's own notation carries the family (`::/0` and `0.0.0.0/0` are both public)",
        "protocol": "inert: a public source is refused on any protocol",
        "subnet": READ_AS_SOURCE,
        "subnetSize": READ_AS_SOURCE,
        "notes": NAMING,
        "port": "inert: a public source is refused on any port",
        "source": READ_AS_SOURCE,
    },
    "vultr:index/vpc:Vpc": {
        "region": "allowed-regions",
        "description": NAMING,
        "v4Subnet": TUNING,
        "v4SubnetMask": TUNING,
    },
    "vultr:index/vpc2:Vpc2": {
        "region": "allowed-regions",
        "description": NAMING,
        "ipBlock": TUNING,
        "ipType": TUNING,
        "prefixLength": TUNING,
    },
    "vultr:index/objectStorage:ObjectStorage": {"clusterId": TUNING, "tierId": TUNING, "label": NAMING},
    "vultr:index/startupScript:StartupScript": {
        "script": "no-secrets-in-user-data, no-secrets-in-user-data-final",
        "name": NAMING,
        "type": "inert: boot (a shell script) or pxe (an iPXE chain, like ipxeChainUrl): its text is read either way",
    },
}

# Nothing: every input of a guarded Vultr kind is judged or inert (tests/policies/test_schema_coverage.py).
UNJUDGED: dict[str, dict[str, str]] = {}
