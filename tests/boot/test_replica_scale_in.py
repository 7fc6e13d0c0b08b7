"""Azure scale-in without dropping generations (issue 27): the replicas' scale set sends a Terminate
scheduled event before it deletes a VM (terminateNotificationProfile), and the replica's terminate watcher, started
by its own boot document, drains the unit in front of the server and then approves the event. Booted on the replica
image; the metadata service posts the event as Azure does, for this VM or for another one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelstack.components.azure.serving.replicas import TERMINATE_NOTICE_MINUTES
from accelstack.components.replica.cloud_config import WORKER_UNIT
from tests.boot.machine import can_boot
from tests.boot.test_boots_run import IMAGES, boot_launched, captured, documents, role_of

pytestmark = pytest.mark.skipif(can_boot() is not None, reason=str(can_boot()))


def scale_in(vm: str) -> str:
    """What runs after the boot: Azure posts a Terminate event naming `vm`, then waits a while for an approval."""
    event = {"EventId": "E-1", "EventType": "Terminate", "ResourceType": "VirtualMachine", "Resources": [vm],
             "EventStatus": "Scheduled", "NotBefore": "Mon, 19 Sep 2016 18:29:47 GMT", "EventSource": "Platform"}  # fmt: skip
    document = json.dumps({"DocumentIncarnation": 2, "Events": [event]})
    return (
        f"echo '{document}' > /run/harness/scheduled-events.json\n"
        "for _ in $(seq 1 50); do [ -s /run/harness/scheduled-events-approved.jsonl ] && break; sleep 1; done\n"
        f"systemctl is-active --quiet {WORKER_UNIT} && echo front=up || echo front=down\n"
        "cat /run/harness/scheduled-events-approved.jsonl 2>/dev/null | sed 's/^/approved: /'\n"
        "echo last-step\n"
    )


def replica():
    capture = captured("azure-serving", ())
    return capture, next(r for r in capture.resources if documents(r.inputs) and role_of(r) == "serving-replica")


def vm_name() -> str:
    """The VM's IMDS compute/name as the boot machine answers it (tests/boot/machine/clouds.py)."""
    return f"{replica()[1].name}_0"


def booted_replica(tmp_path: Path, after: str):
    capture, replica_set = replica()
    profile = replica_set.inputs["virtualMachineProfile"]["scheduledEventsProfile"]["terminateNotificationProfile"]
    minutes = int(profile["notBeforeTimeout"].removeprefix("PT").removesuffix("M"))
    assert profile["enable"] is True and TERMINATE_NOTICE_MINUTES[0] <= minutes <= TERMINATE_NOTICE_MINUTES[1]
    machine = boot_launched("azure", capture, replica_set, IMAGES["azure"]["serving-replica"], tmp_path, after=after)
    assert machine.ok, machine.explain()
    return machine


def test_a_replica_drains_then_approves_its_own_terminate_event(tmp_path: Path) -> None:
    machine = booted_replica(tmp_path, scale_in(vm_name()))
    _, output = machine.after
    assert output.rstrip().endswith("last-step") and "front=down" in output, output
    assert 'approved: {"StartRequests": [{"EventId": "E-1"}]}' in output, output
    stop = [c for c in machine.calls if c["command"] == "systemctl" and c["args"][:1] == ["stop"]]
    assert stop and stop[0]["args"][1] == WORKER_UNIT


def test_an_event_for_another_vm_leaves_the_replica_serving(tmp_path: Path) -> None:
    machine = booted_replica(tmp_path, scale_in("some-other-vm_3"))
    _, output = machine.after
    assert "front=up" in output and "approved:" not in output, output
