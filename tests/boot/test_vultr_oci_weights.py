"""A Vultr replica reading OCI weights (issue 31, OCI -> Vultr): its prepare step, as its user data carries it, run
against Object Storage answering its pre-authenticated request on 127.0.0.1 (machine/oci_par.py: only the exact
access URI, only until the PAR's expiry, a list then a GET per object). The step lists the prefix page by page,
writes each object under the model directory, deletes its copy of the URL; a reboot fetches nothing; a replica
that runs its prepare step after its PAR expired fails it, saying why, with no weights."""

from __future__ import annotations

import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import yaml

from accelstack.components.handoff.oci_par import PAR_URL_FILE
from accelstack.components.replica.cloud_config import MODEL_DIR, PREPARE_PATH
from tests.boot.machine.oci_par import ParStore
from tests.conformance.test_cross_cloud_handoff import pair_capture

OCI_HOST = "https://objectstorage.us-ashburn-1.oraclecloud.com"


def replica(index: int = 0) -> tuple[str, str, dict, str]:
    """(prepare script, PAR URL file, the PAR's inputs, its clock) of replica `index` as deployed (mocks)."""
    cap = pair_capture("oci", "vultr")
    [instance] = [r for r in cap.by_type("vultr:index/instance:Instance") if r.name.endswith(f"-replica-{index}")]
    files = {f["path"]: f["content"] for f in yaml.safe_load(instance.inputs["userData"])["write_files"]}
    [par] = [
        p for p in cap.by_type("oci:ObjectStorage/preauthrequest:Preauthrequest") if f"-replica-{index}-" in p.name
    ]
    [clock] = [c for c in cap.by_type("time:index/static:Static") if c.name.endswith(f"-replica-{index}-key-clock")]
    return files[PREPARE_PATH], files[PAR_URL_FILE], par.inputs, clock.outputs["rfc3339"]


def par_block(prepare: str) -> str:
    """The PAR fetch of the prepare script: from its `if [ -s <url file> ]` to its `fi`."""
    lines = prepare.splitlines()
    start = lines.index(f"if [ -s {PAR_URL_FILE} ]; then")
    end = lines.index("fi", start)
    return "\n".join(lines[start : end + 1])


def run_prepare(tmp_path: Path, store: ParStore, url_file: str | None) -> subprocess.CompletedProcess[str]:
    prepare, _, _, _ = replica()
    urls = tmp_path / "weights-par.urls"
    if url_file is not None:
        urls.write_text(url_file.replace(OCI_HOST, store.base))
    script = "set -euo pipefail\n" + par_block(prepare).replace(PAR_URL_FILE, str(urls)).replace(
        MODEL_DIR, str(tmp_path / "models")
    )
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)


WEIGHTS = {
    "config.json": b'{"architectures": ["LlamaForCausalLM"]}',
    "model-00001-of-00002.safetensors": b"\x00" * 64,
    "model-00002-of-00002.safetensors": b"\x01" * 64,
    "tokenizer/tokenizer.json": b"{}",
}


def store_for(url_file: str, inputs: dict, clock: str, after_clock: timedelta) -> ParStore:
    access_uri = url_file.strip().removeprefix(OCI_HOST)
    prefix = inputs["objectName"]
    objects = {prefix + name: body for name, body in WEIGHTS.items()}
    objects["models/other-model/secret.bin"] = b"not this prefix"
    start = datetime.fromisoformat(clock.replace("Z", "+00:00"))
    expires = datetime.fromisoformat(inputs["timeExpires"].replace("Z", "+00:00")).timestamp()
    return ParStore(access_uri, prefix, objects, expires=expires, now=(start + after_clock).timestamp())


def test_the_prefix_is_listed_and_fetched_through_the_par_and_the_url_dropped(tmp_path: Path) -> None:
    _, url_file, inputs, clock = replica()
    assert url_file.startswith(f"{OCI_HOST}/p/") and url_file.count("\n") == 1
    with store_for(url_file, inputs, clock, timedelta(minutes=10)) as store:
        result = run_prepare(tmp_path, store, url_file)
        assert result.returncode == 0, result.stderr
        for name, body in WEIGHTS.items():
            assert (tmp_path / "models/base" / name).read_bytes() == body
        assert not (tmp_path / "weights-par.urls").exists()  # the bearer URL is gone once used
        listed = [p for s, p in store.requests if "?" in p]
        assert len(listed) >= 2 and all(s == 200 for s, _ in store.requests)  # pages followed, nothing refused
        assert not any("other-model" in p for _, p in store.requests)
        # A reboot: no URL left, the weights on disk serve, nothing is fetched.
        before = len(store.requests)
        again = run_prepare(tmp_path, store, None)
        assert again.returncode == 0, again.stderr
        assert len(store.requests) == before


def test_a_replica_preparing_after_its_par_expired_fails_saying_why(tmp_path: Path) -> None:
    _, url_file, inputs, clock = replica()
    with store_for(url_file, inputs, clock, timedelta(minutes=121)) as store:
        result = run_prepare(tmp_path, store, url_file)
    assert result.returncode != 0
    assert "pre-authenticated request was refused (404; expired?)" in result.stderr
    assert not (tmp_path / "models/base/config.json").exists()


def test_only_the_exact_par_path_is_honoured(tmp_path: Path) -> None:
    """The fake store is not lenient: another replica's PAR path (another token) gets nothing from this one's."""
    _, url_file, inputs, clock = replica(0)
    _, other_url, _, _ = replica(1)
    assert other_url != url_file  # each replica has a PAR of its own
    with store_for(url_file, inputs, clock, timedelta(minutes=10)) as store:
        result = run_prepare(tmp_path, store, other_url)
    assert result.returncode != 0 and "refused (404" in result.stderr


def test_an_unreachable_object_storage_fails_the_step_saying_so(tmp_path: Path) -> None:
    _, url_file, inputs, clock = replica()
    with store_for(url_file, inputs, clock, timedelta(minutes=10)) as store:
        base = store.base
    # The store is shut down: nothing listens at its address any more.
    urls = tmp_path / "weights-par.urls"
    urls.write_text(url_file.replace(OCI_HOST, base))
    prepare, _, _, _ = replica()
    script = "set -euo pipefail\n" + par_block(prepare).replace(PAR_URL_FILE, str(urls)).replace(
        MODEL_DIR, str(tmp_path / "models")
    )
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "OCI Object Storage could not be reached for the weights" in result.stderr
    assert urls.exists()  # kept for the next try (a reboot before the expiry)
