"""Vultr Object Storage as a copy handoff's DESTINATION (components/handoff/copy.py): the serving stack's own bucket,
written over the S3 API (Ceph RGW behind https://<cluster>.vultrobjects.com, accelstack/clouds/vultr/catalog.py)
with the stack's Object Storage key (account.weightsKey's signer secret, {"accessKey", "secretKey"}), which must
then be able to write the weights prefix as well as read the key object.

Signed here with SigV4 (docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html, the signing key as
components/vultr/serving/presign.py derives it, region us-east-1 as RGW takes it) over urllib: boto3 is AWS's SDK,
and Vultr's folder imports none of AWS's. The calls: HeadObject; PutObject up to one part; past it
CreateMultipartUpload, UploadPart per part (each with its Content-MD5, which RGW checks), CompleteMultipartUpload,
and AbortMultipartUpload when a part or the source fails. The source's MD5 goes in x-amz-meta-accelstack-md5.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from typing import Any, BinaryIO
from xml.sax.saxutils import escape

from accelstack.components.handoff.copy_objects import (
    DEFAULT_PART_BYTES,
    MD5_METADATA,
    CopyError,
    CopyOptions,
    Existing,
    bucket_and_prefix,
)
from accelstack.components.vultr.serving.presign import ALGORITHM, SIGNING_REGION, _hmac, _uri_encode

MIN_PART_BYTES = 5 * 1024 * 1024  # S3's (and RGW's) least part but the last


def vultr_keys(destination_keys: str | None) -> tuple[str, str]:
    """The stack's weights key signer secret, as components/vultr/serving/weights_key.py reads it."""
    try:
        keys = json.loads(destination_keys or "")
        return str(keys["accessKey"]), str(keys["secretKey"])
    except (ValueError, KeyError, TypeError):
        raise CopyError(
            'the Vultr destination needs the stack\'s Object Storage key as {"accessKey", "secretKey"} '
            "(account.weightsKey's signer secret)"
        ) from None


class VultrObjectStorage:
    """A bucket's prefix at `host`; `endpoint` (a base URL) is for tests."""

    def __init__(
        self,
        destination: str,
        host: str,
        keys: tuple[str, str],
        endpoint: str | None = None,
        part_bytes: int = DEFAULT_PART_BYTES,
        timeout: float = 120.0,
    ):
        self.destination = destination
        self.bucket, self.prefix = bucket_and_prefix(destination, "s3")
        self.base = (endpoint or f"https://{host}").rstrip("/")
        self.host = urllib.parse.urlparse(self.base).netloc
        self.keys, self.part_bytes, self.timeout = keys, max(part_bytes, MIN_PART_BYTES), timeout

    def _signed(self, method: str, key: str, query: dict[str, str], body: bytes, extra: dict[str, str]) -> Any:
        now = datetime.now(UTC)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        path = _uri_encode(f"/{self.bucket}/{key}", keep_slash=True)
        canonical_query = "&".join(
            f"{_uri_encode(k, keep_slash=False)}={_uri_encode(v, keep_slash=False)}" for k, v in sorted(query.items())
        )
        headers = {"host": self.host, "x-amz-content-sha256": hashlib.sha256(body).hexdigest(), "x-amz-date": stamp}
        headers |= {name.lower(): value for name, value in extra.items()}
        signed = ";".join(sorted(headers))
        canonical_headers = "".join(f"{name}:{headers[name].strip()}\n" for name in sorted(headers))
        canonical = "\n".join(
            [method, path, canonical_query, canonical_headers, signed, headers["x-amz-content-sha256"]]
        )
        scope = f"{day}/{SIGNING_REGION}/s3/aws4_request"
        to_sign = "\n".join([ALGORITHM, stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        signing_key = _hmac(
            _hmac(_hmac(_hmac(f"AWS4{self.keys[1]}".encode(), day), SIGNING_REGION), "s3"), "aws4_request"
        )
        signature = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = (
            f"{ALGORITHM} Credential={self.keys[0]}/{scope}, SignedHeaders={signed}, Signature={signature}"
        )
        del headers["host"]  # urllib sends it, as signed
        url = self.base + path + (f"?{canonical_query}" if query else "")
        request = urllib.request.Request(url, data=body if method in ("PUT", "POST") else None, method=method)
        for name, value in headers.items():
            request.add_header(name, value)
        if method in ("PUT", "POST"):
            request.add_header("Content-Type", "application/octet-stream")  # not signed: urllib would send a form type
        return urllib.request.urlopen(request, timeout=self.timeout)

    def _call(
        self,
        what: str,
        method: str,
        key: str,
        query: dict[str, str],
        body: bytes = b"",
        extra: dict[str, str] | None = None,
    ) -> tuple[dict[str, str], bytes]:
        try:
            with self._signed(method, key, query, body, extra or {}) as answer:
                return dict(answer.headers.items()), answer.read()
        except urllib.error.HTTPError as failure:
            text = failure.read().decode(errors="replace")
            if failure.code == 404 and method == "HEAD":
                raise
            code = (re.findall(r"<Code>([^<]*)</Code>", text) or [str(failure.code)])[0]
            hint = ""
            if failure.code == 403:
                hint = (
                    " (the stack's Object Storage key, account.weightsKey, must be able to read and write "
                    f"{self.destination}, and the bucket must be in that key's Object Storage)"
                )
            raise CopyError(f"Vultr Object Storage refused {what}: HTTP {failure.code} {code}{hint}") from None
        except urllib.error.URLError as failure:
            raise CopyError(f"Vultr Object Storage ({self.host}) could not be reached: {failure.reason}") from None

    def head(self, key: str) -> Existing | None:
        try:
            headers, _ = self._call(f"reading s3://{self.bucket}/{key}", "HEAD", key, {})
        except urllib.error.HTTPError:
            return None  # 404: not there
        lower = {name.lower(): value for name, value in headers.items()}
        return Existing(int(lower.get("content-length", 0)), lower.get(f"x-amz-meta-{MD5_METADATA}"))

    def upload(self, key: str, stream: BinaryIO, size: int, md5: str) -> None:
        what = f"writing s3://{self.bucket}/{key}"
        metadata = {f"x-amz-meta-{MD5_METADATA}": md5}
        if size <= self.part_bytes:
            body = stream.read(size)
            stream.read(1)  # the end: the source's MD5 is checked before anything is written
            self._call(what, "PUT", key, {}, body, metadata | {"content-md5": content_md5(body)})
            return
        _, created = self._call(what, "POST", key, {"uploads": ""}, b"", metadata)
        upload_id = re.findall(r"<UploadId>([^<]*)</UploadId>", created.decode())[0]
        try:
            parts: list[str] = []
            while True:
                data = stream.read(self.part_bytes)
                if not data:
                    break
                number = str(len(parts) + 1)
                query = {"partNumber": number, "uploadId": upload_id}
                headers, _ = self._call(what, "PUT", key, query, data, {"content-md5": content_md5(data)})
                etag = {name.lower(): value for name, value in headers.items()}["etag"]
                parts.append(f"<Part><PartNumber>{number}</PartNumber><ETag>{escape(etag)}</ETag></Part>")
            complete = f"<CompleteMultipartUpload>{''.join(parts)}</CompleteMultipartUpload>".encode()
            self._call(what, "POST", key, {"uploadId": upload_id}, complete)
        except BaseException:
            # If even that fails, the bucket's lifecycle rule (or RGW's gc) removes the abandoned upload's parts.
            with contextlib.suppress(CopyError):
                self._call(f"abandoning the upload of {key}", "DELETE", key, {"uploadId": upload_id})
            raise


def content_md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data, usedforsecurity=False).digest()).decode()


def copy_destination(props: dict[str, Any], options: CopyOptions) -> VultrObjectStorage:
    host = str(props.get("destination_endpoint") or "")
    if not host:
        raise CopyError(f"{props['destination']}: a Vultr copy needs the Object Storage host (destination_endpoint)")
    keys = vultr_keys(props.get("destination_keys"))
    return VultrObjectStorage(str(props["destination"]), host, keys, options.endpoints.get("vultr"), options.part_bytes)
