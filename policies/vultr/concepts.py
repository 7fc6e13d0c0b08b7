"""Vultr's concept table (policies/concepts.py): concept -> ediri-vultr type tokens (every Vultr resource is in the
package's `index` module; the SDK declares no alias tokens for these classes)."""

VULTR: dict[str, tuple[str, ...]] = {
    "instance": ("vultr:index/instance:Instance", "vultr:index/bareMetalServer:BareMetalServer"),
    # A startup script runs on the boot of every node that names it (`scriptId`): node data kept apart from the node.
    "node-template": ("vultr:index/startupScript:StartupScript",),
    "load-balancer": ("vultr:index/loadBalancer:LoadBalancer",),
    # A firewall group filters the public interface of the instances that name it; its rules admit traffic.
    "firewall": ("vultr:index/firewallGroup:FirewallGroup",),
    "firewall-rule": ("vultr:index/firewallRule:FirewallRule",),
    "network": ("vultr:index/vpc:Vpc", "vultr:index/vpc2:Vpc2"),
    # An Object Storage subscription: its S3 keys are the subscription's, with full access to every bucket in it.
    "bucket": ("vultr:index/objectStorage:ObjectStorage",),
}
