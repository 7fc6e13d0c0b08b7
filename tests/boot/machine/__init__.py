"""Boot a generated user-data document on a modelled node image, for real, and read what it did.

`boot(...)` runs tests/boot/machine/launcher.sh under `unshare` (root only): the document goes through
cloud-init's modules (cloud_init.py) on a machine whose commands are the image row's
(components/node_images.py and each cloud's table), whose package manager offers exactly what the row says,
and whose metadata server is the cloud's, on 169.254.169.254 in the machine's own network namespace. A `Service`
(an object store the machine fetches from) runs there too, on the address its host name resolves to on the machine.
"""

from __future__ import annotations

import base64
import email
import functools
import json
import os
import secrets
import shutil
import subprocess
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

import yaml

from accelstack.components.node_images import UBUNTU_BASE, NodeImage

HERE = Path(__file__).resolve().parent
HOST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
RELEASES = {
    "ubuntu-24.04": 'NAME="Ubuntu"\nVERSION_ID="24.04"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\nUBUNTU_CODENAME=noble\n',
    "ubuntu-22.04": 'NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=jammy\nUBUNTU_CODENAME=jammy\n',
    "amzn-2023": 'NAME="Amazon Linux"\nVERSION_ID="2023"\nID="amzn"\nID_LIKE="fedora"\n',
}


@functools.cache
def can_boot() -> str | None:
    """None when this host can run machines, else why not (they need root and namespaces)."""
    if os.geteuid() != 0:
        return "booting a machine needs root (mount and network namespaces)"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "booting a machine needs unshare (util-linux) and ip (iproute2)"
    # What launcher.sh needs, tried once: the namespaces, an address on the new loopback, an overlay of /etc.
    probe_script = (
        "set -e; ip link set lo up; ip addr add 169.254.169.254/32 dev lo; d=$(mktemp -d); "
        'mkdir "$d/u" "$d/w" "$d/m"; mount -t overlay overlay -o "lowerdir=/etc,upperdir=$d/u,workdir=$d/w" "$d/m"; '
        'umount "$d/m"; rm -rf "$d"'
    )
    probe = subprocess.run(
        ["unshare", "-mnup", "--fork", "--propagation", "private", "bash", "-c", probe_script], capture_output=True
    )
    if probe.returncode != 0:
        return f"this host refuses the namespaces or overlays a machine needs: {probe.stderr.decode().strip()}"
    return None


def user_data_parts(document: str) -> list[dict]:
    """The parts cloud-init would find in a user-data document (MIME multipart, cloud-config, script)."""
    if document.startswith(("Content-Type: multipart", "MIME-Version")):
        message = email.message_from_string(document)
        parts = []
        for index, part in enumerate(p for p in message.walk() if not p.is_multipart()):
            parts += [dict(item, name=f"{index:03d}") for item in user_data_parts(part.get_payload())]
        return parts
    if document.startswith("#cloud-config"):
        return [{"type": "cloud-config", "doc": yaml.safe_load(document), "name": "000"}]
    if document.startswith("#cloud-boothook"):
        return [{"type": "boothook", "text": document, "name": "000"}]
    if document.startswith("#!"):
        return [{"type": "shellscript", "text": document, "name": "000"}]
    return [{"type": f"unknown ({document[:20]!r})", "name": "000"}]


@dataclass(frozen=True)
class Service:
    """A service the machine reaches by name: tests/boot/machine/`script` run with `config` (JSON) on the host's python3
    inside the machine's network namespace, listening on `address`:`port`, which `host` resolves to on the machine
    (an /etc/hosts line: the namespace has no resolver). `trusted_ca` (PEM), when it serves TLS: the CA its
    certificate chains to, added to the machine's trust store (machine/tls_ca.py). `python`: the interpreter that
    runs it, outside the machine (a service needing more than the standard library names the test's own)."""

    script: str
    config: dict
    host: str
    address: str
    port: int
    trusted_ca: str = ""
    python: str = "/usr/bin/python3"


@dataclass
class Boot:
    """What a machine did: exit status of cloud-init, its serial console, each modelled call, the files."""

    work: Path

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    @property
    def exit_status(self) -> int:
        return int((self.work / "exit-status").read_text())

    @property
    def console(self) -> str:
        return (self.work / "console.log").read_text()

    @property
    def log(self) -> str:
        return (self.work / "boot.log").read_text()

    @cached_property
    def calls(self) -> list[dict]:
        path = self.work / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    @cached_property
    def metadata_requests(self) -> list[dict]:
        path = self.work / "metadata.log"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def state(self, name: str, default=None):
        path = self.work / f"state-{name}.json"
        return json.loads(path.read_text()) if path.exists() else default

    @property
    def active_units(self) -> list[str]:
        return self.state("active", [])

    @property
    def after(self) -> tuple[int, str]:
        """Exit status and output of what ran on the machine after its boot."""
        return int((self.work / "after-status").read_text()), (self.work / "after.log").read_text()

    def file(self, path: str) -> str:
        return (self.work / "fs" / path.lstrip("/")).read_text()

    def has_file(self, path: str) -> bool:
        return (self.work / "fs" / path.lstrip("/")).exists()

    def explain(self) -> str:
        failed = [c for c in self.calls if "failed" in c or "unmodelled_url" in c]
        return (
            f"exit {self.exit_status}\n--- console\n{self.console}\n--- boot log (tail)\n{self.log[-4000:]}\n"
            f"--- failed calls\n{json.dumps(failed, indent=1)[-3000:]}"
        )


def _commands(image: NodeImage) -> tuple[list[str], list[str]]:
    from tests.boot.machine.stub_names import BASE_STUBS, MODELLED

    lines, placed = ["env /usr/bin/env"], []
    for name in sorted(UBUNTU_BASE | {c for c in image.ships if not c.startswith(("/", "module:"))}):
        if name in BASE_STUBS or name in MODELLED:
            lines.append(f"{name} stub")
            continue
        found = shutil.which(name, path=HOST_PATH)
        if found:
            lines.append(f"{name} {os.path.realpath(found)}")
    placed = [c for c in image.ships if c.startswith("/")]
    return lines, placed


def boot(
    cloud: str,
    image: NodeImage,
    document: str,
    work: Path,
    metadata: dict[str, str],
    devices: tuple[str, ...] = (),
    release: str = "ubuntu-24.04",
    sysfs: dict[str, str] | None = None,
    after: str = "",
    stored: dict[str, dict[str, str]] | None = None,
    files: dict[str, str] | None = None,
    services: tuple[Service, ...] = (),
) -> Boot:
    """Boot `document` on a machine of `image` in `cloud`; `work` receives everything it did."""
    work.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(16)
    machine = {
        "cloud": cloud,
        "image": {k: sorted(v) if isinstance(v, frozenset) else v for k, v in asdict(image).items()},
        "metadata": metadata,
        "token": token,
        "imds_session": secrets.token_hex(16),
        "secrets": {"munge": base64.b64encode(secrets.token_bytes(128)).decode()},
        "user_data": user_data_parts(document),
        "objects": stored or {"ssm": {}, "vault": {}},
    }
    machine["image"]["repositories"] = {k: sorted(v) for k, v in image.repositories.items()}
    (work / "machine.json").write_text(json.dumps(machine))
    lines, placed = _commands(image)
    (work / "commands.txt").write_text("\n".join(lines) + "\n")
    (work / "placed.txt").write_text("\n".join(placed) + "\n")
    # What the cloud and the image put there before cloud-init runs: the release, the guest environment's
    # hosts entries, the disks the cloud attached.
    etc = work / "fs" / "etc"
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "os-release").write_text(RELEASES[release])
    hosts = "127.0.0.1 localhost\n" + "".join(f"{a} {n}\n" for n, a in image.hosts.items())
    hosts += "".join(f"{s.address} {s.host}\n" for s in services)
    (etc / "hosts").write_text(hosts)
    lines = []
    for number, service in enumerate(services):
        (work / f"service-{number}.json").write_text(json.dumps(service.config))
        lines.append(f"{service.address} {service.port} {service.script} service-{number}.json {service.python}")
    (work / "services.txt").write_text("".join(line + "\n" for line in lines))
    trusted = "".join(s.trusted_ca for s in services)
    if trusted:
        from tests.boot.machine.tls_ca import TRUST_STORE, trust_store_with

        store = work / "fs" / TRUST_STORE.lstrip("/")
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(trust_store_with(trusted))
    # Files something outside the boot document put on the machine before it booted (path -> content, root only).
    for path, content in (files or {}).items():
        target = work / "fs" / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        target.chmod(0o600)
    (work / "devices.txt").write_text("\n".join(devices) + "\n")
    (work / "sysfs.json").write_text(json.dumps(sysfs or {}))
    (work / "after.sh").write_text(after)
    result = subprocess.run(
        ["unshare", "-mnup", "--fork", "--propagation", "private", str(HERE / "launcher.sh"), str(work)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode != 0 or not (work / "exit-status").exists():
        raise RuntimeError(f"the machine did not run: {result.stdout}\n{result.stderr}")
    return Boot(work)
