"""The copy handoff's parts (accelstack.spec.copies): per copy a clock, for an OCI source a pre-authenticated request
the copy reads through, and the copy itself (components/handoff/copy.py, ArtifactCopy), which the deployer's `up`
runs before the replica group exists (the recipe's parts make the group depend on every copy).

The clock is a `time_static` (terraform-provider-time: `rfc3339` set at create, kept in state, replaced only when
its `triggers` change) triggered by the copy's source and destination: an `up` that changes nothing keeps the clock,
hence the PAR's expiry (every PAR argument is ForceNew), hence the copy (replaced only on RECOPY_KEYS, the clock
among them). A new source or destination prefix gets a new clock, PAR and copy: checkpoints are versioned by prefix;
so does a new serving.artifactUrlLifetimeMinutes for an OCI source (a fresh window for a copy that ran out of time).

OCI sources: the PAR is declared in the training tenancy through a provider pinned to serving.artifactTenancy and
serving.artifactRegion, exactly as the OCI -> Vultr reader's (components/oci/handoff_reader.py declare_par:
AnyObjectRead on the prefix, ListObjects, and OCI's create-time checks: the bucket exists in the namespace, the
deployer holds PAR_MANAGE and OBJECT_READ on it, time_expires lies in the future); it expires
serving.artifactUrlLifetimeMinutes after the clock, so the copy must finish within that (a longer lifetime for a
larger checkpoint). Azure sources: nothing is declared in the training subscription; the copy reads with the
deployer's own Entra ID token.
"""

from __future__ import annotations

import importlib

import pulumi
import pulumiverse_time as time

from accelstack.clouds import registry
from accelstack.components.handoff.copy import ArtifactCopy
from accelstack.components.handoff.oci_par import par_expiry, par_url
from accelstack.spec.copies import ArtifactCopyPlan, artifact_copies


def declare_copies(
    name: str,
    spec: object,
    parent: pulumi.Resource,
    destination_endpoint: str,
    destination_keys: pulumi.Input[str] | None,
) -> list[ArtifactCopy]:
    """Every copy the spec asks for (accelstack.spec.copies.artifact_copies), in order: the weights, then each
    adapter with copyFrom; [] without any. `destination_endpoint` and `destination_keys` are the serving cloud's
    (ArtifactCopy: the AWS Region or the Vultr Object Storage host; Vultr's writing key)."""
    plans = artifact_copies(spec)
    if not plans:
        return []
    clock_provider = time.Provider(f"{name}-copy-time", opts=pulumi.ResourceOptions(parent=parent))
    source_provider = _source_provider(name, plans[0], parent)
    copies = []
    for plan in plans:
        triggers = {"source": plan.source_uri, "destination": plan.destination}
        if plan.source_cloud == "oci":
            # A changed lifetime is a fresh window: a new clock, hence a PAR expiring the new lifetime from now (not
            # from the first try's clock, which may be past it: OCI refuses a time_expires in the past) and a copy
            # that resumes (an interrupted copy's way to finish, as its refusal says).
            triggers["lifetimeMinutes"] = str(plan.lifetime_minutes)
        clock = time.Static(
            f"{name}-copy-{plan.name}-clock",
            triggers=triggers,
            opts=pulumi.ResourceOptions(parent=parent, provider=clock_provider),
        )
        source_url: pulumi.Input[str] | None = None
        if plan.source_cloud == "oci":
            source_url = _oci_par_url(name, plan, clock, source_provider, parent)
        copies.append(
            ArtifactCopy(
                f"{name}-copy-{plan.name}",
                source_cloud=plan.source_cloud,
                source=plan.source_uri,
                source_url=source_url,
                destination_cloud=plan.destination_cloud,
                destination=plan.destination,
                destination_endpoint=destination_endpoint,
                destination_keys=destination_keys,
                clock=clock.rfc3339,
                opts=pulumi.ResourceOptions(parent=parent),
            )
        )
    return copies


def _source_provider(name: str, plan: ArtifactCopyPlan, parent: pulumi.Resource) -> object | None:
    """OCI: one provider pinned to the training tenancy and the bucket's region, for every copy's PAR (the PARs land
    there, in its namespace, never elsewhere). Imported lazily: a stack loads only the SDK of the cloud it copies
    from."""
    if plan.source_cloud != "oci":
        return None
    oci = importlib.import_module("pulumi_oci")
    return oci.Provider(
        f"{name}-copy-source-oci",
        tenancy_ocid=plan.tenancy,
        region=plan.region,
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _oci_par_url(
    name: str, plan: ArtifactCopyPlan, clock: time.Static, provider: object, parent: pulumi.Resource
) -> pulumi.Output[str]:
    """The copy's PAR (components/oci/handoff_reader.declare_par), expiring `plan.lifetime_minutes` after the clock,
    and the URL the copy reads through (a secret: a bearer URL until it expires)."""
    reader = importlib.import_module(f"{registry.get('oci').components}.handoff_reader")
    lifetime = plan.lifetime_minutes
    expires = clock.rfc3339.apply(lambda at: par_expiry(at, lifetime))
    _, access_uri = reader.declare_par(
        f"{name}-copy-{plan.name}-par", f"accelstack-{name}-copy-{plan.name}", plan.source, expires, provider, parent
    )
    region = plan.region
    return pulumi.Output.secret(access_uri.apply(lambda uri: par_url(region, uri)))
