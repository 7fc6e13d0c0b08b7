"""The sources an ArtifactCopy reads (components/handoff/copy.py): OCI Object Storage through the copy's
pre-authenticated request, and Azure Blob Storage through the deployer's Entra ID token. Read-only: a listing of the
prefix and a streamed GET of each object; nothing outside the prefix is requested.

Each source lists `SourceObject`s (the full object name, its size, and its MD5 as hex where the store gives the MD5
of the whole object) and opens one object as a binary stream. A refusal raises CopyError saying what the deployer
must do. Every third-party import is inside the function that uses it: the provider is pickled into the state, and a
preview must not load the cloud SDKs.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

# The Entra ID scope of Azure Storage's data plane (learn.microsoft.com/azure/storage/blobs/authorize-access-azure-active-directory).
AZURE_STORAGE_SCOPE = "https://storage.azure.com/.default"
AZURE_BLOB_SUFFIX = ".blob.core.windows.net"


class CopyError(Exception):
    """The copy cannot go on; the message names the object or prefix and what the deployer must do."""


@dataclass(frozen=True)
class SourceObject:
    name: str  # the full object name at the source (prefix included)
    size: int
    md5: str | None  # hex MD5 of the whole object, None where the source gives none (an OCI multipart upload)


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


def oci_prefix(source: str) -> str:
    """oci://<bucket>@<namespace>/<prefix> -> <prefix>/."""
    parsed = urllib.parse.urlparse(source)
    if parsed.scheme != "oci" or not parsed.path.strip("/"):
        raise CopyError(f"source {source}: expected oci://<bucket>@<namespace>/<non-empty prefix>")
    return folder(parsed.path.lstrip("/"))


class OciParSource:
    """OCI Object Storage through a bucket-level PAR with ListObjects allowed on the prefix
    (docs.oracle.com/iaas/Content/Object/Tasks/usingpreauthenticatedrequests.htm): a GET of the PAR URL lists
    (`prefix`, `fields`, `start` <- `nextStartWith`); a GET of the PAR URL + the URL-encoded object name reads it."""

    def __init__(self, par_url: str, source: str, timeout: float = 60.0):
        self.url = par_url if par_url.endswith("/") else par_url + "/"
        self.source, self.prefix, self.timeout = source, oci_prefix(source), timeout

    def _open(self, address: str, what: str) -> BinaryIO:
        try:
            answer: BinaryIO = urllib.request.urlopen(address, timeout=self.timeout)
            return answer
        except urllib.error.HTTPError as failure:
            detail = failure.read().decode(errors="replace")[:200]
            hint = ""
            if failure.code in (401, 403, 404):
                hint = (
                    " (OCI answers an expired or deleted pre-authenticated request as not found: the copy's PAR "
                    "expires serving.artifactUrlLifetimeMinutes after the copy's clock; raise it and run `pulumi up` "
                    "again, which declares a new PAR; or the object was deleted while the copy ran)"
                )
            raise CopyError(
                f"OCI Object Storage refused {what} of {self.source}: HTTP {failure.code}{hint}: {detail}"
            ) from None
        except urllib.error.URLError as failure:
            raise CopyError(f"OCI Object Storage could not be reached for {self.source}: {failure.reason}") from None

    def list(self) -> list[SourceObject]:
        found: list[SourceObject] = []
        start: str | None = None
        while True:
            query = {"prefix": self.prefix, "fields": "name,size,md5"} | ({"start": start} if start else {})
            with self._open(self.url + "?" + urllib.parse.urlencode(query), "the listing") as answer:
                page = json.loads(answer.read())
            for entry in page.get("objects", []):
                name = str(entry["name"])
                if name.startswith(self.prefix):  # a PAR lists only what it covers; keep to the prefix regardless
                    found.append(SourceObject(name, int(entry.get("size") or 0), md5_hex_from_base64(entry.get("md5"))))
            start = page.get("nextStartWith")
            if not start:
                return found

    def open(self, name: str) -> BinaryIO:
        # Object names are URL paths under the PAR: every byte but "/" percent-encoded (spaces, +, &, =, UTF-8).
        return self._open(self.url + urllib.parse.quote(name, safe="/"), f"the object {name!r}")


def azure_location(uri: str) -> tuple[str, str, str]:
    """https://<account>.blob.core.windows.net/<container>/<prefix> -> (account, container, prefix/)."""
    parsed = urllib.parse.urlparse(uri)
    container, _, prefix = parsed.path.lstrip("/").partition("/")
    host = parsed.hostname or ""
    if parsed.scheme != "https" or not host.endswith(AZURE_BLOB_SUFFIX) or not container or not prefix.strip("/"):
        raise CopyError(f"{uri}: expected https://<account>{AZURE_BLOB_SUFFIX}/<container>/<non-empty prefix>")
    return host[: -len(AZURE_BLOB_SUFFIX)], container, folder(prefix)


def azure_account_url(account: str, endpoint: str | None) -> str:
    """The account's blob endpoint; `endpoint` (tests, sovereign clouds) puts the account in the path instead."""
    return f"{endpoint.rstrip('/')}/{account}" if endpoint else f"https://{account}{AZURE_BLOB_SUFFIX}"


def azure_refusal(failure: Any, what: str, role: str) -> CopyError:
    """What an Azure Storage refusal means for the deployer (learn.microsoft.com/rest/api/storageservices/
    blob-service-error-codes): the firewall (AuthorizationFailure) or a missing data-plane role."""
    code = getattr(failure, "error_code", None) or ""
    code = str(getattr(code, "value", code))  # azure-storage-blob's StorageErrorCode enum, or the header's string
    hint = ""
    if code == "AuthorizationFailure":
        hint = (
            " (the storage account's firewall denies this machine's address: add the deployer's public address to "
            "the training stack's training.artifactReaderAddresses, or deploy from a subnet in "
            "training.artifactReaderSubnets, and `pulumi up` the training stack first)"
        )
    elif code == "AuthorizationPermissionMismatch":
        hint = f" (the deploying Entra ID identity needs {role})"
    elif code in ("InvalidAuthenticationInfo", "NoAuthenticationInformation"):
        hint = " (sign in as the deployer: `az login`, or the environment DefaultAzureCredential reads)"
    status = getattr(failure, "status_code", "?")
    message = str(getattr(failure, "message", failure)).splitlines()[0][:200]
    return CopyError(f"Azure Storage refused {what}: HTTP {status} {code}{hint}: {message}")


def default_azure_credential() -> Any:
    from azure.identity import DefaultAzureCredential  # imported here: the provider is pickled without it

    return DefaultAzureCredential()


class ChunkStream:
    """A binary stream over an iterator of byte chunks (azure-storage-blob's StorageStreamDownloader.chunks())."""

    def __init__(self, chunks: Iterator[bytes]):
        self.chunks, self.buffer = chunks, b""

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self.buffer) < size:
            chunk = next(self.chunks, None)
            if chunk is None:
                break
            self.buffer += chunk
        if size < 0:
            size = len(self.buffer)
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def close(self) -> None:
        self.chunks = iter(())

    def __enter__(self) -> ChunkStream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AzureBlobSource:
    """A container's prefix read with the deployer's token: List Blobs (prefix, NextMarker paging) and Get Blob
    (ranged, streamed), through azure-storage-blob's ContainerClient. `endpoint`, `credential` and `client_options`
    (e.g. connection_verify) are for tests and private endpoints."""

    def __init__(
        self,
        source: str,
        credential: Any = None,
        endpoint: str | None = None,
        client_options: dict[str, Any] | None = None,
    ):
        self.source = source
        self.account, self.container_name, self.prefix = azure_location(source)
        self.credential, self.endpoint, self.client_options = credential, endpoint, client_options or {}
        self._container: Any = None

    def _client(self) -> Any:
        if self._container is None:
            from azure.storage.blob import ContainerClient  # imported here: the provider is pickled without it

            self._container = ContainerClient(
                azure_account_url(self.account, self.endpoint),
                self.container_name,
                credential=self.credential if self.credential is not None else default_azure_credential(),
                **self.client_options,
            )
        return self._container

    def list(self) -> list[SourceObject]:
        from azure.core.exceptions import HttpResponseError

        role = f"Storage Blob Data Reader on the container {self.container_name} of {self.account}"
        try:
            found = []
            for blob in self._client().list_blobs(name_starts_with=self.prefix):
                content_md5 = blob.content_settings.content_md5 if blob.content_settings else None
                md5 = bytes(content_md5).hex() if content_md5 and len(content_md5) == 16 else None
                found.append(SourceObject(str(blob.name), int(blob.size or 0), md5))
            return found
        except HttpResponseError as failure:
            raise azure_refusal(failure, f"the listing of {self.source}", role) from None

    def open(self, name: str) -> ChunkStream:
        from azure.core.exceptions import HttpResponseError

        role = f"Storage Blob Data Reader on the container {self.container_name} of {self.account}"
        try:
            return ChunkStream(iter(self._client().download_blob(name).chunks()))
        except HttpResponseError as failure:
            raise azure_refusal(failure, f"the blob {name!r} of {self.source}", role) from None
