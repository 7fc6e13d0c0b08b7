"""Slurm accounting (training.scheduler.accounting: database): slurmdbd on the head node, its records in the cloud's
managed MySQL, the same on every cloud (ParallelCluster's `Scheduling/SlurmSettings/Database` with RDS or Aurora,
slurm-gcp's controller with Cloud SQL, CycleCloud Workspace for Slurm's Azure Database for MySQL).

slurmdbd.conf is rendered here without its password: the head's setup writes the file at boot, 0600 and owned by
the slurm user (slurmdbd refuses to start otherwise: slurmdbd.conf(5), "should be protected from unauthorized
access"), appending StoragePass read with the head's own identity from the cloud's secret store. The password is
never in user data, generated files or the stack's exports. slurm.conf then points slurmctld at slurmdbd
(accounting_storage/slurmdbd), gathers job usage through cgroups and orders the queue by fair-share
(priority/multifactor, slurm.conf(5) and SchedMD's "Multifactor Priority Plugin").

The connection is TLS on every cloud, and slurmdbd verifies the server's certificate against the CA that signs it:
StorageParameters=SSL_CA=<file> (Slurm hands SSL_KEY, SSL_CERT, SSL_CA, SSL_CAPATH and SSL_CIPHER to mysql_ssl_set
and nothing else: src/database/mysql_common.c, _set_mysql_ssl_opts). The MariaDB client library Debian's and
Ubuntu's slurmdbd link (libmariadb3, Connector/C 3.x) then checks the chain (SSL_VERIFY_PEER once a CA is given) but
not the host name, which needs MYSQL_OPT_SSL_VERIFY_SERVER_CERT, an option Slurm never sets: verify-CA, the
realistic mode where a server certificate names an instance rather than the address slurmdbd dials (Cloud SQL's).
Each cloud says how its head gets that CA (`ServerCa`: a command printing the certificates, run at boot); the
head writes them to ACCOUNTING_CA_FILE (root's, 0644: slurmdbd reads it as the slurm user), refuses a boot whose
certificates do not parse or lack the CA the server is pinned to, and says so (status file and console) when
slurmdbd cannot reach the database, as its other failed steps do.
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
ACCOUNTING_CA_FILE = "/etc/slurm/accounting-ca.pem"
# The head waits this many times 10 s for slurmdbd to answer before its boot fails (a first schema creation on a
# fresh server takes a minute or two).
SLURMDBD_ANSWER_TRIES = 60
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
# A CA's common name as `openssl pkcs7 -print_certs` prints it: plain words, so it is its own pattern in grep -E.
_COMMON_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 -]{0,63}")


@dataclass(frozen=True)
class ServerCa:
    """How the head gets the CA certificate(s) that sign the database server's certificate: `command` prints them
    (PEM) at boot, as root; `pinned` is the common name of the CA the server is pinned to, which must be among them
    ("" where the command names the certificates themselves). Both come from the cloud's code, never from config."""

    command: str
    pinned: str = ""

    def __post_init__(self) -> None:
        if self.pinned and not _COMMON_NAME.fullmatch(self.pinned):
            raise ValueError(f"accounting database CA name {self.pinned[:80]!r} is not plain words")


@dataclass(frozen=True)
class Storage:
    """Where slurmdbd keeps its records: the managed server's private address, and how the head gets the CA that
    signs its certificate (slurmdbd connects with TLS and verifies the server against it)."""

    host: str
    server_ca: ServerCa = ServerCa("${ACCOUNTING_SERVER_CA_COMMAND}")  # `accelstack render`'s placeholder


PLACEHOLDER_STORAGE = Storage("${ACCOUNTING_HOST}")  # `accelstack render`'s, filled by the cloud at deploy time
STORAGE_PARAMETERS = f"SSL_CA={ACCOUNTING_CA_FILE}"  # every cloud's: TLS, the server verified against that CA


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
        f"StorageParameters={STORAGE_PARAMETERS}",
    ]
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
    """The head setup's accounting steps: slurmdbd.conf's lines (shell-quoted), where it goes, the command printing
    the password, and the server's CA (its command, the pinned CA's name as a grep -E pattern, its file); None
    without accounting."""
    if not keeps_accounting(spec):
        return None
    lines = slurmdbd_directives(head_hostname, storage, log_dir, slurm_user)
    ca = storage.server_ca
    return {
        "conf": SLURMDBD_CONF,
        "directives": " ".join(shlex.quote(line) for line in lines),
        "password_command": password_command,
        "ca_file": ACCOUNTING_CA_FILE,
        "ca_command": ca.command,
        "ca_pinned": shlex.quote(f"CN = {ca.pinned}(,|$)") if ca.pinned else "",
        "answer_tries": str(SLURMDBD_ANSWER_TRIES),
        "log_file": f"{log_dir}/slurmdbd.log",
    }
