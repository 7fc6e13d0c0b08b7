"""The stores an ArtifactCopy writes (components/handoff/copy.py): the serving stack's own S3 bucket (AWS, with the
deployer's ambient credentials; Vultr Object Storage over the S3 API, with the stack's weights key), Cloud Storage
bucket (the deployer's Application Default Credentials) or Blob container (the deployer's DefaultAzureCredential).

Each writer answers `head(key)` (the size and MD5 of an object already there, or None) and `upload(key, stream,
size, md5)`, streaming through the library's multipart / resumable / block upload; the MD5 (hex) of the source
object is stored with it (S3 x-amz-meta-accelstack-md5, GCS metadata accelstack-md5, Azure metadata accelstack_md5)
because a multipart ETag is not an MD5: a later `up` compares that to skip what is already copied. The upload never
replaces an object (GCS ifGenerationMatch=0, Azure If-None-Match: *; S3 is checked by `head` first). Every
third-party import is inside the function that uses it (the provider is pickled into the state).
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from dataclasses import dataclass
from typing import Any, BinaryIO

from accelstack.components.handoff.copy_sources import (
    CopyError,
    azure_account_url,
    azure_location,
    azure_refusal,
    default_azure_credential,
    folder,
)

MD5_METADATA = "accelstack-md5"
AZURE_MD5_METADATA = "accelstack_md5"  # Azure metadata names are C# identifiers: no "-"
# Parts / chunks / blocks of 64 MiB: a multi-GB shard is a few hundred requests, and one in flight is 64 MiB of memory.
DEFAULT_PART_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Existing:
    size: int
    md5: str | None  # hex, None where the object carries no MD5 the copy can trust


def bucket_and_prefix(uri: str, scheme: str) -> tuple[str, str]:
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme != scheme or not parsed.netloc or not parsed.path.strip("/"):
        raise CopyError(f"destination {uri}: expected {scheme}://<bucket>/<non-empty prefix>")
    return parsed.netloc, folder(parsed.path.lstrip("/"))


class S3Destination:
    """An S3 bucket's prefix through boto3: head_object, then upload_fileobj (multipart past `part_bytes`).
    AWS: the deployer's default credential chain, the bucket's Region (destination_endpoint). Vultr: endpoint
    https://<cluster>.vultrobjects.com and the stack's key (docs.vultr.com/products/cloud-storage/object-storage)."""

    def __init__(
        self,
        destination: str,
        region: str,
        endpoint: str | None,
        keys: tuple[str, str] | None,
        part_bytes: int = DEFAULT_PART_BYTES,
        who: str = "the deployer's AWS credentials",
    ):
        self.destination = destination
        self.bucket, self.prefix = bucket_and_prefix(destination, "s3")
        self.region, self.endpoint, self.keys, self.part_bytes, self.who = region, endpoint, keys, part_bytes, who
        self._s3: Any = None

    def _client(self) -> Any:
        if self._s3 is None:
            import boto3  # imported here: the provider is pickled into the state without it
            from botocore.config import Config

            keys = {}
            if self.keys is not None:
                keys = {"aws_access_key_id": self.keys[0], "aws_secret_access_key": self.keys[1]}
            # Third-party S3 stores (Vultr's Ceph) may not take the CRC trailers botocore now adds by default.
            checksums = "when_supported" if self.keys is None else "when_required"
            config = Config(
                s3={"addressing_style": "path" if self.endpoint else "auto"},
                request_checksum_calculation=checksums,
                response_checksum_validation=checksums,
            )
            self._s3 = boto3.client(
                "s3", region_name=self.region or None, endpoint_url=self.endpoint, config=config, **keys
            )
        return self._s3

    def _refusal(self, failure: Any, what: str) -> CopyError:
        code = failure.response.get("Error", {}).get("Code", "")
        hint = ""
        if code in ("AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
            hint = f" ({self.who} must be able to read and write {self.destination})"
        return CopyError(f"S3 refused {what}: {code}{hint}: {failure}")

    def head(self, key: str) -> Existing | None:
        from botocore.exceptions import ClientError

        try:
            answer = self._client().head_object(Bucket=self.bucket, Key=key)
        except ClientError as failure:
            if failure.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return None
            raise self._refusal(failure, f"reading s3://{self.bucket}/{key}") from None
        return Existing(int(answer["ContentLength"]), answer.get("Metadata", {}).get(MD5_METADATA))

    def upload(self, key: str, stream: BinaryIO, size: int, md5: str) -> None:
        from boto3.s3.transfer import TransferConfig
        from botocore.exceptions import ClientError

        transfer = TransferConfig(
            multipart_threshold=self.part_bytes, multipart_chunksize=self.part_bytes, max_concurrency=4
        )
        try:
            self._client().upload_fileobj(
                stream, self.bucket, key, ExtraArgs={"Metadata": {MD5_METADATA: md5}}, Config=transfer
            )
        except ClientError as failure:
            raise self._refusal(failure, f"writing s3://{self.bucket}/{key}") from None


class GcsDestination:
    """A Cloud Storage bucket's prefix through google-cloud-storage: get_blob, then upload_from_file (resumable in
    `part_bytes` chunks past 8 MiB, the library's multipart limit), MD5 checked by GCS, never over an object."""

    def __init__(
        self,
        destination: str,
        credentials: Any = None,
        endpoint: str | None = None,
        part_bytes: int = DEFAULT_PART_BYTES,
    ):
        self.destination = destination
        self.bucket_name, self.prefix = bucket_and_prefix(destination, "gs")
        self.credentials, self.endpoint = credentials, endpoint
        # The resumable chunk size must be a multiple of 256 KiB (cloud.google.com/storage/docs/performing-resumable-uploads).
        self.part_bytes = max(256 * 1024, part_bytes // (256 * 1024) * 256 * 1024)
        self._bucket: Any = None

    def _client_bucket(self) -> Any:
        if self._bucket is None:
            from google.cloud import storage  # imported here: the provider is pickled into the state without it

            options = {"api_endpoint": self.endpoint} if self.endpoint else None
            # Objects need no project: "-" keeps the client from asking the credentials for one.
            client = storage.Client(project="-", credentials=self.credentials, client_options=options)
            self._bucket = client.bucket(self.bucket_name)
        return self._bucket

    def _refusal(self, failure: Any, what: str) -> CopyError:
        code = getattr(failure, "code", "?")
        hint = ""
        if code in (401, 403):
            hint = (
                " (the deployer's Application Default Credentials need storage.objects.get, .list and .create on the "
                f"bucket {self.bucket_name}: roles/storage.objectUser, or objectViewer and objectCreator)"
            )
        elif code == 412:
            hint = " (an object appeared there while the copy ran: copy into a new prefix)"
        return CopyError(f"Cloud Storage refused {what}: HTTP {code}{hint}: {str(failure)[:200]}")

    def head(self, key: str) -> Existing | None:
        from google.api_core.exceptions import GoogleAPICallError

        try:
            blob = self._client_bucket().get_blob(key)
        except GoogleAPICallError as failure:
            raise self._refusal(failure, f"reading gs://{self.bucket_name}/{key}") from None
        if blob is None:
            return None
        md5 = (blob.metadata or {}).get(MD5_METADATA)
        if md5 is None and blob.md5_hash and not blob.component_count:  # GCS's own MD5 (none for composites)
            md5 = base64.b64decode(blob.md5_hash).hex()
        return Existing(int(blob.size or 0), md5)

    def upload(self, key: str, stream: BinaryIO, size: int, md5: str) -> None:
        from google.api_core.exceptions import GoogleAPICallError
        from google.resumable_media.common import DataCorruption, InvalidResponse

        blob = self._client_bucket().blob(key, chunk_size=self.part_bytes)
        blob.metadata = {MD5_METADATA: md5}
        try:
            # checksum="md5": GCS checks a one-request upload against it; a resumable one is checked by the library
            # against the MD5 GCS computed. if_generation_match=0: only if no object has the name.
            blob.upload_from_file(stream, size=size, checksum="md5", if_generation_match=0)
        except GoogleAPICallError as failure:
            raise self._refusal(failure, f"writing gs://{self.bucket_name}/{key}") from None
        except (DataCorruption, InvalidResponse) as failure:
            raise CopyError(
                f"Cloud Storage upload of gs://{self.bucket_name}/{key} failed its check: {failure}"
            ) from None


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
            from azure.storage.blob import ContainerClient  # imported here: the provider is pickled without it

            self._container = ContainerClient(
                azure_account_url(self.account, self.endpoint),
                self.container_name,
                credential=self.credential if self.credential is not None else default_azure_credential(),
                max_single_put_size=self.part_bytes,
                max_block_size=self.part_bytes,
                **self.client_options,
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


def vultr_keys(destination_keys: str | None) -> tuple[str, str]:
    """The stack's weights key, {"accessKey", "secretKey"} as components/vultr/serving declares it."""
    try:
        keys = json.loads(destination_keys or "")
        return str(keys["accessKey"]), str(keys["secretKey"])
    except (ValueError, KeyError, TypeError):
        raise CopyError(
            'the Vultr destination needs the stack\'s Object Storage key as {"accessKey", "secretKey"}'
        ) from None
