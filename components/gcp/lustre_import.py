"""Staging a Cloud Storage prefix into Managed Lustre: a Pulumi dynamic resource around the Lustre API's
importData, because pulumi-gcp's `lustre.Instance` has no field for it (Cluster Toolkit does the same call
from a local-exec: modules/file-system/managed-lustre).

`POST https://lustre.googleapis.com/v1/projects/P/locations/ZONE/instances/ID:importData` with
`{"gcsPath": {"uri": "gs://bucket/prefix/"}, "lustrePath": {"path": "/datasets"}, "requestId": UUID}` starts a
long-running operation (cloud.google.com/managed-lustre/docs/reference/rest/v1/projects.locations.instances/
importData; a prefix must end with "/"). The provider polls `GET /v1/<operation name>` until `done`, fails with
the operation's `error`, and reads the transfer counters (TransferCounters: foundObjectsCount,
objectsCopiedCount, objectsFailedCount, bytesCopiedCount, ...) from the operation's metadata: a failed
object fails the import, and so does an empty import where objects were expected, since a missing bucket
grant for the Lustre service agent "may fail silently leaving an empty lustre instance" (Cluster Toolkit's
managed-lustre README).

Semantics: the import runs when the resource is created. A change of source, destination or `trigger`
replaces the resource, which imports again (existing files are skipped by the transfer service); any other
input change does nothing. Deleting the resource deletes nothing: the data stays on Lustre.

Credentials: Application Default Credentials (`gcloud auth application-default login`, or the deploying
workload's service account), through google-auth, with the cloud-platform scope; when the stack deploys as
`account.deployServiceAccount` (the gcp provider's `impersonate_service_account`), the import impersonates it too,
so the whole `up` acts as one identity (google-auth impersonated_credentials: the caller needs
iam.serviceAccounts.getAccessToken on it, as for the provider).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider

DEFAULT_ENDPOINT = "https://lustre.googleapis.com"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# A multi-TB import runs for hours (the transfer is throughput-bound on the file system's tier); past this,
# the operation keeps running in Google's hands but the deployment stops waiting and says so.
DEFAULT_TIMEOUT_SECONDS = 6 * 3600
DEFAULT_POLL_SECONDS = 30.0
# Inputs whose change means another import: where from, where to, and the explicit trigger.
REIMPORT_KEYS = ("project", "zone", "instance_id", "gcs_uri", "lustre_path", "trigger")


class LustreImportError(Exception):
    """The import failed, timed out or imported nothing where data was expected; the message says which."""


def normalised_gcs_uri(uri: str) -> str:
    """`gs://bucket[/prefix]` with the trailing slash the API requires for a prefix."""
    if not uri.startswith("gs://") or len(uri) <= len("gs://") or uri[len("gs://")] == "/":
        raise ValueError(f"{uri!r}: expected gs://<bucket>[/<prefix>]")
    bucket, _, prefix = uri[len("gs://") :].partition("/")
    prefix = prefix.strip("/")
    return f"gs://{bucket}/{prefix}/" if prefix else f"gs://{bucket}/"


def application_default_token(impersonate: str | None = None) -> str:
    """An OAuth access token for the deploying identity (google-auth's Application Default Credentials), or for
    the service account `impersonate` through them."""
    import google.auth  # imported here: the provider is pickled into the state without it
    import google.auth.impersonated_credentials
    import google.auth.transport.requests

    credentials, _ = google.auth.default(scopes=[SCOPE])
    if impersonate:
        credentials = google.auth.impersonated_credentials.Credentials(
            source_credentials=credentials, target_principal=impersonate, target_scopes=[SCOPE]
        )
    credentials.refresh(google.auth.transport.requests.Request())
    return str(credentials.token)


def find_counters(node: Any) -> dict[str, int] | None:
    """The TransferCounters in an operation's metadata, wherever the metadata nests them (`counters`)."""
    if isinstance(node, dict):
        counters = node.get("counters")
        if isinstance(counters, dict):
            return {key: int(value) for key, value in counters.items() if str(value).lstrip("-").isdigit()}
        for value in node.values():
            found = find_counters(value)
            if found is not None:
                return found
    return None


class LustreImportProvider(ResourceProvider):
    """Calls the Lustre API; `endpoint`, `token` and the timings are for tests and for private endpoints."""

    # The pickled provider holds no secret (the token is fetched when it runs), so its state entry need not be one.
    serialize_as_secret_always = False

    def __init__(
        self,
        endpoint: str = DEFAULT_ENDPOINT,
        poll_seconds: float = DEFAULT_POLL_SECONDS,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        token: Any = None,
    ):
        super().__init__()
        self.endpoint = endpoint.rstrip("/")
        self.poll_seconds = poll_seconds
        self.timeout_seconds = timeout_seconds
        self.token = token  # a callable returning a bearer token; None: Application Default Credentials

    # --- HTTP -------------------------------------------------------------------------------------

    def _call(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, impersonate: str | None = None
    ) -> dict[str, Any]:
        token = self.token() if self.token is not None else application_default_token(impersonate)
        request = urllib.request.Request(
            f"{self.endpoint}/v1/{path}",
            data=json.dumps(body).encode() if body is not None else None,
            method=method,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return dict(json.loads(response.read() or b"{}"))
        except urllib.error.HTTPError as failure:
            detail = failure.read().decode(errors="replace")[:500]
            hint = ""
            if failure.code == 403:
                hint = (
                    " (the deploying identity needs lustre.instances.importData on the instance, e.g. "
                    "roles/lustre.admin, and the Lustre service agent objectViewer on the bucket)"
                )
            raise LustreImportError(f"{method} {path}: HTTP {failure.code}{hint}: {detail}") from None

    # --- the import -------------------------------------------------------------------------------

    def _run(self, props: dict[str, Any]) -> dict[str, Any]:
        instance = f"projects/{props['project']}/locations/{props['zone']}/instances/{props['instance_id']}"
        body = {
            "gcsPath": {"uri": props["gcs_uri"]},
            "lustrePath": {"path": props["lustre_path"]},
            "requestId": str(uuid.uuid4()),  # a retried POST does not start a second import
        }
        impersonate = props.get("impersonate_service_account") or None
        operation = self._call("POST", f"{instance}:importData", body, impersonate=impersonate)
        name = operation.get("name", "")
        deadline = time.monotonic() + self.timeout_seconds
        while not operation.get("done"):
            if time.monotonic() >= deadline:
                raise LustreImportError(
                    f"importData {name} into {instance} still running after {self.timeout_seconds:g} s; it goes on in "
                    "Google Cloud: follow it with `gcloud lustre operations describe`, then run `pulumi up` again"
                )
            time.sleep(self.poll_seconds)
            operation = self._call("GET", name, impersonate=impersonate)
        error = operation.get("error")
        if error:
            raise LustreImportError(
                f"importData {name} from {props['gcs_uri']} failed: code {error.get('code')}: {error.get('message')}"
            )
        counters = find_counters(operation.get("metadata")) or {}
        copied = counters.get("objectsCopiedCount", 0) + counters.get("objectsSkippedCount", 0)
        if counters.get("objectsFailedCount", 0):
            raise LustreImportError(
                f"importData {name}: {counters['objectsFailedCount']} objects of {props['gcs_uri']} failed to copy"
            )
        if props.get("expect_objects") and copied == 0:
            raise LustreImportError(
                f"importData {name} imported nothing from {props['gcs_uri']}: check that the prefix holds objects and "
                "that the Lustre service agent (service-<project number>@gcp-sa-lustre.iam.gserviceaccount.com) "
                "has roles/storage.objectViewer on the bucket"
            )
        return {
            **props,
            "operation": name,
            "objects_imported": copied,
            "bytes_imported": counters.get("bytesCopiedCount", 0) + counters.get("bytesSkippedCount", 0),
            "counters_reported": bool(counters),
        }

    def create(self, props: dict[str, Any]) -> CreateResult:
        outputs = self._run(props)
        return CreateResult(id_=outputs["operation"] or str(uuid.uuid4()), outs=outputs)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in REIMPORT_KEYS if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_=id_, outs=props)

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing to undo: imported files stay on the file system (and the bucket keeps its objects)."""


class LustreImport(Resource):
    """One import of `gcs_uri` into `lustre_path` of a Managed Lustre instance.

    `expect_objects`: fail when nothing was imported (the prefix is meant to hold data). `trigger`: any
    string; changing it imports again (e.g. a dataset version). `impersonate_service_account`: the deploy service
    account the stack's provider impersonates, if any (the import calls the API as it)."""

    operation: pulumi.Output[str]
    objects_imported: pulumi.Output[int]
    bytes_imported: pulumi.Output[int]

    def __init__(
        self,
        name: str,
        *,
        project: pulumi.Input[str],
        zone: pulumi.Input[str],
        instance_id: pulumi.Input[str],
        gcs_uri: str,
        lustre_path: str = "/",
        expect_objects: bool = False,
        trigger: str | None = None,
        impersonate_service_account: str | None = None,
        provider: LustreImportProvider | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        if not lustre_path.startswith("/"):
            raise ValueError(f"lustre_path {lustre_path!r}: an absolute path in the file system")
        props = {
            "project": project,
            "zone": zone,
            "instance_id": instance_id,
            "gcs_uri": normalised_gcs_uri(gcs_uri),
            "lustre_path": lustre_path,
            "expect_objects": expect_objects,
            "trigger": trigger,
            "operation": None,
            "objects_imported": None,
            "bytes_imported": None,
        }
        if impersonate_service_account:  # absent otherwise: a stack without one records nothing new
            props["impersonate_service_account"] = impersonate_service_account
        super().__init__(provider or LustreImportProvider(), name, props, opts)
