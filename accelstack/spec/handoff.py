"""The cross-cloud artifact handoff, resolved once from the spec (pure): a serving stack on one cloud reading the
model a training stack published on another.

An account of another cloud is written `<cloud>:<id>` in `separation.trainingAccounts` and in
`serving.artifactAccount` (e.g. "aws:111111111111", "gcp:acme-train", "azure:<subscription GUID>", "oci:<compartment OCID>"); an id
without a prefix is the stack's own cloud's. The weights URI says where the artifacts are by its scheme: s3:// (AWS),
gs:// (Google Cloud), https://<account>.blob.core.windows.net/... or az://<account>/... (Azure Blob Storage),
oci://<bucket>@<namespace>/<prefix> (OCI Object Storage, as the OCI HDFS connector and Data Flow spell an object
URI: docs.oracle.com/iaas/Content/API/SDKDocs/hdfsconnector.htm; the namespace is part of every Object Storage path,
/n/<namespace>/b/<bucket>/o/<object>, and a stack outside the tenancy cannot look it up before it reads).

How serving reads them, per pair, always read-only, prefix-scoped and with no long-lived key (`READERS`): the
serving stack declares the reader in the TRAINING cloud, where the data is, through a second provider pinned to
the training account, and its replicas present their own platform identity token to it. Vultr replicas have no
platform identity: from OCI they read through one pre-authenticated request per replica, from Google Cloud with one
short-lived OAuth access token per replica (a reader service account's, minted when the replica's clock is created);
from AWS with one STS session per replica of a reader role trusting the deployer; each is a bearer credential until it
expires (components/handoff/oci_par.py, gcs_token.py, s3_session.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from accelstack.clouds import registry
from accelstack.spec.accounts import PAR_LIFETIME_MINUTES, SESSION_LIFETIME_MINUTES, TOKEN_LIFETIME_MINUTES
from accelstack.spec.uris import split_bucket_uri

BLOB_HOST_SUFFIX = ".blob.core.windows.net"
# Clouds whose stores a serving stack elsewhere can read (the scheme of a weights URI -> its cloud).
STORE_CLOUDS = {"s3": "aws", "gs": "gcp", "az": "azure", "oci": "oci"}
HANDOFF_CLOUDS = ("aws", "azure", "gcp")

# (training cloud, serving cloud) -> how the serving replicas read, in words said by `validate` and the docs.
READERS: dict[tuple[str, str], str] = {
    ("aws", "gcp"): "an IAM role in the training account the replicas assume by web identity (Google ID token)",
    ("aws", "azure"): "an IAM role in the training account the replicas assume by web identity (Entra ID token)",
    ("gcp", "aws"): "a workload identity pool in the training project trusting the serving account's replica role",
    ("gcp", "azure"): "a workload identity pool in the training project trusting the replicas' managed identity",
    ("azure", "gcp"): "a managed identity in the training subscription with a federated credential for the replicas",
    ("azure", "aws"): "a managed identity in the training subscription with a federated credential for the replica "
    "role's outbound web identity token",
    ("oci", "vultr"): "a read-only pre-authenticated request per replica on the artifact prefix in the training "
    "bucket (AnyObjectRead, listing allowed), expiring serving.artifactUrlLifetimeMinutes after the replica's clock",
    ("gcp", "vultr"): "a reader service account in the training project (objectViewer on the bucket conditioned to "
    "the artifact prefix) and one OAuth access token of it per replica (devstorage.read_only), minted when the "
    "replica's clock is created and expiring serving.artifactUrlLifetimeMinutes later",
    ("aws", "vultr"): "an IAM role in the training account trusted by the deploying principal only "
    "(serving.artifactDeployer), reading the artifact prefix, and one STS session of it per replica (AssumeRole with a "
    "session policy limited to the same reads), minted when the replica's clock is created and expiring "
    "serving.artifactUrlLifetimeMinutes later",
}
# Training clouds whose store's firewall admits a reader on another cloud only by its public address (an Azure storage
# account's firewall applies to every data-plane request, however authorized: storage-network-security, "IP network
# rules"). The serving stack exports its stable egress addresses (`egressAddresses`) for the training stack's
# training.artifactReaderAddresses.
ADDRESS_ADMITTED_STORES = frozenset({"azure"})
# Pairs whose replicas have no platform identity: each replica gets a short-lived bearer credential of its own,
# minted from its clock (serving.artifactUrlLifetimeMinutes), instead of a federated trust.
PER_REPLICA_PAIRS = {("oci", "vultr"), ("gcp", "vultr"), ("aws", "vultr")}
AZURE_VULTR_REFUSAL = (
    "Vultr replicas have no identity to federate, and the training checkpoint account admits an internet address "
    "only where the training stack lists it (components/azure/storage.py: network rules default Deny, virtual "
    "network rules for the nodes' subnet and training.artifactReaderSubnets, IP rules for "
    "training.artifactReaderAddresses), while Azure's storage firewall refuses every data-plane request from "
    "elsewhere, a SAS's included (learn.microsoft.com/azure/storage/common/storage-network-security-limitations): "
    "the deployer's Get User Delegation Key and List Blobs calls and every Vultr replica's reads would be refused "
    "unless the training stack admitted those public addresses first, and a replica's exists only once this stack "
    "has created the replica that fetches at its first boot (the deployer's is rarely fixed); "
    "and a user delegation SAS cannot be limited to the prefix there (a directory SAS, sr=d, needs a hierarchical "
    "namespace: is_hns_enabled=False), so each replica would need one SAS per blob listed at deploy time. Serve these "
    "weights from an Azure stack (its replicaSubnets in training.artifactReaderSubnets), or copy them to a store a "
    "Vultr stack reads (OCI, Google Cloud, AWS, or its own Vultr Object Storage)"
)
# Why the pairs not in READERS are refused, where the reason is more than "not built" (said by `validate`).
REFUSED_BECAUSE: dict[tuple[str, str], str] = {
    **{
        ("oci", serving): "no reader federates another cloud's replica identity into OCI here, and a per-replica "
        f"credential minted at deploy time would expire before an autoscaled {serving} replica boots"
        for serving in ("aws", "azure", "gcp")
    },
    # A per-blob user delegation SAS per replica would sign fine, but nothing could use it: the training checkpoint
    # account admits no internet address, and Azure's storage firewall applies to every data-plane request, SAS or
    # not (learn.microsoft.com/azure/storage/common/storage-network-security-limitations). Get User Delegation Key and
    # List Blobs (the deployer's, at deploy time) and each replica's Get Blob all go to <account>.blob.core.windows.net.
    ("azure", "vultr"): AZURE_VULTR_REFUSAL,
}


# Amazon S3 by its virtual-hosted URL, https://<bucket>.s3.<region>.amazonaws.com/<prefix>
# (docs.aws.amazon.com/AmazonS3/latest/userguide/VirtualHosting.html): how a stack whose own store also speaks S3
# (Vultr's: s3:// there is Vultr Object Storage) names weights in AWS.
S3_HOST = re.compile(
    r"(?P<bucket>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\.s3\.(?P<region>[a-z]{2}(?:-[a-z]+)+-[0-9])\.amazonaws\.com"
)
S3_HTTPS = "https://<bucket>.s3.<region>.amazonaws.com/<prefix>"


def store_cloud(uri: str, own: str | None = None) -> str | None:
    """The cloud whose object store `uri` names: by scheme, and for https a Blob Storage or S3 virtual-hosted host. A
    scheme the stack's `own` cloud's store also takes is its own (Vultr Object Storage speaks S3: s3:// there is
    Vultr's, and AWS is named by its https form)."""
    scheme, _, rest = uri.partition("://")
    if own is not None and scheme != "https" and scheme in registry.get(own).catalog.object_uri_schemes:
        return own
    if scheme == "https":
        host = rest.partition("/")[0]
        return "azure" if host.endswith(BLOB_HOST_SUFFIX) else "aws" if S3_HOST.fullmatch(host) else None
    return STORE_CLOUDS.get(scheme)


def split_account_reference(reference: str) -> tuple[str | None, str]:
    """ "aws:111111111111" -> ("aws", "111111111111"); an id without a registered cloud's prefix -> (None, id)."""
    cloud, sep, rest = reference.partition(":")
    if sep and cloud in registry.names():
        return cloud, rest
    return None, reference


def reference_cloud(reference: str, own_cloud: str) -> tuple[str, str]:
    """(cloud, id) of an account reference in a stack of `own_cloud`."""
    cloud, account = split_account_reference(reference)
    return cloud or own_cloud, account


@dataclass(frozen=True)
class ArtifactLocation:
    """Where the artifacts are, in the training cloud's own terms: the bucket (a Blob container for Azure, with
    its storage account) and the key prefix, always ending in '/' unless empty."""

    cloud: str
    bucket: str
    prefix: str
    storage_account: str = ""  # Azure only
    namespace: str = ""  # OCI only: the Object Storage namespace (oci://<bucket>@<namespace>/...)

    @property
    def blob_url(self) -> str:
        """The https form azcopy reads (Azure only)."""
        return f"https://{self.storage_account}{BLOB_HOST_SUFFIX}/{self.bucket}/{self.prefix}"


def artifact_location(uri: str) -> ArtifactLocation | None:
    cloud = store_cloud(uri)
    if cloud is None:
        return None
    host, path = split_bucket_uri(uri)
    if cloud == "aws" and (virtual := S3_HOST.fullmatch(host)) is not None:
        return ArtifactLocation(cloud, virtual["bucket"], _as_prefix(path))
    if cloud == "azure":
        account = host.removesuffix(BLOB_HOST_SUFFIX)
        container, _, prefix = path.partition("/")
        return ArtifactLocation(cloud, container, _as_prefix(prefix), account)
    if cloud == "oci":
        bucket, _, namespace = host.partition("@")
        return ArtifactLocation(cloud, bucket, _as_prefix(path), namespace=namespace)
    return ArtifactLocation(cloud, host, _as_prefix(path))


def _as_prefix(path: str) -> str:
    path = path.strip("/")
    return f"{path}/" if path else ""


@dataclass(frozen=True)
class ArtifactHandoff:
    """A serving stack reading another cloud's training artifacts: resolved once, read by the parts and the boot."""

    training_cloud: str
    serving_cloud: str
    training_account: str  # the id, in the training cloud's format, without the prefix
    region: str  # the training store's region (the second provider's); "" where the reader is global (GCP)
    location: ArtifactLocation
    adapters: tuple[ArtifactLocation, ...] = ()
    tenancy: str = ""  # OCI: the training tenancy the reader's provider signs for (serving.artifactTenancy)
    url_lifetime_minutes: int = 0  # per-replica pairs: how long each replica's credential works after its clock
    deployer: str = ""  # AWS -> Vultr: the principal ARN the reader role trusts (serving.artifactDeployer)

    @property
    def reader(self) -> str:
        return READERS[(self.training_cloud, self.serving_cloud)]

    @property
    def admitted_by_address(self) -> bool:
        """The training store admits this stack's replicas only from addresses it lists: export them."""
        return self.training_cloud in ADDRESS_ADMITTED_STORES

    @property
    def locations(self) -> tuple[ArtifactLocation, ...]:
        return (self.location, *self.adapters)


def artifact_handoff(spec: object) -> ArtifactHandoff | None:
    """The handoff of a serving stack whose weights live on another cloud; None for a training stack, for weights
    in the stack's own cloud, or for a spec the rules refuse (`validate` reports why)."""
    serving = getattr(spec, "serving", None)
    if serving is None:
        return None
    own = spec.cloud  # type: ignore[attr-defined]
    location = artifact_location(serving.model.weights_uri)
    if location is None or location.cloud == own or serving.artifact_account is None:
        return None
    cloud, account = reference_cloud(serving.artifact_account, own)
    if cloud != location.cloud or (cloud, own) not in READERS:
        return None
    adapters = tuple(artifact_location(adapter.uri) for adapter in serving.model.adapters)
    if any(adapter is None or adapter.cloud != cloud for adapter in adapters):
        return None
    return ArtifactHandoff(
        training_cloud=cloud,
        serving_cloud=own,
        training_account=account,
        region=serving.artifact_region or "",
        location=location,
        adapters=tuple(a for a in adapters if a is not None),
        tenancy=serving.artifact_tenancy or "",
        url_lifetime_minutes=(serving.artifact_url_lifetime_minutes or DEFAULT_LIFETIME_MINUTES[cloud])
        if (cloud, own) in PER_REPLICA_PAIRS
        else 0,
        deployer=serving.artifact_deployer or "",
    )


DEFAULT_LIFETIME_MINUTES = {
    "oci": PAR_LIFETIME_MINUTES[1],
    "gcp": TOKEN_LIFETIME_MINUTES[1],
    "aws": SESSION_LIFETIME_MINUTES[1],
}
