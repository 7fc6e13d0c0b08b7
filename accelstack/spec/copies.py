"""The copy handoff, resolved once from the spec (pure): training artifacts on another cloud copied at `pulumi up`
into the serving stack's OWN store (`serving.model.copyFrom` -> `serving.model.weightsUri`, each adapter's
`copyFrom` -> its `uri`), which the replicas then read as their own weights (components/handoff/copy.py copies,
components/handoff/copies.py declares the copies).

Where the replicas cannot read the training store themselves (accelstack.spec.handoff, REFUSED_BECAUSE: no
federation into OCI; Vultr replicas have no identity and Azure's storage firewall admits none of their addresses),
the deployer, who can, copies once per checkpoint instead. Sources are the stores whose readers are not federated
everywhere (`COPY_SOURCES`); AWS and Google Cloud stores are read directly by every serving cloud (READERS), so a
copy from them is refused rather than kept as a second way to do the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelstack.spec.accounts import PAR_LIFETIME_MINUTES
from accelstack.spec.handoff import (
    BLOB_HOST_SUFFIX,
    ArtifactLocation,
    artifact_location,
    reference_cloud,
    store_cloud,
)
from accelstack.spec.uris import split_bucket_uri

# The source clouds a copy reads from, and how (said by `validate` and the docs).
COPY_SOURCES: dict[str, str] = {
    "oci": "a read-only pre-authenticated request on the prefix (AnyObjectRead, listing allowed), declared for the copy "
    "in serving.artifactTenancy and expiring serving.artifactUrlLifetimeMinutes after the copy's clock",
    "azure": "the deployer's own Entra ID token (Storage Blob Data Reader on the container; its address admitted by "
    "the training stack's training.artifactReaderAddresses)",
}
# The stores a copy writes into: the serving stack's own, with the deployer's credentials for it.
COPY_DESTINATIONS = ("aws", "azure", "gcp", "vultr")
SOURCE_FORMS = {
    "oci": "oci://<bucket>@<namespace>/<prefix>",
    "azure": f"https://<account>{BLOB_HOST_SUFFIX}/<container>/<prefix>",
}
# Why a copy from these clouds' stores is refused: every serving cloud reads them where they are.
DIRECT_SOURCES = ("aws", "gcp")


@dataclass(frozen=True)
class ArtifactCopyPlan:
    """One copy: `source` (a location on `source_cloud`, as `source_uri` names it without credentials) into
    `destination` (a prefix in the stack's own store, `destination_cloud`), from `training_account` (the id without
    its prefix). OCI sources: the `tenancy` and `region` the copy's PAR is declared in, and its `lifetime_minutes`."""

    name: str  # "weights" or "adapter-<adapter name>": the resources' names
    source_cloud: str
    source: ArtifactLocation
    destination_cloud: str
    destination: str
    training_account: str
    tenancy: str = ""
    region: str = ""
    lifetime_minutes: int = 0

    @property
    def source_uri(self) -> str:
        if self.source_cloud == "azure":
            return self.source.blob_url
        return f"oci://{self.source.bucket}@{self.source.namespace}/{self.source.prefix}"


def copy_source_cloud(uri: str, own_cloud: str) -> str | None:
    """The cloud a copyFrom URI names (by its scheme, or a Blob Storage / S3 host; a scheme of the stack's own store
    is its own: s3:// in a Vultr stack is Vultr Object Storage)."""
    return store_cloud(uri, own_cloud)


def destination_uri(uri: str, own_cloud: str) -> str:
    """The destination as the copy writes it: the stack's own store URI with its prefix ending in '/' (Azure in its
    https form)."""
    if own_cloud == "azure":
        location = artifact_location(uri)
        if location is not None:
            return location.blob_url
    scheme = uri.partition("://")[0]
    bucket, path = split_bucket_uri(uri)
    prefix = path.strip("/")
    return f"{scheme}://{bucket}/{prefix}/" if prefix else f"{scheme}://{bucket}/"


def destination_key(uri: str, own_cloud: str) -> tuple[str, str]:
    """(store, prefix) of a destination: the bucket (Azure: account/container) and its key prefix ending in '/'."""
    if own_cloud == "azure":
        location = artifact_location(uri)
        if location is not None:
            return f"{location.storage_account}/{location.bucket}", location.prefix
    bucket, path = split_bucket_uri(uri)
    prefix = path.strip("/")
    return bucket, f"{prefix}/" if prefix else ""


def artifact_copies(spec: object) -> tuple[ArtifactCopyPlan, ...]:
    """The copies a serving stack makes (the weights first, then each adapter with copyFrom); () for a training
    stack, a stack without copyFrom, or a spec the rules refuse (`validate` reports why)."""
    serving = getattr(spec, "serving", None)
    if serving is None or serving.model.copy_from is None or serving.artifact_account is None:
        return ()
    own: str = spec.cloud  # type: ignore[attr-defined]
    source_cloud = copy_source_cloud(serving.model.copy_from, own)
    cloud, account = reference_cloud(serving.artifact_account, own)
    if source_cloud not in COPY_SOURCES or source_cloud == own or cloud != source_cloud:
        return ()
    if own not in COPY_DESTINATIONS or store_cloud(serving.model.weights_uri, own) != own:
        return ()
    pairs = [("weights", serving.model.copy_from, serving.model.weights_uri)] + [
        (f"adapter-{adapter.name}", adapter.copy_from, adapter.uri)
        for adapter in serving.model.adapters
        if adapter.copy_from is not None
    ]
    copies = []
    for name, source_uri, destination in pairs:
        location = artifact_location(source_uri)
        if location is None or location.cloud != source_cloud or store_cloud(destination, own) != own:
            return ()
        copies.append(
            ArtifactCopyPlan(
                name=name,
                source_cloud=source_cloud,
                source=location,
                destination_cloud=own,
                destination=destination_uri(destination, own),
                training_account=account,
                tenancy=(serving.artifact_tenancy or "") if source_cloud == "oci" else "",
                region=(serving.artifact_region or "") if source_cloud == "oci" else "",
                lifetime_minutes=(serving.artifact_url_lifetime_minutes or PAR_LIFETIME_MINUTES[1])
                if source_cloud == "oci"
                else 0,
            )
        )
    return tuple(copies)


def copies_requested(spec: object) -> bool:
    """The stack asks for a copy (serving.model.copyFrom or an adapter's), whether or not the rules admit it."""
    serving = getattr(spec, "serving", None)
    if serving is None:
        return False
    return serving.model.copy_from is not None or any(a.copy_from is not None for a in serving.model.adapters)


def own_cloud_artifact_account(artifact_account: str | None, own_cloud: str) -> str | None:
    """serving.artifactAccount where it names an account of the stack's own cloud (whose grants and keys the
    replicas' own-store read names); None where it is another cloud's (a copy's source: the weights were copied into
    this stack's own account) or unset."""
    if artifact_account is None:
        return None
    cloud, account = reference_cloud(artifact_account, own_cloud)
    return account if cloud == own_cloud else None
