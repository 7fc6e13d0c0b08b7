"""A copy of training artifacts into the serving stack's OWN object store, made at `pulumi up` by the deployer: the
handoff for pairs where the serving replicas cannot read the training store themselves (no federation into OCI;
Vultr replicas have no identity and Azure's storage firewall admits none of their addresses), and an alternative
where they can (one egress per checkpoint instead of one per replica boot). `serving.model.copyFrom` names the
source; `serving.model.weightsUri` (each adapter's `uri`) is the destination, in the stack's own store, which the
replicas then read exactly as weights that were always there.

A Pulumi dynamic resource, because no provider resource copies between clouds. Read-only at the source (an OCI
pre-authenticated request declared for this copy, AnyObjectRead on the prefix; the deployer's Entra token for Azure
Blob); the destination is written with the deployer's credentials for the serving cloud (Vultr: the stack's Object
Storage key). Nothing is ever deleted, at either end.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider

TYPE_COPY = "pulumi-python:dynamic/handoff:ArtifactCopy"
# What a new copy is made for: a change of any replaces the copy (and the clock its source credential expires from).
RECOPY_KEYS = ("source_cloud", "source", "destination_cloud", "destination", "clock")


class ArtifactCopyProvider(ResourceProvider):
    """Lists the source prefix and streams each object to the destination prefix (not built yet)."""

    serialize_as_secret_always = False  # the pickled provider holds no secret: credentials are props or ambient

    def create(self, props: dict[str, Any]) -> CreateResult:
        raise NotImplementedError("the copy is not built yet")

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in RECOPY_KEYS if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_=id_, outs=props)

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing: the copied objects are the serving side's model (stateful), kept by its store's versioning."""


class ArtifactCopy(Resource, module="handoff", name="ArtifactCopy"):
    """One copy of the objects under `source` into `destination`.

    source_cloud: "oci" | "azure". source: where, without credentials: oci://<bucket>@<namespace>/<prefix> or
    https://<account>.blob.core.windows.net/<container>/<prefix>. source_url: OCI only, the PAR's URL
    (https://objectstorage.<region>.oraclecloud.com/p/<token>/n/<ns>/b/<bucket>/o/), a secret; None for Azure.
    destination_cloud: "aws" | "azure" | "gcp" | "vultr"; destination: the stack's own store URI (s3://, gs://,
    https://<account>.blob.core.windows.net/<container>/<prefix>, Vultr s3://). destination_endpoint: the Vultr
    Object Storage host (ewr1.vultrobjects.com), the AWS Region of the destination bucket, "" otherwise.
    destination_keys: Vultr only, the secret JSON {"accessKey", "secretKey"} of a key that may write there.
    clock: the copy's time_static (rfc3339): its source credential expires from it."""

    objects: pulumi.Output[int]
    bytes: pulumi.Output[int]
    manifest_sha256: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        source_cloud: str,
        source: str,
        source_url: pulumi.Input[str] | None,
        destination_cloud: str,
        destination: str,
        destination_endpoint: str,
        destination_keys: pulumi.Input[str] | None,
        clock: pulumi.Input[str],
        provider: ArtifactCopyProvider | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        props = {
            "source_cloud": source_cloud,
            "source": source,
            "source_url": source_url,
            "destination_cloud": destination_cloud,
            "destination": destination,
            "destination_endpoint": destination_endpoint,
            "destination_keys": destination_keys,
            "clock": clock,
            "objects": None,
            "bytes": None,
            "manifest_sha256": None,
        }
        secret = pulumi.ResourceOptions(additional_secret_outputs=["source_url", "destination_keys"])
        super().__init__(provider or ArtifactCopyProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))
