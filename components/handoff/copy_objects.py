"""What the copy handoff's stores share (components/handoff/copy.py; each cloud's readers and writers live in its own
folder, components/<cloud>/copy_store.py, loaded through the cloud registry): the error, the objects listed at a
source and found at a destination, prefixes as folders, and the names the MD5 is stored under.

A cloud's copy_store module defines `copy_source(props, options)` (a reader: `prefix`, `list() -> [SourceObject]`,
`open(name)` -> a binary stream) and/or `copy_destination(props, options)` (a writer: `prefix`, `head(key) ->
Existing | None`, `upload(key, stream, size, md5)`); `options` is a CopyOptions (tests and private endpoints).
"""

from __future__ import annotations

import base64
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

MD5_METADATA = "accelstack-md5"  # S3 x-amz-meta-accelstack-md5, GCS metadata: a multipart ETag is not an MD5
# Parts / chunks / blocks of 64 MiB: a multi-GB shard is a few hundred requests, and one in flight is 64 MiB of memory.
DEFAULT_PART_BYTES = 64 * 1024 * 1024


class CopyError(Exception):
    """The copy cannot go on; the message names the object or prefix and what the deployer must do."""


@dataclass(frozen=True)
class SourceObject:
    name: str  # the full object name at the source (prefix included)
    size: int
    md5: str | None  # hex MD5 of the whole object, None where the source gives none (an OCI multipart upload)


@dataclass(frozen=True)
class Existing:
    size: int
    md5: str | None  # hex, None where the object carries no MD5 the copy can trust


@dataclass(frozen=True)
class CopyOptions:
    """Per cloud name: `endpoints` (a base URL instead of the cloud's own: an S3 endpoint, a GCS api_endpoint, an
    Azure base the account goes under), `credentials` (instead of the deployer's ambient ones) and `client_options`
    (extra keyword arguments of the cloud's client, e.g. Azure's connection_verify)."""

    part_bytes: int = DEFAULT_PART_BYTES
    endpoints: dict[str, str] = field(default_factory=dict)
    credentials: dict[str, Any] = field(default_factory=dict)
    client_options: dict[str, dict[str, Any]] = field(default_factory=dict)


def md5_hex_from_base64(value: str | None) -> str | None:
    """A store's base64 Content-MD5 as hex; None for a multipart MD5 (OCI's "<base64>-<parts>") or nothing."""
    if not value or "-" in value:
        return None
    try:
        digest = base64.b64decode(value, validate=True)
    except ValueError:
        return None
    return digest.hex() if len(digest) == 16 else None


def folder(prefix: str) -> str:
    """A prefix as a folder: "a/b" and "a/b/" both list a/b/..., never a/bc."""
    return prefix if prefix.endswith("/") else prefix + "/"


def bucket_and_prefix(uri: str, scheme: str) -> tuple[str, str]:
    """<scheme>://<bucket>/<prefix> -> (bucket, prefix/); the prefix must not be empty (never a bucket's root)."""
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme != scheme or not parsed.netloc or not parsed.path.strip("/"):
        raise CopyError(f"{uri}: expected {scheme}://<bucket>/<non-empty prefix>")
    return parsed.netloc, folder(parsed.path.lstrip("/"))
