"""Vultr serving rules: what Vultr's API refuses at create time (or what would deploy a broken service), checked
at the config path before anything exists. These run for vultr stacks only (`Cloud.rules`)."""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds.vultr import catalog
from accelstack.spec.accounts import SECRET_REFERENCE
from accelstack.spec.handoff import PER_REPLICA_PAIRS, store_cloud
from accelstack.spec.models import ServingStack
from accelstack.spec.problems import Problem
from accelstack.spec.validators import rule


@rule(workload="serving")
def vultr_certificate_is_a_secret_reference(spec: ServingStack) -> Iterator[Problem]:
    """A Vultr load balancer takes the certificate and its private key as PEM text in the create call (ssl.certificate,
    ssl.private_key): the stack names where they are kept, a secret config value or an environment variable holding
    {"certificate", "privateKey", "chain"} as JSON; the PEM itself in a stack file would end up in git."""
    # PEM text itself is refused before this by the neutral one-word grammar (a PEM block has spaces).
    certificate = spec.serving.load_balancer.certificate
    if not SECRET_REFERENCE.fullmatch(certificate):
        yield Problem(
            "serving.loadBalancer.certificate",
            f"{certificate!r} is not a reference to the certificate and key; allowed: env:<VARIABLE> or "
            "config:<namespace>:<key> naming a secret JSON value with certificate, privateKey and chain (PEM)",
        )


@rule(workload="serving")
def vultr_plan_is_sold_in_the_region(spec: ServingStack) -> Iterator[Problem]:
    """Vultr creates an instance only where its plan is listed (GET /v2/plans: locations)."""
    plan = spec.serving.replicas.instance_type
    locations = catalog.PLAN_LOCATIONS.get(plan)
    if locations is not None and spec.account.region not in locations:
        yield Problem(
            "serving.replicas.instanceType",
            f"{plan} is not sold in {spec.account.region} (Vultr's plan list, {catalog.CHECKED}); "
            f"allowed regions: {', '.join(locations)}",
        )


@rule(workload="serving")
def vultr_fleet_fits_one_load_balancer(spec: ServingStack) -> Iterator[Problem]:
    """One Vultr load balancer takes a bounded number of attached instances."""
    most = spec.serving.replicas.max
    if most > catalog.LOAD_BALANCER_MAX_INSTANCES:
        yield Problem(
            "serving.replicas.max",
            f"{most} replicas: a Vultr load balancer attaches at most {catalog.LOAD_BALANCER_MAX_INSTANCES} "
            "instances; allowed: 1..100",
        )


def weights_elsewhere(spec: ServingStack) -> str | None:
    """The cloud whose store holds the weights when it is another one this stack reads without a Vultr key, with a
    credential per replica (accelstack.spec.handoff: PER_REPLICA_PAIRS); None for Vultr's own Object Storage."""
    source = store_cloud(spec.serving.model.weights_uri, spec.cloud)
    return source if (source, spec.cloud) in PER_REPLICA_PAIRS else None


@rule(workload="serving")
def vultr_weights_come_from_vultr_object_storage(spec: ServingStack) -> Iterator[Problem]:
    """The replicas read the weights from the region's Vultr Object Storage cluster with the read-only key; a
    region without a cluster has no endpoint to read from."""
    region = spec.account.region
    if weights_elsewhere(spec):
        return  # read from OCI or Cloud Storage with a credential per replica (components/handoff)
    if region not in catalog.OBJECT_STORAGE_HOSTS:
        yield Problem(
            "account.region",
            f"{region} has no Vultr Object Storage cluster for the weights (GET /v2/object-storage/clusters); "
            f"allowed: {', '.join(catalog.OBJECT_STORAGE_HOSTS)}",
        )


@rule(workload="serving")
def vultr_weights_key_delivery_is_named(spec: ServingStack) -> Iterator[Problem]:
    """Vultr instances have no identity to read the weights with: the replicas get a read-only key through a
    presigned URL (account.weightsKey), and that key's object must not lie under a prefix the replicas sync, or the
    key would be copied next to the weights the inference server reads."""
    key = getattr(spec.account, "weights_key", None)
    source = weights_elsewhere(spec)
    if source:
        if key is not None:
            how = "a pre-authenticated request" if source == "oci" else "a short-lived OAuth access token"
            yield Problem(
                "account.weightsKey",
                f"the weights are on {'OCI' if source == 'oci' else 'Google Cloud'}, read through {how} per replica "
                "(serving.artifactUrlLifetimeMinutes): no Vultr Object Storage key is fetched; remove it",
            )
        return
    if key is None:
        yield Problem(
            "account.weightsKey",
            "required on Vultr for serving: {object: s3://<bucket>/<key> holding the read-only key, signerSecret: "
            "env:<VARIABLE> or config:<namespace>:<key>} (docs/deploy-vultr.md, the weights credential)",
        )
        return
    model = spec.serving.model
    synced = [("serving.model.weightsUri", model.weights_uri)] + [
        (f"serving.model.adapters.{a.name}.uri", a.uri) for a in model.adapters
    ]
    for path, prefix in synced:
        if key.object.startswith(prefix.rstrip("/") + "/") or key.object == prefix:
            yield Problem(
                "account.weightsKey.object",
                f"{key.object} lies under {prefix} ({path}), which every replica copies to its disk: the key would "
                "sit beside the weights; allowed: an object outside the synced prefixes, e.g. s3://<bucket>/keys/...",
            )
