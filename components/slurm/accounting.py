"""Slurm accounting (training.scheduler.accounting: database): slurmdbd on the head node, its records in the cloud's
managed MySQL, the same on every cloud (ParallelCluster's `Scheduling/SlurmSettings/Database` with RDS or Aurora,
slurm-gcp's controller with Cloud SQL, CycleCloud Workspace for Slurm's Azure Database for MySQL).

slurmdbd.conf is rendered here without its password: the head's setup writes the file at boot, 0600 and owned by
the slurm user (slurmdbd refuses to start otherwise: slurmdbd.conf(5), "should be protected from unauthorized
access"), appending StoragePass read with the head's own identity from the cloud's secret store. The password is
never in user data, generated files or the stack's exports. slurm.conf then points slurmctld at slurmdbd
(accounting_storage/slurmdbd), gathers job usage through cgroups and orders the queue by fair-share
(priority/multifactor, slurm.conf(5) and SchedMD's "Multifactor Priority Plugin").
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from accelstack.spec.models import StackSpec, TrainingStack

SLURMDBD_PORT = 6819  # slurmdbd.conf(5) DbdPort's default; slurmctld and sacct reach it on the head itself
DATABASE_PORT = 3306  # MySQL's, on RDS, Azure Database for MySQL and Cloud SQL alike
DATABASE_USER = "slurm"  # the managed server's admin login (none of the clouds reserves it)
DATABASE_NAME = "slurm_acct_db"  # slurmdbd.conf(5) StorageLoc's default, created by the stack
SLURMDBD_CONF = "/etc/slurm/slurmdbd.conf"
# Jobs' usage is sampled this often (seconds) for sacct's MaxRSS and TRES figures (slurm.conf(5): 30 is default).
JOB_ACCT_GATHER_SECONDS = 30
# Fair-share: usage halves every week; fair-share dominates the priority, age breaks ties (SchedMD's example).
PRIORITY_DECAY_HALF_LIFE = "7-0"
PRIORITY_WEIGHT_FAIRSHARE = 10000
PRIORITY_WEIGHT_AGE = 1000
# The password is letters and digits only: nothing to quote in slurmdbd.conf, and every cloud's complexity rule
# (Azure's: three of upper, lower, digit, symbol) is met by asking for each class.
PASSWORD_LENGTH = 32

# A managed server's address as the cloud reports it (a DNS name or an IPv4 address), or render's placeholder.
_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252})|\$\{[A-Z_]+\}")


@dataclass(frozen=True)
class Storage:
    """Where slurmdbd keeps its records: the managed server's private address, and TLS parameters for Slurm's
    StorageParameters ("" where the connection stays inside the private network without them)."""

    host: str
    storage_parameters: str = ""


PLACEHOLDER_STORAGE = Storage("${ACCOUNTING_HOST}")  # `accelstack render`'s, filled by the cloud at deploy time


def keeps_accounting(spec: StackSpec) -> bool:
    """The stack asks for slurmdbd (a spec rule refuses it without Slurm)."""
    return (
        isinstance(spec, TrainingStack)
        and spec.training.scheduler.kind == "slurm"
        and spec.training.scheduler.accounting == "database"
    )


def slurm_conf_values(spec: StackSpec, head_hostname: str) -> dict[str, object] | None:
    """slurm.conf's accounting lines' values; None: accounting_storage/none."""
    if not keeps_accounting(spec):
        return None
    return {
        "host": head_hostname,
        "port": SLURMDBD_PORT,
        "gather_seconds": JOB_ACCT_GATHER_SECONDS,
        "decay_half_life": PRIORITY_DECAY_HALF_LIFE,
        "weight_fairshare": PRIORITY_WEIGHT_FAIRSHARE,
        "weight_age": PRIORITY_WEIGHT_AGE,
    }


def slurmdbd_directives(head_hostname: str, storage: Storage, log_dir: str, slurm_user: str) -> list[str]:
    """slurmdbd.conf's lines but StoragePass (the head's setup appends it from the secret store): plain words, so the
    setup writes them with one printf (the head's user data is near EC2's 16 KB)."""
    if not _HOST.fullmatch(storage.host):
        raise ValueError(f"accounting database address {storage.host[:80]!r} is not a host name or address")
    lines = [
        "AuthType=auth/munge",
        f"DbdHost={head_hostname}",
        f"DbdPort={SLURMDBD_PORT}",
        f"SlurmUser={slurm_user}",
        f"LogFile={log_dir}/slurmdbd.log",
        "PidFile=/run/slurmdbd.pid",
        "StorageType=accounting_storage/mysql",
        f"StorageHost={storage.host}",
        f"StoragePort={DATABASE_PORT}",
        f"StorageUser={DATABASE_USER}",
        f"StorageLoc={DATABASE_NAME}",
    ]
    if storage.storage_parameters:
        lines.append(f"StorageParameters={storage.storage_parameters}")
    return lines


def slurmdbd_conf(cluster_name: str, head_hostname: str, storage: Storage, log_dir: str, slurm_user: str) -> str:
    """slurmdbd.conf as the head writes it, without StoragePass (`accelstack render` shows this)."""
    header = (
        f"# slurmdbd.conf of accelstack stack {cluster_name}; the head appends StoragePass from the secret store.\n"
    )
    return header + "".join(f"{line}\n" for line in slurmdbd_directives(head_hostname, storage, log_dir, slurm_user))


def head_setup_values(
    spec: StackSpec, head_hostname: str, storage: Storage, password_command: str, log_dir: str, slurm_user: str
) -> dict[str, str] | None:
    """The head setup's accounting step: slurmdbd.conf's lines (shell-quoted), where it goes, and the command
    printing the password; None without accounting."""
    if not keeps_accounting(spec):
        return None
    lines = slurmdbd_directives(head_hostname, storage, log_dir, slurm_user)
    return {
        "conf": SLURMDBD_CONF,
        "directives": " ".join(shlex.quote(line) for line in lines),
        "password_command": password_command,
    }
