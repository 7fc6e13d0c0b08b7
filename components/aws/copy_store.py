"""Amazon S3 as a copy handoff's DESTINATION (components/handoff/copy.py): the serving stack's own bucket, written
through boto3 with the deployer's ambient credentials (the default chain the aws provider reads too) in the bucket's
Region (destination_endpoint): head_object, then upload_fileobj (multipart past the part size; the source's MD5 in
x-amz-meta-accelstack-md5, because a multipart ETag is not an MD5). The deployer needs s3:GetObject (HeadObject) and
s3:PutObject on the prefix, and kms:GenerateDataKey on the bucket's key where it encrypts with one. s3transfer takes
no If-None-Match, so an object is checked absent by head_object just before it is written. Every boto3 import is
inside the function that uses it (the provider is pickled into the state).
"""

from __future__ import annotations

from typing import Any, BinaryIO

from accelstack.components.handoff.copy_objects import (
    DEFAULT_PART_BYTES,
    MD5_METADATA,
    CopyError,
    CopyOptions,
    Existing,
    bucket_and_prefix,
)


class S3Destination:
    """An S3 bucket's prefix; `endpoint` and `keys` ((access key, secret)) are for tests and private endpoints."""

    def __init__(
        self,
        destination: str,
        region: str,
        endpoint: str | None,
        keys: tuple[str, str] | None,
        part_bytes: int = DEFAULT_PART_BYTES,
    ):
        self.destination = destination
        self.bucket, self.prefix = bucket_and_prefix(destination, "s3")
        self.region, self.endpoint, self.keys, self.part_bytes = region, endpoint, keys, part_bytes
        self._s3: Any = None

    def _client(self) -> Any:
        if self._s3 is None:
            import boto3  # imported here: the provider is pickled into the state without it
            from botocore.config import Config

            keys = {}
            if self.keys is not None:
                keys = {"aws_access_key_id": self.keys[0], "aws_secret_access_key": self.keys[1]}
            config = Config(s3={"addressing_style": "path" if self.endpoint else "auto"})
            self._s3 = boto3.client(
                "s3", region_name=self.region or None, endpoint_url=self.endpoint, config=config, **keys
            )
        return self._s3

    def _refusal(self, failure: Any, what: str) -> CopyError:
        code = failure.response.get("Error", {}).get("Code", "")
        hint = ""
        if code in ("AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
            hint = f" (the deployer's AWS credentials must be able to read and write {self.destination})"
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
        from boto3.exceptions import S3UploadFailedError
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
        except S3UploadFailedError as failure:  # s3transfer's wrapper of a part's or the completion's refusal
            raise CopyError(f"S3 refused writing s3://{self.bucket}/{key}: {failure}") from None


def copy_destination(props: dict[str, Any], options: CopyOptions) -> S3Destination:
    return S3Destination(
        str(props["destination"]),
        str(props.get("destination_endpoint") or ""),
        options.endpoints.get("aws"),
        options.credentials.get("aws"),
        options.part_bytes,
    )
