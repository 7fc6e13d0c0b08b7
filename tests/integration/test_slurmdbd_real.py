"""Slurm accounting (training.scheduler.accounting: database) against real slurmdbd, MariaDB, slurmctld and slurmd
(Debian's slurmdbd, mariadb-server, slurm-wlm and munge).

MariaDB stands in for the cloud's managed MySQL: its own data directory under the test's temp dir, TCP on 127.0.0.1
at a free port (and a private socket for the test's own admin session), the accounting database created and its
admin login `accounting.DATABASE_USER` given what a managed server's admin gets (RDS's master user privileges: no
SUPER), reached with a password over TCP as the head reaches the cloud's server. slurmdbd.conf is what the head's
setup writes (`accounting.head_setup_values`' directives through the setup's own `printf`, then StoragePass from the
"secret store"); the loopback overlay moves only what cannot exist here (DbdHost is this machine, DbdPort and
StoragePort free ports, SlurmUser root, LogFile and PidFile in the temp dir, munge's socket the test's own), as
tests/integration/test_slurm_real.py does for slurm.conf. The cluster is registered with the head's own command,
then slurmctld and a dynamic slurmd start, a job runs under the account the deploy pages tell users to add, and
`sacct`, `sshare` and `sreport` answer as those pages say.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from accelstack.components import slurm
from accelstack.components.aws.slurm_accounting import MYSQL_PARAMETERS
from accelstack.components.azure.slurm_accounting import STORAGE_PARAMETERS as AZURE_STORAGE_PARAMETERS
from accelstack.components.gcp.slurm_accounting import STORAGE_PARAMETERS as GCP_STORAGE_PARAMETERS
from accelstack.components.slurm import accounting
from tests.integration.test_slurm_real import (
    BINARIES,
    NODE,
    Cluster,
    free_port,
    spec_for,
    start,
    stop,
    wait_for,
)

pytestmark = pytest.mark.integration

STACK = "aws-training"
DATABASE_BINARIES = ("slurmdbd", "sacctmgr", "sacct", "sshare", "sreport", "mariadbd", "mariadb-install-db", "mariadb")
MISSING = [name for name in (*BINARIES, *DATABASE_BINARIES) if shutil.which(name) is None]
# What RDS gives its master user (Amazon RDS User Guide, "Master user account privileges"); Azure's and Cloud SQL's
# admin logins get no more that slurmdbd needs.
MANAGED_ADMIN_PRIVILEGES = (
    "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD, PROCESS, REFERENCES, INDEX, ALTER, SHOW DATABASES, "
    "CREATE TEMPORARY TABLES, LOCK TABLES, EXECUTE, REPLICATION SLAVE, REPLICATION CLIENT, CREATE VIEW, SHOW VIEW, "
    "CREATE ROUTINE, ALTER ROUTINE, CREATE USER, EVENT, TRIGGER"
)
PASSWORD = "Q7xk2LmZp9Rt4VwB8nYc3HdF6gJs5Ae1"  # letters and digits, accounting.PASSWORD_LENGTH long, as generated
TEAM = "research"  # the deploy pages' `sacctmgr -i add account <team>`
JOB = """#!/bin/bash
#SBATCH -p gpu
#SBATCH -N 1
#SBATCH -t 1
#SBATCH -o {out}/%j.out
echo accounted-on-$SLURMD_NODENAME
"""


class ManagedMysql:
    """MariaDB on loopback with the managed server's shape: the database exists, the admin logs in by password."""

    def __init__(self, root: Path, tls: bool):
        self.root = root
        self.tls = tls  # Cloud SQL and Azure's flexible server refuse unencrypted connections
        self.port = free_port()
        self.socket = root / "mysqld.sock"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "mariadb-install-db",
                "--no-defaults",
                f"--datadir={self.root / 'data'}",
                "--user=root",
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        tls = []
        if self.tls:
            # A certificate from a CA the head does not hold (Cloud SQL's per-instance CA is in no system store).
            subprocess.run(
                [
                    "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=accounting-database", "-keyout", str(self.root / "server.key"),
                    "-out", str(self.root / "server.crt"),
                ],
                check=True, capture_output=True, timeout=60,
            )  # fmt: skip
            tls = [
                f"--ssl-cert={self.root / 'server.crt'}",
                f"--ssl-key={self.root / 'server.key'}",
                "--require-secure-transport=ON",
            ]
        self.proc = start(
            [
                "mariadbd",
                "--no-defaults",
                f"--datadir={self.root / 'data'}",
                f"--socket={self.socket}",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                "--skip-name-resolve",
                "--user=root",
                f"--pid-file={self.root / 'mariadbd.pid'}",
                f"--log-error={self.root / 'mariadbd.err'}",
                "--innodb-buffer-pool-size=64M",
                # slurmdbd's documented settings, as the stacks set them on each cloud's server.
                *(f"--{key.replace('_', '-')}={value}" for key, value in MYSQL_PARAMETERS.items()),
                *tls,
            ],
            self.root / "mariadbd.out",
        )
        wait_for("MariaDB to accept connections", lambda: self.admin("SELECT 1", check=False).returncode == 0, 60)
        self.admin(
            f"CREATE DATABASE {accounting.DATABASE_NAME}; "
            f"CREATE USER '{accounting.DATABASE_USER}'@'%' IDENTIFIED BY '{PASSWORD}'; "
            f"GRANT {MANAGED_ADMIN_PRIVILEGES} ON *.* TO '{accounting.DATABASE_USER}'@'%' WITH GRANT OPTION"
        )

    def admin(self, sql: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["mariadb", "--no-defaults", "-S", str(self.socket), "-u", "root", "-N", "-e", sql],
            capture_output=True,
            text=True,
            check=check,
            timeout=30,
        )

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)


SECRET = "arn:aws:secretsmanager:us-east-1:111111111111:secret:aws-training-slurmdbd-password-AbCdEf"


def head_function(script: str, name: str) -> str:
    found = re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", script, re.S | re.M)
    assert found, f"the head setup defines no {name}"
    return found.group(0)


def head_accounting_steps(cluster: Cluster, spec, storage: accounting.Storage) -> str:
    """The head setup's own `install_slurmdbd_conf` and `start_slurmdbd`, moved to this machine: /etc/slurm is the
    test's etc dir, the slurm user is root, the secret store answers with the password, systemd is this test (which
    starts slurmdbd itself); every other word as generated."""
    nodes = slurm.nodes_for(spec)
    script = slurm.head_setup_script(
        spec, nodes, slurm.DeployValues(accounting_storage=storage, accounting_password_secret=SECRET)
    )
    steps = head_function(script, "install_slurmdbd_conf") + head_function(script, "start_slurmdbd")
    moved = (
        steps.replace(nodes.platform.secret_command(SECRET), f"printf %s {PASSWORD}")
        .replace("/etc/slurm/", f"{cluster.root / 'etc'}/")
        .replace(f"chown {slurm.SLURM_USER}:{slurm.SLURM_USER} ", "chown root:root ")
    )
    assert PASSWORD in moved and "/etc/slurm/" not in moved
    return 'log() { echo "$*"; }\nsystemctl() { :; }\n' + moved


def loopback_slurmdbd_conf(path: Path, root: Path, dbd_port: int, storage_port: int, munge_socket: Path) -> str:
    """Moves what cannot exist here, every other line as the head wrote it (mode and owner kept)."""
    replace = {
        "DbdHost": socket.gethostname().split(".")[0],
        "DbdPort": str(dbd_port),
        "StoragePort": str(storage_port),
        "SlurmUser": "root",
        "LogFile": str(root / "slurmdbd.log"),
        "PidFile": str(root / "slurmdbd.pid"),
    }
    written = path.read_text()
    lines = []
    for line in written.splitlines():
        key = line.split("=", 1)[0]
        lines.append(f"{key}={replace[key]}" if key in replace else line)
    lines.append(f"AuthInfo=socket={munge_socket}")
    with path.open("r+") as file:  # in place: the head's mode and owner stay
        file.write("\n".join(lines) + "\n")
        file.truncate()
    return written


@dataclass
class Accounted:
    cluster: Cluster
    spec: object
    slurmdbd_conf: str  # as the head wrote it, before the loopback overlay
    slurmdbd_mode: int
    registered: subprocess.CompletedProcess
    database: ManagedMysql
    steps: str  # the head's accounting steps, as run here


# How the head reaches each cloud's server: RDS in the clear (require_secure_transport is off on RDS for MySQL 8.4);
# Cloud SQL and Azure's flexible server only over TLS, Cloud SQL's certificate from its instance's own CA (the head
# holds no copy), Azure's from a public root in the head's CA store (here the test's CA in a test store).
SERVERS = {
    "rds": (accounting.Storage("127.0.0.1"), None),
    "cloud-sql": (accounting.Storage("127.0.0.1", GCP_STORAGE_PARAMETERS), "unknown"),
    "azure-mysql": (accounting.Storage("127.0.0.1", AZURE_STORAGE_PARAMETERS), "trusted"),
}
SYSTEM_CA_STORE = "/etc/ssl/certs"


@pytest.fixture(scope="module", params=sorted(SERVERS))
def accounted(request, tmp_path_factory) -> Iterator[Accounted]:
    if MISSING:
        pytest.skip(
            f"needs Debian's slurmdbd, mariadb-server, slurm-wlm and munge on PATH; missing: {', '.join(MISSING)}"
        )
    if os.geteuid() != 0:
        pytest.skip("runs slurmd (which manages job processes and cgroups) as root; CI runs as root")
    started = time.monotonic()
    root = tmp_path_factory.mktemp("slurmdbd")
    spec = spec_for("training.scheduler.accounting=database", stack=STACK)
    dbd_port = free_port()
    storage, ca = SERVERS[request.param]
    database = ManagedMysql(root / "mysql", tls=ca is not None)
    cluster = Cluster(
        root / "cluster",
        spec,
        paths={"AccountingStorageHost": "127.0.0.1", "AccountingStoragePort": str(dbd_port)},
    )
    try:
        database.start()
        cluster.start_munge()
        # Clients reach slurmdbd through munge's socket named here (slurm.conf(5) AccountingStoragePass), the test's.
        cluster.extra_conf.append(f"AccountingStoragePass={cluster.loop.munge_socket}")
        cluster.write_conf()
        # The head's steps: slurmdbd.conf from the secret store (the cloud's server answers at its private address,
        # here 127.0.0.1: the overlay moves only its port), then slurmdbd, then the cluster's registration.
        steps = head_accounting_steps(cluster, spec, storage)
        subprocess.run(["bash", "-c", f"set -euo pipefail\n{steps}install_slurmdbd_conf\n"], check=True, timeout=30)
        conf = cluster.root / "etc" / "slurmdbd.conf"
        mode = conf.stat().st_mode & 0o777
        written = loopback_slurmdbd_conf(conf, cluster.root, dbd_port, database.port, cluster.loop.munge_socket)
        if ca == "trusted":  # the head's CA store holds the server's root: here a store holding the test's CA
            store = database.root / "ca-store"
            store.mkdir()
            shutil.copy(database.root / "server.crt", store / "accounting-database.pem")
            subprocess.run(["openssl", "rehash", str(store)], check=True, capture_output=True, timeout=30)
            conf.write_text(conf.read_text().replace(f"={SYSTEM_CA_STORE}", f"={store}"))
        cluster.procs.append(start(["slurmdbd", "-D", "-v"], cluster.root / "slurmdbd.out", cluster.env))
        wait_for(
            "slurmdbd to answer sacctmgr",
            lambda: cluster.run(["sacctmgr", "-n", "list", "cluster"], check=False).returncode == 0,
            60,
        )
        registered = subprocess.run(
            ["bash", "-c", f"set -euo pipefail\n{steps}start_slurmdbd\n"],
            env=cluster.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if registered.returncode == 0:
            # The deploy pages' fair-share by team, added once the head is up.
            cluster.run(["sacctmgr", "-i", "add", "account", TEAM])
            cluster.run(["sacctmgr", "-i", "add", "user", "root", f"account={TEAM}"])
            cluster.start_controller()
        yield Accounted(cluster, spec, written, mode, registered, database, steps)
    finally:
        try:
            cluster.teardown()
        finally:
            database.stop()
        print(f"\nslurmdbd cluster fixture lifetime: {time.monotonic() - started:.1f}s")


def logs(cluster: Cluster) -> str:
    return "\n".join(
        f"--- {name}\n" + (cluster.root / name).read_text(errors="replace")[-3000:]
        for name in ("slurmdbd.out", "slurmdbd.log", "slurmctld.out")
        if (cluster.root / name).exists()
    )


def test_the_head_writes_slurmdbd_conf_slurmdbd_accepts_and_registers_the_cluster(accounted):
    assert accounted.slurmdbd_mode == 0o600
    assert "StoragePass=" + PASSWORD in accounted.slurmdbd_conf.splitlines()
    assert accounted.registered.returncode == 0, accounted.registered.stderr + logs(accounted.cluster)
    clusters = accounted.cluster.run(["sacctmgr", "-n", "-P", "list", "cluster", "format=cluster"]).stdout.split()
    assert clusters == [accounted.spec.stack]
    # A replaced head finds its cluster registered (the records outlive it) and goes on.
    again = subprocess.run(
        ["bash", "-c", f"set -euo pipefail\n{accounted.steps}start_slurmdbd\n"],
        env=accounted.cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0 and "Adding Cluster" not in again.stdout, again.stdout + again.stderr
    # Over TLS where the server requires it (the server accepted slurmdbd's handshakes), in the clear on RDS.
    accepts = int(accounted.database.admin("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'").stdout.split()[1])
    assert (accepts > 0) == accounted.database.tls


def test_a_batch_job_is_accounted_and_its_account_gets_fair_share(accounted):
    cluster = accounted.cluster
    assert accounted.registered.returncode == 0, accounted.registered.stderr + logs(cluster)
    cluster.ready_node()
    script = cluster.root / "jobs" / "accounted.sh"
    script.write_text(JOB.format(out=cluster.root / "jobs"))
    job_id = cluster.run(["sbatch", "--parsable", f"--account={TEAM}", str(script)]).stdout.strip().split(";")[0]

    def record() -> list[str] | None:
        out = cluster.run(
            ["sacct", "-X", "-n", "-P", "-j", job_id, "--format=JobID,Account,State,ExitCode"], check=False
        ).stdout.split()
        return out if out and out[0].split("|")[2] == "COMPLETED" else None

    try:
        rows = wait_for(f"sacct to show job {job_id} COMPLETED", record, 90)
    except AssertionError as error:
        raise AssertionError(f"{error}\n{logs(cluster)}") from None
    assert rows == [f"{job_id}|{TEAM}|COMPLETED|0:0"]
    assert (cluster.root / "jobs" / f"{job_id}.out").read_text().strip() == f"accounted-on-{NODE}"
    share = cluster.run(
        ["sshare", "-n", "-P", "-A", TEAM, "--format=Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare"]
    ).stdout
    rows = [line.split("|") for line in share.splitlines()]
    assert [row[0].strip() for row in rows] and all(row[0].strip() == TEAM for row in rows), share
    assert any(row[1] == "root" and 0.0 < float(row[6]) <= 1.0 for row in rows), share
    # The deploy pages' other commands answer (sreport's figures come with the hourly rollup).
    steps = cluster.run(["sacct", "-n", "-P", "-j", job_id, "--format=JobID,JobName,Elapsed,State,MaxRSS,AllocTRES"])
    assert [line.split("|")[0] for line in steps.stdout.split()] == [job_id, f"{job_id}.batch"]
    report = cluster.run(["sreport", "-n", "-P", "cluster", "utilization"])
    assert report.returncode == 0
