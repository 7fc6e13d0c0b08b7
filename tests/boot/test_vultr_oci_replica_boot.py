"""A Vultr replica reading OCI weights (issue 31, OCI -> Vultr), booted whole (tests/boot/machine): its complete user
data, as the pair's stack hands it to Vultr, on Vultr's GPU image, with OCI Object Storage reachable from the machine
by its real host name over HTTPS (machine/oci_par.py as a service in the machine's network namespace, its certificate
from a test CA the machine's trust store holds: machine/tls_ca.py). The replica's own fetch verifies the certificate
as it would Oracle's; nothing on the machine is told to trust less.

test_vultr_oci_weights.py runs the fetch lines alone against the PAR server's edge cases (pages, other PATHs, an
unreachable store); here the whole boot: the replica fetches the prefix, drops the bearer URL and serves; an expired
PAR fails the boot where the operator reads it (the serial console and the replica's status command)."""

from __future__ import annotations

import base64
import json
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from accelstack.components.handoff.oci_par import PAR_URL_FILE
from accelstack.components.replica.boot_status import STATUS_COMMAND, STATUS_PATH
from accelstack.components.replica.cloud_config import MODEL_DIR, PREPARE_PATH
from accelstack.components.vultr.images import IMAGES
from tests.boot.machine import Boot, Service, boot, can_boot
from tests.boot.machine.clouds import devices, metadata
from tests.boot.machine.tls_ca import issue
from tests.boot.test_boots_run import documents
from tests.boot.test_vultr_oci_weights import WEIGHTS, replica
from tests.conformance.test_cross_cloud_handoff import pair_capture

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

# Where the Object Storage host name resolves on the machine (TEST-NET-1: a stand-in for Oracle's public endpoint).
OBJECT_STORAGE_ADDRESS = "192.0.2.80"
ASK = f"{STATUS_COMMAND}; echo status-exit=$?\n"


def _epoch(rfc3339: str) -> float:
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def boot_replica(work: Path, seconds_after_clock: float | None = None, trusted: bool = True, after: str = ASK) -> Boot:
    """Replica 0 of the pair, booted `seconds_after_clock` after its clock (default: 10 minutes, well within the
    PAR's lifetime; None past it is the caller's), Object Storage answering its PAR over HTTPS."""
    capture = pair_capture("oci", "vultr")
    [instance] = [r for r in capture.by_type("vultr:index/instance:Instance") if r.name.endswith("-replica-0")]
    [document] = documents(instance.inputs)
    _, url_file, par_inputs, clock = replica(0)
    url = urlsplit(url_file.strip())
    assert url.scheme == "https" and url.hostname and url.port is None, url_file  # Oracle's endpoint, port 443
    prefix = par_inputs["objectName"]
    objects = {prefix + name: body for name, body in WEIGHTS.items()}
    objects["models/other-model/secret.bin"] = b"not this prefix"
    certificate = issue(url.hostname, work / "tls")
    config = {
        "access_uri": url.path,
        "prefix": prefix,
        "objects": {name: base64.b64encode(body).decode() for name, body in objects.items()},
        "expires": _epoch(par_inputs["timeExpires"]),
        "now": _epoch(clock) + (600 if seconds_after_clock is None else seconds_after_clock),
        "address": OBJECT_STORAGE_ADDRESS,
        "port": 443,
        "cert": str(certificate.cert),
        "key": str(certificate.key),
        "log": str(work / "par-requests.jsonl"),
    }
    store = Service(
        "oci_par.py", config, url.hostname, OBJECT_STORAGE_ADDRESS, 443, certificate.ca_pem if trusted else ""
    )
    image = IMAGES["serving-replica"]
    return boot(
        "vultr", image, document, work, metadata("vultr", capture, instance), devices("vultr", capture, instance),
        image.release, after=after, stored={"ssm": {}, "vault": {}}, services=(store,),
    )  # fmt: skip


def par_requests(machine: Boot) -> list[dict]:
    path = machine.work / "par-requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_replica_fetches_its_weights_through_the_par_drops_the_url_and_serves(tmp_path: Path) -> None:
    # After the boot, the operator asks the replica's status; then its prepare step runs again as on a reboot: no
    # URL left, the weights on disk serve.
    machine = boot_replica(tmp_path, after=f"{ASK}{PREPARE_PATH}; echo prepare-exit=$?\n")
    assert machine.ok, machine.explain()
    status_code, output = machine.after
    status = json.loads(output.splitlines()[0])
    assert (status["stage"], status["state"], status["reason"]) == ("serving", "ok", ""), output
    assert "accelstack-replica: serving ok" in machine.console, machine.console
    for name, body in WEIGHTS.items():
        assert (machine.work / "fs" / MODEL_DIR.lstrip("/") / "base" / name).read_bytes() == body, name
    assert not machine.has_file(f"{MODEL_DIR}/base/secret.bin")
    assert not machine.has_file(PAR_URL_FILE)  # the bearer URL is gone once used
    requests = par_requests(machine)
    assert requests and all(r["status"] == 200 for r in requests), requests
    listings = [r for r in requests if "?" in r["path"]]
    assert len(listings) >= 2, requests  # pages followed
    assert len(requests) - len(listings) == len(WEIGHTS), requests  # one GET per object, fetched once
    assert not any("other-model" in r["path"] for r in requests), requests
    # The reboot's prepare fetched nothing and succeeded.
    assert status_code == 0 and "status-exit=0" in output and "prepare-exit=0" in output, output
    assert len(par_requests(machine)) == len(requests)
    assert json.loads(machine.file(STATUS_PATH))["state"] == "ok"


def test_a_replica_booting_after_its_par_expired_fails_where_the_operator_reads_it(tmp_path: Path) -> None:
    _, _, par_inputs, clock = replica(0)
    lifetime = _epoch(par_inputs["timeExpires"]) - _epoch(clock)
    machine = boot_replica(tmp_path, seconds_after_clock=lifetime + 60)
    assert not machine.ok
    status = json.loads(machine.file(STATUS_PATH))
    assert (status["stage"], status["state"]) == ("prepare", "failed"), status
    assert "the weights' pre-authenticated request was refused (404; expired?)" in machine.console, machine.console
    assert "accelstack-replica: prepare failed: exit" in machine.console, machine.console
    assert "serving ok" not in machine.console
    assert not machine.has_file(f"{MODEL_DIR}/base/config.json")
    assert [r["status"] for r in par_requests(machine)] == [404]  # the listing, refused
    _, output = machine.after
    assert "status-exit=1" in output, output


def test_a_store_whose_certificate_the_machine_does_not_trust_is_not_read(tmp_path: Path) -> None:
    """The replica verifies Object Storage's certificate: the same store, its CA not in the machine's trust store,
    fails the fetch before any request is served."""
    machine = boot_replica(tmp_path, trusted=False)
    assert not machine.ok
    assert "OCI Object Storage could not be reached for the weights" in machine.console, machine.console
    assert "CERTIFICATE_VERIFY_FAILED" in machine.console, machine.console
    assert par_requests(machine) == []
    assert not machine.has_file(f"{MODEL_DIR}/base/config.json")
