"""The replica's `#cloud-config` on the clouds whose replicas boot from one (Azure custom data, Compute Engine's
`user-data` metadata), built as data and written by a YAML emitter: no value, whatever it holds, can add a key to
the document or end a file's content early. The scripts and units inside are text (YAML literal blocks), each value
quoted for the reader it meets (accelstack.components.node_syntax).

What runs is the same on both clouds: the worker's (or the admission proxy's) files, its environment file, a
prepare script that pulls the weights and the server image (idempotent: a standby VM has both on its disk), the
inference server's unit and, in front of it, the queue worker's or the admission proxy's unit. Each records the
stage the boot reached in the replica's boot status (components/replica/boot_status.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from accelstack.components.node_environment import cloud_config
from accelstack.components.node_syntax import shell_word, unit_command, unit_environment_line, unit_word
from accelstack.components.replica.boot_status import (
    STATUS_COMMAND,
    STATUS_FUNCTION,
    STATUS_SCRIPT,
    UNIT_RESULT_COMMAND,
    record_command,
)

MODEL_DIR = "/opt/accelstack/models"
WORKER_DIR = "/opt/accelstack"
WORKER_ENV_FILE = "/etc/accelstack/worker.env"
PREPARE_PATH = "/usr/local/bin/accelstack-prepare"
RUNTIME_SETUP_PATH = "/usr/local/bin/accelstack-runtime-setup"
SERVER_UNIT = "accelstack-server.service"
ADMISSION_UNIT = "accelstack-admission.service"
WORKER_UNIT = "accelstack-worker.service"


def write_file(path: str, content: str, permissions: str | None = None, *, encoding: str | None = None) -> dict:
    """A cloud-init write_files entry (cloud-init's defaults where a key is left out: root-owned, 0644)."""
    entry: dict[str, str] = {"path": path}
    if encoding:
        entry["encoding"] = encoding
    if permissions:
        entry["permissions"] = permissions
    entry["content"] = content
    return entry


def environment_file(environment: dict[str, str]) -> str:
    """The worker's environment, read by systemd only (EnvironmentFile=)."""
    return "".join(unit_environment_line(key, value) for key, value in environment.items())


def prepare_script(setup: str, syncs: list[str], image: str) -> str:
    """Weights and server image onto the VM's disk: `setup` (the cloud's tool, if the image may lack it), then one
    already quoted command per artifact, then the image; the boot status says how far it got."""
    return (
        "#!/bin/bash\n"
        "# Idempotent: a standby VM has the weights and the image on its disk already.\n"
        "set -euo pipefail\n"
        f"{STATUS_FUNCTION}"
        "trap 'status_failed prepare' ERR\n"
        f"{record_command('prepare', 'running')}\n"
        f"{setup}"
        f"mkdir -p {MODEL_DIR}\n" + "".join(f"{sync}\n" for sync in syncs) + f"docker pull {shell_word(image)}\n"
        f"{record_command('prepare', 'ok')}\n"
    )


def runtime_setup_script(setup: str) -> str:
    """The container runtime where the image lacks it, installed once from runcmd before any unit starts: the server
    unit Requires docker.service, and systemd refuses to start a unit whose required unit does not exist ("Unit
    docker.service not found") before running any of its ExecStartPre, so the prepare script is too late for it.
    A failure is recorded as the prepare stage's."""
    return f"#!/bin/bash\nset -euo pipefail\n{STATUS_FUNCTION}trap 'status_failed prepare' ERR\n{setup}"


def server_unit(image: str, server: list[str]) -> str:
    """The inference server in Docker, prepared first (ExecStartPre) on every start."""
    return (
        "[Unit]\n"
        "Description=accelstack inference server\n"
        "After=docker.service network-online.target\n"
        "Requires=docker.service\n"
        "[Service]\n"
        f"ExecStartPre={PREPARE_PATH}\n"
        f"ExecStartPre={record_command('server', 'running')}\n"
        "ExecStartPre=-/usr/bin/docker rm -f accelstack-server\n"
        "ExecStart=/usr/bin/docker run --rm --name accelstack-server --gpus all --network host "
        f"-v {MODEL_DIR}:/models:ro {unit_word(image)} {unit_command(server)}\n"
        "ExecStop=/usr/bin/docker stop accelstack-server\n"
        f"ExecStopPost={UNIT_RESULT_COMMAND}\n"
        "Restart=always\n"
        "TimeoutStartSec=infinity\n"
        "[Install]\n"
        "WantedBy=multi-user.target\n"
    )


def front_unit(description: str, command: list[str], health_wait: str, stop_timeout: int, *, proxy: bool) -> str:
    """The unit in front of the server (the queue worker, or the admission proxy): started once the server answers
    its health path (`health_wait`, an Exec line already quoted). The proxy drains on SIGTERM."""
    return (
        "[Unit]\n"
        f"Description={description}\n"
        f"After={SERVER_UNIT}\n"
        "[Service]\n"
        f"EnvironmentFile={WORKER_ENV_FILE}\n"
        f"ExecStartPre={record_command('health', 'running')}\n"
        f"ExecStartPre={health_wait}\n"
        f"ExecStart={unit_command(command)}\n"
        f"ExecStartPost={record_command('serving', 'ok')}\n"
        f"ExecStopPost={UNIT_RESULT_COMMAND}\n"
        f"WorkingDirectory={WORKER_DIR}\n"
        "Restart=always\n" + ("KillSignal=SIGTERM\n" if proxy else "") + f"TimeoutStopSec={int(stop_timeout)}\n"
        "[Install]\n"
        "WantedBy=multi-user.target\n"
    )


@dataclass(frozen=True)
class ReplicaCloudConfig:
    """One replica's cloud-config. `proxy`: the admission proxy fronts the server (its files are `shipped`);
    otherwise the queue worker does, described by `worker_description` and run by `worker_command`, its client
    installed by `worker_install` (runcmd entries) from `worker_packages` (the distribution's)."""

    shipped: dict[str, str]  # file name in WORKER_DIR -> base64 of its bytes
    environment: dict[str, str]
    prepare_setup: str
    syncs: list[str]
    image: str
    server: list[str]
    health_wait: str
    stop_timeout: int
    proxy: bool
    worker_description: str
    worker_command: list[str]
    worker_packages: list[str] = field(default_factory=list)
    worker_install: list[list[str]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)  # top-level keys before the packages (ssh_pwauth)
    extra_files: list[dict] = field(default_factory=list)  # after the prepare script
    extra_units: list[str] = field(default_factory=list)  # units among extra_files, started with the others
    first_commands: list[list[str]] = field(default_factory=list)  # runcmd, before the worker's install
    # The container runtime (Docker, NVIDIA's toolkit) where the image may lack it: run once before the units start.
    runtime_setup: str = ""
    comment: str = ""  # under the header, for whoever reads the rendered file

    def document(self) -> dict[str, Any]:
        if self.proxy:
            front = front_unit(
                "accelstack admission proxy (the load balancer's port, in front of the server)",
                ["/usr/bin/python3", f"{WORKER_DIR}/admission_proxy.py"],
                self.health_wait,
                self.stop_timeout,
                proxy=True,
            )
        else:
            front = front_unit(
                self.worker_description, self.worker_command, self.health_wait, self.stop_timeout, proxy=False
            )
        front_name = ADMISSION_UNIT if self.proxy else WORKER_UNIT
        doc: dict[str, Any] = dict(self.settings)
        if not self.proxy and self.worker_packages:
            doc["packages"] = list(self.worker_packages)
        doc["write_files"] = [
            *(write_file(f"{WORKER_DIR}/{name}", b64, "0644", encoding="b64") for name, b64 in self.shipped.items()),
            write_file(WORKER_ENV_FILE, environment_file(self.environment), "0600"),
            write_file(STATUS_COMMAND, STATUS_SCRIPT, "0755"),
            write_file(PREPARE_PATH, prepare_script(self.prepare_setup, self.syncs, self.image), "0755"),
            *(
                [write_file(RUNTIME_SETUP_PATH, runtime_setup_script(self.runtime_setup), "0755")]
                if self.runtime_setup
                else []
            ),
            *self.extra_files,
            write_file(f"/etc/systemd/system/{SERVER_UNIT}", server_unit(self.image, self.server)),
            write_file(f"/etc/systemd/system/{front_name}", front),
        ]
        doc["runcmd"] = [
            *self.first_commands,
            *([[RUNTIME_SETUP_PATH]] if self.runtime_setup else []),
            *([] if self.proxy else self.worker_install),
            ["systemctl", "daemon-reload"],
            ["systemctl", "enable", "--now", SERVER_UNIT, front_name, *self.extra_units],
        ]
        return doc

    def text(self) -> str:
        return cloud_config(self.document(), literal_blocks=True, comment=self.comment)
