"""AWS training artifacts read from Vultr replicas, which have no instance identity AWS could trust: the replica's
half. Each replica's user data carries the credentials of one STS session of a reader role in the TRAINING account
(components/aws/handoff_vultr_reader.py declares the role, components/aws/handoff_session.py starts the session); the
prepare step lists each artifact prefix and downloads every object under it, signing each request with Signature
Version 4 and the session token, then deletes its copy of the credentials.

- List: `GET /<bucket>?list-type=2&prefix=<prefix>&continuation-token=...` (ListObjectsV2: <Contents><Key>,
  <IsTruncated>, <NextContinuationToken>; docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html); the role
  and the session policy allow ListBucket only with an s3:prefix under the artifact prefix.
- Download: `GET /<bucket>/<key>` (GetObject), the key URI-encoded except '/'.
- Path-style addressing at the Regional endpoint (https://s3.<region>.amazonaws.com/<bucket>/...), which S3 still
  serves for every bucket and which keeps a bucket name with dots valid under TLS.
- Signed in Python 3's standard library (hmac, hashlib): AWS4-HMAC-SHA256 over host, x-amz-content-sha256,
  x-amz-date and x-amz-security-token (docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html);
  the Vultr image has python3 but not the AWS CLI. An expired session answers 400 ExpiredToken, a refused one 403:
  either fails the step saying the credentials were refused.

The credentials are bearer credentials until the session expires (at most 1 h: serving.artifactUrlLifetimeMinutes):
whoever reads the replica's user data before then can list and read the prefix, and nothing else.
"""

from __future__ import annotations

import shlex

from accelstack.components.handoff.save_objects import SAVE_OBJECTS
from accelstack.spec.handoff import ArtifactHandoff, ArtifactLocation

# On the replica, root only, until the fetch succeeded: three assignments, never sourced by a shell.
CREDENTIAL_FILE = "/etc/accelstack/weights-s3.env"
# What the boot document carries before the session exists (`accelstack render`, the clock's digest).
CREDENTIAL_PLACEHOLDER = [
    "AWS_ACCESS_KEY_ID=<started-with-the-replica>",
    "AWS_SECRET_ACCESS_KEY=<started-with-the-replica>",
    "AWS_SESSION_TOKEN=<started-with-the-replica>",
]


def s3_endpoint(region: str) -> str:
    return f"https://s3.{region}.amazonaws.com"


FETCH_PROGRAM = (
    r"""
import datetime, hashlib, hmac, os, shutil, sys, urllib.error, urllib.parse, urllib.request
import xml.etree.ElementTree as ET
endpoint, region, bucket, prefix, dest, credential_file = sys.argv[1:7]
keys = dict(line.split("=", 1) for line in open(credential_file).read().split())
access, secret, token = keys["AWS_ACCESS_KEY_ID"], keys["AWS_SECRET_ACCESS_KEY"], keys["AWS_SESSION_TOKEN"]
host = urllib.parse.urlsplit(endpoint).netloc
EMPTY = hashlib.sha256(b"").hexdigest()
def quote(text, safe="-_.~"):
    return urllib.parse.quote(text, safe=safe)
def hmac256(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()
def opened(path, query):
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    canonical_query = "&".join(f"{quote(k)}={quote(v)}" for k, v in sorted(query.items()))
    headers = {"host": host, "x-amz-content-sha256": EMPTY, "x-amz-date": stamp, "x-amz-security-token": token}
    signed = ";".join(sorted(headers))
    canonical = "\n".join(["GET", path, canonical_query, "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)),
                           signed, EMPTY])
    scope = f"{stamp[:8]}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = hmac256(hmac256(hmac256(hmac256(("AWS4" + secret).encode(), stamp[:8]), region), "s3"), "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers.pop("host")
    headers["Authorization"] = f"AWS4-HMAC-SHA256 Credential={access}/{scope}, SignedHeaders={signed}, Signature={signature}"
    address = endpoint + path + ("?" + canonical_query if canonical_query else "")
    try:
        return urllib.request.urlopen(urllib.request.Request(address, headers=headers), timeout=60)
    except urllib.error.HTTPError as error:
        if error.code in (400, 401, 403):
            code = ET.fromstring(error.read() or b"<Error/>").findtext("Code") or ""
            sys.exit(f"accelstack: the weights' session credentials were refused ({error.code} {code}; expired?): "
                     "replace this replica's clock with pulumi up")
        sys.exit(f"accelstack: S3 answered {error.code} for {path}")
    except urllib.error.URLError as error:
        sys.exit(f"accelstack: S3 could not be reached for the weights: {error.reason}")
def get(path, query):
    with opened(path, query) as answer:
        return answer.read()
bucket_path = "/" + quote(bucket)
names, after = [], None
while True:
    query = {"list-type": "2", "prefix": prefix} | ({"continuation-token": after} if after else {})
    page = ET.fromstring(get(bucket_path, query))
    names += [key.text or "" for key in page.iterfind("{*}Contents/{*}Key")]
    after = page.findtext("{*}NextContinuationToken") if page.findtext("{*}IsTruncated") == "true" else None
    if not after:
        break
def object_stream(name):
    return opened(bucket_path + "/" + quote(name, safe="-_.~/"), {})
"""
    + SAVE_OBJECTS
)


def s3_fetch_command(location: ArtifactLocation, region: str, destination: str) -> str:
    """Fetch one prefix with the session in CREDENTIAL_FILE into `destination` (one simple command, so the prepare
    script's `set -e` and ERR trap see its failure); the credentials are read from the file, never from argv."""
    words = [s3_endpoint(region), region, location.bucket, location.prefix, destination, CREDENTIAL_FILE]
    return f"python3 -c {shlex.quote(FETCH_PROGRAM)} " + " ".join(shlex.quote(w) for w in words)


def s3_fetch_script(handoff: ArtifactHandoff, destinations: list[str]) -> list[str]:
    """One fetch per artifact location, then the credentials deleted; a reboot (no file left) fetches nothing."""
    fetches = [
        f"  {s3_fetch_command(location, handoff.region, destination)}"
        for location, destination in zip(handoff.locations, destinations, strict=True)
    ]
    return [f"if [ -s {CREDENTIAL_FILE} ]; then", *fetches, f"  rm -f {CREDENTIAL_FILE}", "fi"]
