"""The replica's cloud-init user data on Compute Engine: a valid #cloud-config (checked by cloud-init's
own schema), carrying the worker and its Pub/Sub client verbatim, the environment the worker reads,
one sync per artifact, and within the metadata value limit."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from accelstack.components.base import ServingServiceArgs
from accelstack.components.gcp.serving.user_data import METADATA_VALUE_LIMIT_BYTES, render_replica_artifacts
from accelstack.components.replica.queue_worker import Config
from accelstack.spec import load_stack

EXAMPLE = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.gcp-serving.yaml"
ADAPTERS = (
    "serving.model.adapters=[{name: acme-support, uri: 'gs://acme-train-checkpoints/models/adapters/a/', rank: 16}]"
)


def user_data(*overrides: str) -> str:
    return render_replica_artifacts(ServingServiceArgs.of(load_stack(EXAMPLE, list(overrides))))[
        "replica-user-data.yaml"
    ]


def files(document: str) -> dict[str, dict]:
    return {f["path"]: f for f in yaml.safe_load(document)["write_files"]}


def test_cloud_init_accepts_the_cloud_config(tmp_path) -> None:
    if shutil.which("cloud-init") is None:
        pytest.skip("cloud-init is not installed")
    path = tmp_path / "user-data.yaml"
    path.write_text(user_data(ADAPTERS))
    result = subprocess.run(["cloud-init", "schema", "-c", str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_worker_and_pubsub_client_ship_verbatim() -> None:
    written = files(user_data())
    repo = EXAMPLE.parents[1]
    for name, source in {
        "queue_worker.py": "components/replica/queue_worker.py",
        "pubsub_queue.py": "components/gcp/replica/pubsub_queue.py",
    }.items():
        assert base64.b64decode(written[f"/opt/accelstack/{name}"]["content"]) == (repo / source).read_bytes()


def test_the_worker_reads_its_environment_with_the_pubsub_names() -> None:
    env_file = files(user_data())["/etc/accelstack/worker.env"]["content"]
    env = dict(line.split("=", 1) for line in env_file.splitlines() if line)
    assert env["QUEUE_CLIENT"] == "pubsub_queue"
    assert (env["REQUEST_SUBSCRIPTION"], env["RESPONSE_TOPIC"]) == ("${REQUEST_SUBSCRIPTION}", "${RESPONSE_TOPIC}")
    config = Config.from_env(env)
    assert config.lease_seconds <= 600  # Pub/Sub's ack deadline maximum
    assert config.ttl_seconds == 600


def test_every_artifact_is_synced_and_the_size_stays_under_the_metadata_limit() -> None:
    document = user_data(ADAPTERS)
    prepare = files(document)["/usr/local/bin/accelstack-prepare"]["content"]
    assert prepare.count("gcloud storage rsync") == 2
    assert "gs://acme-train-checkpoints/models/adapters/a/ /opt/accelstack/models/adapters/acme-support" in prepare
    assert len(document.encode()) < METADATA_VALUE_LIMIT_BYTES
