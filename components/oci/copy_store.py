"""OCI Object Storage as a copy handoff's SOURCE (components/handoff/copy.py): the copy's pre-authenticated request
(declared in the training tenancy as components/oci/handoff_reader.py declares a replica's: AnyObjectRead with
listing on the prefix, expiring serving.artifactUrlLifetimeMinutes after the copy's clock), read with urllib.

docs.oracle.com/iaas/Content/Object/Tasks/usingpreauthenticatedrequests.htm: a GET of the PAR URL lists the objects
it covers (ListObjects' `prefix`, `fields`, `start` <- `nextStartWith`); a GET of the PAR URL + the URL-encoded object
name reads that object. ListObjects' md5 is the base64 MD5 of the object, or "<base64>-<parts>" for a multipart
upload (docs.oracle.com/iaas/api/#/en/objectstorage/20160918/ObjectSummary).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, BinaryIO

from accelstack.components.handoff.copy_objects import (
    CopyError,
    CopyOptions,
    SourceObject,
    bucket_and_prefix,
    md5_hex_from_base64,
)


class OciParSource:
    def __init__(self, par_url: str, source: str, timeout: float = 60.0):
        self.url = par_url if par_url.endswith("/") else par_url + "/"
        self.source, self.timeout = source, timeout
        _, self.prefix = bucket_and_prefix(source, "oci")

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
                    "again, which starts a new clock and PAR and resumes the copy (or `pulumi up --replace` the "
                    "copy's clock, ...-clock, to retry with the same lifetime); or the object was deleted while the "
                    "copy ran)"
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
                    md5 = md5_hex_from_base64(entry.get("md5"))
                    found.append(SourceObject(name, int(entry.get("size") or 0), md5))
            start = page.get("nextStartWith")
            if not start:
                return found

    def open(self, name: str) -> BinaryIO:
        # Object names are URL paths under the PAR: every byte but "/" percent-encoded (spaces, +, &, =, %, UTF-8).
        return self._open(self.url + urllib.parse.quote(name, safe="/"), f"the object {name!r}")


def copy_source(props: dict[str, Any], options: CopyOptions) -> OciParSource:
    if not props.get("source_url"):
        raise CopyError(f"{props['source']}: an OCI copy reads through its pre-authenticated request's URL")
    return OciParSource(str(props["source_url"]), str(props["source"]))
