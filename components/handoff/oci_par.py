"""OCI training artifacts read from Vultr replicas, which have no instance identity OCI could trust: one
pre-authenticated request (PAR) per replica and artifact prefix, declared by the serving stack in the TRAINING
tenancy through a second oci provider pinned to it (tenancyOcid, region: serving.artifactTenancy, artifactRegion;
the resources are OCI's: components/oci/handoff_reader.py). This module is what is not OCI's SDK: the reader's
per-replica bookkeeping and the replica's fetch.

Each PAR reads the artifact prefix only and may list it (its inputs and OCI's create-time checks:
components/oci/handoff_reader.py). Its time_expires is the replica's clock (the `time_static` its weights key URL
is signed at on Vultr, components/vultr/serving/weights_key.py) + serving.artifactUrlLifetimeMinutes. A PAR cannot
be updated (every argument is ForceNew in the provider): an `up` that changes nothing keeps the clock, hence the
expiry, hence the PAR; a new replica, or one replaced because its boot changed (which replaces its clock), gets a
PAR of its own.

The PAR's URL (https://objectstorage.<region>.oraclecloud.com + access_uri) is a bearer URL until it expires: whoever
reads the replica's user data before then (a process on the replica through the metadata service, a holder of the
Vultr account's API key) can list and read the prefix. The replica's prepare step writes nothing but the weights,
and deletes its copy of the URL once the fetch succeeded. OCI returns the access URI only in the create response.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pulumi

from accelstack.components.handoff.per_replica import PerReplicaReader
from accelstack.components.handoff.save_objects import SAVE_OBJECTS
from accelstack.spec.handoff import ArtifactHandoff, ArtifactLocation

# On the replica, root only, until the fetch succeeded: one line per prefix, "<PAR URL> <destination>".
PAR_URL_FILE = "/etc/accelstack/weights-par.urls"


def par_expiry(clock: str, minutes: int) -> str:
    """`clock` (RFC 3339, the replica's time_static) + `minutes`, in RFC 3339 UTC as OCI takes time_expires."""
    start = datetime.fromisoformat(clock.replace("Z", "+00:00"))
    return (start + timedelta(minutes=minutes)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def object_storage_host(region: str) -> str:
    return f"objectstorage.{region}.oraclecloud.com"


def par_url(region: str, access_uri: str) -> str:
    """The URL the access URI is embedded in (preauthrequest.py, access_uri)."""
    return f"https://{object_storage_host(region)}{access_uri}"


# Declares one PAR under the reader's provider: (resource name, display name, location, expiry, provider, parent)
# -> the PAR's access URI. The training cloud's folder supplies it (components/oci/handoff_reader.py).
DeclarePar = Callable[
    [str, str, ArtifactLocation, pulumi.Output[str], Any, pulumi.Resource], tuple[Any, pulumi.Output[str]]
]


@dataclass(frozen=True)
class OciParReader(PerReplicaReader):
    """The reader's provider; `replica_credentials` declares one replica's PARs (appended to `grants`)."""

    provider: Any = None
    declare_par: DeclarePar | None = None

    def replica_credentials(
        self, name: str, index: int, clock: pulumi.Output[str], parent: pulumi.Resource
    ) -> pulumi.Output[list[str]]:
        """Replica `index`'s PAR URL per artifact location (the weights first, then each adapter), from its clock."""
        assert self.declare_par is not None, "the OCI reader declares its PARs through components/oci"
        handoff = self.handoff
        urls = []
        for number, location in enumerate(handoff.locations):
            suffix = "" if number == 0 else f"-{number}"
            expires = clock.apply(lambda at: par_expiry(at, handoff.url_lifetime_minutes))
            par, access_uri = self.declare_par(
                f"{name}-replica-{index}-weights-par{suffix}",
                f"accelstack-{name}-replica-{index}{suffix}",
                location,
                expires,
                self.provider,
                parent,
            )
            self.grants.append(par)
            # Not a secret in state: as readable through Vultr's API as in the user data, for the PAR's lifetime;
            # the packs read the PAR's own inputs, not this URL.
            urls.append(access_uri.apply(lambda uri: par_url(handoff.region, uri)))
        return pulumi.Output.all(*urls).apply(list)


def par_placeholders(handoff: ArtifactHandoff) -> list[str]:
    """What the boot document carries where the PAR URLs go before OCI created them (`accelstack render`, the
    clock's digest)."""
    return [
        f"https://{object_storage_host(handoff.region)}/p/<created-with-the-replica>/n/{loc.namespace}"
        f"/b/{loc.bucket}/o/"
        for loc in handoff.locations
    ]


# The prepare step's fetch, in Python 3 (on every Ubuntu image; urllib only): list the PAR's prefix page by page
# (`nextStartWith` -> `start`), GET each object into the destination under its name less the prefix, refusing a name
# that would leave the destination; an expired or revoked PAR answers 404 (OCI answers a PAR it no longer honours as
# not found), which fails the step saying so.
FETCH_PROGRAM = (
    r"""
import json, os, shutil, sys, urllib.error, urllib.parse, urllib.request
url, prefix, dest = sys.argv[1], sys.argv[2], sys.argv[3]
def opened(address):
    try:
        return urllib.request.urlopen(address, timeout=60)
    except urllib.error.HTTPError as error:
        sys.exit(f"accelstack: the weights' pre-authenticated request was refused ({error.code}; expired?): "
                 "replace this replica's clock with pulumi up")
    except urllib.error.URLError as error:
        sys.exit(f"accelstack: OCI Object Storage could not be reached for the weights: {error.reason}")
def get(address):
    with opened(address) as answer:
        return answer.read()
names, start = [], None
while True:
    query = {"prefix": prefix, "fields": "name"} | ({"start": start} if start else {})
    page = json.loads(get(url + "?" + urllib.parse.urlencode(query)))
    names += [o["name"] for o in page.get("objects", [])]
    start = page.get("nextStartWith")
    if not start:
        break
def object_stream(name):
    return opened(url + urllib.parse.quote(name, safe="/"))
"""
    + SAVE_OBJECTS
)


def par_fetch_command(location: ArtifactLocation, line: int, destination: str) -> str:
    """Fetch one prefix through the PAR URL on `line` of PAR_URL_FILE into `destination` (one simple command, so
    the prepare script's `set -e` and ERR trap see its failure)."""
    url = f'"$(sed -n {line}p {PAR_URL_FILE})"'
    return f"python3 -c {shlex.quote(FETCH_PROGRAM)} {url} {shlex.quote(location.prefix)} {shlex.quote(destination)}"


def par_fetch_script(handoff: ArtifactHandoff, destinations: list[str]) -> list[str]:
    """The prepare step's lines: one fetch per artifact location, then the URLs deleted. On a reboot (no URL file
    left) the weights already on disk serve: nothing is fetched."""
    fetches = [
        f"  {par_fetch_command(location, number + 1, destination)}"
        for number, (location, destination) in enumerate(zip(handoff.locations, destinations, strict=True))
    ]
    return [f"if [ -s {PAR_URL_FILE} ]; then", *fetches, f"  rm -f {PAR_URL_FILE}", "fi"]
