#!/.host/usr/bin/python3
"""The machine's modelled commands, one program named by argv[0] (package managers, systemctl, mount and
block devices, kernel modules, curl's network, the cloud CLIs, sleep).

Each acts on the machine's own files and on its state under $HARNESS_STATE (installed packages, units,
mounts, formatted devices), checks what the real tool checks before it succeeds (a package with no
candidate, a unit whose ExecStart is missing, a mount without its client, a munge key that is not
munge's), and logs every call. What the harness does not model fails loudly ("not modelled") rather than
pretending. Standard library only: the image's python3 runs it.
"""

from __future__ import annotations

import base64
import datetime
import fnmatch
import glob
import io
import json
import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
import zipfile

sys.path.insert(0, "/harness")
import contextlib

from packages import PACKAGES
from stub_names import MODELLED

STATE = os.environ.get("HARNESS_STATE", "/run/harness")
MACHINE = json.load(open(f"{STATE}/machine.json"))
IMAGE = MACHINE["image"]
# The python3 wrapper and a venv's pip name the tool they stand for (a script's argv[0] is its interpreter's).
NAME = os.environ.pop("HARNESS_AS", "") or os.path.basename(sys.argv[0])
ARGS = sys.argv[1:]
KERNEL = os.uname().release
UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system")
ARMORED_KEY = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nharness\n-----END PGP PUBLIC KEY BLOCK-----\n"


def log(**fields) -> None:
    with open(f"{STATE}/calls.jsonl", "a") as out:
        out.write(json.dumps({"command": NAME, "args": ARGS, **fields}) + "\n")


def load(name: str, default):
    try:
        return json.load(open(f"{STATE}/state-{name}.json"))
    except FileNotFoundError:
        return default


def save(name: str, value) -> None:
    with open(f"{STATE}/state-{name}.json", "w") as out:
        json.dump(value, out)


def fail(message: str, code: int = 1):
    print(message, file=sys.stderr)
    log(failed=message)
    sys.exit(code)


def kernelled(name: str) -> str:
    return name.replace("@KERNEL@", KERNEL)


# ---------------------------------------------------------------- packages
def enabled_repositories() -> list[str]:
    """The repositories of sources.list.d entries that `apt-get update` could read (signed or trusted)."""
    found = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        for line in open(path).read().splitlines():
            match = re.match(r"\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(.*)", line)
            if not match:
                continue
            options, url, rest = match.group(1) or "", match.group(2), match.group(3)
            if url.startswith("ar+") and not os.path.exists("/usr/lib/apt/methods/ar+https"):
                fail(f"E: The method driver /usr/lib/apt/methods/{url.split(':')[0]} could not be found.", 100)
            keyring = re.search(r"signed-by=([^\]\s]+)", options)
            if keyring and not (os.path.exists(keyring.group(1)) and os.path.getsize(keyring.group(1))):
                fail(
                    f"E: The repository '{url} {rest}' is not signed (keyring {keyring.group(1)} missing or empty).",
                    100,
                )
            found.append(f"{url} {rest}")
    return found


def candidates() -> dict[str, str]:
    """Package name -> where apt would take it from, as of the last `apt-get update`."""
    offered = {kernelled(p): "image" for p in IMAGE["installable"]}
    for entry in load("apt-lists", []):
        for fragment, packages in IMAGE["repositories"].items():
            if fragment in entry:
                offered.update({kernelled(p): fragment for p in packages})
    return offered


def pinned_away(package: str, origin: str) -> str | None:
    for pattern, why in IMAGE["pinned_away"].items():
        if origin == "image" and fnmatch.fnmatch(package, pattern):
            return why
    return None


def package_model(name: str) -> dict | None:
    """The package's contents as packages.py models them (its key may name the running kernel)."""
    return next((model for key, model in PACKAGES.items() if kernelled(key) == name), None)


def install(package: str) -> None:
    model = package_model(package)
    if model is None:
        fail(f"harness: package {package} is installable here but its contents are not modelled", 100)
    for user in model.get("users", []):
        try:
            pwd.getpwnam(user)
        except KeyError:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True
            )
    for directory, owner in model.get("dirs", {}).items():
        user, group, mode = owner.split(":")
        os.makedirs(directory, exist_ok=True)
        os.chmod(directory, int(mode, 8))
        subprocess.run(["chown", f"{user}:{group}", directory], check=True)
    for _command, path in model.get("commands", {}).items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.remove(path)
        os.symlink("/harness/stub.py", path)
    for unit, exec_start in model.get("units", {}).items():
        condition = model.get("conditions", {}).get(unit)
        with open(f"/usr/lib/systemd/system/{unit}", "w") as out:
            out.write("[Unit]\n" + (f"ConditionPathExists={condition}\n" if condition else ""))
            out.write(f"[Service]\nExecStart={exec_start}\n[Install]\nWantedBy=multi-user.target\n")
    for path, text in model.get("files", {}).items():
        os.makedirs(os.path.dirname(kernelled(path)), exist_ok=True)
        with open(kernelled(path), "w") as out:
            out.write(text)
    modules = load("modules", [])
    save("modules", modules + model.get("modules", []))
    installed = load("installed", [])
    save("installed", [*installed, package])
    for unit in model.get("starts", []):
        subprocess.run(["systemctl", "start", unit])


def apt_get() -> None:
    words = [a for a in ARGS if not a.startswith("-")]
    if not words:
        fail("apt-get: no operation", 100)
    operation = words[0]
    if operation == "update":
        save("apt-lists", enabled_repositories())
        return log()
    if operation in ("dist-upgrade", "upgrade", "clean", "autoremove"):
        return log()
    if operation == "download":
        return apt_download(words[1:])
    if operation != "install":
        fail(f"harness: apt-get {operation} is not modelled", 100)
    if "-y" not in ARGS and "--assume-yes" not in ARGS and "-qy" not in ARGS and "-yq" not in ARGS:
        fail("E: apt-get install without -y waits for an answer nobody gives at boot", 1)
    offered = candidates()
    wanted = []
    for spec in words[1:]:
        if spec.startswith(("/", "./")):  # a downloaded .deb: apt installs it with its dependencies
            install_local_deb(spec, offered)
            continue
        name, _, version = spec.partition("=")
        if name not in offered:
            fail(f"E: Unable to locate package {name}", 100)
        why = pinned_away(name, offered[name])
        if why:
            fail(f"E: Package '{name}' has no installation candidate ({why})", 100)
        model = package_model(name) or {}
        if version and kernelled(model.get("version", version)) != version:
            fail(f"E: Version '{version}' for '{name}' was not found", 100)
        wanted.append(name)
    for name in list(wanted):
        for dependency in (package_model(name) or {}).get("depends", []):
            if dependency not in offered:
                fail(
                    f"E: Unable to correct problems, you have held broken packages ({name} depends on {dependency})",
                    100,
                )
            wanted.append(dependency)
    installed = load("installed", [])
    for name in dict.fromkeys(wanted):
        if name not in installed:
            install(name)
    log(installed=wanted)


def install_local_deb(path: str, offered: dict[str, str]) -> None:
    """`apt-get install ./x.deb`: the harness's .deb is a manifest (package, version, depends, commands, files)."""
    try:
        manifest = json.load(open(path))
    except (OSError, ValueError):
        fail(f"E: Unsupported file {path} given on commandline", 100)
    installed = load("installed", [])
    for dependency in manifest.get("depends", []):
        if dependency in installed:
            continue
        if dependency not in offered:
            fail(f"E: Unable to correct problems ({manifest['package']} depends on {dependency})", 100)
        install(dependency)
        installed = load("installed", [])
    for target in manifest.get("commands", {}).values():
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.lexists(target):
            os.remove(target)
        os.symlink("/harness/stub.py", target)
    for target, text in manifest.get("files", {}).items():
        os.makedirs(os.path.dirname("/" + target), exist_ok=True)
        with open("/" + target, "w") as out:
            out.write(text)
    save("modules", load("modules", []) + manifest.get("modules", []))
    save("installed", [*load("installed", []), manifest["package"]])
    save("versions", {**load("versions", {}), manifest["package"]: manifest.get("version", "1")})


def enroot() -> None:
    """`enroot version`: the installed release (what the setup compares with its pin)."""
    if ARGS[:1] != ["version"]:
        fail(f"harness: enroot {' '.join(ARGS)} is not modelled")
    version = load("versions", {}).get("enroot")
    if version is None:
        fail("enroot: not installed", 127)
    print(version)
    log()


def make() -> None:
    """`make -C DIR install` of pyxis: compiles against the Slurm headers (spank.h) and installs the plugin."""
    if ARGS[:1] != ["-C"] or ARGS[2:] != ["install"]:
        fail(f"harness: make {' '.join(ARGS)} is not modelled")
    source = ARGS[1]
    if not os.path.exists(os.path.join(source, "Makefile")):
        fail(f"make: *** {source}: No such file or directory.  Stop.", 2)
    if not os.path.exists("/usr/include/slurm/spank.h"):
        fail("pyxis.h: fatal error: slurm/spank.h: No such file or directory", 2)
    os.makedirs("/usr/local/lib/slurm", exist_ok=True)
    open("/usr/local/lib/slurm/spank_pyxis.so", "w").write("ELF (harness)\n")
    log(built=source)


def apt_download(names: list[str]) -> None:
    """`apt-get download`: the .deb into the working directory (here, a manifest of the files it carries)."""
    offered = candidates()
    for name in names:
        if name not in offered:
            fail(f"E: Unable to locate package {name}", 100)
        model = package_model(name) or {}
        source = model.get("source")
        files = (
            {f"usr/src/{name}-{source['version']}/{f}": text for f, text in source["files"].items()} if source else {}
        )
        with open(f"{name}_{source['version'] if source else '1'}_all.deb", "w") as deb:
            json.dump({"package": name, "files": files}, deb)
    log()


def dpkg_deb() -> None:
    if ARGS[:1] != ["-x"]:
        fail(f"harness: dpkg-deb {' '.join(ARGS)} is not modelled")
    manifest, target = json.load(open(ARGS[1])), ARGS[2]
    for path, text in manifest["files"].items():
        os.makedirs(os.path.dirname(os.path.join(target, path)), exist_ok=True)
        with open(os.path.join(target, path), "w") as out:
            out.write(text)
    log()


def dpkg() -> None:
    """`dpkg -i <deb>`: a downloaded package (the harness's .deb is a manifest of the files it carries)."""
    if ARGS == ["--print-architecture"]:
        print("amd64")
        return log()
    if ARGS[:1] != ["-i"]:
        fail(f"harness: dpkg {' '.join(ARGS)} is not modelled")
    for path in ARGS[1:]:
        try:
            manifest = json.load(open(path))
        except (OSError, ValueError):
            fail(f"dpkg-deb: error: '{path}' is not a Debian format archive", 1)
        for target, text in manifest["files"].items():
            os.makedirs(os.path.dirname("/" + target), exist_ok=True)
            with open("/" + target, "w") as out:
                out.write(text)
        save("installed", [*load("installed", []), manifest["package"]])
    log()


def dpkg_query() -> None:
    """`dpkg-query -W [-f=...] <package>`: what is installed (the version, as the package model states it)."""
    name = [a for a in ARGS if not a.startswith("-")][-1]
    if name not in load("installed", []):
        print(f"dpkg-query: no packages found matching {name}", file=sys.stderr)
        sys.exit(1)
    model = package_model(name) or {}
    version = kernelled(model.get("version", "1"))
    print(version if any(a.startswith("-f") for a in ARGS) else f"{name}\t{version}", end="")
    log()


def dkms() -> None:
    """DKMS builds a package's module from /usr/src/<module>-<version> for the running kernel."""
    log()
    verb = ARGS[0] if ARGS else ""
    module = ARGS[ARGS.index("-m") + 1] if "-m" in ARGS else ""
    version = ARGS[ARGS.index("-v") + 1] if "-v" in ARGS else ""
    source = f"/usr/src/{module}-{version}"
    built = load("dkms", {})
    if verb == "status":
        for name in built:
            print(f"{name}: {built[name]}")
        return
    if not os.path.isdir(source):
        fail(f"Error! Could not find module source directory {source}", 1)
    if verb == "add":
        built[f"{module}/{version}"] = "added"
    elif verb == "build":
        code = "".join(open(os.path.join(source, f)).read() for f in os.listdir(source) if f.endswith(".c"))
        major, minor = (int(x) for x in KERNEL.split(".")[:2])
        if (major, minor) >= (6, 13) and "MODULE_IMPORT_NS(DMA_BUF)" in code:
            fail(f"Error! Bad return status for module build on kernel: {KERNEL} (MODULE_IMPORT_NS needs a string)", 10)
        built[f"{module}/{version}"] = "built"
    elif verb == "install":
        if built.get(f"{module}/{version}") != "built":
            fail(f"Error! {module}/{version} is not built for {KERNEL}", 1)
        built[f"{module}/{version}"] = "installed"
        model = PACKAGES.get(module, {})  # the DKMS module of a package bears its name
        save("modules", load("modules", []) + model.get("modules", []))
    save("dkms", built)


def apt_cache() -> None:
    if ARGS[:2] == ["search", "--names-only"]:
        pattern = re.compile(ARGS[2])
        for name in sorted(candidates()):
            if pattern.search(name):
                print(f"{name} - harness package")
        return log()
    fail(f"harness: apt-cache {' '.join(ARGS)} is not modelled")


def dnf() -> None:
    words = [a for a in ARGS if not a.startswith("-")]
    if words and words[0] == "install":
        for name in words[1:]:
            if name not in IMAGE["installable"]:
                fail(f"Error: Unable to find a match: {name}", 1)
        for name in words[1:]:
            install(name)
        return log()
    if words and words[0] in ("makecache", "clean", "check-update", "update"):
        return log()
    fail(f"harness: dnf {' '.join(ARGS)} is not modelled")


# ---------------------------------------------------------------- systemd
def unit_name(name: str) -> str:
    return name if "." in name else f"{name}.service"


def unit_text(unit: str) -> str | None:
    for directory in UNIT_DIRS:
        if os.path.exists(f"{directory}/{unit}"):
            text = open(f"{directory}/{unit}").read()
            for drop_in in sorted(glob.glob(f"/etc/systemd/system/{unit}.d/*.conf")):
                text += "\n" + open(drop_in).read()
            return text
    return None


def directives(text: str) -> dict[str, list[str]]:
    """Each directive's values in order, an empty assignment clearing the list (systemd's reset)."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        found[key.strip()] = [] if value.strip() == "" else [*found.get(key.strip(), []), value.strip()]
    return found


def daemon_ready(unit: str, exec_start: str) -> str | None:
    """What the packaged daemon itself checks when it starts; None when it would run."""
    binary = os.path.basename(shlex.split(exec_start)[0])
    active = load("active", [])
    if binary == "munged":
        key = "/etc/munge/munge.key"
        if not os.path.exists(key):
            return "munged: Error: Failed to access key file /etc/munge/munge.key"
        info = os.stat(key)
        if pwd.getpwuid(info.st_uid).pw_name != "munge" or info.st_mode & 0o077:
            return "munged: Error: Keyfile must be owned by munge and not readable by others"
    if binary == "slurmdbd":
        # slurmdbd refuses a conf others can read or that its SlurmUser does not own (read_slurmdbd_conf), and
        # needs munge and a storage password to log in to MySQL with.
        path = "/etc/slurm/slurmdbd.conf"
        if not os.path.exists(path):
            return f"slurmdbd: fatal: Unable to open {path}"
        # errors=replace: a secret the capture cannot know comes back as the harness's random bytes.
        info, conf = os.stat(path), directives(open(path, errors="replace").read())
        user = (conf.get("SlurmUser") or ["root"])[-1]
        if info.st_mode & 0o077 or pwd.getpwuid(info.st_uid).pw_name != user:
            return f"slurmdbd: fatal: {path} file should be 600 and owned by SlurmUser {user}"
        if "munge.service" not in active:
            return "slurmdbd: error: auth/munge: Munge decode failed: Munged communication error"
        if not (conf.get("StoragePass") or [""])[-1] or not (conf.get("StorageHost") or [""])[-1]:
            return "slurmdbd: error: mysql_real_connect failed: Access denied (no StorageHost or StoragePass)"
    if binary in ("slurmctld", "slurmd") and "munge.service" not in active:
        return f"{binary}: error: auth/munge: Munge decode failed: Munged communication error"
    if binary == "slurmctld":
        if not os.path.exists("/etc/slurm/slurm.conf"):
            return "slurmctld: fatal: Unable to open /etc/slurm/slurm.conf"
        conf = directives(open("/etc/slurm/slurm.conf").read().replace(" ", "\n"))
        state = (conf.get("StateSaveLocation") or ["/var/spool/slurmctld"])[-1]
        user = (conf.get("SlurmUser") or ["root"])[-1]
        if not os.path.isdir(state) or pwd.getpwuid(os.stat(state).st_uid).pw_name != user:
            return f"slurmctld: fatal: {state} is not a directory owned by SlurmUser {user}"
    if binary == "slurmd" and "--conf-server" not in exec_start and not os.path.exists("/etc/slurm/slurm.conf"):
        return "slurmd: fatal: no slurm.conf and no --conf-server"
    return None


def stopped(values: dict[str, list[str]], env: dict[str, str], status: int) -> None:
    """systemd runs a unit's ExecStopPost also when its start failed, telling it why (systemd.exec(5): SERVICE_RESULT,
    EXIT_CODE, EXIT_STATUS)."""
    result = {"SERVICE_RESULT": "exit-code", "EXIT_CODE": "exited", "EXIT_STATUS": str(status)}
    for command in values.get("ExecStopPost", []):
        subprocess.run(shlex.split(command.lstrip("-+!@:")), env=env | result, stdin=subprocess.DEVNULL)


def start(unit: str, block: bool = True) -> int:
    unit = unit_name(unit)
    text = unit_text(unit)
    if text is None:
        if unit in IMAGE["services"]:
            save("active", sorted(set([*load("active", []), unit])))
            return 0
        print(f"Failed to start {unit}: Unit {unit} not found.", file=sys.stderr)
        return 5
    values = directives(text)
    # systemd expands specifiers in Exec lines (systemd.unit(5) "Specifiers"): the unit's name and a literal %.
    for key in [k for k in values if k.startswith("Exec")]:
        values[key] = [re.sub(r"%[n%]", lambda m: unit if m.group() == "%n" else "%", v) for v in values[key]]
    if unit.endswith(".timer"):
        # A timer starts its service later, on schedule: starting it needs that service to exist.
        service = (values.get("Unit") or [unit.removesuffix(".timer") + ".service"])[-1]
        if unit_text(service) is None:
            print(f"Failed to start {unit}: Unit {service} not found.", file=sys.stderr)
            return 5
        save("active", sorted(set([*load("active", []), unit])))
        log(unit=unit, started=True)
        return 0
    for required in " ".join(values.get("Requires", [])).split():
        if start(required) != 0:
            print(f"A dependency job for {unit} failed.", file=sys.stderr)
            return 1
    for condition in values.get("ConditionPathExists", []):
        negate = condition.startswith("!")
        if os.path.exists(condition.lstrip("!")) == negate:
            log(unit=unit, skipped=f"ConditionPathExists={condition}")
            return 0  # systemd: a failed condition skips the unit and the start still succeeds
    exec_starts = values.get("ExecStart", [])
    if not exec_starts:
        print(f"{unit} has no ExecStart", file=sys.stderr)
        return 1
    kind = (values.get("Type") or ["simple"])[-1]
    env = dict(os.environ)
    for path in values.get("EnvironmentFile", []):
        optional = path.startswith("-")
        if not os.path.exists(path.lstrip("-")):
            if optional:
                continue
            print(f"{unit}: Failed to load environment files: {path}", file=sys.stderr)
            return 1
        for line in open(path.lstrip("-")).read().splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                key, _, value = line.partition("=")
                env[key.strip()] = value.strip().strip('"')
    for assignment in values.get("Environment", []):
        for word in shlex.split(assignment):
            key, _, value = word.partition("=")
            env[key] = value
    for command in values.get("ExecStartPre", []) + exec_starts + values.get("ExecStartPost", []):
        ignore = command.startswith("-")
        argv = shlex.split(command.lstrip("-+!@:"))
        binary = argv[0]
        if not os.path.isabs(binary) or not os.access(binary, os.X_OK):
            print(f"{unit}: Failed to locate executable {binary}: No such file or directory", file=sys.stderr)
            return 1
        if os.path.realpath(binary) == "/harness/stub.py":
            why = daemon_ready(unit, command)
            if why:
                print(f"Job for {unit} failed: {why}", file=sys.stderr)
                log(unit=unit, failed=why)
                return 1
        if kind == "oneshot" or command not in exec_starts:
            result = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL)
            if result.returncode != 0 and not ignore:
                print(f"Job for {unit} failed because the control process exited with error code.", file=sys.stderr)
                log(unit=unit, failed=f"{argv} exited {result.returncode}")
                stopped(values, env, result.returncode)
                return 1 if block else 0
        else:
            if re.match(rb"#!\S*/(ba)?sh\b", open(binary, "rb").readline()) and argv[0] == binary:
                check = subprocess.run(["bash", "-n", binary], capture_output=True, text=True)
                if check.returncode != 0:
                    print(f"{unit}: {check.stderr}", file=sys.stderr)
                    return 1
            # A long-running service runs on, as systemd leaves it: its output goes to the unit's log.
            with open(f"{STATE}/unit-{unit}.log", "ab") as out:
                subprocess.Popen(
                    argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
                )
    save("active", sorted(set([*load("active", []), unit])))
    log(unit=unit, started=True)
    return 0


def systemctl() -> None:
    flags = [a for a in ARGS if a.startswith("-")]
    words = [a for a in ARGS if not a.startswith("-")]
    verb, units = (words[0], words[1:]) if words else ("", [])
    block = "--no-block" not in flags
    if verb in ("daemon-reload", "reset-failed", "daemon-reexec"):
        return log()
    if verb in ("enable", "disable", "mask", "unmask"):
        for unit in map(unit_name, units):
            if unit_text(unit) is None and unit not in IMAGE["services"]:
                fail(f"Failed to {verb} unit: Unit file {unit} does not exist.")
            enabled = set(load("enabled", []))
            enabled = enabled | {unit} if verb == "enable" else enabled - {unit}
            save("enabled", sorted(enabled))
        log()
        if verb == "enable" and "--now" in flags:
            for unit in units:
                if start(unit) != 0:
                    sys.exit(1)
        return
    if verb in ("start", "restart", "reload-or-restart", "try-restart"):
        log()
        for unit in units:
            if verb == "try-restart" and unit_name(unit) not in load("active", []):
                continue
            if start(unit, block) != 0:
                sys.exit(1)
        return
    if verb == "stop":
        save("active", [u for u in load("active", []) if u not in map(unit_name, units)])
        return log()
    if verb == "is-active":
        log()
        sys.exit(0 if all(unit_name(u) in load("active", []) for u in units) else 3)
    if verb == "is-enabled":
        log()
        sys.exit(0 if all(unit_name(u) in load("enabled", []) for u in units) else 1)
    fail(f"harness: systemctl {' '.join(ARGS)} is not modelled")


# ---------------------------------------------------------------- storage and kernel
def fstab_entry(target: str) -> list[str] | None:
    for line in open("/etc/fstab").read().splitlines() if os.path.exists("/etc/fstab") else []:
        fields = line.split()
        if len(fields) >= 3 and not fields[0].startswith("#") and fields[1] == target:
            return fields
    return None


def mount() -> None:
    mounts = load("mounts", {})
    words = [a for a in ARGS if not a.startswith("-")]
    if "--bind" in ARGS or ("-o" in ARGS and "bind" in ARGS):
        source, target = words[-2], words[-1]
        if not os.path.exists(source) or not os.path.isdir(target):
            fail(f"mount: {target}: special device {source} does not exist.", 32)
        # A bind mount is real: the machine's mount namespace is its own.
        subprocess.run(["/.host/usr/bin/mount", "--bind", source, target], check=True)
        mounts[target.rstrip("/")] = {"source": source, "type": "bind"}
    elif "-a" in ARGS:
        return log()
    else:
        kind = ARGS[ARGS.index("-t") + 1] if "-t" in ARGS else None
        if len(words) == 1:
            entry = fstab_entry(words[0].rstrip("/") or "/")
            if entry is None:
                fail(f"mount: {words[0]}: can't find in /etc/fstab.", 1)
            source, target, kind = entry[0], entry[1], entry[2]
        else:
            source, target = words[-2], words[-1]
        if not os.path.isdir(target):
            fail(f"mount: {target}: mount point does not exist.", 32)
        if kind == "lustre":
            if not shutil.which("mount.lustre"):
                fail(f"mount: {target}: unknown filesystem type 'lustre'.", 32)
            if "lustre" not in load("modules", []) and "module:lustre" not in IMAGE["ships"]:
                fail(f"mount.lustre: {source}: no lustre kernel module", 19)
        elif kind in ("nfs", "nfs4"):
            if not shutil.which("mount.nfs"):
                fail(
                    f"mount: {target}: bad option; for several filesystems (e.g. nfs) you might need a /sbin/mount.nfs helper",
                    32,
                )
        elif kind in ("ext4", "xfs") and load("formatted", {}).get(os.path.realpath(source)) != kind:
            fail(f"mount: {target}: wrong fs type, bad option, bad superblock on {source}.", 32)
        mounts[target] = {"source": source, "type": kind}
    save("mounts", mounts)
    log()


def mountpoint() -> None:
    target = [a for a in ARGS if not a.startswith("-")][-1]
    mounted = target.rstrip("/") in load("mounts", {}) or os.path.ismount(target)
    if "-q" not in ARGS:
        print(f"{target} is {'' if mounted else 'not '}a mountpoint")
    sys.exit(0 if mounted else 32)


def umount() -> None:
    mounts = load("mounts", {})
    for target in [a for a in ARGS if not a.startswith("-")]:
        mounts.pop(target.rstrip("/"), None)
    save("mounts", mounts)
    log()


def blkid() -> None:
    device = [a for a in ARGS if not a.startswith("-")][-1]
    if not os.path.exists(device):
        sys.exit(2)
    kind = load("formatted", {}).get(os.path.realpath(device))
    if kind is None:
        sys.exit(2)
    print(f'{device}: TYPE="{kind}"')


def mkfs() -> None:
    device = [a for a in ARGS if not a.startswith("-")][-1]
    if not os.path.exists(device):
        fail(f"mke2fs: The file {device} does not exist and no size was specified.", 1)
    formatted = load("formatted", {})
    formatted[os.path.realpath(device)] = NAME.split(".", 1)[1]
    save("formatted", formatted)
    log()


def mdadm() -> None:
    """Software RAID over the machine's disk files: an array's superblock is written into each member (so a disk
    the cloud hands back blank has none), and the array is a file under /dev/md while it runs."""
    words = [a for a in ARGS if not a.startswith("-")]
    array, members = words[0], [os.path.realpath(d) for d in words[1:]]
    arrays = load("md_arrays", {})
    if "--stop" in ARGS:
        arrays.pop(array, None)
        with contextlib.suppress(FileNotFoundError):
            os.remove(array)
        save("md_arrays", arrays)
        return log()
    missing = [d for d in members if not os.path.exists(d)]
    if missing:
        fail(f"mdadm: cannot open {missing[0]}: No such file or directory", 1)
    busy = [d for d in members for held in arrays.values() if d in held]
    if busy:
        fail(f"mdadm: cannot open {busy[0]}: Device or resource busy", 1)
    if "--assemble" in ARGS:
        names = {open(d).read().strip() for d in members}
        if len(names) != 1 or not next(iter(names)).startswith("md-superblock:"):
            fail(f"mdadm: no RAID superblock on {members[0]}", 1)
    elif "--create" in ARGS:
        name = next(a.split("=", 1)[1] for a in ARGS if a.startswith("--name="))
        for disk in members:
            with open(disk, "w") as out:
                out.write(f"md-superblock:{name}\n")
        formatted = load("formatted", {})  # a new array has no file system, whatever the old one had
        formatted.pop(os.path.realpath(array), None)
        save("formatted", formatted)
    else:
        fail(f"harness: mdadm {' '.join(ARGS)} is not modelled")
    os.makedirs(os.path.dirname(array), exist_ok=True)
    open(array, "w").close()
    arrays[array] = members
    save("md_arrays", arrays)
    log()


def modprobe() -> None:
    module = [a for a in ARGS if not a.startswith("-")][-1]
    if module in load("modules", []) or f"module:{module}" in IMAGE["ships"]:
        if NAME == "modprobe":
            save("loaded", sorted({*load("loaded", []), module}))
        return log()
    fail(f"{NAME}: FATAL: Module {module} not found in directory /lib/modules/{KERNEL}", 1)


# ---------------------------------------------------------------- network
def fetch(url: str, method: str, headers: dict[str, str], data: bytes | None) -> tuple[int, bytes]:
    host = re.match(r"https?://([^/:?]+)", url).group(1)
    address = None
    with contextlib.suppress(OSError):
        address = socket.gethostbyname(host)
    if address == "169.254.169.254" or (address or "").startswith("127."):
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()
        except urllib.error.URLError as error:
            raise ConnectionError(f"curl: (7) Failed to connect to {host}: {error.reason}") from error
    bearer = headers.get("Authorization", "")
    vault = re.match(r"https://[a-z0-9-]+\.vault\.azure\.net/secrets/([A-Za-z0-9-]+)", url)
    if vault:
        if bearer != f"Bearer {MACHINE['token']}":
            return 401, b'{"error": {"code": "Unauthorized"}}'
        if "vault_firewall" in MACHINE["objects"]:  # the vault's firewall does not list this machine's subnet
            return 403, b'{"error": {"code": "Forbidden", "innererror": {"code": "ForbiddenByFirewall"}}}'
        stored = MACHINE["objects"]["vault"].get(vault.group(1))
        if "munge" in vault.group(1):
            stored = MACHINE["secrets"]["munge"]
        if stored is None:
            return 404, b'{"error": {"code": "SecretNotFound"}}'
        return 200, json.dumps({"value": stored}).encode()
    if url.startswith("https://secretmanager.googleapis.com/v1/") and url.endswith(":access"):
        if bearer != f"Bearer {MACHINE['token']}":
            return 401, b'{"error": {"code": 401}}'
        return 200, json.dumps({"payload": {"data": MACHINE["secrets"]["munge"]}}).encode()
    if re.match(r"https://[a-z0-9]+\.vultrobjects\.com/", url):
        return vultr_object(url)
    for pattern, body in DOWNLOADS:
        if re.match(pattern, url):
            return 200, body(url) if callable(body) else body
    log(unmodelled_url=url)
    raise ConnectionError(f"curl: (6) Could not resolve host: {host} (the harness's network has no {url})")


def vultr_object(url: str) -> tuple[int, bytes]:
    """Vultr Object Storage (Ceph RGW) answering a presigned GET: the host side signed, with botocore, the one URL
    the stack's key object may be read with (objects.vultr.presigned); RGW refuses any other signature and, past
    X-Amz-Date + X-Amz-Expires by the machine's clock (objects.vultr.now), the right one too."""
    store = MACHINE["objects"].get("vultr", {})
    expected = store.get("presigned")
    if url != expected:
        return 403, b"<Error><Code>SignatureDoesNotMatch</Code></Error>"
    query = dict(part.split("=", 1) for part in url.split("?", 1)[1].split("&"))
    signed = datetime.datetime.strptime(query["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
    if float(store["now"]) > signed.timestamp() + int(query["X-Amz-Expires"]):
        return 403, b"<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>"
    return 200, store["key_object"].encode()


def cuda_keyring(url: str) -> bytes:
    """NVIDIA's cuda-keyring package: its archive key and the CUDA repository's apt source."""
    release = re.search(r"repos/(ubuntu\d+)/", url).group(1)
    files = {
        "usr/share/keyrings/cuda-archive-keyring.gpg": "dearmored key",
        f"etc/apt/sources.list.d/cuda-{release}-x86_64.list": "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] "
        f"https://developer.download.nvidia.com/compute/cuda/repos/{release}/x86_64/ /\n",
    }
    return json.dumps({"package": "cuda-keyring", "files": files}).encode()


def awscli_bundle(url: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        info = zipfile.ZipInfo("aws/install")
        info.external_attr = 0o755 << 16
        bundle.writestr(info, "#!/bin/sh\nmkdir -p /usr/local/bin\nln -sf /harness/stub.py /usr/local/bin/aws\n")
    return buffer.getvalue()


def azcopy_tarball(url: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        data = open("/harness/stub.py", "rb").read()
        for name in ("azcopy_linux_amd64_10.27.1/", "azcopy_linux_amd64_10.27.1/azcopy"):
            info = tarfile.TarInfo(name.rstrip("/"))
            if name.endswith("/"):
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o755
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def enroot_deb(url: str) -> bytes:
    """NVIDIA's enroot release packages: enroot (enroot's pkg/deb/control Depends: jq, parallel, squashfs-tools,
    beside curl, gawk|mawk, passwd, zstd and bsdmainutils that Ubuntu's server image has) and enroot+caps
    (setcap'd helpers; depends on enroot and libcap2-bin)."""
    version = re.search(r"_([\d.]+)-1_amd64\.deb$", url).group(1)
    if "enroot+caps_" in url:
        return json.dumps({"package": "enroot+caps", "version": version, "depends": ["enroot"]}).encode()
    manifest = {
        "package": "enroot",
        "version": version,
        "depends": ["jq", "squashfs-tools", "parallel"],
        "commands": {"enroot": "/usr/bin/enroot"},
        "files": {"etc/enroot/enroot.conf.d/.keep": ""},
    }
    return json.dumps(manifest).encode()


def pyxis_tarball(url: str) -> bytes:
    """pyxis' release source: a Makefile (make install builds spank_pyxis.so against the Slurm headers)."""
    version = re.search(r"/v([\d.]+)\.tar\.gz$", url).group(1)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        data = b"install:\n\tinstall -m 644 spank_pyxis.so $(DESTDIR)/usr/local/lib/slurm/\n"
        info = tarfile.TarInfo(f"pyxis-{version}/Makefile")
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def whamcloud_client_deb(url: str) -> bytes:
    """Whamcloud's public Lustre client .debs (downloads.whamcloud.com/public/lustre/lustre-<v>/ubuntu2404/client):
    the DKMS module package builds lustre for the running kernel when installed (needs dkms and its headers), the
    utilities carry mount.lustre and lfs."""
    version = re.search(r"_([\d.]+)-1_amd64\.deb$", url).group(1)
    if "lustre-client-modules-dkms_" in url:
        manifest = {"package": "lustre-client-modules-dkms", "version": version,
                    "depends": ["dkms", kernelled("linux-headers-@KERNEL@")], "modules": ["lustre"]}  # fmt: skip
    else:
        manifest = {"package": "lustre-client-utils", "version": version,
                    "commands": {"mount.lustre": "/sbin/mount.lustre", "lfs": "/usr/bin/lfs"}}  # fmt: skip
    return json.dumps(manifest).encode()


# The Region's RDS CA bundle (truststore.pki.rds.amazonaws.com): a self-signed test CA named as us-east-1's
# rds-ca-rsa2048-g1 (P-256, ten years; its key was never kept), so the head's pinned-CA check passes for that Region.
RDS_BUNDLE = b"""\
-----BEGIN CERTIFICATE-----
MIIB7DCCAZOgAwIBAgIUDqjiRhp723bRxuqPpj4WeQKHmzowCgYIKoZIzj0EAwIw
TDEYMBYGA1UECgwPYWNjZWxzdGFjayB0ZXN0MTAwLgYDVQQDDCdBbWF6b24gUkRT
IHVzLWVhc3QtMSBSb290IENBIFJTQTIwNDggRzEwHhcNMjYxMjA2MDY1MjUyWhcN
MzYxMjAzMDY1MjUyWjBMMRgwFgYDVQQKDA9hY2NlbHN0YWNrIHRlc3QxMDAuBgNV
BAMMJ0FtYXpvbiBSRFMgdXMtZWFzdC0xIFJvb3QgQ0EgUlNBMjA0OCBHMTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABMEdHDm2E6eJojK4ZK4dVoozHrcf604EWdyr
dGez3mr8QDDuBOCu0f4cumDNZVlpcp8yMDblKCVuAiX2Wowr4VujUzBRMB0GA1Ud
DgQWBBTalxmwchNLG4u0QAAZ/QJ5bQIeKDAfBgNVHSMEGDAWgBTalxmwchNLG4u0
QAAZ/QJ5bQIeKDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIBgx
QZKofjiNO4wP1rdY0tY+EZf+7fED4YOhzEhII10HAiBQeZGOYr0jG0PIZLXB9Jrg
c76YrkGKNgOOo+DAvn0AHw==
-----END CERTIFICATE-----
"""

DOWNLOADS = [
    (
        r"https://downloads\.whamcloud\.com/public/lustre/lustre-[\d.]+/ubuntu2404/client/"
        r"lustre-client-(modules-dkms|utils)_[\d.]+-1_amd64\.deb$",
        whamcloud_client_deb,
    ),
    (r"https://github\.com/NVIDIA/enroot/releases/download/v[\d.]+/enroot(\+caps)?_[\d.]+-1_amd64\.deb$", enroot_deb),
    (r"https://github\.com/NVIDIA/pyxis/archive/refs/tags/v[\d.]+\.tar\.gz$", pyxis_tarball),
    (
        r"https://developer\.download\.nvidia\.com/compute/cuda/repos/ubuntu\d+/x86_64/cuda-keyring_[\d.-]+_all\.deb$",
        cuda_keyring,
    ),
    (r"https://awscli\.amazonaws\.com/awscli-exe-linux-(x86_64|aarch64)\.zip$", awscli_bundle),
    (r"https://aka\.ms/downloadazcopy-v10-linux$", azcopy_tarball),
    (r"https://truststore\.pki\.rds\.amazonaws\.com/[a-z0-9-]+/[a-z0-9-]+-bundle\.pem$", RDS_BUNDLE),
    (r"https://\S+(\.asc|\.gpg|/gpgkey|/microsoft\.asc)$", ARMORED_KEY.encode()),
    (
        r"https://nvidia\.github\.io/libnvidia-container/stable/deb/nvidia-container-toolkit\.list$",
        b"deb https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /\n",
    ),
]


def curl() -> None:
    args, headers, method, data, output, url, fail_on_error = list(ARGS), {}, None, None, None, None, False
    while args:
        arg = args.pop(0)
        if arg in ("-H", "--header"):
            key, _, value = args.pop(0).partition(":")
            headers[key.strip()] = value.strip()
        elif arg in ("-X", "--request"):
            method = args.pop(0)
        elif arg in ("-d", "--data", "--data-binary", "--data-raw"):
            data = args.pop(0).encode()
        elif arg in ("-o", "--output"):
            output = args.pop(0)
        elif arg in ("-m", "--max-time", "--retry", "--connect-timeout", "--retry-delay", "--retry-max-time", "-w"):
            args.pop(0)
        elif arg.startswith("--") or re.fullmatch(r"-[a-zA-Z]+", arg):
            if (arg.startswith("-") and not arg.startswith("--") and "f" in arg) or arg == "--fail":
                fail_on_error = True
            if re.fullmatch(r"-[a-zA-Z]+o", arg):  # short flags bundled with -o (curl -fsSLo FILE URL)
                output = args.pop(0)
        else:
            url = arg
    if url is None:
        fail("curl: no URL specified!", 2)
    try:
        status, body = fetch(url, method or ("POST" if data else "GET"), headers, data)
    except ConnectionError as error:
        fail(str(error), 7 if "(7)" in str(error) else 6)
    log(url=url, status=status)
    if status >= 400 and fail_on_error:
        fail(f"curl: (22) The requested URL returned error: {status}", 22)
    if output:
        with open(output, "wb") as out:
            out.write(body)
    else:
        sys.stdout.buffer.write(body)


# ---------------------------------------------------------------- cloud CLIs and tools
def imds_credentials() -> bool:
    try:
        token = (
            urllib.request.urlopen(
                urllib.request.Request(
                    "http://169.254.169.254/latest/api/token",
                    method="PUT",
                    headers={"X-aws-ec2-metadata-token-ttl-seconds": "21600"},
                ),
                timeout=5,
            )
            .read()
            .decode()
        )
        urllib.request.urlopen(
            urllib.request.Request(
                "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
                headers={"X-aws-ec2-metadata-token": token},
            ),
            timeout=5,
        ).read()
        return True
    except OSError:
        return False


def aws() -> None:
    if MACHINE["cloud"] == "vultr":
        return aws_on_vultr()
    # The CLI's credential chain: the environment's keys first (an S3-compatible store's key), then the instance's role.
    keyed = bool(os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get("AWS_SECRET_ACCESS_KEY"))
    if not keyed and not imds_credentials():
        fail('Unable to locate credentials. You can configure credentials by running "aws configure".', 253)
    log()
    if ARGS[:2] == ["secretsmanager", "get-secret-value"]:
        print(MACHINE["secrets"]["munge"])
    if ARGS[:2] == ["ssm", "get-parameter"]:
        name = ARGS[ARGS.index("--name") + 1]
        if name not in MACHINE["objects"]["ssm"]:
            fail(f"An error occurred (ParameterNotFound) when calling the GetParameter operation: {name}", 254)
        print(MACHINE["objects"]["ssm"][name])


def aws_on_vultr() -> None:
    """The AWS CLI against Vultr Object Storage: no instance credentials exist there, only the key in the
    environment, which must be the scoped key the stack stored, at the region's endpoint."""
    store = MACHINE["objects"]["vultr"]
    if not os.environ.get("AWS_ACCESS_KEY_ID"):
        fail('Unable to locate credentials. You can configure credentials by running "aws configure".', 253)
    if (os.environ["AWS_ACCESS_KEY_ID"], os.environ.get("AWS_SECRET_ACCESS_KEY")) != tuple(store["scoped_key"]):
        fail("An error occurred (InvalidAccessKeyId) when calling the ListObjectsV2 operation", 1)
    if "--endpoint-url" not in ARGS or ARGS[ARGS.index("--endpoint-url") + 1] != store["endpoint"]:
        fail(f"aws: {ARGS} does not name the region's Object Storage endpoint {store['endpoint']}", 255)
    log()


def gcloud() -> None:
    log()
    if ARGS[:3] == ["secrets", "versions", "access"]:
        sys.stdout.buffer.write(base64.b64decode(MACHINE["secrets"]["munge"]))
    if ARGS[:2] == ["auth", "configure-docker"]:
        # gcloud registers itself as docker's credential helper for the hosts named, in the caller's config.
        path = os.path.expanduser("~/.docker/config.json")
        config = json.load(open(path)) if os.path.exists(path) else {}
        hosts = [h for a in ARGS[2:] if not a.startswith("-") for h in a.split(",")]
        config.setdefault("credHelpers", {}).update(dict.fromkeys(hosts, "gcloud"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as out:
            json.dump(config, out)


def gpg() -> None:
    log()
    if "--dearmor" not in ARGS:
        fail(f"harness: gpg {' '.join(ARGS)} is not modelled")
    data = sys.stdin.buffer.read()
    if b"BEGIN PGP PUBLIC KEY BLOCK" not in data:
        fail("gpg: no valid OpenPGP data found.", 2)
    target = (
        ARGS[ARGS.index("-o") + 1] if "-o" in ARGS else ARGS[ARGS.index("--output") + 1] if "--output" in ARGS else None
    )
    if target:
        open(target, "wb").write(b"dearmored " + data)
    else:
        sys.stdout.buffer.write(b"dearmored " + data)


def unzip() -> None:
    words = [a for a in ARGS if not a.startswith("-")]
    archive = words[0]
    target = ARGS[ARGS.index("-d") + 1] if "-d" in ARGS else "."
    with zipfile.ZipFile(archive) as bundle:
        for info in bundle.infolist():
            path = bundle.extract(info, target)
            mode = info.external_attr >> 16
            if mode:
                os.chmod(path, mode)
    log()


def python_module() -> None:
    """`python3 -m pip` and `python3 -m venv` on the image's system python."""
    module, args = ARGS[1], ARGS[2:]
    installed = load("installed", [])
    log()
    if module == "venv":
        if "python3-venv" not in installed and "python3-venv" not in IMAGE["ships"]:
            fail("The virtual environment was not created successfully because ensurepip is not available. "
                 "On Debian/Ubuntu systems, you need to install the python3-venv package", 1)  # fmt: skip
        target = [a for a in args if not a.startswith("-")][-1]
        os.makedirs(f"{target}/bin", exist_ok=True)
        open(f"{target}/pyvenv.cfg", "w").write("home = /usr/bin\ninclude-system-site-packages = false\n")
        scripts = {
            "python": f'#!/bin/sh\nif [ "$1" = -m ] && [ "$2" = pip ]; then shift 2; HARNESS_VENV={target} HARNESS_AS=venv-pip exec /harness/stub.py "$@"; fi\nexec /usr/bin/python3 "$@"\n',
            "pip": f'#!/bin/sh\nHARNESS_VENV={target} HARNESS_AS=venv-pip exec /harness/stub.py "$@"\n',
        }  # fmt: skip
        for name, text in {**scripts, "python3": scripts["python"], "pip3": scripts["pip"]}.items():
            open(f"{target}/bin/{name}", "w").write(text)
            os.chmod(f"{target}/bin/{name}", 0o755)
        return
    if "python3-pip" not in installed and "pip3" not in IMAGE["ships"]:
        fail("/usr/bin/python3: No module named pip", 1)
    if args[:1] == ["install"] and IMAGE["release"] == "ubuntu-24.04" and "--break-system-packages" not in args:
        fail(
            "error: externally-managed-environment (Ubuntu 24.04's python3 refuses system-wide pip installs, PEP 668)",
            1,
        )


def cloud_init_status() -> None:
    result = json.load(open("/run/cloud-init/result.json")) if os.path.exists("/run/cloud-init/result.json") else None
    print("status: running" if result is None else "status: error" if result["v1"]["errors"] else "status: done")


def recorded() -> None:
    log()


# Console scripts a pip install puts in the venv's bin/ (the package's entry points), for the packages boots install.
PIP_ENTRY_POINTS = {"oci-cli": ["oci"]}


def venv_pip() -> None:
    """A venv's pip: `install` places the packages' console scripts in the venv's bin/ (oci-cli's `oci`)."""
    log()
    venv = os.environ.get("HARNESS_VENV", "")
    if ARGS[:1] != ["install"] or not venv:
        return
    for package in [a for a in ARGS[1:] if not a.startswith("-")]:
        for script in PIP_ENTRY_POINTS.get(package.split("==")[0], []):
            path = os.path.join(venv, "bin", script)
            if os.path.lexists(path):
                os.remove(path)
            os.symlink("/harness/stub.py", path)


def oci_imds(path: str) -> str:
    """A leaf of OCI's metadata service v2 (the Oracle bearer header it requires)."""
    request = urllib.request.Request(
        f"http://169.254.169.254/opc/v2/{path}", headers={"Authorization": "Bearer Oracle"}
    )
    return urllib.request.urlopen(request, timeout=5).read().decode()


def oci() -> None:
    """The OCI CLI signing as the instance principal: the signer reads the instance's certificate, intermediate and
    key from IMDS v2 (oci.auth.signers.InstancePrincipalsSecurityTokenSigner), then the call is allowed only as the
    stack's policies allow it (the Vault secrets its dynamic group may read: clouds_oci_vultr.oci_objects)."""
    log()
    if ARGS[:2] != ["--auth", "instance_principal"]:
        fail("ERROR: Could not find config file at /root/.oci/config (no --auth instance_principal)", 1)
    try:
        for leaf in ("identity/cert.pem", "identity/intermediate.pem", "identity/key.pem"):
            if "-----BEGIN" not in oci_imds(leaf):
                raise OSError(leaf)
    except OSError as error:
        fail(f"oci: instance principal: cannot read the instance's certificate from the metadata service ({error})", 1)
    words = ARGS[2:]
    if words[:3] == ["secrets", "secret-bundle", "get"]:
        secret = words[words.index("--secret-id") + 1]
        if secret not in MACHINE["objects"].get("oci_secrets", {}):
            fail('ServiceError: {"code": "NotAuthorizedOrNotFound", "status": 404}', 1)
        if "--raw-output" not in words or 'data."secret-bundle-content".content' not in words:
            fail("harness: a secret bundle read that does not print the content raw is not modelled")
        print(MACHINE["secrets"]["munge"])
        return
    if words[:2] == ["os", "object"] and words[2:3] and words[2] in ("sync", "bulk-upload", "put", "get", "list"):
        return
    fail(f"harness: oci {' '.join(words)} is not modelled")


def sacctmgr() -> None:
    """Slurm's accounting manager: answers only while slurmdbd runs; keeps the clusters it adds."""
    log()
    if "slurmdbd.service" not in load("active", []):
        fail("sacctmgr: error: Problem talking to the database: Connection refused")
    clusters = load("clusters", [])
    if "add" in ARGS and "cluster" in ARGS:
        save("clusters", sorted({*clusters, ARGS[ARGS.index("cluster") + 1]}))
    elif "list" in ARGS:
        print("\n".join(clusters))


def sleep() -> None:
    """Waits a moment, not the time asked: boots poll with sleeps, and a loop must still yield the CPU."""
    import time

    log()
    time.sleep(0.2)


def serve_health(port: int) -> None:
    """An OpenAI-compatible server container (vLLM's image) once loaded: /health and /v1/models answer."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Health(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            ok = self.path in ("/health", "/v1/models")
            self.send_response(200 if ok else 404)
            self.end_headers()
            self.wfile.write(b'{"data": []}' if ok else b"")

    HTTPServer(("127.0.0.1", port), Health).serve_forever()


# ---------------------------------------------------------------- containers
# The images the model knows how to run, by a fragment of their name. Google's GPUDirect-TCPXO pair
# (cloud.google.com/compute/docs/gpus/gpudirect; slurm-gcp's receive-data-path-manager-mega runs both):
# the NCCL plugin's installer copies the plugin, its NCCL build and nccl-env-profile.sh into the host's
# /var/lib/tcpxo/lib64 through the /var/lib volume; RxDM logs its ready line once it has mapped the GPUs'
# memory through the dma-buf import helper (so the helper module must be loaded).
TCPXO_PLUGIN_IMAGE = "gpudirect-tcpxo/nccl-plugin-gpudirecttcpx"
TCPXO_RXDM_IMAGE = "gpudirect-tcpxo/tcpgpudmarxd"
RXDM_READY = "Buffer manager initialization complete"
# The plugin's profile as the installer writes it: NIC names as Google's Container-Optimized OS and GKE name
# them (eth0 control, eth1..eth8 GPU NICs), the tuner and guest configs under NCCL_LIB_DIR (the values public
# A3 Mega job scripts export after sourcing it).
TCPXO_PROFILE = """\
export NCCL_FASTRAK_CTRL_DEV=eth0
export NCCL_FASTRAK_IFNAME=eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8
export NCCL_SOCKET_IFNAME=eth0
export NCCL_CROSS_NIC=0
export NCCL_ALGO=Ring,Tree
export NCCL_PROTO=Simple
export NCCL_MIN_NCHANNELS=4
export NCCL_TUNER_PLUGIN=libnccl-tuner.so
export NCCL_TUNER_CONFIG_PATH=${NCCL_LIB_DIR}/a3plus_tuner_config.textproto
export NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE=${NCCL_LIB_DIR}/a3plus_guest_config.textproto
export NCCL_FASTRAK_NUM_FLOWS=2
export NCCL_FASTRAK_USE_SNAP=1
export NCCL_FASTRAK_USE_LLCM=1
export NCCL_NVLS_ENABLE=0
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
"""
TCPXO_LIBRARIES = ("libnccl.so.2", "libnccl-net.so", "libnccl-tuner.so", "a3plus_tuner_config.textproto",
                   "a3plus_guest_config.textproto")  # fmt: skip


def _option_values(args: list[str], *names: str) -> list[str]:
    """Every value of an option given as `--name value` or `--name=value` (any of `names`)."""
    values = []
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                values.append(args[index + 1])
            elif arg.startswith(name + "="):
                values.append(arg.split("=", 1)[1])
    return values


def _run_parts(args: list[str]) -> tuple[list[str], str, list[str]]:
    """`docker run`'s options, image and command (options taking a value are those the scripts use)."""
    takes_value = {"--name", "--volume", "-v", "--env", "-e", "--network", "--cap-add", "--gpus", "--ipc",
                   "--pull", "--entrypoint", "--restart", "--mount", "-p", "--publish", "--user", "-u", "--shm-size",
                   "--ulimit", "--device", "--runtime", "--log-driver", "--workdir", "-w"}  # fmt: skip
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 1 if "=" in args[index] or args[index] not in takes_value else 2
    return args[:index], args[index] if index < len(args) else "", args[index + 1 :]


def _pullable(image: str) -> None:
    """Artifact Registry (*-docker.pkg.dev) answers docker only with credentials: `gcloud auth configure-docker`
    names the host in root's ~/.docker/config.json (credHelpers), else the pull is refused."""
    refusal = MACHINE["objects"].get("registry", {}).get("refuses")
    if refusal:  # a test's registry that refuses this machine (an outage, a revoked grant)
        fail(f"docker: Error response from daemon: pull access denied for {image}: {refusal}", 125)
    host = image.split("/", 1)[0]
    if not host.endswith("-docker.pkg.dev"):
        return
    try:
        helpers = json.load(open("/root/.docker/config.json")).get("credHelpers", {})
    except (FileNotFoundError, ValueError):
        helpers = {}
    if helpers.get(host) != "gcloud":
        fail(f'docker: Error response from daemon: Head "https://{host}/v2/...": denied: Unauthenticated request.', 125)


def _container_id(name: str) -> str:
    return format(abs(hash(name)) % (1 << 48), "012x")


def docker() -> None:
    log()
    verb = ARGS[0] if ARGS else ""
    if verb in ("run", "pull", "ps", "logs", "stop", "rm", "start") and not (
        "docker.service" in load("active", []) or "docker.service" in IMAGE["services"]
    ):
        fail("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", 1)
    containers = load("containers", {})
    if verb == "pull":
        return _pullable(ARGS[-1])
    if verb == "ps":
        names = [re.sub(r"^name=", "", f) for f in _option_values(ARGS, "--filter", "-f") if f.startswith("name=")]
        for name, container in containers.items():
            if container["running"] and all(re.search(pattern, name) for pattern in names):
                print(_container_id(name) if "--quiet" in ARGS or "-q" in ARGS else name)
        return
    if verb == "logs":
        name = ARGS[-1]
        if name not in containers:
            fail(f"Error response from daemon: No such container: {name}", 1)
        print(containers[name]["logs"], end="", file=sys.stderr)
        return
    if verb in ("stop", "rm"):
        for name in [a for a in ARGS[1:] if not a.startswith("-") and not a.isdigit()]:
            if name not in containers:
                if verb == "rm" and ("--force" in ARGS or "-f" in ARGS):
                    continue
                fail(f"Error response from daemon: No such container: {name}", 1)
            if verb == "stop" and containers[name].get("remove"):
                containers.pop(name)
            elif verb == "stop":
                containers[name]["running"] = False
            elif containers[name]["running"] and not ("--force" in ARGS or "-f" in ARGS):
                fail(f"Error response from daemon: cannot remove container {name}: container is running", 1)
            else:
                containers.pop(name)
        return save("containers", containers)
    if verb != "run":
        return
    options, image, command = _run_parts(ARGS[1:])
    [name] = _option_values(options, "--name") or [""]
    if name and name in containers:
        fail(f'docker: Error response from daemon: Conflict. The container name "/{name}" is already in use.', 125)
    _pullable(image)
    port = next((int(command[i + 1]) for i, a in enumerate(command[:-1]) if a == "--port"), None)
    if TCPXO_PLUGIN_IMAGE in image:
        return _tcpxo_install(options, command)
    if TCPXO_RXDM_IMAGE in image:
        return _tcpxo_rxdm(name, image, options, containers)
    if port is None:
        return
    if "-d" in ARGS or "--detach" in ARGS:
        if os.fork() == 0:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for descriptor in (0, 1, 2):
                os.dup2(null, descriptor)
            serve_health(port)
        return
    serve_health(port)


def _tcpxo_install(options: list[str], command: list[str]) -> None:
    """The plugin installer: `install --install-nccl` into the container's /var/lib/tcpxo/lib64, which is the
    host's only through a volume of /var/lib (or a directory above it)."""
    if command[:1] != ["install"]:
        fail(f"harness: the TCPXO plugin image run as {command} is not modelled")
    volumes = {v.split(":")[1]: v.split(":")[0] for v in _option_values(options, "--volume", "-v") if ":" in v}
    if "/var/lib" not in volumes:
        fail("harness: the TCPXO installer ran without /var/lib as a volume: nothing reaches the host", 1)
    host = volumes["/var/lib"] + "/tcpxo/lib64"
    os.makedirs(host, exist_ok=True)
    for library in TCPXO_LIBRARIES if "--install-nccl" in command else TCPXO_LIBRARIES[1:]:
        open(os.path.join(host, library), "w").close()
    with open(os.path.join(host, "nccl-env-profile.sh"), "w") as out:
        out.write(TCPXO_PROFILE)


def _tcpxo_rxdm(name: str, image: str, options: list[str], containers: dict) -> None:
    """RxDM, detached: ready once it maps GPU memory (privileged, the GPUs, the import helper loaded)."""
    if "--detach" not in options and "-d" not in options:
        fail("harness: RxDM in the foreground is not modelled (a prolog would block on it)")
    missing = [need for need, ok in (
        ("--privileged", "--privileged" in options),
        ("--gpus", bool(_option_values(options, "--gpus"))),
        ("the import-helper module", "import-helper" in load("loaded", [])),
    ) if not ok]  # fmt: skip
    logs = "I tcpgpudmarxd starting\n" + (
        f"E rxdm: cannot start without {', '.join(missing)}\n" if missing else f"I {RXDM_READY}\n"
    )
    containers[name or _container_id(image)] = {
        "image": image,
        "running": not missing,
        "logs": logs,
        "remove": "--rm" in options,
    }
    save("containers", containers)
    print(_container_id(name))


COMMANDS = {
    "apt-get": apt_get, "apt-cache": apt_cache, "dnf": dnf, "yum": dnf, "systemctl": systemctl, "mount": mount,
    "mountpoint": mountpoint, "umount": umount, "blkid": blkid, "mkfs.ext4": mkfs, "mkfs.xfs": mkfs,
    "modprobe": modprobe, "modinfo": modprobe, "curl": curl, "aws": aws, "gcloud": gcloud, "gsutil": recorded,
    "gpg": gpg, "unzip": unzip, "sleep": sleep, "azcopy": recorded, "docker": docker, "nvidia-ctk": recorded,
    "nvidia-smi": recorded, "udevadm": recorded, "sysctl": recorded, "hostnamectl": recorded, "logger": recorded,
    "dkms": dkms, "dpkg-deb": dpkg_deb, "dpkg": dpkg, "dpkg-query": dpkg_query, "apt-mark": recorded, "munge": recorded, "unmunge": recorded, "mungekey": recorded,
    "scontrol": recorded, "sinfo": recorded, "squeue": recorded, "scancel": recorded, "sbatch": recorded,
    "srun": recorded, "sacct": recorded, "salloc": recorded, "slurmd": recorded, "slurmctld": recorded,
    "slurmdbd": recorded, "sacctmgr": sacctmgr, "sshare": recorded,
    "munged": recorded, "dockerd": recorded, "lfs": recorded, "mount.lustre": recorded, "mount.nfs": recorded,
    "cloud-init": cloud_init_status, "jq": recorded, "pip3": recorded, "python3 -m pip": python_module,
    "python3 -m venv": python_module, "venv-pip": venv_pip, "oci": oci, "make": make, "gcc": recorded, "enroot": enroot,
    "nvidia-container-cli": recorded, "mksquashfs": recorded, "unsquashfs": recorded, "parallel": recorded,
    "mdadm": mdadm,
}  # fmt: skip
assert set(COMMANDS) == MODELLED, set(COMMANDS) ^ MODELLED

if __name__ == "__main__":
    handler = COMMANDS.get(NAME)
    if handler is None:
        fail(f"harness: {NAME} is not modelled")
    handler()
