"""A Vultr replica reading AWS weights (issue 31, AWS -> Vultr), booted whole (tests/boot/machine): its complete user
data, as the pair's stack hands it to Vultr (the STS session the mocks started for it in its write_files), on Vultr's
GPU image, with S3's Regional endpoint reachable from the machine by its real host name over HTTPS
(machine/s3_fake.py as a service in the machine's network namespace, checking each request's SigV4 signature over
that host with botocore's signer; its certificate from a test CA the machine's trust store holds: machine/tls_ca.py),
as test_vultr_oci_replica_boot.py boots the OCI pair's replica. The replica's own fetch verifies the certificate as
it would Amazon's; nothing on the machine is told to trust less.

test_vultr_aws_weights.py runs the fetch lines alone against the store's edge cases; here the whole boot: the replica
fetches the prefix, drops the credentials and serves, and a reboot fetches nothing; an expired session fails the
boot where the operator reads it (the serial console and the replica's status command)."""

from __future__ import annotations

import base64
import json
import sys
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from accelstack.components.handoff.s3_session import CREDENTIAL_FILE, s3_endpoint
from accelstack.components.replica.boot_status import STATUS_PATH
from accelstack.components.replica.cloud_config import MODEL_DIR, PREPARE_PATH
from accelstack.components.vultr.images import IMAGES
from tests.boot.machine import Boot, Service, boot, can_boot
from tests.boot.machine.clouds import devices, metadata
from tests.boot.machine.tls_ca import issue
from tests.boot.test_boots_run import documents
from tests.boot.test_vultr_aws_weights import BUCKET, PREFIX, REGION, WEIGHTS, replica
from tests.boot.test_vultr_oci_replica_boot import ASK
from tests.conformance.test_cross_cloud_handoff import pair_capture

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

# Where s3.<region>.amazonaws.com resolves on the machine (TEST-NET-1: a stand-in for Amazon's public endpoint).
S3_ADDRESS = "192.0.2.82"


def _epoch(rfc3339: str) -> float:
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def boot_replica(work: Path, seconds_after_start: float = 600, trusted: bool = True, after: str = ASK) -> Boot:
    """Replica 0 of the pair, booted `seconds_after_start` after its session started (default: 10 minutes, well
    within its lifetime), S3 answering requests that session signed over HTTPS."""
    capture = pair_capture("aws", "vultr")
    [instance] = [r for r in capture.by_type("vultr:index/instance:Instance") if r.name.endswith("-replica-0")]
    [document] = documents(instance.inputs)
    prepare, credentials, outputs = replica(0)
    keys = dict(line.split("=", 1) for line in credentials.split())
    assert document == instance.inputs["userData"] and all(value in document for value in keys.values())  # carried
    endpoint = s3_endpoint(REGION)
    address = urlsplit(endpoint)
    assert address.scheme == "https" and address.hostname and address.port is None  # Amazon's endpoint, port 443
    assert endpoint in prepare and BUCKET in prepare and PREFIX in prepare
    objects = {PREFIX + name: body for name, body in WEIGHTS.items()}
    objects["models/llama-3.1-8b-other/secret.bin"] = b"a sibling prefix"
    objects["models/other-model/secret.bin"] = b"not this prefix"
    expires = _epoch(outputs["expiration"])
    certificate = issue(address.hostname, work / "tls")
    config = {
        "bucket": BUCKET,
        "prefix": PREFIX,
        "objects": {name: base64.b64encode(body).decode() for name, body in objects.items()},
        "session": [keys["AWS_ACCESS_KEY_ID"], keys["AWS_SECRET_ACCESS_KEY"], keys["AWS_SESSION_TOKEN"]],
        "region": REGION,
        "expires": expires,
        "now": expires - int(outputs["duration_seconds"]) + seconds_after_start,
        "endpoint": endpoint,
        "address": S3_ADDRESS,
        "port": 443,
        "cert": str(certificate.cert),
        "key": str(certificate.key),
        "log": str(work / "s3-requests.jsonl"),
    }
    # The store checks signatures with botocore: it runs on this test's interpreter, outside the machine.
    ca = certificate.ca_pem if trusted else ""
    store = Service("s3_fake.py", config, address.hostname, S3_ADDRESS, 443, ca, sys.executable)
    image = IMAGES["serving-replica"]
    return boot(
        "vultr", image, document, work, metadata("vultr", capture, instance), devices("vultr", capture, instance),
        image.release, after=after, stored={"ssm": {}, "vault": {}}, services=(store,),
    )  # fmt: skip


def s3_requests(machine: Boot) -> list[dict]:
    path = machine.work / "s3-requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_replica_fetches_its_weights_signed_with_its_session_drops_it_and_serves(tmp_path: Path) -> None:
    # After the boot, the operator asks the replica's status; then its prepare step runs again as on a reboot: no
    # credentials left, the weights on disk serve.
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
    assert not machine.has_file(CREDENTIAL_FILE)  # the bearer credentials are gone once used
    requests = s3_requests(machine)
    assert requests and all(r["status"] == 200 for r in requests), requests  # every signature good
    listings = [r for r in requests if "list-type=2" in r["path"]]
    assert len(listings) >= 2 and any("continuation-token=" in r["path"] for r in listings), requests  # pages
    assert len(requests) - len(listings) == len(WEIGHTS), requests  # one GET per object, fetched once
    assert not any("other" in unquote(r["path"]) for r in requests), requests  # outside the prefix: never asked
    # The reboot's prepare fetched nothing and succeeded.
    assert status_code == 0 and "status-exit=0" in output and "prepare-exit=0" in output, output
    assert len(s3_requests(machine)) == len(requests)
    assert json.loads(machine.file(STATUS_PATH))["state"] == "ok"


def test_a_replica_booting_after_its_session_expired_fails_where_the_operator_reads_it(tmp_path: Path) -> None:
    _, _, outputs = replica(0)
    machine = boot_replica(tmp_path, seconds_after_start=int(outputs["duration_seconds"]) + 60)
    assert not machine.ok
    status = json.loads(machine.file(STATUS_PATH))
    assert (status["stage"], status["state"]) == ("prepare", "failed"), status
    message = "the weights' session credentials were refused (400 ExpiredToken; expired?)"
    assert message in machine.console, machine.console
    assert "accelstack-replica: prepare failed: exit" in machine.console, machine.console
    assert "serving ok" not in machine.console
    assert not machine.has_file(f"{MODEL_DIR}/base/config.json")
    assert machine.has_file(CREDENTIAL_FILE)  # kept: the step is not half done
    assert [r["status"] for r in s3_requests(machine)] == [400]  # the listing, refused
    _, output = machine.after
    assert "status-exit=1" in output, output


def test_a_store_whose_certificate_the_machine_does_not_trust_is_not_read(tmp_path: Path) -> None:
    """The replica verifies S3's certificate: the same store, its CA not in the machine's trust store, fails
    the fetch before any request is served."""
    machine = boot_replica(tmp_path, trusted=False)
    assert not machine.ok
    assert "S3 could not be reached for the weights" in machine.console, machine.console
    assert "CERTIFICATE_VERIFY_FAILED" in machine.console, machine.console
    assert s3_requests(machine) == []
    assert not machine.has_file(f"{MODEL_DIR}/base/config.json")
