"""Cloud Storage as a copy handoff's DESTINATION (components/handoff/copy.py): the serving stack's own bucket, written
through google-cloud-storage with the deployer's Application Default Credentials: get_blob, then upload_from_file
(resumable in part-size chunks past 8 MiB, the library's one-request limit) with checksum="md5" (GCS checks a
one-request upload against it; the library checks a resumable one against the MD5 GCS computed) and
ifGenerationMatch=0 (only where no object has the name); the source's MD5 also goes in metadata accelstack-md5. The
deployer needs storage.objects.get, .list and .create on the bucket (roles/storage.objectUser). Every google import
is inside the function that uses it (the provider is pickled into the state).
"""

from __future__ import annotations

import base64
from typing import Any, BinaryIO

from accelstack.components.handoff.copy_objects import (
    DEFAULT_PART_BYTES,
    MD5_METADATA,
    CopyError,
    CopyOptions,
    Existing,
    bucket_and_prefix,
)


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


def copy_destination(props: dict[str, Any], options: CopyOptions) -> GcsDestination:
    return GcsDestination(
        str(props["destination"]), options.credentials.get("gcp"), options.endpoints.get("gcp"), options.part_bytes
    )
