"""Slurm's configuration files delivered out of the head's boot data, the same way on every cloud.

slurm.conf follows the node count (MaxNodeCount) and the partitions, gres.conf the node type. Every cloud
rebuilds the head when its boot data changes (cloud-init reads it once), so these files live in a versioned
object the next `pulumi up` updates in place (AWS: an SSM parameter; Azure: a Key Vault secret; GCP: a metadata
key of the head that does not replace it): `config_bundle` is that object's value. The head installs them at
first boot, before slurmctld starts, and a timer polls the object and applies a change with `scontrol
reconfigure` (`config_sync_script`); the compute nodes are configless and take the new files from slurmctld.
This is what ParallelCluster (cluster update) and slurm-gcp (its config update) do instead of a new controller.

The bundle is base64 of a gzip'd tar holding `CONFIG_FILES` (ustar, fixed owner and mtime: the same files give
the same bytes, so an unrelated `up` leaves the object alone). Compressed, the shipped stacks' bundles take
about 2.2 KB of text: well inside SSM's standard tier (4 KB), Key Vault's 25 KB and a metadata value's 256 KB.
"""

from __future__ import annotations

import base64
import gzip
import io
import shlex
import tarfile
from collections.abc import Mapping

from accelstack.components.node_platform import NodePlatform
from accelstack.components.templates import template_environment

# What the bundle holds and where the head installs it (slurmctld serves these to configless nodes).
CONFIG_FILES = ("slurm.conf", "gres.conf", "cgroup.conf", "plugstack.conf")
SLURM_CONF_DIR = "/etc/slurm"
CONFIG_SYNC_PATH = "/usr/local/sbin/accelstack-slurm-config"
CONFIG_SYNC_UNIT = "accelstack-slurm-config"
# How often the head looks for a new configuration: one small read a minute (SSM's standard throughput, Key
# Vault's and the metadata server's limits are orders of magnitude above it), so an `up` reaches slurmctld
# within a minute of finishing.
CONFIG_POLL_SECONDS = 60
# At first boot the head's read grant may not have propagated yet (IAM, Azure RBAC take minutes): retry for
# up to five minutes, as the munge key's fetch does.
CONFIG_FETCH_ATTEMPTS = 30
CONFIG_FETCH_RETRY_SECONDS = 10
# slurm.conf(5) for 22.05 and 23.02: "The slurmctld daemon must be restarted for changes to this parameter to
# take effect." 23.11 drops that sentence: its `scontrol reconfigure` starts a new slurmctld with the new
# files and hands over only if it comes up (scontrol(1), reconfigure), so MaxNodeCount follows a reconfigure.
# Older controllers are restarted (their state is saved; running jobs keep running) when it changes.
RESTART_BEFORE_23_11 = ("MaxNodeCount",)

_env = template_environment("accelstack.components.slurm")


def config_bundle(files: Mapping[str, str]) -> str:
    """`files` (name -> text) as base64 of a gzip'd tar, byte-for-byte the same for the same files."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name in sorted(files):
            data = files[name].encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            archive.addfile(info, io.BytesIO(data))
    return base64.b64encode(gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)).decode()


def bundle_files(bundle: str) -> dict[str, str]:
    """The files a bundle holds (name -> text): what the head installs."""
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(base64.b64decode(bundle))), mode="r") as archive:
        return {
            member.name: archive.extractfile(member).read().decode()  # type: ignore[union-attr]
            for member in archive.getmembers()
            if member.isfile()
        }


def config_source(reference: str) -> str:
    """The configuration object as the head's script and units name it."""
    return f"the stack's Slurm configuration object ({reference})"


def config_sync_script(cluster_name: str, platform: NodePlatform, reference: str) -> str:
    """The head's installer of the configuration files from the object `reference` (read with the platform's
    config command): `install` at first boot, no argument from the timer."""
    return _env.get_template("slurm-config.sh.j2").render(
        cluster_name=cluster_name,
        tool_functions=platform.tool_functions,
        config_command=platform.config_object_command(reference),
        source=config_source(reference),
        source_word=shlex.quote(config_source(reference)),
        files=CONFIG_FILES,
        conf_dir=SLURM_CONF_DIR,
        attempts=CONFIG_FETCH_ATTEMPTS,
        retry_seconds=CONFIG_FETCH_RETRY_SECONDS,
        restart_before_23_11=RESTART_BEFORE_23_11,
    )


def config_sync_units(reference: str) -> dict[str, str]:
    """The oneshot service running the installer and the timer that polls with it (file name -> text)."""
    values = {"unit": CONFIG_SYNC_UNIT, "script": CONFIG_SYNC_PATH, "source": config_source(reference)}
    return {
        f"{CONFIG_SYNC_UNIT}.service": _env.get_template("slurm-config.service.j2").render(**values),
        f"{CONFIG_SYNC_UNIT}.timer": _env.get_template("slurm-config.timer.j2").render(
            **values, period_seconds=CONFIG_POLL_SECONDS
        ),
    }
