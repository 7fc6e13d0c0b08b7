"""VPC pieces. Training: one private cluster subnet in ONE AZ (EFA and cluster placement groups
cannot span AZs), NAT egress, S3 gateway endpoint, SSM interface endpoints, and the EFA
security group. Serving appends its own network class below.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from functools import partial
from typing import Any

import pulumi
import pulumi_aws as aws

from accelstack.components.aws.kms import flow_log_key_policy
from accelstack.components.aws.storage import log_bucket
from accelstack.spec.models import NetworkSpec

# AWS subnet sizes: /16 (largest) to /28 (smallest).
SMALLEST_SUBNET_PREFIX = 28
CLUSTER_SUBNET_PREFIX = 20  # 4091 usable addresses: every EFA interface (not EFA-only) takes one

# Session Manager without public IPs or NAT dependency (AWS: "Create VPC endpoints for Systems Manager").
SSM_ENDPOINT_SERVICES = ("ssm", "ssmmessages", "ec2messages")


def _endpoint_service_name(region: str, service: str) -> str:
    return f"com.amazonaws.{region}.{service}"


@dataclass(frozen=True)
class TrainingSubnets:
    cluster: str  # private, where nodes, Lustre and the interface endpoints live
    public: str  # tiny, holds only the NAT gateway


def carve_training_subnets(vpc_cidr: str) -> TrainingSubnets:
    """The cluster subnet is the first /20 of the VPC (or its first half if the VPC is smaller than
    a /19); the NAT subnet is the VPC's last /28, so the two never overlap and the cluster subnet
    keeps the largest aligned block."""
    vpc = ipaddress.ip_network(vpc_cidr, strict=True)
    if vpc.prefixlen > SMALLEST_SUBNET_PREFIX - 1:
        raise ValueError(
            f"training.network.vpcCidr {vpc_cidr} is too small: it must hold a cluster subnet and a "
            f"/28 NAT subnet, so its prefix must be /{SMALLEST_SUBNET_PREFIX - 1} or larger (e.g. /16)"
        )
    cluster_prefix = max(CLUSTER_SUBNET_PREFIX, vpc.prefixlen + 1)
    cluster = next(vpc.subnets(new_prefix=cluster_prefix))
    last_block_start = vpc.broadcast_address - (2 ** (32 - SMALLEST_SUBNET_PREFIX) - 1)
    public = ipaddress.ip_network(f"{last_block_start}/{SMALLEST_SUBNET_PREFIX}")
    return TrainingSubnets(cluster=str(cluster), public=str(public))


@dataclass(frozen=True)
class ZoneSubnets:
    """One AZ's public/private subnet pair and the logical names of what is built for it (the names
    are given, not derived: training and serving have deployed names, and renaming replaces)."""

    zone: pulumi.Input[str]
    public_cidr: str
    private_cidr: str
    public_name: str  # the public subnet
    public_association_name: str  # its association with the shared public route table
    nat_name: str  # the Elastic IP and the NAT gateway in the public subnet
    private_name: str  # the private subnet, its route table (default route via this zone's NAT) and association
    # Picked from today's offerings, not named by the operator: keep the first pick. A later pick (another
    # instance type, an AZ briefly unavailable) would replace the subnets and what lives in them (Lustre,
    # the Slurm state volume) on an unrelated `pulumi up`.
    zone_picked: bool = False


FLOW_LOG_PREFIX = "vpc-flow-logs"
FLOW_LOG_AGGREGATION_SECONDS = 600  # AWS's default; 60 multiplies records (and their cost) by up to 10


def flow_log_delivery_statements(bucket_arn: str, account_id: str, region: str, partition: str) -> list[dict[str, Any]]:
    """The bucket policy VPC flow log delivery needs (VPC user guide, "Amazon S3 bucket permissions
    for flow logs"), with its confused-deputy conditions: only log deliveries of this account and
    Region. Written by us because our policy replaces the whole document: the statements AWS would
    add at CreateFlowLogs would be overwritten by the next `pulumi up`."""
    service = {"Service": "delivery.logs.amazonaws.com"}
    source = {"ArnLike": {"aws:SourceArn": f"arn:{partition}:logs:{region}:{account_id}:*"}}
    return [
        {
            "Sid": "FlowLogDeliveryWrite",
            "Effect": "Allow",
            "Principal": service,
            "Action": "s3:PutObject",
            "Resource": f"{bucket_arn}/{FLOW_LOG_PREFIX}/AWSLogs/{account_id}/*",
            "Condition": {
                "StringEquals": {"aws:SourceAccount": account_id, "s3:x-amz-acl": "bucket-owner-full-control"},
                **source,
            },
        },
        {
            "Sid": "FlowLogDeliveryAclCheck",
            "Effect": "Allow",
            "Principal": service,
            "Action": ["s3:GetBucketAcl", "s3:ListBucket"],
            "Resource": bucket_arn,
            "Condition": {"StringEquals": {"aws:SourceAccount": account_id}, **source},
        },
    ]


def flow_log_key(
    parent: pulumi.Resource,
    name: str,
    account_id: pulumi.Input[str],
    region: pulumi.Input[str],
    partition: pulumi.Input[str],
) -> aws.kms.Key:
    """The VPC's own key for its flow logs. Not the stack's data key: the network is built before
    storage (the key's owner), and the log delivery service principal then holds a grant on the flow
    logs alone, never on datasets, checkpoints or volumes."""
    key = aws.kms.Key(
        f"{name}-flow-logs",
        description=f"accelstack {name}: VPC flow logs",
        enable_key_rotation=True,
        deletion_window_in_days=30,
        policy=pulumi.Output.all(account_id, region, partition).apply(
            lambda args: json.dumps(flow_log_key_policy(*args))
        ),
        # Retained on destroy like the retained log bucket: scheduling its deletion makes the logs unreadable.
        opts=pulumi.ResourceOptions(parent=parent, protect=True, retain_on_delete=True),
    )
    aws.kms.Alias(
        f"{name}-flow-logs",
        name=f"alias/accelstack/{name}-flow-logs",
        target_key_id=key.key_id,
        # Alias names are unique per account and Region: a replacement must free the name first.
        opts=pulumi.ResourceOptions(parent=parent, delete_before_replace=True),
    )
    return key


def vpc_audit(parent: pulumi.Resource, name: str, vpc: aws.ec2.Vpc, region: pulumi.Input[str]) -> None:
    """Flow logs of every interface in the VPC (accepted and rejected) to an S3 log bucket encrypted
    with the VPC's flow-log key, and the VPC's default security group emptied (Checkov CKV2_AWS_11,
    CKV2_AWS_12, CKV_AWS_145; AWS Security Hub EC2.6, EC2.2). Nothing of ours uses the default
    group: every ENI names its own."""
    child = pulumi.ResourceOptions(parent=parent)
    invoke = pulumi.InvokeOutputOptions(parent=parent)
    account_id = aws.get_caller_identity_output(opts=invoke).account_id
    partition = aws.get_partition_output(opts=invoke).partition
    key = flow_log_key(parent, name, account_id, region, partition)
    bucket = log_bucket(
        f"{name}-flow-logs",
        lambda arn: pulumi.Output.all(arn, account_id, region, partition).apply(
            lambda args: flow_log_delivery_statements(*args)
        ),
        child,
        # The key's ARN, not its id: with a key id, flow log delivery fails with "LogDestination
        # undeliverable" (VPC user guide, "Required key policy for use with SSE-KMS"). SecureBucket
        # turns the S3 Bucket Key on with SSE-KMS: S3 asks KMS for a bucket-level key now and then
        # instead of a data key for every delivered log object.
        kms_key_arn=key.arn,
    )
    aws.ec2.FlowLog(
        f"{name}-flow-logs",
        vpc_id=vpc.id,
        traffic_type="ALL",
        log_destination_type="s3",
        log_destination=bucket.arn.apply(lambda arn: f"{arn}/{FLOW_LOG_PREFIX}"),
        max_aggregation_interval=FLOW_LOG_AGGREGATION_SECONDS,
        # Parquet is about a tenth of the text size and what Athena queries fastest.
        destination_options=aws.ec2.FlowLogDestinationOptionsArgs(file_format="parquet", per_hour_partition=True),
        tags={"Name": f"{name}-flow-logs"},
        # CreateFlowLogs checks delivery may write to the bucket: its policy first. The encryption
        # rule first too, so the first delivery is already under the flow-log key.
        # Every input is ForceNew, and EC2 refuses a second flow log of the same resource, traffic type
        # and destination (FlowLogAlreadyExists): replace delete-first.
        opts=pulumi.ResourceOptions(
            parent=parent, depends_on=[bucket.policy, bucket.encryption], delete_before_replace=True
        ),
    )
    # Adopts the default group AWS made with the VPC (it cannot be created or deleted) and revokes
    # its rules; deleting this resource only forgets the group.
    aws.ec2.DefaultSecurityGroup(
        f"{name}-default",
        vpc_id=vpc.id,
        ingress=[],
        egress=[],
        tags={"Name": f"{name}-default (unused: no rules)"},
        opts=child,
    )


@dataclass(frozen=True)
class NatVpc:
    vpc_id: pulumi.Output[str]
    public_subnet_ids: list[pulumi.Output[str]]
    private_subnet_ids: list[pulumi.Output[str]]
    private_subnet_zones: list[pulumi.Output[str]]
    nat_addresses: list[pulumi.Output[str]]  # the NAT gateways' Elastic IPs: where the private subnets egress from


def create_nat_vpc(
    parent: pulumi.Resource, name: str, vpc_cidr: str, pairs: list[ZoneSubnets], region: pulumi.Input[str]
) -> NatVpc:
    """A new VPC with an internet gateway, one public/private subnet pair per zone, a NAT gateway per
    zone (an AZ outage must not cut the other zones' egress) and an S3 gateway endpoint on every
    private route table: data to and from S3 (datasets, checkpoints, weights) skips NAT and its
    per-GB charge. No subnet maps public IPs: only the NAT gateways (and an ALB) get addresses."""
    child = pulumi.ResourceOptions(parent=parent)
    vpc = aws.ec2.Vpc(
        f"{name}-vpc",
        cidr_block=vpc_cidr,
        # Interface endpoints' private DNS and FSx DNS names need both.
        enable_dns_support=True,
        enable_dns_hostnames=True,
        tags={"Name": f"{name}-vpc"},
        opts=child,
    )
    gateway = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags={"Name": f"{name}-igw"}, opts=child)
    public_routes = aws.ec2.RouteTable(
        f"{name}-public",
        vpc_id=vpc.id,
        routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=gateway.id)],
        tags={"Name": f"{name}-public"},
        opts=child,
    )
    public_ids: list[pulumi.Output[str]] = []
    private_subnets: list[aws.ec2.Subnet] = []
    private_route_ids: list[pulumi.Output[str]] = []
    nat_addresses: list[pulumi.Output[str]] = []
    for pair in pairs:
        subnet_opts = pulumi.ResourceOptions(
            parent=parent, ignore_changes=["availabilityZone"] if pair.zone_picked else None
        )
        public = aws.ec2.Subnet(
            pair.public_name,
            vpc_id=vpc.id,
            cidr_block=pair.public_cidr,
            availability_zone=pair.zone,
            map_public_ip_on_launch=False,  # the NAT (and ALB) get their addresses explicitly
            tags={"Name": pair.public_name},
            opts=subnet_opts,
        )
        aws.ec2.RouteTableAssociation(
            pair.public_association_name, subnet_id=public.id, route_table_id=public_routes.id, opts=child
        )
        nat_ip = aws.ec2.Eip(pair.nat_name, domain="vpc", tags={"Name": pair.nat_name}, opts=child)
        nat_addresses.append(nat_ip.public_ip)
        nat = aws.ec2.NatGateway(
            pair.nat_name,
            subnet_id=public.id,
            allocation_id=nat_ip.id,
            tags={"Name": pair.nat_name},
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[gateway]),
        )
        private = aws.ec2.Subnet(
            pair.private_name,
            vpc_id=vpc.id,
            cidr_block=pair.private_cidr,
            availability_zone=pair.zone,
            map_public_ip_on_launch=False,
            tags={"Name": pair.private_name},
            opts=subnet_opts,
        )
        private_routes = aws.ec2.RouteTable(
            pair.private_name,
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
            tags={"Name": pair.private_name},
            opts=child,
        )
        aws.ec2.RouteTableAssociation(
            pair.private_name, subnet_id=private.id, route_table_id=private_routes.id, opts=child
        )
        public_ids.append(public.id)
        private_subnets.append(private)
        private_route_ids.append(private_routes.id)
    vpc_audit(parent, name, vpc, region)
    aws.ec2.VpcEndpoint(
        f"{name}-s3",
        vpc_id=vpc.id,
        service_name=pulumi.Output.from_input(region).apply(lambda r: f"com.amazonaws.{r}.s3"),
        vpc_endpoint_type="Gateway",
        route_table_ids=private_route_ids,
        tags={"Name": f"{name}-s3"},
        # A route table holds one route per prefix list: a second S3 gateway endpoint on the same
        # tables collides (RouteAlreadyExists), so a replacement deletes the old endpoint first.
        opts=pulumi.ResourceOptions(parent=parent, delete_before_replace=True),
    )
    return NatVpc(
        vpc_id=vpc.id,
        public_subnet_ids=public_ids,
        private_subnet_ids=[s.id for s in private_subnets],
        private_subnet_zones=[s.availability_zone for s in private_subnets],
        nat_addresses=nat_addresses,
    )


class TrainingNetwork(pulumi.ComponentResource):
    """Either a new VPC, or the cluster security group inside an existing VPC/subnet.

    Outputs: vpc_id, subnet_id, availability_zone, security_group_id (the EFA group: all traffic
    from and to itself, egress anywhere, nothing from the internet).
    """

    vpc_id: pulumi.Output[str]
    subnet_id: pulumi.Output[str]
    availability_zone: pulumi.Output[str]
    security_group_id: pulumi.Output[str]
    # The cluster group's own rules: what FSx checks at CreateFileSystem (see TrainingStorage).
    security_group_rules: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        network: NetworkSpec,
        opts: pulumi.ResourceOptions | None = None,
        *,
        instance_type: str | None = None,
    ):
        super().__init__("accelstack:aws:TrainingNetwork", name, None, opts)
        self._name = name
        self._instance_type = instance_type
        self._child = pulumi.ResourceOptions(parent=self)
        if network.existing:
            self._use_existing(network)
        else:
            self._create(network)
        self.security_group_id = self._cluster_security_group()
        if not network.existing:
            self._ssm_endpoints()
        self.register_outputs(
            {
                "vpcId": self.vpc_id,
                "subnetId": self.subnet_id,
                "availabilityZone": self.availability_zone,
                "securityGroupId": self.security_group_id,
            }
        )

    def _use_existing(self, network: NetworkSpec) -> None:
        # Existing networks are the operator's: create nothing in them but our security group.
        assert network.vpc_id is not None and network.subnet_id is not None  # training takes subnetId (a spec rule)
        self.vpc_id = pulumi.Output.from_input(network.vpc_id)
        self.subnet_id = pulumi.Output.from_input(network.subnet_id)
        if network.availability_zone:
            self.availability_zone = pulumi.Output.from_input(network.availability_zone)
        else:
            subnet = aws.ec2.get_subnet_output(id=network.subnet_id, opts=pulumi.InvokeOutputOptions(parent=self))
            self.availability_zone = subnet.availability_zone

    def _create(self, network: NetworkSpec) -> None:
        name = self._name
        assert network.vpc_cidr is not None
        subnets = carve_training_subnets(network.vpc_cidr)
        if network.availability_zone:
            zone: pulumi.Input[str] = network.availability_zone
        else:
            # The first Availability Zone (not a Local Zone) that offers the node type.
            zone = zones_offering(self, self._instance_type, 1, "training.nodes.instanceType").apply(lambda z: z[0])
        # Dataset staging (Lustre <-> S3) and checkpoint uploads go straight to S3, not through NAT;
        # nodes pull packages and containers through NAT (as ParallelCluster does), no node gets a public IP.
        region = aws.get_region_output(opts=pulumi.InvokeOutputOptions(parent=self))
        self._region = region.region
        pair = ZoneSubnets(
            zone=zone,
            public_cidr=subnets.public,
            private_cidr=subnets.cluster,
            public_name=f"{name}-nat",
            public_association_name=f"{name}-public",
            nat_name=f"{name}-nat",
            private_name=f"{name}-cluster",
            zone_picked=not network.availability_zone,
        )
        vpc = create_nat_vpc(self, name, network.vpc_cidr, [pair], region.region)
        self.vpc_id = vpc.vpc_id
        self.subnet_id = vpc.private_subnet_ids[0]
        self.availability_zone = vpc.private_subnet_zones[0]

    def _cluster_security_group(self) -> pulumi.Output[str]:
        name, child = self._name, self._child
        group = aws.ec2.SecurityGroup(
            f"{name}-cluster",
            vpc_id=self.vpc_id,
            # `description` forces a new group (ForceNew in aws_security_group), and a new group
            # forces a new Lustre file system (securityGroupIds is ForceNew there), which is
            # protected: editing this text blocks every later `up`. Keep it constant.
            description="accelstack training cluster: all traffic within the group (EFA, NCCL, Lustre); no inbound from outside",
            tags={"Name": f"{name}-cluster"},
            opts=child,
        )
        # EFA's OS-bypass traffic needs BOTH a self-referencing inbound and outbound all-traffic rule.
        from_self = aws.vpc.SecurityGroupIngressRule(
            f"{name}-cluster-from-self",
            security_group_id=group.id,
            ip_protocol="-1",
            referenced_security_group_id=group.id,
            description="all traffic from cluster members (EFA, NCCL, Slurm, Lustre 988/1018-1023)",
            opts=child,
        )
        to_self = aws.vpc.SecurityGroupEgressRule(
            f"{name}-cluster-to-self",
            security_group_id=group.id,
            ip_protocol="-1",
            referenced_security_group_id=group.id,
            description="all traffic to cluster members (EFA requirement)",
            opts=child,
        )
        egress = aws.vpc.SecurityGroupEgressRule(
            f"{name}-cluster-egress",
            security_group_id=group.id,
            ip_protocol="-1",
            cidr_ipv4="0.0.0.0/0",
            description="packages, containers, AWS APIs (through NAT and VPC endpoints)",
            opts=child,
        )
        self.security_group_rules = [from_self, to_self, egress]
        return group.id

    def _ssm_endpoints(self) -> None:
        name, child = self._name, self._child
        endpoint_group = aws.ec2.SecurityGroup(
            f"{name}-endpoints",
            vpc_id=self.vpc_id,
            description="accelstack interface endpoints: HTTPS from the cluster security group only",
            tags={"Name": f"{name}-endpoints"},
            opts=child,
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-endpoints-https",
            security_group_id=endpoint_group.id,
            ip_protocol="tcp",
            from_port=443,
            to_port=443,
            referenced_security_group_id=self.security_group_id,
            description="HTTPS from cluster nodes",
            opts=child,
        )
        for service in SSM_ENDPOINT_SERVICES:
            aws.ec2.VpcEndpoint(
                f"{name}-{service}",
                vpc_id=self.vpc_id,
                service_name=self._region.apply(partial(_endpoint_service_name, service=service)),
                vpc_endpoint_type="Interface",
                private_dns_enabled=True,
                subnet_ids=[self.subnet_id],
                security_group_ids=[endpoint_group.id],
                tags={"Name": f"{name}-{service}"},
                # Private DNS names are unique in a VPC: two endpoints of one service with private DNS
                # conflict, so a replacement (a new Region or VPC) deletes the old endpoint first.
                opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
            )


# --- Serving --------------------------------------------------------------------------------------

SERVING_ZONES = 2  # an ALB needs two AZs; replicas spread over the same two


@dataclass(frozen=True)
class ServingSubnets:
    private: tuple[str, ...]  # replicas, one per AZ
    public: tuple[str, ...]  # load balancer nodes and NAT gateways only, one per AZ


def carve_serving_subnets(vpc_cidr: str, zones: int = SERVING_ZONES) -> ServingSubnets:
    """The VPC splits into 2 x zones equal blocks: private subnets first, public after. A /24 VPC
    still gives /26 public subnets, above the ALB's /27 minimum."""
    vpc = ipaddress.ip_network(vpc_cidr, strict=True)
    extra_bits = (2 * zones - 1).bit_length()
    if vpc.prefixlen + extra_bits > 27:
        raise ValueError(f"serving.network.vpcCidr {vpc_cidr} is too small for {2 * zones} subnets of /27 or larger")
    blocks = [str(b) for b in vpc.subnets(prefixlen_diff=extra_bits)]
    return ServingSubnets(private=tuple(blocks[:zones]), public=tuple(blocks[zones : 2 * zones]))


def pick_zones(
    zone_names: list[str], offered: list[str] | None, instance_type: str | None, count: int, config_path: str
) -> list[str]:
    """The first `count` zones (in name order) that offer the instance type. GPU types are offered in
    only some AZs of a region; a subnet in a zone without the type leaves a group launching nowhere."""
    usable = [zone for zone in zone_names if offered is None or zone in offered]
    if len(usable) < count:
        raise ValueError(
            f"{config_path}: {instance_type} is offered in {len(usable)} availability zone(s) of this region "
            f"({', '.join(usable) or 'none'}); this stack needs {count}: choose another instance type or region, "
            "or bring your own subnets (network.vpcId and subnet ids)"
        )
    return usable[:count]


def zones_offering(
    parent: pulumi.Resource, instance_type: str | None, count: int, config_path: str
) -> pulumi.Output[list[str]]:
    invoke = pulumi.InvokeOutputOptions(parent=parent)
    # Availability Zones only: an opted-in Local Zone or Wavelength Zone is also "available", sorts
    # before the AZs ("us-east-1-bos-1a" < "us-east-1a"), has no ALB and few instance types.
    zones = aws.get_availability_zones_output(
        state="available",
        filters=[aws.GetAvailabilityZonesFilterArgs(name="opt-in-status", values=["opt-in-not-required"])],
        opts=invoke,
    )
    if instance_type is None:
        return zones.names.apply(lambda names: pick_zones(sorted(names), None, None, count, config_path))
    offerings = aws.ec2.get_instance_type_offerings_output(
        location_type="availability-zone",
        filters=[aws.ec2.GetInstanceTypeOfferingsFilterArgs(name="instance-type", values=[instance_type])],
        opts=invoke,
    )
    return pulumi.Output.all(zones.names, offerings.locations).apply(
        lambda found: pick_zones(sorted(found[0]), list(found[1] or []), instance_type, count, config_path)
    )


class ServingNetwork(pulumi.ComponentResource):
    """Public subnets for the internet-facing ALB only; replicas in private subnets across AZs with
    NAT egress (one gateway per AZ: serving is always on, an AZ outage must not cut the others off)
    and an S3 gateway endpoint (weights come from S3 without NAT charges). No placement group, no EFA:
    replicas are independent.

    Outputs: vpc_id, private_subnet_ids, public_subnet_ids.
    """

    vpc_id: pulumi.Output[str]
    private_subnet_ids: list[pulumi.Output[str]]
    public_subnet_ids: list[pulumi.Output[str]]
    nat_addresses: list[pulumi.Output[str]] | None  # the NAT gateways' Elastic IPs (None in an existing network)

    def __init__(
        self,
        name: str,
        network: NetworkSpec,
        region: str,
        opts: pulumi.ResourceOptions | None = None,
        *,
        instance_type: str | None = None,
    ):
        super().__init__("accelstack:aws:ServingNetwork", name, None, opts)
        if network.existing:
            # Existing networks are the operator's: nothing is created in them here.
            assert network.vpc_id is not None  # the spec requires it with an existing network
            self.vpc_id = pulumi.Output.from_input(network.vpc_id)
            self.private_subnet_ids = [pulumi.Output.from_input(s) for s in network.subnet_ids or []]
            self.public_subnet_ids = [pulumi.Output.from_input(s) for s in network.public_subnet_ids or []]
            self.nat_addresses = None  # the operator's NAT: its addresses are theirs to name
        else:
            self._create(name, network, region, instance_type)
        self.register_outputs(
            {
                "vpcId": self.vpc_id,
                "privateSubnetIds": self.private_subnet_ids,
                "publicSubnetIds": self.public_subnet_ids,
            }
        )

    def _create(self, name: str, network: NetworkSpec, region: str, instance_type: str | None) -> None:
        assert network.vpc_cidr is not None
        subnets = carve_serving_subnets(network.vpc_cidr)
        zones = zones_offering(self, instance_type, SERVING_ZONES, "serving.replicas.instanceType")
        pairs = []
        for index, (public_cidr, private_cidr) in enumerate(zip(subnets.public, subnets.private, strict=True)):
            suffix = chr(ord("a") + index)
            pairs.append(
                ZoneSubnets(
                    zone=zones[index],
                    public_cidr=public_cidr,
                    private_cidr=private_cidr,
                    public_name=f"{name}-public-{suffix}",
                    public_association_name=f"{name}-public-{suffix}",
                    nat_name=f"{name}-nat-{suffix}",
                    private_name=f"{name}-private-{suffix}",
                    zone_picked=True,
                )
            )
        vpc = create_nat_vpc(self, name, network.vpc_cidr, pairs, region)
        self.vpc_id = vpc.vpc_id
        self.public_subnet_ids = vpc.public_subnet_ids
        self.private_subnet_ids = vpc.private_subnet_ids
        self.nat_addresses = vpc.nat_addresses  # Elastic IPs: stable for the NAT gateways' life
