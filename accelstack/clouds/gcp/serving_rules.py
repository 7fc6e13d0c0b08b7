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
# Dead-letter policy max_delivery_attempts: 5..100 (https://cloud.google.com/pubsub/docs/handling-failures).
MIN_DELIVERY_ATTEMPTS, MAX_DELIVERY_ATTEMPTS = 5, 100
# Subscription message_retention_duration: 10 minutes..7 days (https://cloud.google.com/pubsub/docs/subscription-properties).
MAX_RETENTION_SECONDS = 7 * 24 * 3600


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
def gcp_dead_letter_attempts(spec: ServingStack) -> Iterator[Problem]:
    """Pub/Sub dead-letter policies take 5..100 delivery attempts."""
    serving = spec.serving
    count = serving.admission.max_receive_count
    if not MIN_DELIVERY_ATTEMPTS <= count <= MAX_DELIVERY_ATTEMPTS:
        yield Problem(
            "serving.admission.maxReceiveCount",
            f"{count} delivery attempts; Pub/Sub dead-letter policies allow "
            f"{MIN_DELIVERY_ATTEMPTS}..{MAX_DELIVERY_ATTEMPTS}",
        )


@rule(workload="serving")
def gcp_admission_ttl(spec: ServingStack) -> Iterator[Problem]:
    """A subscription keeps unacked messages at most 7 days (and at least 10 minutes: a shorter TTL is
    enforced by the replica's worker, which drops requests older than it)."""
    serving = spec.serving
    if serving.admission.ttl_seconds > MAX_RETENTION_SECONDS:
        yield Problem(
            "serving.admission.ttlSeconds",
            f"{serving.admission.ttl_seconds} s; Pub/Sub retains messages at most {MAX_RETENTION_SECONDS} s (7 days)",
        )
