"""Slurm accounting on AWS (training.scheduler.accounting: database): slurmdbd's records in RDS for MySQL, as
ParallelCluster's `SlurmSettings/Database` points slurmdbd at an RDS or Aurora MySQL endpoint.

An RDS DB subnet group must span at least two Availability Zones even for a single-AZ instance (RDS User Guide,
"Working with a DB instance in a VPC": DBSubnetGroupDoesNotCoverEnoughAZs), and the cluster has one subnet in one
zone (EFA): two small private subnets are carved for the database, one in the cluster's zone (where the instance
runs, next to the head) and one in another zone, from the top of the VPC below the NAT subnet. They route nowhere
but inside the VPC (the main route table): the database needs no egress. Its security group admits MySQL from the
head's group alone and has no egress rule (the provider removes AWS's default allow-all egress, terraform-provider-
aws internal/service/ec2/vpc_security_group.go). The instance is encrypted with the stack key, private, backed up
for a week, deletion-protected, Pulumi-protected and retained on destroy, with a final snapshot; its admin
password is drawn in state and kept in Secrets Manager under the stack key, which the head's role alone reads (pulumi_aws/rds/instance.py:
`password` and `manage_master_user_password` exclude each other; a stack-held secret lets the head read a plain
value with the same command as the munge key).

TLS, the server verified: the parameter group sets require_secure_transport (RDS refuses unencrypted connections:
RDS User Guide, "Requiring SSL/TLS for all connections to a MySQL DB instance"; a dynamic parameter, applied in
place), the instance pins its CA (`ca_cert_identifier`), and the head fetches its region's RDS CA bundle at boot
(AWS publishes it at truststore.pki.rds.amazonaws.com; RDS User Guide, "Using SSL/TLS to encrypt a connection to a
DB instance": certificate bundles by Region), through the NAT, over HTTPS verified against the image's store, and
refuses it unless the pinned CA is among its certificates (the bundle is a few KB per CA: fetched rather than
carried, since the head's user data is already near EC2's 16 KB before compression, and the repository holds no
copy to ship). A new `ca_cert_identifier` is an in-place ModifyDBInstance; with `apply_immediately` unset
(pulumi_aws/rds/instance.py: default false) RDS applies it at the next maintenance window, and the head's pinned
name changes with it, which rebuilds the head (its user data).
"""

from __future__ import annotations

import base64
import ipaddress
import json
import shlex
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws
import pulumi_random as random

from accelstack.clouds.aws.accounting_database import (
    BACKUP_RETENTION_DAYS,
    INSTANCE_CLASS,
    MAX_STORAGE_GIB,
    STORAGE_GIB,
    STORAGE_TYPE,
)
from accelstack.components.aws.kms import service_host
from accelstack.components.aws.network import SMALLEST_SUBNET_PREFIX
from accelstack.components.recipes.slurm import AccountingDatabase
from accelstack.components.slurm import accounting

if TYPE_CHECKING:
    from accelstack.components.aws.scheduler import AwsSlurmParts

ENGINE = "mysql"
# RDS for MySQL 8.4 (LTS); 8.0 leaves standard support in 2026 (RDS User Guide, "MySQL on Amazon RDS versions").
ENGINE_VERSION = "8.4"
PARAMETER_FAMILY = "mysql8.4"
# slurmdbd's documented settings (SchedMD, "Accounting and Resource Limits", MySQL configuration): rollups and
# archive purges hold row locks for minutes; the default 50 s wait makes them fail. require_secure_transport: the
# server refuses connections without TLS (a dynamic parameter of the mysql8.4 family).
MYSQL_PARAMETERS = {"innodb_lock_wait_timeout": "900", "require_secure_transport": "1"}
# The CA signing the instance's certificate (RDS's default for new instances; RSA 2048, valid to 2061), and its
# certificate's common name in the Region's bundle (the server's certificate is issued by it directly).
CA_CERT_IDENTIFIER = "rds-ca-rsa2048-g1"
CA_COMMON_NAME = "Amazon RDS {region} Root CA RSA2048 G1"
CA_BUNDLE_URL = "https://truststore.pki.rds.amazonaws.com/{region}/{region}-bundle.pem"


def server_ca(region: str) -> accounting.ServerCa:
    """The Region's RDS CA bundle, over HTTPS only (curl verifies Amazon's site against the image's store), pinned
    to the instance's CA."""
    url = CA_BUNDLE_URL.format(region=region)
    return accounting.ServerCa(
        f"curl -fsS --retry 5 --proto =https --tlsv1.2 {shlex.quote(url)}", CA_COMMON_NAME.format(region=region)
    )


def database_subnet_cidrs(vpc_cidr: str) -> tuple[str, str]:
    """The two /28 blocks just below the NAT subnet (the VPC's last /28); the cluster subnet is at the bottom
    of the VPC (network.carve_training_subnets), and a training VPC is a /22 or larger, so they never meet."""
    vpc = ipaddress.ip_network(vpc_cidr, strict=True)
    size = 2 ** (32 - SMALLEST_SUBNET_PREFIX)
    top = int(vpc.broadcast_address) + 1
    first, second = (ipaddress.ip_address(top - size * k) for k in (3, 2))
    return f"{first}/{SMALLEST_SUBNET_PREFIX}", f"{second}/{SMALLEST_SUBNET_PREFIX}"


def other_zone(zones: list[str], cluster_zone: str) -> str:
    """A second Availability Zone for the subnet group (the first other than the cluster's, sorted)."""
    others = sorted(zone for zone in zones if zone != cluster_zone)
    if not others:
        raise ValueError(
            f"training.scheduler.accounting: database needs a second Availability Zone beside {cluster_zone} "
            "for RDS's subnet group, and the region offers none; use accounting: none"
        )
    return others[0]


def password_read_policy(secret_arn: str, kms_key_arn: str, region: str) -> str:
    """The head reads the database password, decrypted through Secrets Manager with the stack key."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ReadAccountingPassword",
                    "Effect": "Allow",
                    "Action": ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
                    "Resource": [secret_arn],
                },
                {
                    "Sid": "DecryptAccountingPassword",
                    "Effect": "Allow",
                    "Action": ["kms:Decrypt"],
                    "Resource": [kms_key_arn],
                    "Condition": {"StringEquals": {"kms:ViaService": service_host("secretsmanager", region)}},
                },
            ],
        }
    )


def accounting_database(parts: AwsSlurmParts, password: random.RandomPassword) -> AccountingDatabase:
    """RDS for MySQL beside the cluster, reachable from the head alone (see the module's docstring)."""
    ctx, handles = parts.ctx, parts.handles
    name, child = ctx.name, ctx.child
    region = ctx.spec.account.region
    vpc_cidr = ctx.spec.training.network.vpc_cidr
    assert vpc_cidr is not None  # a spec rule: accounting on AWS builds its subnets in a new VPC
    zones = aws.get_availability_zones_output(
        state="available",
        filters=[aws.GetAvailabilityZonesFilterArgs(name="opt-in-status", values=["opt-in-not-required"])],
        opts=pulumi.InvokeOutputOptions(parent=ctx.parent),
    )
    second_zone = pulumi.Output.all(zones.names, handles.availability_zone).apply(
        lambda v: other_zone(list(v[0]), str(v[1]))
    )
    subnets = [
        aws.ec2.Subnet(
            f"{name}-slurmdbd-{index}",
            vpc_id=handles.vpc_id,
            cidr_block=cidr,
            availability_zone=zone,
            map_public_ip_on_launch=False,
            tags={"Name": f"{name}-slurmdbd-{index}"},
            # ignore_changes: a second zone picked anew (a region's zones change) must not move the database.
            opts=pulumi.ResourceOptions(parent=ctx.parent, ignore_changes=["availabilityZone"]),
        )
        for index, (cidr, zone) in enumerate(
            zip(database_subnet_cidrs(vpc_cidr), (handles.availability_zone, second_zone), strict=True)
        )
    ]
    subnet_group = aws.rds.SubnetGroup(
        f"{name}-slurmdbd",
        description=f"accelstack {name}: slurmdbd's MySQL (private, two zones as RDS requires)",
        subnet_ids=[subnet.id for subnet in subnets],
        opts=child,
    )
    group = aws.ec2.SecurityGroup(
        f"{name}-slurmdbd",
        vpc_id=handles.vpc_id,
        description=f"accelstack {name}: slurmdbd's MySQL, from the Slurm head node only",
        tags={"Name": f"{name}-slurmdbd"},
        opts=child,
    )
    from_head = aws.vpc.SecurityGroupIngressRule(
        f"{name}-slurmdbd-from-head",
        security_group_id=group.id,
        referenced_security_group_id=parts.head_sg.id,
        ip_protocol="tcp",
        from_port=accounting.DATABASE_PORT,
        to_port=accounting.DATABASE_PORT,
        description="MySQL from the Slurm head node (slurmdbd)",
        opts=child,
    )
    secret = aws.secretsmanager.Secret(
        f"{name}-slurmdbd-password",
        description=f"accelstack {name}: slurmdbd's MySQL password (read by the head node's role at boot)",
        kms_key_id=handles.kms_key_arn,
        recovery_window_in_days=7,
        opts=child,
    )
    stored = password.result.apply(lambda text: base64.b64encode(text.encode()).decode())
    version = aws.secretsmanager.SecretVersion(
        f"{name}-slurmdbd-password",
        secret_id=secret.id,
        # The same SecretBinary form as the munge key: the node platform's secret command prints it raw.
        secret_binary=pulumi.Output.secret(stored),  # type: ignore[arg-type]
        opts=pulumi.ResourceOptions(parent=ctx.parent, additional_secret_outputs=["secretBinary"]),
    )
    grant = aws.iam.RolePolicy(
        f"{name}-head-read-slurmdbd-password",
        role=parts.head_role.id,
        policy=pulumi.Output.all(secret.arn, handles.kms_key_arn).apply(
            lambda arns: password_read_policy(arns[0], arns[1], region)
        ),
        opts=child,
    )
    parameters = aws.rds.ParameterGroup(
        f"{name}-slurmdbd",
        family=PARAMETER_FAMILY,
        description=f"accelstack {name}: slurmdbd's MySQL settings",
        parameters=[aws.rds.ParameterGroupParameterArgs(name=k, value=v) for k, v in MYSQL_PARAMETERS.items()],
        opts=child,
    )
    database = aws.rds.Instance(
        f"{name}-slurmdbd",
        engine=ENGINE,
        engine_version=ENGINE_VERSION,
        instance_class=INSTANCE_CLASS,
        allocated_storage=STORAGE_GIB,
        max_allocated_storage=MAX_STORAGE_GIB,
        storage_type=STORAGE_TYPE,
        storage_encrypted=True,
        kms_key_id=handles.kms_key_arn,
        db_name=accounting.DATABASE_NAME,
        username=accounting.DATABASE_USER,
        password=password.result,
        port=accounting.DATABASE_PORT,
        db_subnet_group_name=subnet_group.name,
        vpc_security_group_ids=[group.id],
        parameter_group_name=parameters.name,
        ca_cert_identifier=CA_CERT_IDENTIFIER,
        availability_zone=handles.availability_zone,
        publicly_accessible=False,
        backup_retention_period=BACKUP_RETENTION_DAYS,
        copy_tags_to_snapshot=True,
        deletion_protection=True,
        skip_final_snapshot=False,
        final_snapshot_identifier=f"{name}-slurmdbd-final",
        auto_minor_version_upgrade=True,
        tags={"Name": f"{name}-slurmdbd", "accelstack:role": "slurm-accounting"},
        # Protected and retained: a replacement or a destroy would lose every job record and fair-share history.
        opts=pulumi.ResourceOptions(
            parent=ctx.parent, protect=True, retain_on_delete=True, additional_secret_outputs=["password"]
        ),
    )
    return AccountingDatabase(
        host=database.address,
        password_secret=secret.arn,
        server_ca=server_ca(region),
        waits_for=[database, version, grant, from_head],
    )
