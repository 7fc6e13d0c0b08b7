"""A Vultr replica reading AWS weights (issue 31, AWS -> Vultr): its prepare step, as its user data carries it, run
against S3 on 127.0.0.1 (machine/s3_fake.py: only requests botocore's S3 signer would sign alike with the replica's
session, only until the session expires, only the artifact prefix). The step lists the prefix page by page
(ListObjectsV2 continuation tokens), downloads each object (names with spaces and non-ASCII letters included) under
the model directory and deletes its copy of the credentials; a reboot fetches nothing; a replica preparing after its
session expired fails saying why, with no weights; nothing outside the prefix is ever asked for."""

from __future__ import annotations

import subprocess
import urllib.parse
from datetime import datetime, timedelta
from pathlib import Path

import yaml

from accelstack.components.handoff.s3_session import CREDENTIAL_FILE, s3_endpoint
from accelstack.components.replica.cloud_config import MODEL_DIR, PREPARE_PATH
from tests.boot.machine.s3_fake import S3Store
from tests.conformance.test_cross_cloud_handoff import pair_capture

BUCKET, PREFIX, REGION = "acme-train-checkpoints", "models/llama-3.1-8b/", "us-east-1"


def replica(index: int = 0) -> tuple[str, str, dict]:
    """(prepare script, credential file, the session's outputs) of replica `index` as deployed (mocks)."""
    cap = pair_capture("aws", "vultr")
    [instance] = [r for r in cap.by_type("vultr:index/instance:Instance") if r.name.endswith(f"-replica-{index}")]
    files = {f["path"]: f["content"] for f in yaml.safe_load(instance.inputs["userData"])["write_files"]}
    [session] = [s for s in cap.resources if s.type.endswith(":AwsSession") and f"-replica-{index}-" in s.name]
    return files[PREPARE_PATH], files[CREDENTIAL_FILE], session.outputs


def session_block(prepare: str) -> str:
    lines = prepare.splitlines()
    start = lines.index(f"if [ -s {CREDENTIAL_FILE} ]; then")
    return "\n".join(lines[start : lines.index("fi", start) + 1])


def run_prepare(tmp_path: Path, store: S3Store, credentials: str | None) -> subprocess.CompletedProcess[str]:
    prepare, _, _ = replica()
    path = tmp_path / "weights-s3.env"
    if credentials is not None:
        path.write_text(credentials)
    script = "set -euo pipefail\n" + session_block(prepare).replace(CREDENTIAL_FILE, str(path)).replace(
        MODEL_DIR, str(tmp_path / "models")
    ).replace(s3_endpoint(REGION), store.base)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)


WEIGHTS = {
    "config.json": b'{"architectures": ["LlamaForCausalLM"]}',
    "model-00001-of-00002.safetensors": b"\x00" * 64,
    "model-00002-of-00002.safetensors": b"\x01" * 64,
    "tokenizer/special tokens \u00e9\u00e8 \u4e2d+&=.json": b'{"unicode": true}',
    "tokenizer/tokenizer.json": b"{}",
}


def store_for(credentials: str, outputs: dict, after_start: timedelta) -> S3Store:
    keys = dict(line.split("=", 1) for line in credentials.split())
    session = (keys["AWS_ACCESS_KEY_ID"], keys["AWS_SECRET_ACCESS_KEY"], keys["AWS_SESSION_TOKEN"])
    objects = {PREFIX + name: body for name, body in WEIGHTS.items()}
    objects["models/llama-3.1-8b-other/secret.bin"] = b"a sibling prefix"
    objects["models/other-model/secret.bin"] = b"not this prefix"
    expires = datetime.fromisoformat(outputs["expiration"].replace("Z", "+00:00"))
    started = expires - timedelta(seconds=int(outputs["duration_seconds"]))
    return S3Store(BUCKET, PREFIX, objects, session, REGION, expires.timestamp(), (started + after_start).timestamp())


def test_the_prefix_is_listed_and_fetched_signed_with_the_session_and_the_credentials_dropped(tmp_path: Path) -> None:
    _, credentials, outputs = replica()
    assert credentials.startswith("AWS_ACCESS_KEY_ID=ASIA") and "AWS_SESSION_TOKEN=" in credentials
    with store_for(credentials, outputs, timedelta(minutes=10)) as store:
        result = run_prepare(tmp_path, store, credentials)
        assert result.returncode == 0, result.stderr
        for name, body in WEIGHTS.items():
            assert (tmp_path / "models/base" / name).read_bytes() == body
        assert not (tmp_path / "weights-s3.env").exists()  # the bearer credentials are gone once used
        listed = [p for _, p in store.requests if "list-type=2" in p]
        assert len(listed) == 3 and all(s == 200 for s, _ in store.requests)  # pages followed, every signature good
        assert any("continuation-token=" in p for p in listed)
        assert not any("other" in urllib.parse.unquote(p) for _, p in store.requests)  # outside: never asked for
        before = len(store.requests)
        again = run_prepare(tmp_path, store, None)  # a reboot: nothing left to fetch with, the weights on disk serve
        assert again.returncode == 0, again.stderr
        assert len(store.requests) == before


def test_a_replica_preparing_after_its_session_expired_fails_saying_why(tmp_path: Path) -> None:
    _, credentials, outputs = replica()
    with store_for(credentials, outputs, timedelta(minutes=61)) as store:
        result = run_prepare(tmp_path, store, credentials)
    assert result.returncode != 0
    assert "the weights' session credentials were refused (400 ExpiredToken; expired?)" in result.stderr
    assert not (tmp_path / "models/base/config.json").exists()


def test_each_replica_has_its_own_session_and_another_is_refused(tmp_path: Path) -> None:
    _, credentials, outputs = replica(0)
    _, other, _ = replica(1)
    assert other != credentials
    with store_for(credentials, outputs, timedelta(minutes=10)) as store:
        result = run_prepare(tmp_path, store, other)
    assert result.returncode != 0 and "refused (403 SignatureDoesNotMatch" in result.stderr


def test_the_credentials_never_appear_on_a_command_line() -> None:
    prepare, credentials, _ = replica()
    assert not any(value.split("=", 1)[1] in prepare for value in credentials.split())
    assert CREDENTIAL_FILE in session_block(prepare)


def test_an_unreachable_s3_fails_the_step_saying_so(tmp_path: Path) -> None:
    _, credentials, outputs = replica()
    with store_for(credentials, outputs, timedelta(minutes=10)) as store:
        pass
    result = run_prepare(tmp_path, store, credentials)
    assert result.returncode != 0 and "S3 could not be reached for the weights" in result.stderr
    assert (tmp_path / "weights-s3.env").exists()  # kept for the next try
