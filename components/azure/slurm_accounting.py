"""Slurm accounting on Azure (training.scheduler.accounting: database): slurmdbd's records in Azure Database for
MySQL flexible server, as CycleCloud Workspace for Slurm points slurmdbd at one.

Private access (VNet integration): the server's interface lives in a subnet delegated to
Microsoft.DBforMySQL/flexibleServers (the VNet's last /28, nothing else in it), its name resolves through a private
DNS zone linked to the VNet (learn.microsoft.com/azure/mysql/flexible-server/concepts-networking-vnet: the zone's
name ends in `.private.mysql.database.azure.com`), public network access is disabled, and the subnet's NSG admits
MySQL from the head's fixed address alone. The server keeps its data under the stack's Key Vault key through the
storage identity (`data_encryption` with a user-assigned identity, learn.microsoft.com/azure/mysql/flexible-server/
concepts-customer-managed-key), backs up for a week, refuses unencrypted connections (require_secure_transport, on
by default, set ON here so a changed default cannot turn it off), and is Pulumi-protected and retained.

slurmdbd verifies the server's certificate against the roots Microsoft names for flexible server
(learn.microsoft.com/azure/mysql/flexible-server/how-to-connect-tls-ssl: DigiCert Global Root G2 and Microsoft RSA
Root Certificate Authority 2017), taken from the image's store (Ubuntu's ca-certificates ships both, under these
file names) into the head's CA file: SSL_CAPATH=/etc/ssl/certs also verified, but against every public root of
the store, and with no host-name check (Slurm's client checks the chain only) any public CA's certificate would
then pass. The admin password is a secret of the stack's vault, read by
the head's identity alone (Key Vault Secrets User on that secret).
"""

from __future__ import annotations

import base64
import ipaddress
from typing import TYPE_CHECKING

import pulumi
import pulumi_azure_native as azure_native
import pulumi_random as random

from accelstack.clouds.azure.accounting_database import BACKUP_RETENTION_DAYS, SKU_NAME, SKU_TIER, STORAGE_GIB
from accelstack.clouds.azure.names import mysql_server_name, subscription_of
from accelstack.components.azure.provider import stack_tags
from accelstack.components.azure.storage import KEY_VAULT_SECRETS_USER
from accelstack.components.recipes.slurm import AccountingDatabase
from accelstack.components.slurm import accounting
from accelstack.spec.models import TrainingStack

if TYPE_CHECKING:
    from accelstack.components.azure.scheduler import AzureSlurmParts

DELEGATION = "Microsoft.DBforMySQL/flexibleServers"
DATABASE_SUBNET_PREFIX = 28
# The versions this SDK's API (2024-02-01-preview, pulumi_azure_native/dbformysql/_enums.py ServerVersion) lists.
SERVER_VERSION = "8.0.21"
SKU = {"name": SKU_NAME, "tier": SKU_TIER}  # sizes: accelstack.clouds.azure.accounting_database (cost prices them)
PASSWORD_SECRET_NAME = "slurmdbd-password"
# slurmdbd's documented MySQL settings (SchedMD, "Accounting and Resource Limits"): rollups hold row locks long.
# require_secure_transport: unencrypted connections refused (a dynamic server parameter: no restart).
SERVER_PARAMETERS = {"innodb_lock_wait_timeout": "900", "require_secure_transport": "ON"}
# The roots that sign the flexible server's certificate chain, as the image's CA store names them.
CA_STORE = "/etc/ssl/certs"
SERVER_ROOTS = ("DigiCert_Global_Root_G2.pem", "Microsoft_RSA_Root_Certificate_Authority_2017.pem")
SERVER_CA = accounting.ServerCa("cat " + " ".join(f"{CA_STORE}/{root}" for root in SERVER_ROOTS))
NSG_ALLOW_PRIORITY, NSG_DENY_PRIORITY = 100, 4000


def database_subnet(spec: TrainingStack) -> str:
    """The VNet's last /28 (the nodes take its first half, Managed Lustre's subnet starts the second)."""
    vnet = ipaddress.ip_network(spec.training.network.vpc_cidr or "10.20.0.0/16")
    return str(list(vnet.subnets(new_prefix=DATABASE_SUBNET_PREFIX))[-1])


def _security_rules(head_address: str) -> list[dict[str, object]]:
    rule: dict[str, object] = {"direction": "Inbound", "source_port_range": "*", "destination_address_prefix": "*"}
    return [
        {
            **rule,
            "name": "mysql-from-slurm-head",
            "priority": NSG_ALLOW_PRIORITY,
            "access": "Allow",
            "protocol": "Tcp",
            "source_address_prefix": f"{head_address}/32",
            "destination_port_range": str(accounting.DATABASE_PORT),
        },
        {
            **rule,
            "name": "deny-all-inbound",
            "priority": NSG_DENY_PRIORITY,
            "access": "Deny",
            "protocol": "*",
            "source_address_prefix": "*",
            "destination_port_range": "*",
        },
    ]


def accounting_database(parts: AzureSlurmParts, password: random.RandomPassword) -> AccountingDatabase:
    """Azure Database for MySQL flexible server in its delegated subnet (see the module's docstring)."""
    ctx, handles = parts.ctx, parts.handles
    name, child, spec = ctx.name, ctx.child, ctx.spec
    tags = stack_tags(spec)
    group, vnet, storage = handles.resource_group, handles.vnet, handles.storage
    assert vnet is not None  # the training parts hand the VNet to their scheduler
    nsg = azure_native.network.NetworkSecurityGroup(
        f"{name}-slurmdbd-nsg",
        resource_group_name=group,
        security_rules=_security_rules(handles.head_address),
        tags=tags,
        opts=child,
    )
    # After the VNet's other subnets: two subnets of one VNet written at once conflict (AnotherOperationInProgress).
    earlier = [vnet.nodes_subnet, *([vnet.lustre_subnet] if vnet.lustre_subnet is not None else [])]
    subnet = azure_native.network.Subnet(
        f"{name}-slurmdbd",
        resource_group_name=group,
        virtual_network_name=vnet.vnet.name,
        address_prefix=database_subnet(spec),
        network_security_group={"id": nsg.id},
        delegations=[{"name": "mysql-flexible-server", "service_name": DELEGATION}],
        default_outbound_access=False,
        opts=pulumi.ResourceOptions(parent=ctx.parent, depends_on=earlier),
    )
    zone = azure_native.privatedns.PrivateZone(
        f"{name}-slurmdbd-dns",
        resource_group_name=group,
        private_zone_name=f"{name.lower()}.private.mysql.database.azure.com",
        location="global",  # a private DNS zone and its links are global resources
        tags=tags,
        opts=child,
    )
    link = azure_native.privatedns.VirtualNetworkLink(
        f"{name}-slurmdbd-dns",
        resource_group_name=group,
        private_zone_name=zone.name,
        virtual_network={"id": vnet.vnet.id},
        registration_enabled=False,
        location="global",  # a private DNS zone and its links are global resources
        tags=tags,
        opts=child,
    )
    identity = storage.storage_identity
    server = azure_native.dbformysql.Server(
        f"{name}-slurmdbd",
        server_name=mysql_server_name(name, subscription_of(spec)),
        resource_group_name=group,
        version=SERVER_VERSION,
        sku=SKU,
        administrator_login=accounting.DATABASE_USER,
        administrator_login_password=password.result,
        availability_zone=handles.zone,
        storage={"storage_size_gb": STORAGE_GIB, "auto_grow": "Enabled"},
        backup={"backup_retention_days": BACKUP_RETENTION_DAYS, "geo_redundant_backup": "Disabled"},
        network={
            "delegated_subnet_resource_id": subnet.id,
            "private_dns_zone_resource_id": zone.id,
            "public_network_access": "Disabled",
        },
        identity={"type": "UserAssigned", "user_assigned_identities": [identity.id]},
        data_encryption={
            "type": "AzureKeyVault",
            "primary_key_uri": storage.key.key_uri_with_version,
            "primary_user_assigned_identity_id": identity.id,
        },
        tags={**tags, "accelstack-role": "slurm-accounting"},
        # Protected and retained: a replacement or a destroy would lose every job record and fair-share history.
        opts=pulumi.ResourceOptions(
            parent=ctx.parent,
            protect=True,
            retain_on_delete=True,
            depends_on=[link, *storage.key_usable],
            additional_secret_outputs=["administratorLoginPassword"],
        ),
    )
    settings = [
        azure_native.dbformysql.Configuration(
            f"{name}-slurmdbd-{key.replace('_', '-')}",
            resource_group_name=group,
            server_name=server.name,
            configuration_name=key,
            value=value,
            source="user-override",
            opts=child,
        )
        for key, value in SERVER_PARAMETERS.items()
    ]
    database = azure_native.dbformysql.Database(
        f"{name}-slurmdbd",
        resource_group_name=group,
        server_name=server.name,
        database_name=accounting.DATABASE_NAME,
        charset="utf8mb4",
        opts=pulumi.ResourceOptions(parent=ctx.parent, protect=True, retain_on_delete=True),
    )
    stored = password.result.apply(lambda text: base64.b64encode(text.encode()).decode())
    secret = azure_native.keyvault.Secret(
        f"{name}-slurmdbd-password",
        resource_group_name=group,
        vault_name=storage.vault.name,
        secret_name=PASSWORD_SECRET_NAME,
        # Base64, as the munge key: the node platform's Key Vault command decodes what it reads.
        properties={"value": pulumi.Output.secret(stored), "content_type": "text/plain;base64"},  # type: ignore[arg-type]
        tags=tags,
        # Kept on destroy like every secret of the vault (a soft-deleted name cannot be created again until purged).
        opts=pulumi.ResourceOptions(
            parent=ctx.parent, protect=True, retain_on_delete=True, additional_secret_outputs=["properties"]
        ),
    )
    grant = storage.grant(
        f"{name}-head-slurmdbd-password", secret.id, KEY_VAULT_SECRETS_USER, parts.identity.principal_id
    )
    return AccountingDatabase(
        host=server.fully_qualified_domain_name,
        password_secret=secret.properties.secret_uri,
        server_ca=SERVER_CA,
        waits_for=[server, database, *settings, grant],
    )
