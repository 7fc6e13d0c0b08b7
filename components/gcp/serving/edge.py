"""The edge: a global external Application Load Balancer (EXTERNAL_MANAGED) that answers HTTPS only
with a TLS 1.2+ policy, a Cloud Armor policy throttling each client IP, and the firewall rule that lets
only Google's front ends and health checkers reach the replica port."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import AdmissionPolicy, LoadBalancerSpec

# Google front ends and health checkers of external Application Load Balancers
# (https://cloud.google.com/load-balancing/docs/health-check-concepts#ip-ranges).
GOOGLE_FRONT_END_RANGES = ["35.191.0.0/16", "130.211.0.0/22"]
REPLICA_TAG = "accelstack-replica"
NAMED_PORT = "http"
THROTTLE_PRIORITY = 1000
DEFAULT_RULE_PRIORITY = 2147483647  # Cloud Armor requires the default rule at this priority


def firewall(
    name: str, network: gcp.compute.Network, lb: LoadBalancerSpec, opts: pulumi.ResourceOptions
) -> gcp.compute.Firewall:
    return gcp.compute.Firewall(
        f"{name}-lb-to-replicas",
        network=network.id,
        direction="INGRESS",
        source_ranges=GOOGLE_FRONT_END_RANGES,
        target_tags=[REPLICA_TAG],
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(lb.port)])],
        opts=opts,
    )


def security_policy(name: str, admission: AdmissionPolicy, opts: pulumi.ResourceOptions) -> gcp.compute.SecurityPolicy:
    """`throttle` per client IP: over perClientRate requests in rateWindowSeconds get 429 (interval_sec
    is one of 10, 30, 60, 120, 180, 240, 300, 600, 900, 1200, 1800, 2700, 3600:
    https://cloud.google.com/armor/docs/rate-limiting-overview#rate-limit-thresholds)."""
    return gcp.compute.SecurityPolicy(
        f"{name}-armor",
        type="CLOUD_ARMOR",
        rules=[
            gcp.compute.SecurityPolicyRuleArgs(
                action="throttle",
                priority=THROTTLE_PRIORITY,
                description="per-client request rate",
                match=gcp.compute.SecurityPolicyRuleMatchArgs(
                    versioned_expr="SRC_IPS_V1",
                    config=gcp.compute.SecurityPolicyRuleMatchConfigArgs(src_ip_ranges=["*"]),
                ),
                rate_limit_options=gcp.compute.SecurityPolicyRuleRateLimitOptionsArgs(
                    conform_action="allow",
                    exceed_action="deny(429)",
                    enforce_on_key="IP",
                    rate_limit_threshold=gcp.compute.SecurityPolicyRuleRateLimitOptionsRateLimitThresholdArgs(
                        count=admission.per_client_rate, interval_sec=admission.rate_window_seconds
                    ),
                ),
            ),
            gcp.compute.SecurityPolicyRuleArgs(
                action="allow",
                priority=DEFAULT_RULE_PRIORITY,
                description="default rule",
                match=gcp.compute.SecurityPolicyRuleMatchArgs(
                    versioned_expr="SRC_IPS_V1",
                    config=gcp.compute.SecurityPolicyRuleMatchConfigArgs(src_ip_ranges=["*"]),
                ),
            ),
        ],
        opts=opts,
    )


def health_check(
    name: str, lb: LoadBalancerSpec, plan: ServingPlan, opts: pulumi.ResourceOptions
) -> gcp.compute.HealthCheck:
    """HTTP on the replica's healthPath and port; the group's auto-healing and the backend share it."""
    return gcp.compute.HealthCheck(
        f"{name}-health",
        check_interval_sec=plan.health_check_interval_seconds,
        timeout_sec=min(plan.health_check_timeout_seconds, plan.health_check_interval_seconds),
        healthy_threshold=2,
        unhealthy_threshold=3,
        http_health_check=gcp.compute.HealthCheckHttpHealthCheckArgs(port=lb.port, request_path=lb.health_path),
        opts=opts,
    )


@dataclass(frozen=True)
class LoadBalancer:
    address: gcp.compute.GlobalAddress
    backend: gcp.compute.BackendService


def balancing(admission_on_replicas: bool, plan: ServingPlan) -> dict[str, object]:
    """How the backend spreads requests. Replicas that admit requests themselves get them by RATE, each up to
    what one clears at full concurrency (plan.replica_full_rate_per_second), which is also the capacity the
    load-balancing-utilization autoscaler divides by (never CPU); with a queue, the default."""
    if admission_on_replicas:
        return {"balancing_mode": "RATE", "max_rate_per_instance": plan.replica_full_rate_per_second}
    return {"balancing_mode": "UTILIZATION"}


def load_balancer(
    name: str,
    lb: LoadBalancerSpec,
    plan: ServingPlan,
    health: gcp.compute.HealthCheck,
    armor: gcp.compute.SecurityPolicy,
    group: gcp.compute.RegionInstanceGroupManager,
    opts: pulumi.ResourceOptions,
    *,
    admission_on_replicas: bool = False,
) -> LoadBalancer:
    backend = gcp.compute.BackendService(
        f"{name}-backend",
        load_balancing_scheme="EXTERNAL_MANAGED",
        protocol="HTTP",
        port_name=NAMED_PORT,
        timeout_sec=plan.idle_timeout_seconds,
        # Replicas that admit requests themselves refuse past their share: send each to the one with the fewest
        # in flight (as the AWS target group does), not round robin.
        locality_lb_policy="LEAST_REQUEST" if admission_on_replicas else None,
        health_checks=health.id,
        security_policy=armor.id,
        backends=[
            gcp.compute.BackendServiceBackendArgs(
                group=group.instance_group, capacity_scaler=1.0, **balancing(admission_on_replicas, plan)
            )
        ],
        log_config=gcp.compute.BackendServiceLogConfigArgs(enable=lb.access_logs, sample_rate=1.0),
        opts=opts,
    )
    url_map = gcp.compute.URLMap(f"{name}-urls", default_service=backend.id, opts=opts)
    ssl_policy = gcp.compute.SSLPolicy(f"{name}-tls", profile="MODERN", min_tls_version="TLS_1_2", opts=opts)
    proxy = gcp.compute.TargetHttpsProxy(
        f"{name}-https",
        url_map=url_map.id,
        ssl_certificates=[lb.certificate],  # an existing certificate, projects/<p>/global/sslCertificates/<n>
        ssl_policy=ssl_policy.id,
        opts=opts,
    )
    address = gcp.compute.GlobalAddress(f"{name}-ip", address_type="EXTERNAL", opts=opts)
    gcp.compute.GlobalForwardingRule(
        f"{name}-https",
        target=proxy.id,
        ip_address=address.id,
        ip_protocol="TCP",
        port_range="443",
        load_balancing_scheme="EXTERNAL_MANAGED",
        opts=opts,
    )
    return LoadBalancer(address, backend)
