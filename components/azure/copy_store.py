"""Azure Blob Storage in the copy handoff (components/handoff/copy.py), through azure-storage-blob with the deployer's
Entra ID token (azure-identity's DefaultAzureCredential, scope https://storage.azure.com/.default): as a SOURCE, a
training checkpoint container read with Storage Blob Data Reader (List Blobs with prefix and NextMarker paging, Get
Blob ranged and streamed); the deployer's public address must be admitted by the training stack's
training.artifactReaderAddresses (or it runs in a subnet of training.artifactReaderSubnets): the checkpoint account's
firewall denies by default. As a DESTINATION, the serving stack's own container written with Storage Blob Data
Contributor (Put Block per part, one Put Block List with If-None-Match: * so nothing is replaced; Content-MD5 and
metadata accelstack_md5 set). Every azure import is inside the function that uses it: the provider is pickled into
the state, and a preview must not load the SDK.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from typing import Any, BinaryIO

from accelstack.components.handoff.copy_objects import (
    DEFAULT_PART_BYTES,
    CopyError,
    CopyOptions,
    Existing,
    SourceObject,
    folder,
)

# The Entra ID scope of Azure Storage's data plane (learn.microsoft.com/azure/storage/blobs/authorize-access-azure-active-directory).
AZURE_STORAGE_SCOPE = "https://storage.azure.com/.default"
AZURE_BLOB_SUFFIX = ".blob.core.windows.net"
AZURE_MD5_METADATA = "accelstack_md5"  # Azure metadata names are C# identifiers: no "-"


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


def container_client(
    account: str, container: str, credential: Any, endpoint: str | None, options: dict[str, Any]
) -> Any:
    """azure-storage-blob's ContainerClient with the deployer's DefaultAzureCredential unless a credential is given."""
    from azure.storage.blob import ContainerClient  # imported here: the provider is pickled without it

    token = credential if credential is not None else default_azure_credential()
    return ContainerClient(azure_account_url(account, endpoint), container, credential=token, **options)


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
            self._container = container_client(
                self.account, self.container_name, self.credential, self.endpoint, self.client_options
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


class AzureBlobDestination:
    """A Blob container's prefix through azure-storage-blob: get_blob_properties, then upload_blob (blocks of
    `part_bytes`, committed by one Put Block List with If-None-Match: *), Content-MD5 and metadata set."""

    def __init__(
        self,
        destination: str,
        credential: Any = None,
        endpoint: str | None = None,
        client_options: dict[str, Any] | None = None,
        part_bytes: int = DEFAULT_PART_BYTES,
    ):
        self.destination = destination
        self.account, self.container_name, self.prefix = azure_location(destination)
        self.credential, self.endpoint, self.client_options = credential, endpoint, client_options or {}
        self.part_bytes = part_bytes
        self._container: Any = None
        self.role = f"Storage Blob Data Contributor on the container {self.container_name} of {self.account}"

    def _client(self) -> Any:
        if self._container is None:
            blocks = {"max_single_put_size": self.part_bytes, "max_block_size": self.part_bytes}
            options = {**blocks, **self.client_options}
            self._container = container_client(
                self.account, self.container_name, self.credential, self.endpoint, options
            )
        return self._container

    def head(self, key: str) -> Existing | None:
        from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

        try:
            properties = self._client().get_blob_client(key).get_blob_properties()
        except ResourceNotFoundError:
            return None
        except HttpResponseError as failure:
            raise azure_refusal(failure, f"reading {self.destination}{key[len(self.prefix) :]}", self.role) from None
        md5 = (properties.metadata or {}).get(AZURE_MD5_METADATA)
        return Existing(int(properties.size or 0), md5)

    def upload(self, key: str, stream: BinaryIO, size: int, md5: str) -> None:
        from azure.core.exceptions import HttpResponseError, ResourceExistsError
        from azure.storage.blob import ContentSettings

        settings = ContentSettings(content_md5=bytearray(bytes.fromhex(md5)))
        try:
            self._client().upload_blob(
                key, stream, length=size, overwrite=False, metadata={AZURE_MD5_METADATA: md5},
                content_settings=settings, max_concurrency=1,
            )  # fmt: skip
        except ResourceExistsError:
            raise CopyError(
                f"{self.destination}: a blob {key!r} appeared while the copy ran: copy into a new prefix"
            ) from None
        except HttpResponseError as failure:
            raise azure_refusal(failure, f"writing {key!r} into {self.destination}", self.role) from None


def copy_source(props: dict[str, Any], options: CopyOptions) -> AzureBlobSource:
    return AzureBlobSource(
        str(props["source"]),
        options.credentials.get("azure"),
        options.endpoints.get("azure"),
        options.client_options.get("azure"),
    )


def copy_destination(props: dict[str, Any], options: CopyOptions) -> AzureBlobDestination:
    return AzureBlobDestination(
        str(props["destination"]),
        options.credentials.get("azure"),
        options.endpoints.get("azure"),
        options.client_options.get("azure"),
        options.part_bytes,
    )
