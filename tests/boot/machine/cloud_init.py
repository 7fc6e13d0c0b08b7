"""cloud-init's boot of a user-data document, module by module in Ubuntu's order, inside the machine.

Ubuntu's /etc/cloud/cloud.cfg runs, of what the stacks use: bootcmd, write_files, set_hostname,
update_etc_hosts (init stage); runcmd, which only writes its script (config stage); then
package_update_upgrade_install, scripts_user (runcmd's script and a shell-script user data) and
write_files_deferred (final stage). As in cloud-init, a failing module is recorded and the next one
runs anyway; `cloud-init status` then says `error`, and each failure is written to the serial console.
A cloud-config key this model does not know fails the boot: whatever it cannot place fails closed.
The host parsed the YAML (and MIME parts) into machine.json; this runs on the image's python3 (stdlib only).
"""

from __future__ import annotations

import base64
import grp
import gzip
import json
import os
import pwd
import subprocess
import sys

MACHINE = json.loads(open(sys.argv[1]).read())
STATE = os.environ["HARNESS_STATE"]
KNOWN_KEYS = {
    "bootcmd", "write_files", "hostname", "fqdn", "preserve_hostname", "manage_etc_hosts", "package_update",
    "package_upgrade", "packages", "runcmd", "ssh_pwauth", "disable_root", "merge_how",
}  # fmt: skip
errors: list[str] = []


def console(line: str) -> None:
    with open("/dev/console", "a") as out:
        out.write(f"cloud-init: {line}\n")


def failed(module: str, why: str) -> None:
    errors.append(f"{module}: {why}")
    console(f"WARNING: Failed to run module {module}: {why}")


def shell_line(item: str | list) -> str:
    if isinstance(item, list):
        return " ".join("'" + str(a).replace("'", "'\\''") + "'" for a in item)
    return str(item)


def run_script(module: str, path: str, text: str) -> None:
    with open(path, "w") as script:
        script.write(text)
    os.chmod(path, 0o700)
    # Ubuntu's cloud.cfg tees every module's output to /var/log/cloud-init-output.log, and cloud-final.service
    # writes its output to the journal and the console: what a boot script prints, the operator can read.
    result = subprocess.run([path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for sink in ("/var/log/cloud-init-output.log", "/dev/console"):
        with open(sink, "ab") as out:
            out.write(result.stdout)
    sys.stdout.buffer.write(result.stdout)
    if result.returncode != 0:
        failed(module, f"{path} exited {result.returncode}")


def write_files(files: list[dict], deferred: bool) -> None:
    for entry in files:
        if bool(entry.get("defer", False)) != deferred:
            continue
        content = entry.get("content", "")
        encoding = entry.get("encoding", "text/plain")
        data = content.encode()
        if encoding in ("b64", "base64"):
            data = base64.b64decode(content)
        elif encoding in ("gz+b64", "gzip+base64", "gz+base64", "gzip+b64"):
            data = gzip.decompress(base64.b64decode(content))
        elif encoding not in ("text/plain",):
            failed("write_files", f"unknown encoding {encoding}")
            continue
        path = entry["path"]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        mode = "ab" if entry.get("append") else "wb"
        with open(path, mode) as out:
            out.write(data)
        os.chmod(path, int(str(entry.get("permissions", "0644")), 8))
        owner = entry.get("owner", "root:root")
        user, _, group = owner.partition(":")
        try:
            os.chown(path, pwd.getpwnam(user).pw_uid, grp.getgrnam(group or user).gr_gid)
        except KeyError as missing:
            failed("write_files", f"{path}: owner {owner} does not exist ({missing})")


def init_and_config_stages(doc: dict) -> None:
    if doc.get("bootcmd"):
        text = "#!/bin/sh\n" + "".join(shell_line(item) + "\n" for item in doc["bootcmd"])
        run_script("bootcmd", "/var/lib/cloud/instance/boothooks/bootcmd", text)
    write_files(doc.get("write_files", []), deferred=False)
    if not doc.get("preserve_hostname") and (doc.get("fqdn") or doc.get("hostname")):
        with open("/etc/hostname", "w") as out:
            out.write(str(doc.get("hostname") or doc.get("fqdn")).split(".")[0] + "\n")
    if doc.get("manage_etc_hosts") is True and doc.get("hostname"):
        name = str(doc["hostname"])
        with open("/etc/hosts", "w") as out:
            out.write(f"127.0.0.1 localhost\n127.0.1.1 {doc.get('fqdn', name)} {name}\n")
            for host, address in MACHINE["image"].get("hosts", {}).items():
                out.write(f"{address} {host}\n")


def final_stage(doc: dict, scripts: list[dict]) -> None:
    runcmd = doc.get("runcmd", [])
    if doc.get("package_update") or doc.get("package_upgrade") or doc.get("packages"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        steps = [["apt-get", "update"]] if doc.get("package_update") or doc.get("packages") else []
        if doc.get("package_upgrade"):
            steps.append(
                ["apt-get", "--option=Dpkg::Options::=--force-confold", "dist-upgrade", "--quiet", "--assume-yes"]
            )
        if doc.get("packages"):
            steps.append(["apt-get", "--option=Dpkg::Options::=--force-confold", "install", "--quiet", "--assume-yes",
                          *[p if isinstance(p, str) else "=".join(p) for p in doc["packages"]]])  # fmt: skip
        for step in steps:
            if subprocess.run(step, env=env, stdin=subprocess.DEVNULL).returncode != 0:
                failed("package_update_upgrade_install", " ".join(step) + " failed")
                break
    for part in scripts:
        run_script("scripts_user", f"/var/lib/cloud/instance/scripts/part-{part['name']}", part["text"])
    if runcmd:
        text = "#!/bin/sh\n" + "".join(shell_line(item) + "\n" for item in runcmd)
        run_script("scripts_user", "/var/lib/cloud/instance/scripts/runcmd", text)
    write_files(doc.get("write_files", []), deferred=True)


def main() -> None:
    for directory in ("scripts", "boothooks"):
        os.makedirs(f"/var/lib/cloud/instance/{directory}", exist_ok=True)
    parts = MACHINE["user_data"]
    doc: dict = {}
    for part in parts:
        if part["type"] == "cloud-config":
            unknown = sorted(set(part["doc"]) - KNOWN_KEYS)
            if unknown:
                failed("harness", f"cloud-config keys this machine does not model: {unknown}")
            for key, value in part["doc"].items():
                doc[key] = doc.get(key, []) + value if isinstance(value, list) else value
        elif part["type"] not in ("shellscript", "boothook"):
            failed("harness", f"user-data part of type {part['type']} is not modelled")
    for part in parts:
        if part["type"] == "boothook":
            run_script("boothook", f"/var/lib/cloud/instance/boothooks/part-{part['name']}", part["text"])
    init_and_config_stages(doc)
    final_stage(doc, [part for part in parts if part["type"] == "shellscript"])
    os.makedirs("/run/cloud-init", exist_ok=True)
    with open("/run/cloud-init/result.json", "w") as out:
        json.dump({"v1": {"errors": errors}}, out)
    console("finished: " + ("error" if errors else "done"))
    sys.exit(1 if errors else 0)


main()
