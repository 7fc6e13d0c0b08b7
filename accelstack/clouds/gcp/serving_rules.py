"""GCP serving rules: what the load balancer, Pub/Sub and Compute Engine would reject at create time,
checked at the config path before anything exists. These run for gcp stacks only (`Cloud.rules`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from accelstack.spec.models import ServingStack
from accelstack.spec.problems import Problem
from accelstack.spec.validators import rule

# An existing global SSL certificate, by path or URL (TargetHttpsProxy.ssl_certificates; names are
# RFC 1035: https://cloud.google.com/compute/docs/reference/rest/v1/sslCertificates).
SSL_CERTIFICATE = re.compile(
    r"^(https://(www|compute)\.googleapis\.com/compute/v1/)?"
    r"projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/global/sslCertificates/[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
)
# Pub/Sub's delivery attempts and retention are the catalog's admission limits (accelstack.clouds.gcp), checked by
# the neutral rule: https://cloud.google.com/pubsub/docs/handling-failures, .../subscription-properties.


@rule(workload="serving")
def gcp_serving_certificate(spec: ServingStack) -> Iterator[Problem]:
    """The HTTPS proxy takes an existing global certificate: projects/<project>/global/sslCertificates/<name>."""
    serving = spec.serving
    if not SSL_CERTIFICATE.match(serving.load_balancer.certificate):
        yield Problem(
            "serving.loadBalancer.certificate",
            f"{serving.load_balancer.certificate!r} is not a global SSL certificate; "
            "allowed: projects/<project>/global/sslCertificates/<name> (a regional certificate cannot serve "
            "a global load balancer)",
        )


@rule(workload="serving")
def gcp_autohealing_covers_the_cold_start(spec: ServingStack) -> Iterator[Problem]:
    """A MIG ignores a new VM's health checks for at most 3600 s (autoHealingPolicies.initialDelaySec,
    InstanceGroupManagerAutoHealingPolicy): a replica whose cold start (measured, or the planner's estimate) is
    longer is recreated before it serves, in a loop."""
    from accelstack.clouds import registry
    from accelstack.planner.serving_plan import UNHOOKED_GRACE_MAX_SECONDS, plan_serving

    cold = plan_serving(spec.serving, registry.get(spec.cloud).catalog).cold_start_seconds
    if cold >= UNHOOKED_GRACE_MAX_SECONDS:
        source = "" if spec.serving.replicas.cold_start_seconds is not None else " (the planner's estimate)"
        yield Problem(
            "serving.replicas.coldStartSeconds",
            f"{cold} s{source}: GCP autohealing ignores a new replica's health checks for at most "
            f"{UNHOOKED_GRACE_MAX_SECONDS} s (initialDelaySec), so it would recreate the replica before it serves; "
            f"bring the cold start under {UNHOOKED_GRACE_MAX_SECONDS} s (a smaller or pre-pulled image, faster "
            "weight storage)",
        )
