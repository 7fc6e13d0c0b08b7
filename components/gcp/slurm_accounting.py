"""Slurm accounting on Google Cloud (training.scheduler.accounting: database): slurmdbd's records in Cloud SQL for
MySQL, as slurm-gcp's controller keeps them in a Cloud SQL instance (Cluster Toolkit's `cloudsql` settings).

The instance has a private address only (`ipv4_enabled` false) on the system VPC through the private services
access connection the file systems use (one peering per VPC and producer: the storage component's, made here if
it has none; cloud.google.com/sql/docs/mysql/configure-private-services-access), and refuses unencrypted
connections (`ssl_mode` ENCRYPTED_ONLY; slurmdbd asks for TLS through StorageParameters). Cloud SQL's private IP
admits any address of the peered VPC (authorized networks apply to public IP only), so an egress rule keeps the
compute nodes' service account off MySQL's port, and the password is readable by the head's account alone. The
disk is encrypted with the stack key (Cloud SQL's service agent granted first: cloud.google.com/sql/docs/mysql/cmek),
backed up daily with binary logs for point-in-time recovery, deletion-protected by the API and by Pulumi, and
retained if the stack is destroyed.

slurmdbd verifies the server: Cloud SQL signs the instance's certificate with the instance's own CA (no system
store holds it), which the provider reports in `server_ca_certs` (pulumi_gcp/sql/database_instance.py; each entry's
`cert` is the PEM, `common_name` its name; the list holds an upcoming CA too once one is added for a rotation,
cloud.google.com/sql/docs/mysql/manage-ssl-instance). Those certificates are a metadata key of the head (base64,
read at boot from the head's own metadata server, as its Slurm configuration is), not its user-data: a rotation
changes the key, which Compute Engine updates in place (setMetadata), never rebuilding the head. Cloud SQL's server
certificate names the instance, not the private address slurmdbd dials, and Slurm's client checks the chain only:
verify-CA, as Google's `verify-ca` mode. A CA public by nature, the list is unmarked as a secret (the provider
marks the whole output secret).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp
import pulumi_random as random

from accelstack.clouds.gcp.accounting_database import DISK_GIB, DISK_TYPE, RETAINED_BACKUPS, TIER
from accelstack.components.gcp.node_platform import GcpNodePlatform
from accelstack.components.gcp.provider import resource_id
from accelstack.components.gcp.storage import ENCRYPTER, created_agent
from accelstack.components.recipes.slurm import AccountingDatabase
from accelstack.components.slurm import accounting

if TYPE_CHECKING:
    from accelstack.components.gcp.scheduler import GcpSlurmParts

DATABASE_VERSION = "MYSQL_8_4"
# slurmdbd's documented MySQL settings (SchedMD, "Accounting and Resource Limits"): rollups hold row locks long.
DATABASE_FLAGS = {"innodb_lock_wait_timeout": "900"}
# The head's metadata key holding the instance's server CA certificates (base64 of their PEMs).
CA_METADATA_KEY = "accelstack-accounting-ca"
# The head reads it from its own metadata server (the platform's configuration-object read: no grant needed).
SERVER_CA = accounting.ServerCa(GcpNodePlatform().config_object_command(CA_METADATA_KEY))


def ca_metadata_value(certificates: Sequence[str]) -> str:
    """The CA certificates (PEM each) as the metadata key holds them; the head refuses an empty list at boot."""
    pems = "".join(pem.strip() + "\n" for pem in certificates if pem.strip())
    return base64.b64encode(pems.encode()).decode()


def accounting_database(parts: GcpSlurmParts, password: random.RandomPassword) -> AccountingDatabase:
    """Cloud SQL for MySQL on the system VPC's private services access (see the module's docstring)."""
    ctx, handles = parts.ctx, parts.handles
    name, child = ctx.name, ctx.child
    network, storage = handles.network, handles.storage
    region = ctx.spec.account.region
    project_id = ctx.spec.account.project_id  # type: ignore[attr-defined]
    connection = storage.private_services_access(network)
    agent = gcp.kms.CryptoKeyIAMMember(
        f"{name}-key-sql",
        crypto_key_id=storage.key.id,
        role=ENCRYPTER,
        member=created_agent(name, project_id, "sql", child),
        opts=child,
    )
    storage.key_grants["sql"] = agent
    instance = gcp.sql.DatabaseInstance(
        f"{name}-slurmdbd",
        name=resource_id(name, "slurmdbd", 80),
        database_version=DATABASE_VERSION,
        region=region,
        encryption_key_name=storage.key.id,
        deletion_protection=True,
        settings={
            "tier": TIER,
            "edition": "ENTERPRISE",
            "availability_type": "ZONAL",
            "location_preference": {"zone": network.zone},
            "disk_type": DISK_TYPE,
            "disk_size": DISK_GIB,
            "disk_autoresize": True,
            "deletion_protection_enabled": True,
            "backup_configuration": {
                "enabled": True,
                "binary_log_enabled": True,
                "backup_retention_settings": {"retained_backups": RETAINED_BACKUPS},
            },
            "ip_configuration": {
                "ipv4_enabled": False,
                "private_network": network.system.id,
                "ssl_mode": "ENCRYPTED_ONLY",
            },
            "database_flags": [{"name": key, "value": value} for key, value in DATABASE_FLAGS.items()],
            "user_labels": {"accelstack-role": "slurm-accounting"},
        },
        # Protected and retained: a replacement or a destroy would lose every job record and fair-share history.
        opts=pulumi.ResourceOptions(
            parent=ctx.parent,
            protect=True,
            retain_on_delete=True,
            depends_on=[connection, *storage.key_usable("sql")],
        ),
    )
    database = gcp.sql.Database(
        f"{name}-slurmdbd",
        name=accounting.DATABASE_NAME,
        instance=instance.name,
        charset="utf8mb4",
        # ABANDON: dropping the database would take the records with it; it goes with the (retained) instance.
        deletion_policy="ABANDON",
        opts=pulumi.ResourceOptions(parent=ctx.parent, protect=True, retain_on_delete=True),
    )
    user = gcp.sql.User(
        f"{name}-slurmdbd",
        name=accounting.DATABASE_USER,
        instance=instance.name,
        host="%",
        password=password.result,
        deletion_policy="ABANDON",
        opts=pulumi.ResourceOptions(parent=ctx.parent, additional_secret_outputs=["password"]),
    )
    secret = gcp.secretmanager.Secret(
        f"{name}-slurmdbd-password",
        secret_id=f"{name}-slurmdbd-password",
        replication={"user_managed": {"replicas": [{"location": region}]}},
        opts=pulumi.ResourceOptions(parent=ctx.parent, protect=True, retain_on_delete=True),
    )
    version = gcp.secretmanager.SecretVersion(
        f"{name}-slurmdbd-password",
        secret=secret.id,
        secret_data=password.result,
        opts=pulumi.ResourceOptions(parent=ctx.parent, retain_on_delete=True),
    )
    grant = gcp.secretmanager.SecretIamMember(
        f"{name}-head-slurmdbd-password",
        secret_id=secret.id,
        role="roles/secretmanager.secretAccessor",
        member=parts.head_account.member,
        opts=child,
    )
    nodes_account = handles.nodes_account
    if nodes_account is not None:
        gcp.compute.Firewall(
            f"{name}-nodes-no-slurmdbd",
            network=network.system.id,
            direction="EGRESS",
            priority=900,
            denies=[{"protocol": "tcp", "ports": [str(accounting.DATABASE_PORT)]}],
            destination_ranges=[str(network.lustre_peering)],
            target_service_accounts=[nodes_account.email],
            description=f"accelstack {name}: only the Slurm head reaches slurmdbd's MySQL",
            opts=child,
        )
    certificates = pulumi.Output.unsecret(instance.server_ca_certs).apply(
        lambda certs: ca_metadata_value([cert.cert or "" for cert in certs or []])
    )
    parts.accounting_ca_metadata = {CA_METADATA_KEY: certificates}
    return AccountingDatabase(
        host=instance.private_ip_address,
        password_secret=version.name,
        server_ca=SERVER_CA,
        waits_for=[instance, database, user, version, grant],
    )
