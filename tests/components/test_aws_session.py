"""The per-replica STS session provider (components/aws/handoff_session.py) against a fake STS on 127.0.0.1, through
boto3 as it runs on the deployer: the AssumeRole request AWS documents (the role, the replica's session name, the
duration, the session policy), signed as the deployer, the retries while a new role propagates, the refusal that
names what the deployer needs, and a diff that starts nothing while its triggers hold."""

from __future__ import annotations

import json
import pickle
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from accelstack.components.aws.handoff_session import RESTART_KEYS, AwsSession, SessionError, SessionProvider

DEPLOYER_KEY = ("AKIADEPLOYERKEY00001", "deployer-secret-key-0000000000000000000")
ROLE = "arn:aws:iam::111111111111:role/accelstack-vultr-serving-vultr-reader"
POLICY = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"],
                     "Resource": ["arn:aws:s3:::acme-train-checkpoints/models/llama-3.1-8b/*"]}]})  # fmt: skip
PROPS = {
    "role_arn": ROLE,
    "session_name": "accelstack-vultr-serving-replica-0",
    "policy": POLICY,
    "duration_seconds": 3600,
    "region": "us-east-1",
    "clock": "2026-12-05T12:00:00Z",
}
ANSWER = """<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>
<AccessKeyId>ASIAMINTED0000000001</AccessKeyId><SecretAccessKey>minted-secret</SecretAccessKey>
<SessionToken>minted-token</SessionToken><Expiration>2026-12-05T13:00:00Z</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::111111111111:assumed-role/r/s</Arn><AssumedRoleId>AROA1:s</AssumedRoleId>
</AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></AssumeRoleResponse>"""
DENIED = """<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>
<Code>AccessDenied</Code><Message>not authorized to perform: sts:AssumeRole</Message></Error><RequestId>2</RequestId>
</ErrorResponse>"""


class FakeSts:
    """Answers AssumeRole after `refusals` AccessDenied; records each request's form and Authorization."""

    def __init__(self, refusals: int = 0):
        self.requests: list[tuple[dict[str, str], str]] = []
        self.refusals = refusals
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
                fake.requests.append((form, self.headers.get("Authorization", "")))
                status, body = (403, DENIED) if fake.refusals > 0 else (200, ANSWER)
                fake.refusals -= 1
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/xml")
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
def fake() -> Iterator[FakeSts]:
    api = FakeSts()
    yield api
    api.close()


def provider(api: FakeSts, **timings: float) -> SessionProvider:
    return SessionProvider(api.endpoint, credentials=DEPLOYER_KEY, **timings)


def test_create_assumes_the_role_for_the_replica_narrowed_and_timed_as_the_deployer(fake: FakeSts) -> None:
    outs = provider(fake).create(dict(PROPS)).outs
    assert (outs["access_key_id"], outs["secret_access_key"], outs["session_token"]) == (
        "ASIAMINTED0000000001",
        "minted-secret",
        "minted-token",
    )
    assert outs["expiration"].startswith("2026-12-05T13:00:00")
    [(form, authorization)] = fake.requests
    assert form["Action"] == "AssumeRole" and form["RoleArn"] == ROLE
    assert (form["RoleSessionName"], form["DurationSeconds"], form["Policy"]) == (PROPS["session_name"], "3600", POLICY)
    assert f"Credential={DEPLOYER_KEY[0]}/" in authorization and "/us-east-1/sts/aws4_request" in authorization


def test_diff_restarts_nothing_while_the_triggers_hold_and_replaces_on_each(fake: FakeSts) -> None:
    olds = provider(fake).create(dict(PROPS)).outs
    same = provider(fake).diff("id", olds, dict(PROPS))
    assert not same.changes and not same.replaces and len(fake.requests) == 1
    for key, value in {"clock": "2026-12-05T15:00:00Z", "role_arn": ROLE + "2", "policy": "{}",
                       "duration_seconds": 900, "region": "us-west-2", "session_name": "other"}.items():  # fmt: skip
        changed = provider(fake).diff("id", olds, {**PROPS, key: value})
        assert changed.changes and changed.replaces == [key] and changed.delete_before_replace is False
    assert set(RESTART_KEYS) == {"clock", "role_arn", "policy", "duration_seconds", "region", "session_name"}


def test_a_new_role_not_yet_assumable_is_retried_then_started() -> None:
    api = FakeSts(refusals=2)
    try:
        outs = provider(api, retry_seconds=0.01, propagation_seconds=5).create(dict(PROPS)).outs
    finally:
        api.close()
    assert outs["session_token"] == "minted-token" and len(api.requests) == 3


def test_a_refusal_past_propagation_names_what_the_deployer_needs() -> None:
    api = FakeSts(refusals=1000)
    try:
        with pytest.raises(SessionError) as raised:
            provider(api, retry_seconds=0.01, propagation_seconds=0.05).create(dict(PROPS))
    finally:
        api.close()
    assert "AccessDenied" in str(raised.value) and "serving.artifactDeployer" in str(raised.value)
    assert f"sts:AssumeRole on {ROLE}" in str(raised.value)


def test_the_provider_pickles_without_secrets_and_a_long_session_is_refused_before_any_call() -> None:
    plain = SessionProvider()
    assert pickle.loads(pickle.dumps(plain)).endpoint is None and plain.serialize_as_secret_always is False
    with pytest.raises(ValueError, match="900"):
        AwsSession("s", role_arn=ROLE, session_name="s", policy=POLICY, duration_seconds=7200,
                   region="us-east-1", clock="2026-12-05T12:00:00Z")  # fmt: skip
