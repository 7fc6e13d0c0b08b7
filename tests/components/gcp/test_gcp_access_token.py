"""The per-replica access token provider (components/gcp/handoff_token.py) against a fake IAM Credentials API on
127.0.0.1: the request Google documents (generateAccessToken, the read-only scope, the lifetime), the deployer's
bearer, the retries while a new service account propagates, the refusal that names the missing role, and a diff
that replaces nothing while its triggers hold."""

from __future__ import annotations

import json
import pickle
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from accelstack.components.gcp.handoff_token import (
    READ_ONLY_SCOPE,
    REMINT_KEYS,
    AccessTokenError,
    AccessTokenProvider,
    GcpAccessToken,
)

EMAIL = "vultr-serving-reader@acme-train.iam.gserviceaccount.com"
PATH = f"/v1/projects/-/serviceAccounts/{EMAIL}:generateAccessToken"
DEPLOYER = "ya29.deployer-token"
PROPS = {"service_account": EMAIL, "scope": READ_ONLY_SCOPE, "lifetime_seconds": 3600, "clock": "2026-12-05T12:00:00Z"}


class FakeIamCredentials:
    """Answers generateAccessToken for EMAIL after `refusals` 403s (a new account not yet visible); records each
    request (path, Authorization, body)."""

    def __init__(self, refusals: int = 0, status: int = 403):
        self.requests: list[tuple[str, str, dict]] = []
        self.refusals, self.status, self.minted = refusals, status, 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append((self.path, self.headers.get("Authorization", ""), body))
                if self.path != PATH or fake.refusals > 0:
                    fake.refusals -= 1
                    self._reply(fake.status, {"error": {"code": fake.status, "status": "PERMISSION_DENIED"}})
                    return
                fake.minted += 1
                self._reply(200, {"accessToken": f"ya29.minted-{fake.minted}", "expireTime": "2026-12-05T13:00:05Z"})

            def _reply(self, status: int, answer: dict) -> None:
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake() -> Iterator[FakeIamCredentials]:
    api = FakeIamCredentials()
    yield api
    api.close()


def provider(api: FakeIamCredentials, **timings: float) -> AccessTokenProvider:
    return AccessTokenProvider(api.endpoint, token=lambda: DEPLOYER, **timings)


def test_create_mints_a_read_only_token_for_the_lifetime_as_the_deployer(fake: FakeIamCredentials) -> None:
    created = provider(fake).create(dict(PROPS))
    assert created.outs["access_token"] == "ya29.minted-1" and created.outs["expire_time"] == "2026-12-05T13:00:05Z"
    assert {k: created.outs[k] for k in PROPS} == PROPS
    [(path, authorization, body)] = fake.requests
    assert path == PATH and authorization == f"Bearer {DEPLOYER}"
    assert body == {"scope": [READ_ONLY_SCOPE], "lifetime": "3600s"}


def test_diff_replaces_nothing_while_the_triggers_hold_and_replaces_on_each(fake: FakeIamCredentials) -> None:
    olds = provider(fake).create(dict(PROPS)).outs
    news = dict(PROPS)
    same = provider(fake).diff("id", olds, news)
    assert not same.changes and not same.replaces
    assert len(fake.requests) == 1  # diff mints nothing
    for key, value in {
        "clock": "2026-12-05T15:00:00Z",
        "service_account": "other@acme-train.iam.gserviceaccount.com",
        "scope": "https://www.googleapis.com/auth/cloud-platform",
        "lifetime_seconds": 1800,
    }.items():
        changed = provider(fake).diff("id", olds, {**news, key: value})
        assert changed.changes and changed.replaces == [key] and changed.delete_before_replace is False
    assert set(REMINT_KEYS) == {"clock", "service_account", "scope", "lifetime_seconds"}


def test_a_new_account_not_yet_visible_is_retried_then_minted() -> None:
    api = FakeIamCredentials(refusals=2)
    try:
        created = provider(api, retry_seconds=0.01, propagation_seconds=5).create(dict(PROPS))
    finally:
        api.close()
    assert created.outs["access_token"] == "ya29.minted-1" and len(api.requests) == 3


def test_a_refusal_past_propagation_names_the_role_the_deployer_needs() -> None:
    api = FakeIamCredentials(refusals=1000)
    try:
        with pytest.raises(AccessTokenError) as raised:
            provider(api, retry_seconds=0.01, propagation_seconds=0.05).create(dict(PROPS))
    finally:
        api.close()
    assert "HTTP 403" in str(raised.value) and "roles/iam.serviceAccountTokenCreator on " + EMAIL in str(raised.value)


def test_a_server_error_is_not_retried(fake: FakeIamCredentials) -> None:
    fake.refusals, fake.status = 1, 500
    with pytest.raises(AccessTokenError) as raised:
        provider(fake, retry_seconds=0.01).create(dict(PROPS))
    assert "HTTP 500" in str(raised.value) and len(fake.requests) == 1


def test_read_keeps_the_minted_token_and_the_provider_pickles_without_secrets(fake: FakeIamCredentials) -> None:
    outs = provider(fake).create(dict(PROPS)).outs
    assert provider(fake).read("id", outs).outs == outs
    plain = AccessTokenProvider()
    assert pickle.loads(pickle.dumps(plain)).endpoint == "https://iamcredentials.googleapis.com"
    assert plain.serialize_as_secret_always is False and plain.token is None


def test_a_lifetime_past_an_hour_is_refused_before_anything_is_called() -> None:
    with pytest.raises(ValueError, match=r"1\.\.3600"):
        GcpAccessToken("t", service_account=EMAIL, clock="2026-12-05T12:00:00Z", lifetime_seconds=7200)
