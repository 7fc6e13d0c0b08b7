"""A Vultr replica reading Google Cloud weights (issue 31, GCP -> Vultr), booted whole (tests/boot/machine): its
complete user data, as the pair's stack hands it to Vultr (the token the mocks minted for it in its write_files), on
Vultr's GPU image, with Cloud Storage reachable from the machine by its real host name over HTTPS
(machine/gcs_fake.py as a service in the machine's network namespace, its certificate from a test CA the machine's
trust store holds: machine/tls_ca.py), as test_vultr_oci_replica_boot.py boots the OCI pair's replica. The replica's
own fetch verifies the certificate as it would Google's; nothing on the machine is told to trust less.

test_vultr_gcp_weights.py runs the fetch lines alone against the store's edge cases; here the whole boot: the replica
fetches the prefix, drops the token and serves, and a reboot fetches nothing; an expired token fails the boot where
the operator reads it (the serial console and the replica's status command)."""

from __future__ import annotations

import base64
import json
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from accelstack.components.handoff.gcs_token import GCS_ENDPOINT, TOKEN_FILE
from accelstack.components.replica.boot_status import STATUS_PATH
from accelstack.components.replica.cloud_config import MODEL_DIR, PREPARE_PATH
from accelstack.components.vultr.images import IMAGES
from tests.boot.machine import Boot, Service, boot, can_boot
from tests.boot.machine.clouds import devices, metadata
from tests.boot.machine.tls_ca import issue
from tests.boot.test_boots_run import documents
from tests.boot.test_vultr_gcp_weights import BUCKET, PREFIX, WEIGHTS, replica
from tests.boot.test_vultr_oci_replica_boot import ASK
from tests.conformance.test_cross_cloud_handoff import pair_capture

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

# Where storage.googleapis.com resolves on the machine (TEST-NET-1: a stand-in for Google's public endpoint).
CLOUD_STORAGE_ADDRESS = "192.0.2.81"


def _epoch(rfc3339: str) -> float:
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def boot_replica(work: Path, seconds_after_mint: float = 600, trusted: bool = True, after: str = ASK) -> Boot:
    """Replica 0 of the pair, booted `seconds_after_mint` after its token was minted (default: 10 minutes, well
    within its lifetime), Cloud Storage answering that token over HTTPS."""
    capture = pair_capture("gcp", "vultr")
    [instance] = [r for r in capture.by_type("vultr:index/instance:Instance") if r.name.endswith("-replica-0")]
    [document] = documents(instance.inputs)
    prepare, token_file, _, outputs = replica(0)
    assert document == instance.inputs["userData"] and token_file.strip() in document  # the minted token, carried
    endpoint = urlsplit(GCS_ENDPOINT)
    assert endpoint.scheme == "https" and endpoint.hostname and endpoint.port is None  # Google's endpoint, port 443
    assert GCS_ENDPOINT in prepare and BUCKET in prepare and PREFIX in prepare
    objects = {PREFIX + name: body for name, body in WEIGHTS.items()}
    objects["models/llama-3.1-8b-other/secret.bin"] = b"a sibling prefix"
    objects["models/other-model/secret.bin"] = b"not this prefix"
    expires = _epoch(outputs["expire_time"])
    certificate = issue(endpoint.hostname, work / "tls")
    config = {
        "bucket": BUCKET,
        "prefix": PREFIX,
        "objects": {name: base64.b64encode(body).decode() for name, body in objects.items()},
        "token": token_file.strip(),
        "expires": expires,
        "now": expires - int(outputs["lifetime_seconds"]) + seconds_after_mint,
        "address": CLOUD_STORAGE_ADDRESS,
        "port": 443,
        "cert": str(certificate.cert),
        "key": str(certificate.key),
        "log": str(work / "gcs-requests.jsonl"),
    }
    ca = certificate.ca_pem if trusted else ""
    store = Service("gcs_fake.py", config, endpoint.hostname, CLOUD_STORAGE_ADDRESS, 443, ca)
    image = IMAGES["serving-replica"]
    return boot(
        "vultr", image, document, work, metadata("vultr", capture, instance), devices("vultr", capture, instance),
        image.release, after=after, stored={"ssm": {}, "vault": {}}, services=(store,),
    )  # fmt: skip


def gcs_requests(machine: Boot) -> list[dict]:
    path = machine.work / "gcs-requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_replica_fetches_its_weights_with_its_token_drops_it_and_serves(tmp_path: Path) -> None:
    # After the boot, the operator asks the replica's status; then its prepare step runs again as on a reboot: no
    # token left, the weights on disk serve.
    machine = boot_replica(tmp_path, after=f"{ASK}{PREPARE_PATH}; echo prepare-exit=$?\n")
    assert machine.ok, machine.explain()
    status_code, output = machine.after
    status = json.loads(output.splitlines()[0])
    assert (status["stage"], status["state"], status["reason"]) == ("serving", "ok", ""), output
    assert "accelstack-replica: serving ok" in machine.console, machine.console
    for name, body in WEIGHTS.items():
        assert (machine.work / "fs" / MODEL_DIR.lstrip("/") / "base" / name).read_bytes() == body, name
    assert not machine.has_file(f"{MODEL_DIR}/base/secret.bin")
    assert not list((machine.work / "fs" / MODEL_DIR.lstrip("/")).rglob("*.part"))
    assert not machine.has_file(TOKEN_FILE)  # the bearer token is gone once used
    requests = gcs_requests(machine)
    assert requests and all(r["status"] == 200 for r in requests), requests
    listings = [r for r in requests if "alt=media" not in r["path"]]
    assert len(listings) >= 2 and any("pageToken=" in r["path"] for r in listings), requests  # pages followed
    assert len(requests) - len(listings) == len(WEIGHTS), requests  # one GET per object, fetched once
    assert not any("other" in unquote(r["path"]) for r in requests), requests  # outside the prefix: never asked
    # The reboot's prepare fetched nothing and succeeded.
    assert status_code == 0 and "status-exit=0" in output and "prepare-exit=0" in output, output
    assert len(gcs_requests(machine)) == len(requests)
    assert json.loads(machine.file(STATUS_PATH))["state"] == "ok"


def test_a_replica_booting_after_its_token_expired_fails_where_the_operator_reads_it(tmp_path: Path) -> None:
    _, _, _, outputs = replica(0)
    machine = boot_replica(tmp_path, seconds_after_mint=int(outputs["lifetime_seconds"]) + 60)
    assert not machine.ok
    status = json.loads(machine.file(STATUS_PATH))
    assert (status["stage"], status["state"]) == ("prepare", "failed"), status
    assert "the weights' access token was refused (401; expired?)" in machine.console, machine.console
    assert "accelstack-replica: prepare failed: exit" in machine.console, machine.console
    assert "serving ok" not in machine.console
    assert not machine.has_file(f"{MODEL_DIR}/base/config.json")
    assert machine.has_file(TOKEN_FILE)  # kept: the step is not half done
    assert [r["status"] for r in gcs_requests(machine)] == [401]  # the listing, refused
    _, output = machine.after
    assert "status-exit=1" in output, output


def test_a_store_whose_certificate_the_machine_does_not_trust_is_not_read(tmp_path: Path) -> None:
    """The replica verifies Cloud Storage's certificate: the same store, its CA not in the machine's trust store, fails
    the fetch before any request is served."""
    machine = boot_replica(tmp_path, trusted=False)
    assert not machine.ok
    assert "Cloud Storage could not be reached for the weights" in machine.console, machine.console
    assert "CERTIFICATE_VERIFY_FAILED" in machine.console, machine.console
    assert gcs_requests(machine) == []
    assert not machine.has_file(f"{MODEL_DIR}/base/config.json")
