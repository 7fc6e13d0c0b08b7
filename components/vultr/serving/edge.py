"""The edge on Vultr: the replicas' VPC, their firewall group, and the load balancer (HTTPS only, HTTP health checks
on the replicas' health path through the admission proxy's port).

Vultr's firewall groups filter an instance's public interface and drop what no rule accepts
(docs.vultr.com/products/network/firewall). The group admits the serving port from the VPC's own subnet only, where
the load balancer reaches the replicas (`vpc`): nothing from the internet reaches the port, and no other port (SSH
included) is open."""

from __future__ import annotations

import ipaddress
import json

import ediri_vultr as vultr
import pulumi

from accelstack.components.vultr.provider import secret_value
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import LoadBalancerSpec, ServingSpec

HTTPS_PORT = 443
# What the API takes (docs.vultr.com/products/load-balancer): interval 3..300 s, timeout 1..300 s.
INTERVAL_BOUNDS = (3, 300)
TIMEOUT_BOUNDS = (1, 300)
HEALTHY_THRESHOLD = 2
UNHEALTHY_THRESHOLD = 3


def vpc(name: str, serving: ServingSpec, region: str, opts: pulumi.ResourceOptions) -> vultr.Vpc:
    """The replicas' private network (VPC; the provider deprecates VPC 2.0 for it). Only the replicas and the load
    balancer live in it."""
    network = ipaddress.IPv4Network(serving.network.vpc_cidr)
    return vultr.Vpc(
        f"{name}-vpc",
        region=region,
        description=f"{name} serving replicas",
        v4_subnet=str(network.network_address),
        v4_subnet_mask=network.prefixlen,
        opts=opts,
    )


def firewall(
    name: str, serving: ServingSpec, opts: pulumi.ResourceOptions
) -> tuple[vultr.FirewallGroup, vultr.FirewallRule]:
    """The replicas' group: one rule, the serving port from the VPC (the load balancer's side) over TCP."""
    group = vultr.FirewallGroup(f"{name}-replicas-fw", description=f"{name}: load balancer to replicas only", opts=opts)
    network = ipaddress.IPv4Network(serving.network.vpc_cidr)
    rule = vultr.FirewallRule(
        f"{name}-lb-to-replicas",
        firewall_group_id=group.id,
        ip_type="v4",
        protocol="tcp",
        subnet=str(network.network_address),
        subnet_size=network.prefixlen,
        port=str(serving.load_balancer.port),
        notes="load balancer (VPC) to the admission proxy",
        opts=opts,
    )
    return group, rule


def _bounded(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(bounds[1], value))


def tls(lb: LoadBalancerSpec) -> pulumi.Output[vultr.LoadBalancerSslArgs]:
    """The certificate and key from the secret the stack names (JSON: certificate, privateKey, chain)."""

    def parse(text: str) -> vultr.LoadBalancerSslArgs:
        try:
            pem = json.loads(text)
        except json.JSONDecodeError:
            if not text.startswith("<"):  # secret_value's offline placeholder is the only non-JSON allowed
                raise ValueError(f"{lb.certificate}: not JSON with certificate, privateKey and chain (PEM)") from None
            pem = {"certificate": text, "privateKey": text}
        return vultr.LoadBalancerSslArgs(
            certificate=pem["certificate"], private_key=pem["privateKey"], chain=pem.get("chain")
        )

    return pulumi.Output.secret(secret_value(lb.certificate, "the load balancer's certificate").apply(parse))


def load_balancer(
    name: str,
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    region: str,
    network: vultr.Vpc,
    instances: list[vultr.Instance],
    opts: pulumi.ResourceOptions,
) -> vultr.LoadBalancer:
    """HTTPS 443 -> HTTP on the proxy's port over the VPC, HTTP redirected to HTTPS; least connections, since a
    generation holds its connection for seconds; an HTTP check on the health path, which the proxy answers 503 while
    draining or before the server is up."""
    lb = serving.load_balancer
    return vultr.LoadBalancer(
        f"{name}-lb",
        region=region,
        label=f"{name}-lb",
        vpc=network.id,
        balancing_algorithm="leastconn",
        forwarding_rules=[
            vultr.LoadBalancerForwardingRuleArgs(
                frontend_protocol="https", frontend_port=HTTPS_PORT, backend_protocol="http", backend_port=lb.port
            )
        ],
        ssl=tls(lb),
        ssl_redirect=True,
        health_check=vultr.LoadBalancerHealthCheckArgs(
            protocol="http",
            port=lb.port,
            path=lb.health_path,
            check_interval=_bounded(plan.health_check_interval_seconds, INTERVAL_BOUNDS),
            response_timeout=_bounded(plan.health_check_timeout_seconds, TIMEOUT_BOUNDS),
            healthy_threshold=HEALTHY_THRESHOLD,
            unhealthy_threshold=UNHEALTHY_THRESHOLD,
        ),
        attached_instances=[instance.id for instance in instances],
        opts=opts,
    )
