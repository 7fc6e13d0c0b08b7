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

Every variant's server requires TLS with a certificate from a test CA, named as the cloud's CA is named, and the
head receives that CA as the cloud delivers it: AWS's Region bundle (the fetch answered with a bundle file), Cloud
SQL's CAs from the head's metadata key (its value as the GCP component writes it), Azure's roots from a CA store
directory under the file names Ubuntu's store gives them. The server's certificate names no address, as Cloud SQL's
does not (Slurm's client checks the chain, not the name). A server whose certificate another CA of the same name
signed leaves slurmdbd unconnected, and the head's boot fails saying so.
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
from accelstack.components.aws import slurm_accounting as aws_accounting
from accelstack.components.aws.slurm_accounting import MYSQL_PARAMETERS
from accelstack.components.azure import slurm_accounting as azure_accounting
from accelstack.components.gcp import slurm_accounting as gcp_accounting
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
DATABASE_BINARIES = (
    "slurmdbd", "sacctmgr", "sacct", "sshare", "sreport", "mariadbd", "mariadb-install-db", "mariadb", "openssl",
)  # fmt: skip
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


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


@dataclass(frozen=True)
class SigningCa:
    """A CA of the test: its certificate and key, and a server certificate it signed (for no address: the name is
    an instance's, as Cloud SQL's)."""

    cert: Path
    server_cert: Path
    server_key: Path

    @classmethod
    def make(cls, root: Path, common_name: str) -> SigningCa:
        root.mkdir(parents=True)
        ca_cert, ca_key = root / "ca.crt", root / "ca.key"
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/O=Test/CN={common_name}",
                "-keyout", str(ca_key), "-out", str(ca_cert))  # fmt: skip
        csr, server_cert, server_key = root / "server.csr", root / "server.crt", root / "server.key"
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=project:accounting-database",
                "-keyout", str(server_key), "-out", str(csr))  # fmt: skip
        openssl("x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key), "-CAcreateserial",
                "-days", "1", "-out", str(server_cert))  # fmt: skip
        return cls(ca_cert, server_cert, server_key)


class ManagedMysql:
    """MariaDB on loopback with the managed server's shape: the database exists, the admin logs in by password, and
    only TLS connections are accepted, with the certificate `signer` issued."""

    def __init__(self, root: Path, signer: SigningCa):
        self.root = root
        self.signer = signer
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
                f"--ssl-cert={self.signer.server_cert}",
                f"--ssl-key={self.signer.server_key}",
                # slurmdbd's documented settings and require_secure_transport, as the stacks set them on each
                # cloud's server (RDS's parameter group; Azure's and Cloud SQL's refuse plain connections alike).
                *(f"--{key.replace('_', '-')}={value}" for key, value in MYSQL_PARAMETERS.items()),
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

    def ssl_accepts(self) -> int:
        return int(self.admin("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'").stdout.split()[1])

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)


SECRET = "arn:aws:secretsmanager:us-east-1:111111111111:secret:aws-training-slurmdbd-password-AbCdEf"


def head_function(script: str, name: str) -> str:
    found = re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", script, re.S | re.M)
    assert found, f"the head setup defines no {name}"
    return found.group(0)


REGION = "us-east-1"  # the aws-training stack's
CLOUDS = ("aws", "azure", "gcp")
# Each cloud's server CA as that cloud names it (AWS's the pinned CA of the Region's bundle).
CA_NAMES = {
    "aws": aws_accounting.CA_COMMON_NAME.format(region=REGION),
    "azure": "DigiCert Global Root G2",
    "gcp": "Google Cloud SQL Server CA",
}


def server_ca(cloud: str) -> accounting.ServerCa:
    """The cloud's own ServerCa, as its component hands it to the recipe."""
    return {
        "aws": aws_accounting.server_ca(REGION),
        "azure": azure_accounting.SERVER_CA,
        "gcp": gcp_accounting.SERVER_CA,
    }[cloud]


def delivery(cloud: str, ca: SigningCa, root: Path) -> dict[str, str]:
    """The cloud's delivery of `ca` to the head, with only the endpoint moved here: the Region bundle's URL answers
    with a bundle file (the pinned CA beside another), the metadata server with the GCP component's value, the CA
    store is a directory holding the test's roots under the names Ubuntu's store gives Microsoft's."""
    root.mkdir(parents=True, exist_ok=True)
    if cloud == "aws":
        other = SigningCa.make(root / "other-ca", f"Amazon RDS {REGION} Root CA RSA4096 G1")
        bundle = root / f"{REGION}-bundle.pem"
        bundle.write_text(other.cert.read_text() + ca.cert.read_text())
        return {server_ca(cloud).command: f"cat {bundle}"}
    if cloud == "gcp":
        value = gcp_accounting.ca_metadata_value([ca.cert.read_text()])
        return {f"gce_metadata attributes/{gcp_accounting.CA_METADATA_KEY}": f"printf %s {value}"}
    store = root / "ca-store"
    store.mkdir()
    other = SigningCa.make(root / "other-ca", "Microsoft RSA Root Certificate Authority 2017")
    first, second = azure_accounting.SERVER_ROOTS
    shutil.copy(ca.cert, store / first)
    shutil.copy(other.cert, store / second)
    return {f"{azure_accounting.CA_STORE}/": f"{store}/"}


def head_accounting_steps(cluster: Cluster, spec, cloud: str, moved_ca: dict[str, str], waits: int = 0) -> str:
    """The head setup's own `install_accounting_ca`, `install_slurmdbd_conf` and `start_slurmdbd`, moved to this
    machine: /etc/slurm is the test's etc dir, the slurm user is root, the secret store answers with the password,
    the CA's source is `moved_ca`'s, systemd is this test (which starts slurmdbd itself), slurmdbd's log the test's;
    `waits`: slurmdbd is waited for that many times 1 s, not 60 times 10 s. Every other word as generated."""
    nodes = slurm.nodes_for(spec)
    storage = accounting.Storage("127.0.0.1", server_ca(cloud))
    script = slurm.head_setup_script(
        spec, nodes, slurm.DeployValues(accounting_storage=storage, accounting_password_secret=SECRET)
    )
    steps = "".join(head_function(script, name) for name in ("install_accounting_ca", *HEAD_STEPS))
    moved = (
        steps.replace(nodes.platform.secret_command(SECRET), f"printf %s {PASSWORD}")
        .replace("/etc/slurm/", f"{cluster.root / 'etc'}/")
        .replace(f"{slurm.LOG_DIR}/slurmdbd.log", str(cluster.root / "slurmdbd.log"))
        .replace(f"chown {slurm.SLURM_USER}:{slurm.SLURM_USER} ", "chown root:root ")
    )
    for source, here in moved_ca.items():
        assert source in moved, source
        moved = moved.replace(source, here)
    if waits:
        wait = (
            f"$(seq {accounting.SLURMDBD_ANSWER_TRIES}); do sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 10"
        )
        assert wait in moved
        moved = moved.replace(wait, wait.replace(str(accounting.SLURMDBD_ANSWER_TRIES), str(waits)).replace("10", "1"))
    assert PASSWORD in moved and "/etc/slurm/" not in moved
    return 'log() { echo "$*"; }\nsystemctl() { :; }\n' + moved


HEAD_STEPS = ("install_slurmdbd_conf", "start_slurmdbd")


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
    ca: SigningCa  # the CA that signed the server's certificate, delivered to the head


@dataclass
class Head:
    """The head's accounting steps against a server: the cluster (munge, slurm.conf), the server, the steps."""

    cluster: Cluster
    database: ManagedMysql
    steps: str
    dbd_port: int

    def run(self, *functions: str, timeout: float = 60) -> subprocess.CompletedProcess:
        body = "".join(f"{name}\n" for name in functions)
        return subprocess.run(
            ["bash", "-c", f"set -euo pipefail\n{self.steps}{body}"],
            env=self.cluster.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def boot_head(root: Path, spec, cloud: str, head_ca: SigningCa, server_signer: SigningCa, waits: int = 0) -> Head:
    """A server whose certificate `server_signer` issued; the head given `head_ca` the cloud's way; the head's own
    steps installing the CA and slurmdbd.conf (moved to loopback), then slurmdbd started. Stop with `stop_head`."""
    dbd_port = free_port()
    database = ManagedMysql(root / "mysql", server_signer)
    cluster = Cluster(
        root / "cluster",
        spec,
        paths={"AccountingStorageHost": "127.0.0.1", "AccountingStoragePort": str(dbd_port)},
    )
    head = Head(cluster, database, "", dbd_port)
    database.start()
    cluster.start_munge()
    # Clients reach slurmdbd through munge's socket named here (slurm.conf(5) AccountingStoragePass), the test's.
    cluster.extra_conf.append(f"AccountingStoragePass={cluster.loop.munge_socket}")
    cluster.write_conf()
    head.steps = head_accounting_steps(cluster, spec, cloud, delivery(cloud, head_ca, root / "delivery"), waits)
    installed = head.run("install_accounting_ca", "install_slurmdbd_conf", timeout=30)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return head


def stop_head(head: Head) -> None:
    try:
        head.cluster.teardown()
    finally:
        head.database.stop()


@pytest.fixture(scope="module", params=CLOUDS)
def accounted(request, tmp_path_factory) -> Iterator[Accounted]:
    if MISSING:
        pytest.skip(
            f"needs Debian's slurmdbd, mariadb-server, slurm-wlm, munge and openssl on PATH; missing: {', '.join(MISSING)}"
        )
    if os.geteuid() != 0:
        pytest.skip("runs slurmd (which manages job processes and cgroups) as root; CI runs as root")
    started = time.monotonic()
    root = tmp_path_factory.mktemp("slurmdbd")
    spec = spec_for("training.scheduler.accounting=database", stack=STACK)
    cloud = request.param
    ca = SigningCa.make(root / "ca", CA_NAMES[cloud])
    head = None
    try:
        # The head's steps: the server's CA and slurmdbd.conf from the secret store (the cloud's server answers at
        # its private address, here 127.0.0.1: the overlay moves only its port), then slurmdbd, then the cluster's
        # registration.
        head = boot_head(root, spec, cloud, ca, ca)
        cluster = head.cluster
        conf = cluster.root / "etc" / "slurmdbd.conf"
        mode = conf.stat().st_mode & 0o777
        written = loopback_slurmdbd_conf(
            conf, cluster.root, head.dbd_port, head.database.port, cluster.loop.munge_socket
        )
        cluster.procs.append(start(["slurmdbd", "-D", "-v"], cluster.root / "slurmdbd.out", cluster.env))
        wait_for(
            "slurmdbd to answer sacctmgr",
            lambda: cluster.run(["sacctmgr", "-n", "list", "cluster"], check=False).returncode == 0,
            60,
        )
        registered = head.run("start_slurmdbd")
        if registered.returncode == 0:
            # The deploy pages' fair-share by team, added once the head is up.
            cluster.run(["sacctmgr", "-i", "add", "account", TEAM])
            cluster.run(["sacctmgr", "-i", "add", "user", "root", f"account={TEAM}"])
            cluster.start_controller()
        yield Accounted(cluster, spec, written, mode, registered, head.database, head.steps, ca)
    finally:
        if head is not None:
            stop_head(head)
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
    # Over TLS (the server requires it, and accepted slurmdbd's handshakes), verified against the CA the head
    # installed: root's file, readable by slurmdbd, holding the CA that signed the server's certificate.
    assert accounted.database.ssl_accepts() > 0
    installed = accounted.cluster.root / "etc" / Path(accounting.ACCOUNTING_CA_FILE).name
    assert f"StorageParameters=SSL_CA={installed}" in accounted.slurmdbd_conf.splitlines()
    assert installed.stat().st_mode & 0o777 == 0o644 and installed.stat().st_uid == 0
    assert accounted.ca.cert.read_text().strip() in installed.read_text()


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


def reporting_boot(spec, status: Path) -> str:
    """The setup's own `log` and outcome report (status file, console), the status file moved here."""
    script = slurm.head_setup_script(spec, slurm.nodes_for(spec), slurm.DeployValues())
    log_line = next(line for line in script.splitlines() if line.startswith("log() {"))
    report = head_function(script, "report_setup").replace(slurm.SETUP_STATUS_FILE, str(status))
    return f'{log_line}\nSETUP_LAST_STEP="started"\n{report}trap report_setup EXIT\n'


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_server_another_ca_signed_is_refused_and_the_boot_says_so(cloud, tmp_path):
    """The server's certificate comes from a CA of the same name as the head's but another key (an impostor on the
    private network): slurmdbd never connects, and the head's boot fails in its status file and on its console."""
    if MISSING or os.geteuid() != 0:
        pytest.skip("needs the accounting binaries and root, as the fixture above")
    spec = spec_for("training.scheduler.accounting=database", stack=STACK)
    genuine = SigningCa.make(tmp_path / "ca", CA_NAMES[cloud])
    impostor = SigningCa.make(tmp_path / "impostor", CA_NAMES[cloud])
    head = boot_head(tmp_path, spec, cloud, genuine, impostor, waits=8)
    try:
        cluster = head.cluster
        conf = cluster.root / "etc" / "slurmdbd.conf"
        loopback_slurmdbd_conf(conf, cluster.root, head.dbd_port, head.database.port, cluster.loop.munge_socket)
        cluster.procs.append(start(["slurmdbd", "-D", "-v"], cluster.root / "slurmdbd.out", cluster.env))
        status = tmp_path / "first-boot.status"
        head.steps += reporting_boot(spec, status)  # after the steps' own quiet `log`: the setup's replaces it
        boot = head.run("start_slurmdbd", timeout=120)
        assert boot.returncode != 0, boot.stdout
        assert status.read_text().startswith("failed ") and "slurmdbd does not answer" in status.read_text()
        assert "FAILED" in boot.stderr and "slurmdbd does not answer" in boot.stdout
        # slurmdbd's own words, which the boot's console shows: the TLS handshake refused the server.
        said = (cluster.root / "slurmdbd.log").read_text(errors="replace")
        assert re.search(r"mysql_real_connect failed: \d+ .*(certificate|SSL|TLS)", said, re.I), said[-2000:]
        assert re.search(r"(certificate|SSL|TLS)", boot.stderr, re.I), boot.stderr
        assert cluster.run(["sacctmgr", "-n", "list", "cluster"], check=False).returncode != 0
    finally:
        stop_head(head)


@pytest.mark.parametrize(
    ("bundle", "refusal"),
    [
        ("", "no readable CA certificate"),
        ("other", "lack the pinned CA"),
    ],
)
def test_a_bundle_without_the_pinned_ca_fails_the_boot(bundle, refusal, tmp_path):
    """AWS's fetched bundle is refused when it is empty (or not certificates) or lacks the instance's CA."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    spec = spec_for("training.scheduler.accounting=database", stack=STACK)
    path = tmp_path / "bundle.pem"
    path.write_text(
        SigningCa.make(tmp_path / "other", "Amazon RDS us-east-1 Root CA RSA4096 G1").cert.read_text() if bundle else ""
    )
    etc = tmp_path / "etc"
    etc.mkdir()
    script = slurm.head_setup_script(
        spec,
        slurm.nodes_for(spec),
        slurm.DeployValues(accounting_storage=accounting.Storage("127.0.0.1", server_ca("aws"))),
    )
    step = (
        head_function(script, "install_accounting_ca")
        .replace(server_ca("aws").command, f"cat {path}")
        .replace("/etc/slurm/", f"{etc}/")
        .replace("$(seq 30)", "$(seq 1)")
    )
    ran = subprocess.run(
        ["bash", "-c", f'set -euo pipefail\nlog() {{ echo "$*"; }}\n{step}install_accounting_ca\n'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode != 0 and refusal in ran.stdout, ran.stdout + ran.stderr
    assert list(etc.iterdir()) == []  # nothing half-written is left for slurmdbd


def test_after_a_ca_rotation_the_head_installs_the_cas_again_and_restarts_slurmdbd(tmp_path):
    """`accelstack-head-setup accounting-ca` (the GCP deploy page's rotation step), the whole rendered script run
    with the metadata key holding the current and the upcoming CA: both are installed, slurmdbd restarts, nothing
    else of the setup runs and the first boot's status file is left alone."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    spec = spec_for("training.scheduler.accounting=database", stack=STACK)
    current = SigningCa.make(tmp_path / "current", CA_NAMES["gcp"])
    upcoming = SigningCa.make(tmp_path / "upcoming", CA_NAMES["gcp"])
    value = gcp_accounting.ca_metadata_value([current.cert.read_text(), upcoming.cert.read_text()])
    etc, bin_dir, status = tmp_path / "etc", tmp_path / "bin", tmp_path / "first-boot.status"
    etc.mkdir()
    bin_dir.mkdir()
    calls = tmp_path / "systemctl.calls"
    (bin_dir / "systemctl").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    (bin_dir / "systemctl").chmod(0o755)
    storage = accounting.Storage("127.0.0.1", server_ca("gcp"))
    script = slurm.head_setup_script(spec, slurm.nodes_for(spec), slurm.DeployValues(accounting_storage=storage))
    moved = (
        script.replace(f"gce_metadata attributes/{gcp_accounting.CA_METADATA_KEY}", f"printf %s {value}")
        .replace("/etc/slurm/", f"{etc}/")
        .replace(slurm.SETUP_STATUS_FILE, str(status))
    )
    # Cut before the first boot's own steps (which install packages): never run here, whatever the branch does.
    moved = moved[: moved.index("\ninstall_slurm\n")] + "\n"
    ran = subprocess.run(
        ["bash", "-s", "accounting-ca"],
        input=moved,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    installed = (etc / "accounting-ca.pem").read_text()
    assert current.cert.read_text().strip() in installed and upcoming.cert.read_text().strip() in installed
    assert calls.read_text().splitlines() == ["restart slurmdbd"]
    assert not status.exists() and "Slurm installed" not in ran.stdout
