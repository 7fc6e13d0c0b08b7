"""S3 SigV4 query signing (a presigned GET) for Vultr Object Storage, computed locally: no API call.

The algorithm is AWS's "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)"
(docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html), which Ceph RGW, the S3 API behind Vultr
Object Storage, verifies as S3 does. Signing takes the signing time as an argument instead of reading the clock, so
the same inputs give the same URL: an `up` that changes nothing signs the same URL again and replaces nothing
(tests/components/vultr/test_weights_key.py checks the URL against botocore's own presigner at the same instant).
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime
from urllib.parse import quote

# SigV4 query authentication accepts X-Amz-Expires of 1 s up to 7 days (sigv4-query-string-auth.html).
MAX_EXPIRES_SECONDS = 7 * 24 * 3600
# The region in the credential scope: RGW computes the signature with the scope's region; S3 clients pointed at
# Vultr Object Storage conventionally sign for us-east-1.
SIGNING_REGION = "us-east-1"
ALGORITHM = "AWS4-HMAC-SHA256"
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"


def _uri_encode(text: str, *, keep_slash: bool) -> str:
    """SigV4's URI encoding: everything but A-Z a-z 0-9 - _ . ~ (and / in an object key's path) percent-encoded."""
    return quote(text, safe="-_.~/" if keep_slash else "-_.~")


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


def presigned_get(
    *,
    host: str,
    bucket: str,
    key: str,
    access_key: str,
    secret_key: str,
    signed_at: datetime,
    expires_seconds: int,
    region: str = SIGNING_REGION,
) -> str:
    """A path-style `https://<host>/<bucket>/<key>?X-Amz-...` URL that lets its holder GET that one object between
    `signed_at` and `signed_at + expires_seconds`, and nothing else."""
    if not 1 <= expires_seconds <= MAX_EXPIRES_SECONDS:
        raise ValueError(f"a presigned URL lasts 1..{MAX_EXPIRES_SECONDS} s (7 days), not {expires_seconds}")
    if signed_at.tzinfo is None:
        raise ValueError("signed_at must be timezone-aware (the signature is over UTC)")
    when = signed_at.astimezone(UTC)
    stamp, day = when.strftime("%Y%m%dT%H%M%SZ"), when.strftime("%Y%m%d")
    scope = f"{day}/{region}/s3/aws4_request"
    path = _uri_encode(f"/{bucket}/{key}", keep_slash=True)
    query = {
        "X-Amz-Algorithm": ALGORITHM,
        "X-Amz-Credential": f"{access_key}/{scope}",
        "X-Amz-Date": stamp,
        "X-Amz-Expires": str(expires_seconds),
        "X-Amz-SignedHeaders": "host",
    }
    canonical_query = "&".join(
        f"{_uri_encode(k, keep_slash=False)}={_uri_encode(v, keep_slash=False)}" for k, v in sorted(query.items())
    )
    canonical_request = "\n".join(["GET", path, canonical_query, f"host:{host}\n", "host", UNSIGNED_PAYLOAD])
    to_sign = "\n".join([ALGORITHM, stamp, scope, hashlib.sha256(canonical_request.encode()).hexdigest()])
    signing_key = _hmac(_hmac(_hmac(_hmac(f"AWS4{secret_key}".encode(), day), region), "s3"), "aws4_request")
    signature = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
    return f"https://{host}{path}?{canonical_query}&X-Amz-Signature={signature}"
