"""The packs' policy context from a validated stack spec: the stack's side, both sides' accounts and stores, its
allowed regions and its own opt-outs (what `accelstack preview` and `policy --stack` hand both packs, and what
`policy --config` writes for the Pulumi CLI)."""

from __future__ import annotations

from typing import Any

from accelstack.spec.copies import artifact_copies, destination_key
from accelstack.spec.handoff import artifact_handoff, artifact_location, split_account_reference


def landing_context(spec: Any, plan: Any) -> dict[str, Any]:
    """Policy context of a landing stack (accelstack.spec.landing) from its plan: the allowed Regions, the planner's
    quota needs per side, Region and quota code, and the families the serving guardrail must deny."""
    return {
        "workload": "landing",
        "allowedRegions": list(spec.organization.allowed_regions),
        "quotaNeeds": [
            {
                "side": n.side,
                "region": n.region,
                "quota": n.quota,
                "quotaCode": n.code,
                "amount": n.amount,
                **({"zone": n.zone} if n.zone else {}),
            }
            for n in plan.needs
        ],
        "deniedFamilies": list(plan.training_families),
        # Azure: each side's listed principals, which the other side's management group must deny role assignments to.
        "sidePrincipals": {side: list(spec.side(side).principals) for side in ("training", "serving")},
        **cloud_landing_context(spec, plan),
    }


def cloud_landing_context(spec: Any, plan: Any) -> dict[str, Any]:
    """What one cloud's landing guardrails are held to beyond the neutral keys, from the function
    `accelstack.spec.landing.LANDING_PACK_CONTEXT` names for the cloud ((allowed regions, training families) ->
    config keys): OCI's quota policies zero compute outside the allowed regions and the training shapes' GPUs."""
    import importlib

    from accelstack.spec.landing import LANDING_PACK_CONTEXT

    if spec.cloud not in LANDING_PACK_CONTEXT:
        return {}
    module, _, name = LANDING_PACK_CONTEXT[spec.cloud].partition(":")
    context: dict[str, Any] = getattr(importlib.import_module(module), name)(
        tuple(spec.organization.allowed_regions), tuple(plan.training_families)
    )
    return context


def context_from_spec(spec: Any) -> dict[str, Any]:
    """Policy context from a validated StackSpec: its side, both sides' accounts, allowed regions."""
    if spec is None or getattr(spec, "workload", None) == "landing":
        return {}  # a landing stack's context needs its plan: `landing_context`
    separation = spec.separation
    # A GCP project's number is another name of the stack's own project (members such as Compute Engine's default
    # service account name it so): the packs count it among the stack's side's accounts.
    number = getattr(spec.account, "project_number", None)
    # Accounts of another cloud ("aws:111111111111", accelstack.spec.handoff) are judged by their ids: a provider
    # pins the id, not the reference.
    training = [split_account_reference(a)[1] for a in separation.training_accounts]
    serving = [split_account_reference(a)[1] for a in separation.serving_accounts]
    if number is not None:
        (training if spec.workload == "training" else serving).append(number)
    return {
        "workload": spec.workload,
        "trainingAccounts": training,
        "servingAccounts": serving,
        "allowedRegions": list(separation.allowed_regions) if separation.allowed_regions else None,
        # The key prefix serving may read in training's artifact bucket (the documented read path): the training
        # stack's, or the one a serving stack says its training stack publishes under.
        "artifactPrefix": _artifact_prefix(spec),
        # S3 and GCS bucket names carry no account: the weights' bucket is training's (the documented read path),
        # and so are the buckets a training stack names for its datasets and checkpoints, created or existing.
        "trainingStores": _training_buckets(spec),
        # A copy's destination (serving.model.weightsUri with copyFrom) is the serving side's own bucket.
        "servingStores": _copy_destination_buckets(spec),
        # The store that holds the artifacts serving may read: the one a storage firewall may open to serving's
        # subnets and that may never take keys that bypass the read path's role conditions (Azure: its account).
        "artifactStores": _artifact_stores(spec),
        # Principals of the cloud's own services the stack grants roles to by an id it does not create.
        "servicePrincipals": _service_principals(spec),
        # The stack file's own opt-out of the front door's access logs (serving.loadBalancer.accessLogs).
        "frontDoorAccessLogs": spec.serving.load_balancer.access_logs if getattr(spec, "serving", None) else None,
        # Weights on another cloud: the one reader this serving stack may declare in that training account.
        "artifactHandoff": _handoff(spec),
        # Weights copied from another cloud into this stack's own store (serving.model.copyFrom): each copy's source
        # (read-only, prefix-scoped) and destination (this stack's store), as accelstack.spec.copies resolves them.
        "artifactCopies": _copies(spec),
    }


def _artifact_prefix(spec: Any) -> str | None:
    for side in ("training", "serving"):
        if getattr(spec, side, None) is not None:
            return str(getattr(spec, side).artifact_prefix)
    return None


def _copy_destination_buckets(spec: Any) -> list[str] | None:
    """The buckets the copies write into (S3, GCS, Vultr Object Storage: names without an account); an Azure
    destination is placed by its storage account's resource id instead."""
    own = getattr(spec, "cloud", "")
    return sorted({destination_key(c.destination, own)[0] for c in artifact_copies(spec) if own != "azure"}) or None


def _copies(spec: Any) -> list[dict[str, Any]] | None:
    copies = artifact_copies(spec)
    return [
        {
            "sourceCloud": c.source_cloud,
            "source": c.source_uri,
            "store": c.source.storage_account or c.source.bucket,
            "namespace": c.source.namespace or None,
            "prefix": c.source.prefix,
            "account": c.training_account,
            "tenancy": c.tenancy or None,
            "region": c.region or None,
            "lifetimeMinutes": c.lifetime_minutes or None,
            "destinationCloud": c.destination_cloud,
            "destination": c.destination,
        }
        for c in copies
    ] or None


def _handoff(spec: Any) -> dict[str, Any] | None:
    handoff = artifact_handoff(spec)
    if handoff is None:
        return None
    return {
        "cloud": handoff.training_cloud,
        "servingCloud": handoff.serving_cloud,
        "account": handoff.training_account,
        "region": handoff.region or None,
        "stores": sorted({loc.bucket for loc in handoff.locations}),
        "storageAccounts": sorted({loc.storage_account for loc in handoff.locations if loc.storage_account}),
        "prefixes": sorted({loc.prefix for loc in handoff.locations}),
        "issuers": _replica_issuers(spec),
        # OCI: the tenancy the reader's provider signs for, the stores' namespaces, and how long a PAR may live.
        "tenancy": handoff.tenancy or None,
        "namespaces": sorted({loc.namespace for loc in handoff.locations if loc.namespace}),
        "lifetimeMinutes": handoff.url_lifetime_minutes or None,
        # AWS -> Vultr: the one principal the reader role trusts (serving.artifactDeployer).
        "deployer": handoff.deployer or None,
    }


def _replica_issuers(spec: Any) -> list[str]:
    """Who vouches for the serving replicas' identity on their own cloud, as the training cloud's trust names it:
    Google (AWS names its built-in provider by host), the serving tenant's Entra ID v2.0 issuer; AWS replicas are
    placed by their account already."""
    if spec.cloud == "gcp":
        return ["accounts.google.com", "https://accounts.google.com"]
    if spec.cloud == "azure":
        issuer = f"login.microsoftonline.com/{spec.account.tenant_id}/v2.0"  # IAM names OIDC providers by host/path
        return [f"https://{issuer}", issuer]
    return []


def _service_principals(spec: Any) -> list[str] | None:
    """Azure's resource-provider object ids (account.hpcCachePrincipalId, standbyPoolPrincipalId): the stack
    assigns them roles on its own resources, and only the config can say they are the cloud's, not a person's."""
    account = getattr(spec, "account", None)
    ids = [str(i) for f in ("hpc_cache_principal_id", "standby_pool_principal_id") if (i := getattr(account, f, None))]
    return ids or None


def _artifact_stores(spec: Any) -> list[str] | None:
    """Where serving's weights are read from (serving.model.weightsUri) or, in a training stack, where the artifact
    prefix is published (training.storage.checkpoints): its bucket on S3/GCS, its storage account on Azure (the
    unit whose firewall and Shared Key setting cover every container in it)."""
    serving = getattr(spec, "serving", None)
    training = getattr(spec, "training", None)
    uris: list[str] = []
    if serving is not None:
        uris.append(str(serving.model.weights_uri))
    if training is not None and training.storage.checkpoints is not None:
        uris.append(str(training.storage.checkpoints.uri))
    stores = []
    for uri in uris:
        location = artifact_location(uri)
        store = location and (location.storage_account or location.bucket)
        if store and store not in stores:
            stores.append(store)
    return stores or None


def _training_buckets(spec: Any) -> list[str] | None:
    serving = getattr(spec, "serving", None)
    training = getattr(spec, "training", None)
    uris: list[str] = []
    copies = artifact_copies(spec)
    if copies:  # the weights were copied into this stack's own store: training's buckets are the copies' sources
        return sorted({c.source.bucket for c in copies if not c.source.storage_account}) or None
    if serving is not None:
        uris.append(str(serving.model.weights_uri))
    if training is not None:
        storage = training.storage
        uris += [str(store.uri) for store in (storage.datasets, storage.checkpoints) if store is not None]
    buckets = []
    for uri in uris:
        scheme, _, rest = uri.partition("://")
        bucket = rest.split("/", 1)[0]
        if scheme in ("s3", "gs") and bucket and bucket not in buckets:
            buckets.append(bucket)
    return buckets or None
