"""A Vultr replica's weights key, on the machine (tests/boot/machine): the boot fetches the key once through the URL
its user data carries, which Object Storage honours only as botocore signs it and only until it expires
(machine/stub.py: vultr_object), keeps it root-only, deletes its copy of the URL, and reads the weights with it; a
reboot needs no URL; a replica that boots after its URL expired fails its prepare step, saying why, with no key."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from accelstack.components.vultr.images import IMAGES
from accelstack.components.vultr.serving.weights_key import WEIGHTS_KEY_FILE, WEIGHTS_KEY_URL_FILE
from accelstack.spec import load_stack
from tests.boot.machine import Boot, boot, can_boot
from tests.boot.machine.clouds import VULTR_SCOPED_KEY, devices, metadata, objects
from tests.boot.test_boots_run import documents
from tests.stack_edits import REPO, deployed

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))

STACK = "vultr-serving"
PREPARE = "/usr/local/bin/accelstack-prepare"


def boot_replica(tmp_path: Path, boot_delay: int, after: str = "") -> Boot:
    capture = deployed(STACK)[0]
    [replica] = [r for r in capture.by_type("vultr:index/instance:Instance") if r.name.endswith("-replica-0")]
    [document] = documents(replica.inputs)
    image = IMAGES["serving-replica"]
    return boot(
        "vultr", image, document, tmp_path, metadata("vultr", capture, replica), devices("vultr", capture, replica),
        image.release, after=after, stored=objects("vultr", capture, replica, boot_delay=boot_delay),
    )  # fmt: skip


def test_the_key_is_fetched_once_kept_root_only_and_the_url_dropped(tmp_path: Path) -> None:
    # After the boot, the prepare step runs again as on a reboot: the URL is gone, the key on disk serves.
    machine = boot_replica(tmp_path, boot_delay=600, after=f"{PREPARE}\n")
    assert machine.ok, machine.explain()
    assert machine.file(WEIGHTS_KEY_FILE) == (
        f"AWS_ACCESS_KEY_ID={VULTR_SCOPED_KEY[0]}\nAWS_SECRET_ACCESS_KEY={VULTR_SCOPED_KEY[1]}\n"
    )
    mode = (machine.work / "fs" / WEIGHTS_KEY_FILE.lstrip("/")).stat().st_mode
    assert stat.S_IMODE(mode) == 0o600
    assert not machine.has_file(WEIGHTS_KEY_URL_FILE)
    fetches = [c for c in machine.calls if c.get("command") == "curl" and "vultrobjects.com" in str(c.get("url"))]
    assert [c["status"] for c in fetches] == [200], fetches
    syncs = [c for c in machine.calls if c.get("command") == "aws" and c.get("args", [])[:2] == ["s3", "sync"]]
    model = load_stack(REPO / "stacks" / f"Pulumi.{STACK}.yaml").serving.model  # type: ignore[union-attr]
    assert any(model.weights_uri in c["args"] for c in syncs), syncs
    status, log = machine.after
    assert status == 0, log


def test_a_replica_booting_after_its_url_expired_fails_its_prepare_without_a_key(tmp_path: Path) -> None:
    lifetime = load_stack(REPO / "stacks" / f"Pulumi.{STACK}.yaml").account.weights_key.url_lifetime_minutes  # type: ignore[union-attr]
    machine = boot_replica(tmp_path, boot_delay=lifetime * 60 + 1)
    assert not machine.ok
    assert "the weights key URL was refused (expired?)" in machine.console
    assert "prepare failed" in machine.console
    assert not machine.has_file(WEIGHTS_KEY_FILE)
    assert not [c for c in machine.calls if c.get("command") == "aws"]
