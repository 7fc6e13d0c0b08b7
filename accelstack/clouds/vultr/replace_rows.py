"""Which inputs make ediri-vultr (the bridged vultr/terraform-provider-vultr) replace a resource rather than update it
(pure data; read by `accelstack.engine.replacement` through the registry). Source: the provider's schemas at
vultr/terraform-provider-vultr @f670e5b, `ForceNew: true` fields (vultr/resource_vultr_*.go)."""

from __future__ import annotations

from accelstack.clouds import time_provider
from accelstack.clouds.base import ReplaceRules, TerraformProvider

REPLACE_FORCING: dict[str, tuple[str, ...]] = {
    # resource_vultr_instance.go: user data is ForceNew, so a model change (new boot) replaces the replica; the plan,
    # tags, VPCs and firewall group update in place.
    "vultr:index/instance:Instance": (
        "region",
        "osId",
        "imageId",
        "snapshotId",
        "scriptId",
        "ipxeChainUrl",
        "disablePublicIpv4",
        "sshKeyIds",
        "hostname",
        "reservedIpId",
        "userScheme",
        "appVariables",
        "userData",
    ),
    # resource_vultr_load_balancer.go: only the region; rules, health check, TLS and instances update in place.
    "vultr:index/loadBalancer:LoadBalancer": ("region",),
    "vultr:index/firewallGroup:FirewallGroup": (),
    # resource_vultr_firewall_rule.go: every argument is ForceNew.
    "vultr:index/firewallRule:FirewallRule": (
        "firewallGroupId",
        "ipType",
        "protocol",
        "subnet",
        "subnetSize",
        "port",
        "notes",
        "source",
    ),
    # resource_vultr_vpc.go: region and the subnet are fixed at creation.
    "vultr:index/vpc:Vpc": ("region", "v4Subnet", "v4SubnetMask"),
    # The API key is the account: a new key may be another account (nothing is moved, so count it as replacing).
    "pulumi:providers:vultr": ("apiKey",),
}

# The replicas' weights key clocks are time_static resources (components/vultr/serving/weights_key.py).
REPLACE_RULES = ReplaceRules(
    forcing={**REPLACE_FORCING, **time_provider.REPLACE_FORCING}, tag_properties=frozenset({"tags"})
)

# ediri-vultr bridges vultr/terraform-provider-vultr; its type tokens map to the Terraform resource types.
TERRAFORM = TerraformProvider(
    package="vultr",
    address="registry.terraform.io/vultr/vultr",
    types={
        "vultr:index/instance:Instance": "vultr_instance",
        "vultr:index/loadBalancer:LoadBalancer": "vultr_load_balancer",
        "vultr:index/firewallGroup:FirewallGroup": "vultr_firewall_group",
        "vultr:index/firewallRule:FirewallRule": "vultr_firewall_rule",
        "vultr:index/vpc:Vpc": "vultr_vpc",
    },
    block_renames={
        "vultr_load_balancer": {"forwarding_rules": "forwarding_rules", "firewall_rules": "firewall_rules"},
    },
)
