"""How the guardrails read AWS networks and front doors: internet ingress, public addresses, public subnets,
IMDSv2, listeners, load balancers. Each check names the trusted rule it mirrors (Checkov CKV_AWS_xx, Trivy
AVD-AWS-xxxx, an AWS doc) or says it is ours."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..common import as_list, of_type, refers_to, truthy
from ..links import any_referrer, each_referrer, referred_positions, refers_to_any, targets_of
from ..readers import is_public_range
from ..readers import name_of as _name
from ..vendor import tokens_of
from .concepts import AWS

LOAD_BALANCERS = tokens_of(AWS, "load-balancer")
LISTENERS = tokens_of(AWS, "listener")
FIREWALLS = tokens_of(AWS, "firewall")
PUBLIC_ADDRESSES = tokens_of(AWS, "public-address")
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
SUBNET = "aws:ec2/subnet:Subnet"
SG_INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
ASG = "aws:autoscaling/group:Group"
HTTPS_PORT, HTTP_PORT = 443, 80
# TLS 1.0/1.1 ELB security policies (Trivy AVD-AWS-0047's outdated list).
OUTDATED_TLS_POLICIES = (
    "ELBSecurityPolicy-2015-05",
    "ELBSecurityPolicy-2016-08",
    "ELBSecurityPolicy-TLS-1-0-2015-04",
    "ELBSecurityPolicy-TLS-1-1-2017-01",
)
# ELB policy names carry their minimum protocol: ...-TLS13-1-2-..., ...-TLS-1-2-..., ...-FS-1-2-...
TLS12_POLICY = re.compile(r"-(?:TLS13|TLS|FS)-1-[23](?:-|$)")


def _port_range(rule: Any, low_key: str = "fromPort", high_key: str = "toPort") -> tuple[int, int] | None:
    low, high = rule.get(low_key), rule.get(high_key)
    if low is None or high is None:
        return None
    return int(low), int(high)


def _internet_rules(resource: Any) -> list[tuple[str, tuple[int, int] | None, str]]:
    """(protocol, port range, source) of every ingress rule open to the internet."""
    kind, props = resource.resource_type, resource.props
    found = []
    if kind in FIREWALLS:
        for rule in as_list(props.get("ingress")):
            sources = as_list(rule.get("cidrBlocks")) + as_list(rule.get("ipv6CidrBlocks"))
            for source in sources:
                if is_public_range(source):
                    found.append((str(rule.get("protocol")), _port_range(rule), source))
    elif kind == SG_INGRESS:
        for key in ("cidrIpv4", "cidrIpv6"):
            if props.get(key) is not None and is_public_range(props.get(key)):
                found.append((str(props.get("ipProtocol")), _port_range(props), props.get(key)))
    elif kind == SG_RULE and props.get("type") == "ingress":
        for source in as_list(props.get("cidrBlocks")) + as_list(props.get("ipv6CidrBlocks")):
            if is_public_range(source):
                found.append((str(props.get("protocol")), _port_range(props), source))
    return found


def _web_port(protocol: str, ports: tuple[int, int] | None) -> bool:
    return protocol in ("tcp", "6") and ports in ((HTTPS_PORT, HTTPS_PORT), (HTTP_PORT, HTTP_PORT))


def check_no_internet_ingress(resource: Any, workload: str | None) -> Iterable[str]:
    """No ingress from any public address (IPv4 or IPv6, however the range is spelled or split), except HTTPS (and HTTP, which only redirects) to the
    serving load balancer. Self-referencing rules (EFA) are not internet ingress. Mirrors Trivy
    AVD-AWS-0107 and Checkov CKV_AWS_24/25/260 (we allow 80 for the HTTPS redirect only)."""
    for protocol, ports, source in _internet_rules(resource):
        if workload == "serving" and _web_port(protocol, ports):
            continue
        shown = "all ports" if protocol == "-1" or ports is None else f"{protocol} {ports[0]}-{ports[1]}"
        yield f"{_name(resource)} allows ingress from {source} on {shown}; only the serving load balancer's 443/80 may be public"


def check_ingress_only_to_load_balancer(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Internet-facing web ports open only on a security group attached to an internet-facing load
    balancer (never on replica or node groups). Ours (Trivy AVD-AWS-0107 permits none at all)."""
    groups = of_type(resources, *FIREWALLS)
    public_lbs = [lb for lb in of_type(resources, *LOAD_BALANCERS) if not truthy(lb.props.get("internal"))]
    for resource in resources:
        if not _internet_rules(resource):
            continue
        if resource.resource_type in FIREWALLS:
            owners = [resource]
        else:
            owners = targets_of(resource, "securityGroupId", groups, keys=("id",))
        for group in owners:
            if not any_referrer(group, public_lbs, "securityGroups", keys=("id",)):
                yield (
                    resource.urn,
                    (
                        f"{_name(resource)} opens security group {_name(group)} to the internet, "
                        "but no internet-facing load balancer uses that group"
                    ),
                )


def _ipv6_addresses(props: Any) -> bool:
    count = props.get("ipv6AddressCount")
    return bool(as_list(props.get("ipv6Addresses"))) or (count is not None and str(count) not in ("0", "0.0", ""))


def check_no_public_ip(resource: Any) -> Iterable[str]:
    """Nodes get no public address: launch-template interfaces and instances get no public IPv4
    (Checkov CKV_AWS_88, Trivy AVD-AWS-0009) and no IPv6 address (IPv6 addresses are globally
    routable), subnets do not map public IPv4 or assign IPv6 on launch (Checkov CKV_AWS_130, Trivy
    AVD-AWS-0164), and no elastic IP is bound to an instance or interface (EIPs belong to NAT gateways,
    which take them by allocationId). Ours for IPv6 and EIPs."""
    kind, props, name = resource.resource_type, resource.props, _name(resource)
    if kind == LAUNCH_TEMPLATE:
        for interface in as_list(props.get("networkInterfaces")):
            index = int(interface.get("deviceIndex") or 0)
            if truthy(interface.get("associatePublicIpAddress")):
                yield f"launch template {name} gives interface {index} a public IP"
            if _ipv6_addresses(interface):
                yield f"launch template {name} gives interface {index} a (public) IPv6 address"
    elif kind == INSTANCE:
        if truthy(props.get("associatePublicIpAddress")):
            yield f"instance {name} gets a public IP"
        if _ipv6_addresses(props):
            yield f"instance {name} gets a (public) IPv6 address"
    elif kind == SUBNET:
        if truthy(props.get("mapPublicIpOnLaunch")):
            yield f"subnet {name} maps public IPs on launch"
        if truthy(props.get("assignIpv6AddressOnCreation")):
            yield f"subnet {name} assigns IPv6 addresses on launch"
    elif kind in PUBLIC_ADDRESSES:
        for key in ("instance", "networkInterface", "instanceId", "networkInterfaceId"):
            if props.get(key):
                yield f"elastic IP {name} is bound to a node ({key}); only NAT gateways take elastic IPs"


def _depends_on(resource: Any, prop: str, target: Any) -> bool:
    deps = getattr(resource, "property_dependencies", None) or {}
    return any(getattr(d, "urn", None) == target.urn for d in deps.get(prop, []))


def _routes_to_internet(table: Any, gateways: Sequence[Any], routes: Sequence[Any]) -> bool:
    """A route table sends a public destination to an internet gateway (inline or as Route resources)."""

    def to_gateway(route: Any, holder: Any, prop: str) -> bool:
        gateway = route.get("gatewayId")
        if not gateway or not is_public_range(
            route.get("cidrBlock")
            or route.get("ipv6CidrBlock")
            or route.get("destinationCidrBlock")
            or route.get("destinationIpv6CidrBlock")
            or "0.0.0.0/0"
        ):
            return False
        return str(gateway).startswith("igw-") or any(
            gateway == g.props.get("id") or _depends_on(holder, prop, g) for g in gateways
        )

    if any(to_gateway(r, table, "routes") for r in as_list(table.props.get("routes")) if hasattr(r, "get")):
        return True
    return any(to_gateway(r.props, r, "gatewayId") for r in each_referrer(table, routes, "routeTableId", keys=("id",)))


def _node_subnets(resource: Any) -> list[str]:
    """The subnet properties through which a node-launching resource picks its subnets."""
    kind = resource.resource_type
    if kind == ASG:
        return ["vpcZoneIdentifiers"]
    if kind == INSTANCE:
        return ["subnetId"]
    if kind == "aws:eks/nodeGroup:NodeGroup":
        return ["subnetIds"]
    return []


def _names_a_subnet(template: Any) -> bool:
    """A launch template's interfaces name a subnet (what the loop over public subnets reads first, in its order)."""
    return any(i.get("subnetId") for i in as_list(template.props.get("networkInterfaces")) if hasattr(i, "get"))


def check_nodes_in_private_subnets(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Nodes (autoscaling groups, instances, node groups, launch-template interfaces) launch only in
    subnets without a route to an internet gateway: a node in a public subnet is one security-group
    edit or one public IP away from the internet. AWS VPC guidance (private subnets for instances,
    https://docs.aws.amazon.com/vpc/latest/userguide/vpc-example-private-subnets-nat.html); ours."""
    gateways = of_type(resources, "aws:ec2/internetGateway:InternetGateway")
    routes = of_type(resources, "aws:ec2/route:Route")
    public_tables = [
        t for t in of_type(resources, "aws:ec2/routeTable:RouteTable") if _routes_to_internet(t, gateways, routes)
    ]
    associations = of_type(resources, "aws:ec2/routeTableAssociation:RouteTableAssociation")
    public_subnets = [
        subnet
        for subnet in of_type(resources, SUBNET)
        if any(
            refers_to_any(a, "routeTableId", public_tables, keys=("id",))
            for a in each_referrer(subnet, associations, "subnetId", keys=("id",))
        )
    ]
    for resource in resources:
        props_to_check = _node_subnets(resource)
        if not props_to_check and resource.resource_type != LAUNCH_TEMPLATE:
            continue  # it launches no nodes: the loop below would read nothing and find nothing
        if resource.resource_type == LAUNCH_TEMPLATE and public_subnets and not _names_a_subnet(resource):
            continue  # none of its interfaces names a subnet (its group picks them): the loop would find nothing
        # Which public subnets each prop names, from the subnets' index once per resource (not once per pair: nodes x
        # public subnets grows as the square of the stack); None where a value is unknown: judged pair by pair.
        named = {prop: referred_positions(resource, prop, public_subnets, keys=("id",)) for prop in props_to_check}
        for position, subnet in enumerate(public_subnets):
            hit = any(
                refers_to(resource, prop, subnet, keys=("id",)) if found is None else position in found
                for prop in props_to_check
                for found in (named[prop],)
            )
            if resource.resource_type == LAUNCH_TEMPLATE:
                hit = (
                    _depends_on(resource, "networkInterfaces", subnet)
                    and any(
                        i.get("subnetId") for i in as_list(resource.props.get("networkInterfaces")) if hasattr(i, "get")
                    )
                ) or any(
                    i.get("subnetId") and i.get("subnetId") == subnet.props.get("id")
                    for i in as_list(resource.props.get("networkInterfaces"))
                    if hasattr(i, "get")
                )
            if hit:
                yield (
                    resource.urn,
                    f"{_name(resource)} launches nodes in public subnet {_name(subnet)} (it routes to an internet gateway)",
                )


def check_imdsv2(resource: Any) -> Iterable[str]:
    """IMDSv2 only (httpTokens required): Checkov CKV_AWS_79, Trivy AVD-AWS-0028 / AVD-AWS-0130."""
    if resource.resource_type in (LAUNCH_TEMPLATE, INSTANCE):
        options = resource.props.get("metadataOptions") or {}
        if options.get("httpTokens") != "required":
            yield f"{_name(resource)} does not require IMDSv2 (metadataOptions.httpTokens must be 'required')"


# --- serving front door --------------------------------------------------------------------------


def check_https_listeners(resource: Any) -> Iterable[str]:
    """Listeners speak HTTPS with a TLS 1.2+ policy; an HTTP listener only redirects to HTTPS.
    Checkov CKV_AWS_2 / CKV_AWS_103, Trivy AVD-AWS-0054 / AVD-AWS-0047. The policy must be one whose
    name states a 1.2+ minimum (`TLS13-1-2-*`, `TLS-1-2-*`, `FS-1-2-*`, `TLS13-1-3-*`): a denylist
    misses `ELBSecurityPolicy-TLS13-1-0-2021-06` and `ELBSecurityPolicy-FS-2018-06`, which allow TLS 1.0
    (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/describe-ssl-policies.html)."""
    if resource.resource_type not in LISTENERS:
        return
    props, name = resource.props, _name(resource)
    # An ALB listener without `protocol` is HTTP (the provider's and the API's default), never TLS.
    protocol = props.get("protocol") or "HTTP"
    if str(protocol).upper() == "HTTP":
        actions = as_list(props.get("defaultActions"))
        redirects = [
            a for a in actions if a.get("type") == "redirect" and (a.get("redirect") or {}).get("protocol") == "HTTPS"
        ]
        if not actions or len(redirects) != len(actions):
            yield f"HTTP listener {name} must only redirect to HTTPS"
    elif str(protocol).upper() in ("HTTPS", "TLS"):
        policy = props.get("sslPolicy")
        if policy is None:
            yield f"{protocol} listener {name} names no sslPolicy (the default depends on the API used); name a TLS 1.2+ policy"
        elif policy in OUTDATED_TLS_POLICIES or not TLS12_POLICY.search(str(policy)):
            yield f"listener {name} uses {policy}, which allows TLS < 1.2 (use e.g. ELBSecurityPolicy-TLS13-1-2-2021-06)"
    elif protocol is not None:
        yield f"listener {name} uses {protocol}; use HTTPS (or an HTTP -> HTTPS redirect)"


def check_lb_deletion_protection(resource: Any, workload: str | None) -> Iterable[str]:
    """Serving (and any internet-facing) load balancers have deletion protection: Checkov CKV_AWS_150."""
    if resource.resource_type not in LOAD_BALANCERS:
        return
    public = not truthy(resource.props.get("internal"))
    if (workload == "serving" or public) and not truthy(resource.props.get("enableDeletionProtection")):
        yield f"load balancer {_name(resource)} has no deletion protection (enableDeletionProtection)"
