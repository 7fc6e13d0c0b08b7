"""The Managed Lustre import provider against a fake Lustre API on 127.0.0.1: the request Google documents,
the wait for the long-running operation, and every way an import can fail without saying so."""

from __future__ import annotations

import json
import pickle
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from accelstack.components.gcp import lustre_import
from accelstack.components.gcp.lustre_import import (
    LustreImportError,
    LustreImportProvider,
    application_default_token,
    normalised_gcs_uri,
)

TOKEN = "ya29.test-token"
INSTANCE = "projects/acme-train/locations/us-central1-a/instances/gcp-training-lustre"
OPERATION = "projects/acme-train/locations/us-central1-a/operations/operation-42"
PROPS = {
    "project": "acme-train",
    "zone": "us-central1-a",
    "instance_id": "gcp-training-lustre",
    "gcs_uri": "gs://acme-train-datasets/corpus/",
    "lustre_path": "/datasets",
    "expect_objects": True,
    "trigger": None,
}


def counters(objects: int, bytes_: int, failed: int = 0) -> dict:
    # Int64 counters come as JSON strings (proto3 JSON mapping); nested as ImportDataMetadata carries them.
    return {
        "@type": "type.googleapis.com/google.cloud.lustre.v1.ImportDataMetadata",
        "operationMetadata": {
            "counters": {
                "foundObjectsCount": str(objects + failed),
                "objectsCopiedCount": str(objects),
                "bytesCopiedCount": str(bytes_),
                "objectsFailedCount": str(failed),
            }
        },
    }


class FakeLustreApi:
    """importData then `polls` GETs of a running operation, then the final one."""

    def __init__(self, final: dict, polls: int = 2, post_status: int = 200):
        self.requests: list[tuple[str, str, dict | None]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: int, body: dict) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps(body).encode())

            def _authorised(self) -> bool:
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._reply(401, {"error": {"code": 401, "message": "no credentials"}})
                    return False
                return True

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                api.requests.append(("POST", self.path, body))
                if not self._authorised():
                    return
                if post_status != 200:
                    self._reply(post_status, {"error": {"code": post_status, "message": "Permission denied"}})
                    return
                self._reply(200, {"name": OPERATION, "done": False})

            def do_GET(self):
                api.requests.append(("GET", self.path, None))
                if not self._authorised():
                    return
                gets = sum(1 for method, _, _ in api.requests if method == "GET")
                self._reply(200, {"name": OPERATION, "done": False} if gets <= polls else {"name": OPERATION, **final})

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def provider(self, timeout_seconds: float = 10) -> LustreImportProvider:
        return LustreImportProvider(self.url, poll_seconds=0.01, timeout_seconds=timeout_seconds, token=lambda: TOKEN)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def api_with():
    servers: list[FakeLustreApi] = []

    def start(final: dict, **kwargs) -> FakeLustreApi:
        servers.append(FakeLustreApi(final, **kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_the_import_posts_what_the_api_documents_and_waits_for_the_operation(api_with):
    api = api_with({"done": True, "metadata": counters(1200, 5_000_000_000), "response": {}}, polls=3)
    result = api.provider().create(dict(PROPS))
    method, path, body = api.requests[0]
    assert (method, path) == ("POST", f"/v1/{INSTANCE}:importData")
    assert body["gcsPath"] == {"uri": "gs://acme-train-datasets/corpus/"}
    assert body["lustrePath"] == {"path": "/datasets"}
    assert len(body["requestId"]) == 36  # a UUID: a retried POST starts no second import
    assert [r[:2] for r in api.requests[1:]] == [("GET", f"/v1/{OPERATION}")] * 4
    assert result.id == OPERATION
    assert (result.outs["objects_imported"], result.outs["bytes_imported"]) == (1200, 5_000_000_000)


def test_an_operation_error_fails_with_its_code_and_message(api_with):
    api = api_with({"done": True, "error": {"code": 7, "message": "caller does not have storage.objects.list"}})
    with pytest.raises(LustreImportError, match=r"failed: code 7: caller does not have storage.objects.list"):
        api.provider().create(dict(PROPS))


def test_an_import_that_copied_nothing_fails_where_data_was_expected(api_with):
    api = api_with({"done": True, "metadata": counters(0, 0)})
    with pytest.raises(LustreImportError, match=r"imported nothing .*@gcp-sa-lustre"):
        api.provider().create(dict(PROPS))
    # An empty prefix is fine when the bucket was just created (nothing uploaded yet).
    assert (
        api_with({"done": True, "metadata": counters(0, 0)})
        .provider()
        .create({**PROPS, "expect_objects": False})
        .outs["objects_imported"]
        == 0
    )


def test_failed_objects_fail_the_import(api_with):
    api = api_with({"done": True, "metadata": counters(10, 100, failed=3)})
    with pytest.raises(LustreImportError, match=r"3 objects of gs://acme-train-datasets/corpus/ failed"):
        api.provider().create(dict(PROPS))


def test_a_denied_call_names_the_permissions_it_needs(api_with):
    api = api_with({"done": True}, post_status=403)
    with pytest.raises(LustreImportError, match=r"HTTP 403 .*lustre.instances.importData.*objectViewer"):
        api.provider().create(dict(PROPS))


def test_an_import_still_running_at_the_timeout_fails_and_says_it_goes_on(api_with):
    api = api_with({"done": True}, polls=10_000)
    with pytest.raises(LustreImportError, match=r"still running after 0.2 s; it goes on"):
        api.provider(timeout_seconds=0.2).create(dict(PROPS))


def test_only_the_source_destination_or_trigger_imports_again():
    provider = LustreImportProvider(token=lambda: TOKEN)
    assert provider.diff("op", PROPS, {**PROPS, "trigger": "v2"}).replaces == ["trigger"]
    assert provider.diff("op", PROPS, {**PROPS, "gcs_uri": "gs://acme-train-datasets/v2/"}).replaces == ["gcs_uri"]
    same = provider.diff("op", PROPS, {**PROPS, "expect_objects": False})
    assert same.changes is False and same.replaces == []


def test_delete_calls_nothing(api_with):
    api = api_with({"done": True})
    api.provider().delete(OPERATION, dict(PROPS))
    assert api.requests == []


def test_the_provider_pickles_without_credentials():
    provider = LustreImportProvider()
    restored = pickle.loads(pickle.dumps(provider))
    assert restored.endpoint == "https://lustre.googleapis.com" and restored.token is None
    assert LustreImportProvider.serialize_as_secret_always is False


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("gs://acme-train-datasets/corpus", "gs://acme-train-datasets/corpus/"),
        ("gs://acme-train-datasets/corpus/", "gs://acme-train-datasets/corpus/"),
        ("gs://acme-train-datasets", "gs://acme-train-datasets/"),
    ],
)
def test_a_prefix_gets_the_trailing_slash_the_api_requires(uri, expected):
    assert normalised_gcs_uri(uri) == expected


@pytest.mark.parametrize("uri", ["s3://acme/corpus", "gs://", "gs:///corpus", "acme/corpus"])
def test_anything_but_a_gcs_uri_is_refused(uri):
    with pytest.raises(ValueError, match=r"expected gs://"):
        normalised_gcs_uri(uri)


def test_accelstack_diff_replaces_the_import_on_the_inputs_its_provider_replaces_on():
    from accelstack.clouds import registry
    from accelstack.components.gcp.lustre_import import REIMPORT_KEYS

    assert registry.get("gcp").replace_rules.forcing["pulumi-python:dynamic:Resource"] == REIMPORT_KEYS


DEPLOYER = "deployer@acme-train.iam.gserviceaccount.com"


def test_with_a_deploy_service_account_every_call_is_made_as_it(api_with, monkeypatch):
    """The stack's provider impersonates account.deployServiceAccount; the import's API calls must act as the same
    identity, not as whoever ran `pulumi up` (gcp review R7)."""
    api = api_with({"done": True, "metadata": counters(3, 300)}, polls=1)
    asked: list[str | None] = []
    monkeypatch.setattr(lustre_import, "application_default_token", lambda who=None: asked.append(who) or TOKEN)
    provider = LustreImportProvider(api.url, poll_seconds=0.01, timeout_seconds=10)
    provider.create({**PROPS, "impersonate_service_account": DEPLOYER})
    assert asked == [DEPLOYER] * len(api.requests) and len(api.requests) == 3
    asked.clear()
    provider.create(dict(PROPS))
    assert set(asked) == {None}


def test_the_token_is_the_impersonated_accounts_when_one_is_named(monkeypatch):
    """google-auth's impersonated credentials, sourced from Application Default Credentials, for the named account
    with the cloud-platform scope; without one, the ADC token itself."""
    import google.auth
    import google.auth.impersonated_credentials
    import google.auth.transport.requests

    class Credentials:
        def __init__(self, token: str) -> None:
            self.token, self.next = None, token

        def refresh(self, _request: object) -> None:
            self.token = self.next

    made: list[dict] = []

    def impersonated(**kwargs):
        made.append(kwargs)
        return Credentials(f"as {kwargs['target_principal']}")

    monkeypatch.setattr(google.auth, "default", lambda scopes: (Credentials("adc"), "acme-train"))
    monkeypatch.setattr(google.auth.impersonated_credentials, "Credentials", impersonated)
    monkeypatch.setattr(google.auth.transport.requests, "Request", lambda: None)
    assert application_default_token(DEPLOYER) == f"as {DEPLOYER}"
    assert made[0]["target_principal"] == DEPLOYER
    assert made[0]["target_scopes"] == [lustre_import.SCOPE]
    assert made[0]["source_credentials"].next == "adc"  # sourced from Application Default Credentials
    assert application_default_token() == "adc"
