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

Each object under the source prefix goes to the destination prefix + its name less the source prefix. One the
destination already holds with the same size and the MD5 this copy stored with it is skipped (a failed copy leaves
what it copied; the next `up` resumes); any other object there fails the copy, naming it: a model file is never
overwritten, a new checkpoint goes to a new prefix. An object is streamed (never whole in memory) and its MD5 checked
against the source's before the upload commits; where the source gives no MD5 of the whole object (an OCI multipart
upload, an Azure blob without Content-MD5) it is spooled to a temporary file while hashed, and on a later `up` read
again to compare. Outputs: objects, bytes, and manifest_sha256 (sha256 over the sorted "name\tsize\tmd5" lines,
names relative to the prefix, MD5s in hex).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider

from accelstack.components.handoff.copy_objects import CopyError, CopyOptions, SourceObject

TYPE_COPY = "pulumi-python:dynamic/handoff:ArtifactCopy"
# What a new copy is made for: a change of any replaces the copy (and the clock its source credential expires from).
RECOPY_KEYS = ("source_cloud", "source", "destination_cloud", "destination", "clock")
READ_BYTES = 1024 * 1024
# The clouds whose components/<cloud>/copy_store.py reads (copy_source) or writes (copy_destination) a copy.
COPY_SOURCES = ("oci", "azure")
COPY_DESTINATIONS = ("aws", "azure", "gcp", "vultr")


class VerifiedStream:
    """Reads `size` bytes of `raw`, hashing them; the read that ends the object raises CopyError if the size or the
    MD5 differ from the source's, so the library's upload fails before it commits anything (S3's
    CompleteMultipartUpload, GCS's last resumable chunk, Azure's Put Block List all follow the last read)."""

    def __init__(self, raw: Any, name: str, size: int, md5: str | None):
        self.raw, self.name, self.size, self.expected = raw, name, size, md5
        self.hash, self.count, self.checked = hashlib.md5(usedforsecurity=False), 0, False

    def read(self, amount: int = -1) -> bytes:
        if self.checked:
            return b""
        if amount is None or amount < 0:
            amount = self.size - self.count + 1  # to the end, or one byte past what the source listed
        data = b""
        while len(data) < amount:  # an HTTP read may answer short; the uploads expect full parts until the end
            more = self.raw.read(amount - len(data))
            if not more:
                break
            data += bytes(more)
        self.hash.update(data)
        self.count += len(data)
        if self.count >= self.size or len(data) < amount:
            self.finish()
        return data

    def finish(self) -> None:
        self.checked = True
        if self.count != self.size:
            raise CopyError(
                f"{self.name}: the source sent {self.count} bytes where it listed {self.size}: run `pulumi up` again"
            )
        if self.expected is not None and self.hash.hexdigest() != self.expected:
            raise CopyError(
                f"{self.name}: MD5 {self.hash.hexdigest()} of the bytes read differs from the source's {self.expected}: "
                "nothing was written; run `pulumi up` again (a corrupted transfer) or check the source object"
            )

    def tell(self) -> int:
        return self.count

    def md5(self) -> str:
        return self.hash.hexdigest()


def manifest_sha256(lines: list[tuple[str, int, str]]) -> str:
    """sha256 (hex) over the sorted "name\tsize\tmd5" lines, names relative to the prefix: the same objects give the
    same digest wherever they were copied from or to."""
    text = "".join(f"{name}\t{size}\t{md5}\n" for name, size, md5 in sorted(lines))
    return hashlib.sha256(text.encode()).hexdigest()


class ArtifactCopyProvider(ResourceProvider):
    """Lists the source prefix and streams each object to the destination prefix, through the source's and the
    destination's cloud folders (components/<cloud>/copy_store.py: copy_source, copy_destination, found through the
    cloud registry as the other per-cloud parts are). `options` is for tests and private endpoints."""

    serialize_as_secret_always = False  # the pickled provider holds no secret: credentials are props or ambient

    def __init__(self, options: CopyOptions | None = None):
        super().__init__()
        self.options = options or CopyOptions()

    def _store(self, cloud: str, role: str, allowed: tuple[str, ...]) -> Any:
        if cloud not in allowed:
            raise CopyError(f"{role}_cloud {cloud!r}: a copy {'reads from' if role == 'source' else 'writes into'} "
                            f"{' or '.join(allowed)}")  # fmt: skip
        import importlib

        from accelstack.clouds import registry

        return getattr(importlib.import_module(f"{registry.get(cloud).components}.copy_store"), f"copy_{role}")

    def _source(self, props: dict[str, Any]) -> Any:
        return self._store(str(props["source_cloud"]), "source", COPY_SOURCES)(props, self.options)

    def _destination(self, props: dict[str, Any]) -> Any:
        return self._store(str(props["destination_cloud"]), "destination", COPY_DESTINATIONS)(props, self.options)

    def _source_md5(self, source: Any, item: SourceObject) -> str:
        """The object's MD5: the source's, or (where it gives none) hashed from a read that writes nothing."""
        if item.md5 is not None:
            return item.md5
        with source.open(item.name) as raw:
            stream = VerifiedStream(raw, item.name, item.size, None)
            while stream.read(READ_BYTES):
                pass
        return stream.md5()

    def _copy_one(self, source: Any, destination: Any, item: SourceObject, key: str) -> str:
        """Streams one object; returns its MD5 (hex). Without a source MD5 it is first spooled to a temporary file
        while hashed (on disk, never whole in memory) so the MD5 stored with it is known before the upload starts."""
        with source.open(item.name) as raw:
            stream = VerifiedStream(raw, item.name, item.size, item.md5)
            if item.md5 is not None:
                destination.upload(key, stream, item.size, item.md5)
                return item.md5
            with tempfile.TemporaryFile(prefix="accelstack-copy-") as spool:
                shutil.copyfileobj(stream, spool, READ_BYTES)
                stream.finish()
                spool.seek(0)
                destination.upload(key, spool, item.size, stream.md5())
                return stream.md5()

    def copy(self, props: dict[str, Any]) -> dict[str, Any]:
        source, destination = self._source(props), self._destination(props)
        listed = [item for item in source.list() if not (item.name.endswith("/") and item.size == 0)]  # folders
        if not listed:
            raise CopyError(
                f"{props['source']} holds no objects: nothing to serve (check serving.model.copyFrom, and that the "
                "training stack wrote the checkpoint there)"
            )
        lines: list[tuple[str, int, str]] = []
        for item in listed:
            relative = item.name[len(source.prefix) :]
            if {".", ".."} & set(relative.split("/")):  # a store or proxy may resolve them out of the prefix
                raise CopyError(f"{props['source']}: the object name {item.name!r} has a . or .. segment: rename it")
            key = destination.prefix + relative
            there = destination.head(key)
            if there is not None:
                # Only an object this copy wrote (its MD5 stored with it) of the same size and MD5 is skipped.
                md5 = (
                    self._source_md5(source, item) if there.size == item.size and there.md5 else (item.md5 or "unknown")
                )
                if there.size != item.size or there.md5 != md5:
                    raise CopyError(
                        f"{props['destination']} already holds {relative!r} ({there.size} bytes, MD5 "
                        f"{there.md5 or 'unknown'}), not the source's ({item.size} bytes, MD5 {md5}): the copy never "
                        "overwrites a model file; copy into a new prefix (a new serving.model.weightsUri)"
                    )
            else:
                md5 = self._copy_one(source, destination, item, key)
            lines.append((relative, item.size, md5))
        return {
            "objects": len(lines),
            "bytes": sum(size for _, size, _ in lines),
            "manifest_sha256": manifest_sha256(lines),
        }

    def create(self, props: dict[str, Any]) -> CreateResult:
        copied = self.copy(props)
        return CreateResult(id_=f"{props['destination']}@{props['clock']}", outs={**props, **copied})

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
