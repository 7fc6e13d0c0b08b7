"""A Vultr replica reading Google Cloud weights (issue 31, GCP -> Vultr): its prepare step, as its user data carries
it, run against Cloud Storage's JSON API on 127.0.0.1 (machine/gcs_fake.py: only the replica's bearer token, only
until it expires, only the artifact prefix). The step lists the prefix page by page, downloads each object (names
with spaces and non-ASCII letters included) under the model directory and deletes its copy of the token; a reboot
fetches nothing; a replica preparing after its token expired fails saying why, with no weights; nothing outside the
prefix is ever asked for."""

from __future__ import annotations

import os
import subprocess
import urllib.parse
from datetime import datetime, timedelta
from pathlib import Path

import yaml

from accelstack.components.handoff.gcs_token import GCS_ENDPOINT, TOKEN_FILE
from accelstack.components.replica.cloud_config import MODEL_DIR, PREPARE_PATH
from tests.boot.machine.gcs_fake import GcsStore
from tests.conformance.test_cross_cloud_handoff import pair_capture

BUCKET, PREFIX = "acme-train-checkpoints", "models/llama-3.1-8b/"


def replica(index: int = 0) -> tuple[str, str, dict, dict]:
    """(prepare script, token file, the token's inputs and outputs) of replica `index` as deployed (mocks)."""
    cap = pair_capture("gcp", "vultr")
    [instance] = [r for r in cap.by_type("vultr:index/instance:Instance") if r.name.endswith(f"-replica-{index}")]
    files = {f["path"]: f["content"] for f in yaml.safe_load(instance.inputs["userData"])["write_files"]}
    [token] = [t for t in cap.resources if t.type.endswith(":GcpAccessToken") and f"-replica-{index}-" in t.name]
    return files[PREPARE_PATH], files[TOKEN_FILE], token.inputs, token.outputs


def token_block(prepare: str) -> str:
    lines = prepare.splitlines()
    start = lines.index(f"if [ -s {TOKEN_FILE} ]; then")
    end = lines.index("fi", start)
    return "\n".join(lines[start : end + 1])


def run_prepare(tmp_path: Path, store: GcsStore, token_file: str | None) -> subprocess.CompletedProcess[str]:
    prepare, _, _, _ = replica()
    token = tmp_path / "weights-gcs.token"
    if token_file is not None:
        token.write_text(token_file)
    script = "set -euo pipefail\n" + token_block(prepare).replace(TOKEN_FILE, str(token)).replace(
        MODEL_DIR, str(tmp_path / "models")
    ).replace(GCS_ENDPOINT, store.base)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)


WEIGHTS = {
    "config.json": b'{"architectures": ["LlamaForCausalLM"]}',
    "model-00001-of-00002.safetensors": b"\x00" * 64,
    "model-00002-of-00002.safetensors": b"\x01" * 64,
    "tokenizer/special tokens \u00e9\u00e8 \u4e2d.json": b'{"unicode": true}',
    "tokenizer/tokenizer.json": b"{}",
}


def store_for(token: str, outputs: dict, after_clock: timedelta) -> GcsStore:
    objects = {PREFIX + name: body for name, body in WEIGHTS.items()}
    objects["models/llama-3.1-8b-other/secret.bin"] = b"a sibling prefix"
    objects["models/other-model/secret.bin"] = b"not this prefix"
    expires = datetime.fromisoformat(outputs["expire_time"].replace("Z", "+00:00"))
    minted = expires - timedelta(seconds=int(outputs["lifetime_seconds"]))
    return GcsStore(BUCKET, PREFIX, objects, token, expires=expires.timestamp(), now=(minted + after_clock).timestamp())


def test_the_prefix_is_listed_and_fetched_with_the_token_and_the_token_dropped(tmp_path: Path) -> None:
    _, token_file, inputs, outputs = replica()
    token = token_file.strip()
    assert token.startswith("ya29.") and token_file.count("\n") == 1
    assert inputs["scope"] == "https://www.googleapis.com/auth/devstorage.read_only"
    with store_for(token, outputs, timedelta(minutes=10)) as store:
        result = run_prepare(tmp_path, store, token_file)
        assert result.returncode == 0, result.stderr
        for name, body in WEIGHTS.items():
            assert (tmp_path / "models/base" / name).read_bytes() == body
        assert not (tmp_path / "weights-gcs.token").exists()  # the bearer token is gone once used
        listed = [p for s, p in store.requests if "alt=media" not in p]
        assert len(listed) == 3 and all(s == 200 for s, _ in store.requests)  # pages followed, nothing refused
        assert any("pageToken=" in p for p in listed)
        assert not any("other" in urllib.parse.unquote(p) for _, p in store.requests)  # outside: never asked for
        assert not list((tmp_path / "models/base").rglob("*.part"))
        # A reboot: no token left, the weights on disk serve, nothing is fetched.
        before = len(store.requests)
        again = run_prepare(tmp_path, store, None)
        assert again.returncode == 0, again.stderr
        assert len(store.requests) == before


def test_a_replica_preparing_after_its_token_expired_fails_saying_why(tmp_path: Path) -> None:
    _, token_file, _, outputs = replica()
    with store_for(token_file.strip(), outputs, timedelta(minutes=61)) as store:
        result = run_prepare(tmp_path, store, token_file)
    assert result.returncode != 0
    assert "the weights' access token was refused (401; expired?)" in result.stderr
    assert not (tmp_path / "models/base/config.json").exists()
    assert (tmp_path / "weights-gcs.token").exists()  # kept: the failure is on record, the step not half done


def test_each_replica_has_its_own_token_and_another_is_refused(tmp_path: Path) -> None:
    _, token_file, _, outputs = replica(0)
    _, other_token, _, _ = replica(1)
    assert other_token != token_file
    with store_for(token_file.strip(), outputs, timedelta(minutes=10)) as store:
        result = run_prepare(tmp_path, store, other_token)
    assert result.returncode != 0 and "refused (401" in result.stderr


def test_the_token_never_appears_on_a_command_line(tmp_path: Path) -> None:
    """The fetch reads the token from its root-only file: `ps` on the replica shows no bearer token."""
    prepare, token_file, _, _ = replica()
    assert token_file.strip() not in prepare
    assert f"{TOKEN_FILE}" in token_block(prepare) and "Bearer" in token_block(prepare)
    assert oct(0o600) in {oct(int(f["permissions"], 8)) for f in user_data_files() if f["path"] == TOKEN_FILE}


def user_data_files() -> list[dict]:
    cap = pair_capture("gcp", "vultr")
    instance = cap.by_type("vultr:index/instance:Instance")[0]
    return list(yaml.safe_load(instance.inputs["userData"])["write_files"])


def test_an_unreachable_cloud_storage_fails_the_step_saying_so(tmp_path: Path) -> None:
    _, token_file, _, outputs = replica()
    with store_for(token_file.strip(), outputs, timedelta(minutes=10)) as store:
        pass
    result = run_prepare(tmp_path, store, token_file)  # the store is shut down: nothing listens at its address
    assert result.returncode != 0
    assert "Cloud Storage could not be reached for the weights" in result.stderr
    assert os.path.exists(tmp_path / "weights-gcs.token")  # kept for the next try (a reboot before the expiry)
