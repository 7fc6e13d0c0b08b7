"""Google Cloud training artifacts read from Vultr replicas, which have no instance identity Google Cloud could trust:
the replica's half. Each replica's user data carries one short-lived OAuth access token of a reader service account
in the TRAINING project (components/gcp/handoff_vultr_reader.py declares it, components/gcp/handoff_token.py mints it);
the prepare step lists each artifact prefix through the Cloud Storage JSON API and downloads every object under it
with that token, then deletes its copy.

- List: `GET https://storage.googleapis.com/storage/v1/b/<bucket>/o?prefix=<prefix>&pageToken=...` answers
  {"items": [{"name": ...}], "nextPageToken": ...} (cloud.google.com/storage/docs/json_api/v1/objects/list);
  the reader's grant admits a listing only with a prefix under the artifact prefix (gcp_reader.prefix_condition).
- Download: `GET .../storage/v1/b/<bucket>/o/<URL-encoded object name>?alt=media`
  (cloud.google.com/storage/docs/json_api/v1/objects/get: the object name is percent-encoded whole, '/' included).
- `Authorization: Bearer <token>`; an expired or revoked token answers 401, a token without the grant 403: either
  fails the step saying the token was refused.

The token is a bearer credential until it expires (at most 1 h: serving.artifactUrlLifetimeMinutes): whoever reads
the replica's user data before then (a process on the replica through the metadata service, a holder of the Vultr
account's API key) can list and read the prefix, and nothing else.
"""

from __future__ import annotations

import shlex

from accelstack.components.handoff.save_objects import SAVE_OBJECTS
from accelstack.spec.handoff import ArtifactHandoff, ArtifactLocation

# On the replica, root only, until the fetch succeeded: the access token, one line.
TOKEN_FILE = "/etc/accelstack/weights-gcs.token"
GCS_ENDPOINT = "https://storage.googleapis.com"
# What the boot document carries where the token goes before it is minted (`accelstack render`, the clock's digest).
TOKEN_PLACEHOLDER = "<access-token-minted-with-the-replica>"

# The prepare step's fetch, in Python 3 (on every Ubuntu image; urllib only): list the prefix page by page
# (`nextPageToken` -> `pageToken`), GET each object (alt=media) into the destination under its name less the prefix,
# refusing a name that would leave the destination or lie outside the prefix. The token is read from its file, never
# from the command line (which every process on the replica can read).
FETCH_PROGRAM = (
    r"""
import json, os, shutil, sys, urllib.error, urllib.parse, urllib.request
endpoint, bucket, prefix, dest, token_file = sys.argv[1:6]
token = open(token_file).read().strip()
def opened(address):
    request = urllib.request.Request(address, headers={"Authorization": "Bearer " + token})
    try:
        return urllib.request.urlopen(request, timeout=60)
    except urllib.error.HTTPError as error:
        if error.code in (401, 403):
            sys.exit(f"accelstack: the weights' access token was refused ({error.code}; expired?): "
                     "replace this replica's clock with pulumi up")
        sys.exit(f"accelstack: Cloud Storage answered {error.code} for {urllib.parse.urlsplit(address).path}")
    except urllib.error.URLError as error:
        sys.exit(f"accelstack: Cloud Storage could not be reached for the weights: {error.reason}")
def get(address):
    with opened(address) as answer:
        return answer.read()
base = endpoint.rstrip("/") + "/storage/v1/b/" + urllib.parse.quote(bucket, safe="") + "/o"
names, page = [], None
while True:
    query = {"prefix": prefix, "fields": "items(name),nextPageToken"} | ({"pageToken": page} if page else {})
    answer = json.loads(get(base + "?" + urllib.parse.urlencode(query)))
    names += [item["name"] for item in answer.get("items", [])]
    page = answer.get("nextPageToken")
    if not page:
        break
def object_stream(name):
    return opened(base + "/" + urllib.parse.quote(name, safe="") + "?alt=media")
"""
    + SAVE_OBJECTS
)


def gcs_fetch_command(location: ArtifactLocation, destination: str) -> str:
    """Fetch one prefix with the token in TOKEN_FILE into `destination` (one simple command, so the prepare
    script's `set -e` and ERR trap see its failure)."""
    words = [GCS_ENDPOINT, location.bucket, location.prefix, destination, TOKEN_FILE]
    return f"python3 -c {shlex.quote(FETCH_PROGRAM)} " + " ".join(shlex.quote(w) for w in words)


def gcs_fetch_script(handoff: ArtifactHandoff, destinations: list[str]) -> list[str]:
    """The prepare step's lines: one fetch per artifact location, then the token deleted. On a reboot (no token
    file left) the weights already on disk serve: nothing is fetched."""
    fetches = [
        f"  {gcs_fetch_command(location, destination)}"
        for location, destination in zip(handoff.locations, destinations, strict=True)
    ]
    return [f"if [ -s {TOKEN_FILE} ]; then", *fetches, f"  rm -f {TOKEN_FILE}", "fi"]
