"""Guardrails pack: encryption, no public exposure, IMDSv2, least privilege, protected state, and the
scaling/capacity rules that keep a GPU fleet safe and affordable.

Each check names the trusted rule it mirrors (Checkov CKV_AWS_xx, Trivy AVD-AWS-xxxx, an AWS doc) or
says it is ours. Checks that link resources (a bucket and its encryption/versioning/public-access
resources, an autoscaling group and its scaling policies) are stack policies: they follow the engine's
property dependencies, which are known even while ids are not. Checks whose inputs are usually unknown
during preview (policy documents, user data built from other resources' outputs) are repeated as
stack policies (`*-final`) on the stack's final state so they still bind on `up`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import email
import gzip
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml
from pulumi_policy import EnforcementLevel
from pulumi_policy.proxy import UnknownValueError

from .. import azure, concepts, gcp
from ..common import (
    Context,
    actions_of,
    as_list,
    aws_principals,
    decode,
    is_allow,
    of_type,
    refers_to,
    resource_policy,
    stack_policy,
    statements,
    truthy,
    urn_name,
)
from .iam import check_iam_least_privilege, check_iam_least_privilege_final

PACK_NAME = "accelstack-guardrails"
PACK_DESCRIPTION = "Encryption, no public exposure, IMDSv2, least privilege, protected state, safe scaling."

# Type tokens by concept (policies/concepts.py): each tuple holds the token and its SDK aliases.
BUCKET = concepts.tokens("bucket")
BUCKET_SSE = concepts.tokens("bucket-encryption")
BUCKET_PAB = concepts.tokens("bucket-public-access-block")
BUCKET_VERSIONING = concepts.tokens("bucket-versioning")
BUCKET_ACL = concepts.tokens("bucket-acl")
BUCKET_POLICY = concepts.tokens("bucket-policy")
BUCKET_LIFECYCLE = concepts.tokens("bucket-lifecycle")
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
QUEUE = "aws:sqs/queue:Queue"
QUEUE_REDRIVE = "aws:sqs/redrivePolicy:RedrivePolicy"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
JOB_DEFINITION = "aws:batch/jobDefinition:JobDefinition"
VOLUME = "aws:ebs/volume:Volume"
SUBNET = "aws:ec2/subnet:Subnet"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
SG_INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
LOAD_BALANCERS = concepts.tokens("load-balancer")
LISTENERS = concepts.tokens("listener")
FIREWALLS = concepts.tokens("firewall")
PUBLIC_ADDRESSES = concepts.tokens("public-address")
FILE_SYSTEM_LINKS = concepts.tokens("file-system-link")
SCALING_POLICIES = concepts.tokens("scaling-policy")
ASG = "aws:autoscaling/group:Group"
SCALING_POLICY = "aws:autoscaling/policy:Policy"
METRIC_ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
SPOT_TYPES = ("aws:ec2/spotInstanceRequest:SpotInstanceRequest", "aws:ec2/spotFleetRequest:SpotFleetRequest")
# Address space that is not reachable from the internet: RFC 1918, shared CGNAT (RFC 6598), loopback,
# link-local, IPv6 unique-local and link-local (IANA special-purpose registries). An ingress source
# outside all of these admits public addresses, however the range is split (0.0.0.0/1 + 128.0.0.0/1).
NON_PUBLIC = tuple(
    ipaddress.ip_network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "fc00::/7",
        "fe80::/10",
        "::1/128",
    )
)
HTTPS_PORT, HTTP_PORT = 443, 80
KMS_ALGORITHMS = ("aws:kms", "aws:kms:dsse")
# TLS 1.0/1.1 ELB security policies (Trivy AVD-AWS-0047's outdated list).
OUTDATED_TLS_POLICIES = (
    "ELBSecurityPolicy-2015-05",
    "ELBSecurityPolicy-2016-08",
    "ELBSecurityPolicy-TLS-1-0-2015-04",
    "ELBSecurityPolicy-TLS-1-1-2017-01",
)
# ELB policy names carry their minimum protocol: ...-TLS13-1-2-..., ...-TLS-1-2-..., ...-FS-1-2-...
TLS12_POLICY = re.compile(r"-(?:TLS13|TLS|FS)-1-[23](?:-|$)")
QUEUE_METRIC = re.compile(r"ApproximateNumberOfMessages|Backlog|QueueDepth", re.IGNORECASE)
CPU_METRIC = re.compile(r"CPUUtilization", re.IGNORECASE)

CONFIG = {
    "checkpointPattern": {
        "type": "string",
        "default": "checkpoint",
        "description": "Regex on a bucket's resource or bucket name marking the checkpoint location.",
    },
    "kmsBucketPattern": {
        "type": "string",
        "default": "checkpoint|artifact|model|dataset",
        "description": "Regex on a bucket's resource or bucket name: buckets that must use SSE-KMS.",
    },
    "logBucketPattern": {
        "type": "string",
        "default": "log",
        "description": "Regex on a bucket's resource or bucket name: log buckets, whose lifecycle may expire objects.",
    },
    "versionedBucketPattern": {
        "type": "string",
        "default": "checkpoint|artifact|model",
        "description": "Regex on a bucket's resource or bucket name: buckets that must be versioned.",
    },
}

# Shapes from Trivy's built-in secret rules and gitleaks (aws-access-key-id, aws-secret-access-key,
# private-key, huggingface-access-token, github-pat). The secret key may follow `=`, `:` or a space
# (`aws configure set aws_secret_access_key ...`).
SECRET_PATTERNS = (
    (re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"), "an AWS access key id"),
    (
        re.compile(
            r"aws_?secret_?access_?key['\"]?(?:\s*[=:]\s*|\s+)['\"]?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])", re.IGNORECASE
        ),
        "an AWS secret access key",
    ),
    (re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"), "a private key"),
    (re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z]{34}(?![A-Za-z0-9])"), "a Hugging Face access token"),
    (re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), "a GitHub token"),
)
LONG_LITERAL = re.compile(r"[A-Za-z0-9+/=]{40,}")
KEY_FILES = re.compile(r"/etc/munge/munge\.key|jwt_hs256\.key|slurm\.key")


def _name(resource: Any) -> str:
    return resource.name or urn_name(resource.urn)


# --- encryption at rest --------------------------------------------------------------------------


def _sse_algorithms(config: Any) -> list[Any]:
    return [
        (r.get("applyServerSideEncryptionByDefault") or {}).get("sseAlgorithm")
        for r in as_list(config.props.get("rules"))
    ]


def check_encryption_at_rest(resource: Any, ctx: Context) -> Iterable[str]:
    """Data at rest is encrypted: S3 SSE rules name an algorithm (Checkov CKV_AWS_19, Trivy AVD-AWS-0088),
    persistent Lustre uses a customer KMS key (https://docs.aws.amazon.com/fsx/latest/LustreGuide/encryption-at-rest.html),
    SQS queues use SSE (Checkov CKV_AWS_27, Trivy AVD-AWS-0096), EBS volumes and launch-template / instance
    disks are encrypted (Checkov CKV_AWS_3 / CKV_AWS_8, Trivy AVD-AWS-0026 / AVD-AWS-0131)."""
    kind, props, name = resource.resource_type, resource.props, _name(resource)
    if kind in BUCKET_SSE:
        if not any(_sse_algorithms(resource)):
            yield f"{name}: no default encryption algorithm (aws:kms, aws:kms:dsse or AES256)"
    elif kind == LUSTRE:
        deployment = str(props.get("deploymentType") or "")
        # SCRATCH file systems are always encrypted with an AWS-owned key and cannot take kmsKeyId.
        if not deployment.startswith("SCRATCH") and not props.get("kmsKeyId"):
            yield f"Lustre file system {name} has no kmsKeyId: encrypt it with the stack's customer KMS key"
    elif kind == QUEUE:
        if not truthy(props.get("sqsManagedSseEnabled")) and not props.get("kmsMasterKeyId"):
            yield f"queue {name} is not encrypted: set sqsManagedSseEnabled or kmsMasterKeyId"
    elif kind == VOLUME:
        if not truthy(props.get("encrypted")):
            yield f"EBS volume {name} is not encrypted"
    elif kind == LAUNCH_TEMPLATE:
        for mapping in as_list(props.get("blockDeviceMappings")):
            ebs = mapping.get("ebs")
            if ebs is not None and not truthy(ebs.get("encrypted")):
                yield f"launch template {name}: EBS volume {mapping.get('deviceName')} is not encrypted"
    elif kind == INSTANCE:
        disks = [props.get("rootBlockDevice"), *as_list(props.get("ebsBlockDevices"))]
        for disk in disks:
            if disk is not None and not truthy(disk.get("encrypted")):
                yield f"instance {name}: EBS volume {disk.get('deviceName', 'root')} is not encrypted"


def check_bucket_encryption(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Every bucket has a server-side encryption configuration (Checkov CKV_AWS_19, Trivy
    AVD-AWS-0088), and buckets holding data (datasets, checkpoints, artifacts: `kmsBucketPattern`) use
    a KMS key (Checkov CKV_AWS_145, Trivy AVD-AWS-0132): SSE-S3 would drop the key policy that limits
    who can read them. Log buckets may keep SSE-S3 (ALB access logs only support it)."""
    pattern = ctx.config.get("kmsBucketPattern") or CONFIG["kmsBucketPattern"]["default"]
    configs = of_type(resources, *BUCKET_SSE)
    for bucket in of_type(resources, *BUCKET):
        inline = bucket.props.get("serverSideEncryptionConfigurations")
        linked = [c for c in configs if refers_to(c, "bucket", bucket)]
        if not inline and not linked:
            yield bucket.urn, f"bucket {_name(bucket)} has no server-side encryption configuration"
        if not _matches(pattern, bucket):
            continue
        for config in linked:
            # A rule without an algorithm is encryption-at-rest's finding, not a weak algorithm.
            weak = [a for a in _sse_algorithms(config) if a and a not in KMS_ALGORITHMS]
            if weak:
                yield (
                    config.urn,
                    (
                        f"{_name(config)} encrypts data bucket {_name(bucket)} with {', '.join(map(str, weak))}; "
                        "use aws:kms with the stack's key"
                    ),
                )


# --- public exposure -----------------------------------------------------------------------------

PUBLIC_ACLS = ("public-read", "public-read-write", "authenticated-read")
PAB_FLAGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")


def check_no_public_buckets(resource: Any, ctx: Context) -> Iterable[str]:
    """No public bucket: all four public access block flags (Checkov CKV_AWS_53/54/55/56, Trivy
    AVD-AWS-0086/0087/0091/0093), no public ACL (CKV_AWS_20, AVD-AWS-0092), no policy granting `*`
    without a condition (CKV_AWS_70)."""
    kind, props, name = resource.resource_type, resource.props, _name(resource)
    if kind in BUCKET_PAB:
        off = [flag for flag in PAB_FLAGS if not truthy(props.get(flag))]
        if off:
            yield f"public access block {name} leaves {', '.join(off)} off; all four must be true"
    elif kind in BUCKET_ACL + BUCKET:
        acl = props.get("acl")
        if acl in PUBLIC_ACLS:
            yield f"{name} uses the public ACL {acl}"
    elif kind in BUCKET_POLICY:
        for statement in statements(props.get("policy")):
            if is_allow(statement) and "*" in aws_principals(statement) and not statement.get("Condition"):
                yield f"bucket policy {name} allows {', '.join(actions_of(statement))} to everyone (Principal *)"


def check_public_bucket_policies_final(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Stack-level repeat of `no-public-buckets` for bucket policy documents (built from bucket ARNs,
    so often unknown during preview); access block flags and ACLs are literals and stay per resource."""
    for resource in of_type(resources, *BUCKET_POLICY):
        for message in check_no_public_buckets(resource, ctx):
            yield resource.urn, message


def check_bucket_public_access_block(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Every bucket has its own public access block (Checkov CKV2_AWS_6, Trivy AVD-AWS-0094)."""
    blocks = of_type(resources, *BUCKET_PAB)
    for bucket in of_type(resources, *BUCKET):
        if not any(refers_to(b, "bucket", bucket) for b in blocks):
            yield bucket.urn, f"bucket {_name(bucket)} has no public access block"


def _port_range(rule: Any, low_key: str = "fromPort", high_key: str = "toPort") -> tuple[int, int] | None:
    low, high = rule.get(low_key), rule.get(high_key)
    if low is None or high is None:
        return None
    return int(low), int(high)


def is_public_range(cidr: Any) -> bool:
    """True when a CIDR admits any public address (a range that cannot be parsed counts as public)."""
    try:
        network = ipaddress.ip_network(str(cidr).strip(), strict=False)
    except ValueError:
        return True
    # Same IP version checked first: subnet_of's overloads want the exact address family.
    return not any(network.version == block.version and network.subnet_of(block) for block in NON_PUBLIC)  # type: ignore[arg-type]


def _internet_rules(resource: Any) -> list[tuple[str, tuple[int, int] | None, str]]:
    """(protocol, port range, source) of every ingress rule open to the internet."""
    kind, props = resource.resource_type, resource.props
    found = []
    if kind in FIREWALLS:
        for rule in as_list(props.get("ingress")):
            sources = as_list(rule.get("cidrBlocks")) + as_list(rule.get("ipv6CidrBlocks"))
            for source in sources:
                if is_public_range(source):
                    found.append((str(rule.get("protocol")), _port_range(rule), source))
    elif kind == SG_INGRESS:
        for key in ("cidrIpv4", "cidrIpv6"):
            if props.get(key) is not None and is_public_range(props.get(key)):
                found.append((str(props.get("ipProtocol")), _port_range(props), props.get(key)))
    elif kind == SG_RULE and props.get("type") == "ingress":
        for source in as_list(props.get("cidrBlocks")) + as_list(props.get("ipv6CidrBlocks")):
            if is_public_range(source):
                found.append((str(props.get("protocol")), _port_range(props), source))
    return found


def _web_port(protocol: str, ports: tuple[int, int] | None) -> bool:
    return protocol in ("tcp", "6") and ports in ((HTTPS_PORT, HTTPS_PORT), (HTTP_PORT, HTTP_PORT))


def check_no_internet_ingress(resource: Any, ctx: Context) -> Iterable[str]:
    """No ingress from any public address (IPv4 or IPv6, however the range is spelled or split), except HTTPS (and HTTP, which only redirects) to the
    serving load balancer. Self-referencing rules (EFA) are not internet ingress. Mirrors Trivy
    AVD-AWS-0107 and Checkov CKV_AWS_24/25/260 (we allow 80 for the HTTPS redirect only)."""
    for protocol, ports, source in _internet_rules(resource):
        if ctx.workload == "serving" and _web_port(protocol, ports):
            continue
        shown = "all ports" if protocol == "-1" or ports is None else f"{protocol} {ports[0]}-{ports[1]}"
        yield f"{_name(resource)} allows ingress from {source} on {shown}; only the serving load balancer's 443/80 may be public"


def check_ingress_only_to_load_balancer(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Internet-facing web ports open only on a security group attached to an internet-facing load
    balancer (never on replica or node groups). Ours (Trivy AVD-AWS-0107 permits none at all)."""
    groups = of_type(resources, *FIREWALLS)
    public_lbs = [lb for lb in of_type(resources, *LOAD_BALANCERS) if not truthy(lb.props.get("internal"))]
    for resource in resources:
        if not _internet_rules(resource):
            continue
        if resource.resource_type in FIREWALLS:
            owners = [resource]
        else:
            owners = [g for g in groups if refers_to(resource, "securityGroupId", g, keys=("id",))]
        for group in owners:
            if not any(refers_to(lb, "securityGroups", group, keys=("id",)) for lb in public_lbs):
                yield (
                    resource.urn,
                    (
                        f"{_name(resource)} opens security group {_name(group)} to the internet, "
                        "but no internet-facing load balancer uses that group"
                    ),
                )


def _ipv6_addresses(props: Any) -> bool:
    count = props.get("ipv6AddressCount")
    return bool(as_list(props.get("ipv6Addresses"))) or (count is not None and str(count) not in ("0", "0.0", ""))


def check_no_public_ip(resource: Any, ctx: Context) -> Iterable[str]:
    """Nodes get no public address: launch-template interfaces and instances get no public IPv4
    (Checkov CKV_AWS_88, Trivy AVD-AWS-0009) and no IPv6 address (IPv6 addresses are globally
    routable), subnets do not map public IPv4 or assign IPv6 on launch (Checkov CKV_AWS_130, Trivy
    AVD-AWS-0164), and no elastic IP is bound to an instance or interface (EIPs belong to NAT gateways,
    which take them by allocationId). Ours for IPv6 and EIPs."""
    kind, props, name = resource.resource_type, resource.props, _name(resource)
    if kind == LAUNCH_TEMPLATE:
        for interface in as_list(props.get("networkInterfaces")):
            index = int(interface.get("deviceIndex") or 0)
            if truthy(interface.get("associatePublicIpAddress")):
                yield f"launch template {name} gives interface {index} a public IP"
            if _ipv6_addresses(interface):
                yield f"launch template {name} gives interface {index} a (public) IPv6 address"
    elif kind == INSTANCE:
        if truthy(props.get("associatePublicIpAddress")):
            yield f"instance {name} gets a public IP"
        if _ipv6_addresses(props):
            yield f"instance {name} gets a (public) IPv6 address"
    elif kind == SUBNET:
        if truthy(props.get("mapPublicIpOnLaunch")):
            yield f"subnet {name} maps public IPs on launch"
        if truthy(props.get("assignIpv6AddressOnCreation")):
            yield f"subnet {name} assigns IPv6 addresses on launch"
    elif kind in PUBLIC_ADDRESSES:
        for key in ("instance", "networkInterface", "instanceId", "networkInterfaceId"):
            if props.get(key):
                yield f"elastic IP {name} is bound to a node ({key}); only NAT gateways take elastic IPs"


def _depends_on(resource: Any, prop: str, target: Any) -> bool:
    deps = getattr(resource, "property_dependencies", None) or {}
    return any(getattr(d, "urn", None) == target.urn for d in deps.get(prop, []))


def _routes_to_internet(table: Any, gateways: Sequence[Any], routes: Sequence[Any]) -> bool:
    """A route table sends a public destination to an internet gateway (inline or as Route resources)."""

    def to_gateway(route: Any, holder: Any, prop: str) -> bool:
        gateway = route.get("gatewayId")
        if not gateway or not is_public_range(
            route.get("cidrBlock")
            or route.get("ipv6CidrBlock")
            or route.get("destinationCidrBlock")
            or route.get("destinationIpv6CidrBlock")
            or "0.0.0.0/0"
        ):
            return False
        return str(gateway).startswith("igw-") or any(
            gateway == g.props.get("id") or _depends_on(holder, prop, g) for g in gateways
        )

    if any(to_gateway(r, table, "routes") for r in as_list(table.props.get("routes")) if hasattr(r, "get")):
        return True
    return any(
        refers_to(r, "routeTableId", table, keys=("id",)) and to_gateway(r.props, r, "gatewayId") for r in routes
    )


def _node_subnets(resource: Any) -> list[str]:
    """The subnet properties through which a node-launching resource picks its subnets."""
    kind = resource.resource_type
    if kind == ASG:
        return ["vpcZoneIdentifiers"]
    if kind == INSTANCE:
        return ["subnetId"]
    if kind == "aws:eks/nodeGroup:NodeGroup":
        return ["subnetIds"]
    return []


def check_nodes_in_private_subnets(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Nodes (autoscaling groups, instances, node groups, launch-template interfaces) launch only in
    subnets without a route to an internet gateway: a node in a public subnet is one security-group
    edit or one public IP away from the internet. AWS VPC guidance (private subnets for instances,
    https://docs.aws.amazon.com/vpc/latest/userguide/vpc-example-private-subnets-nat.html); ours."""
    gateways = of_type(resources, "aws:ec2/internetGateway:InternetGateway")
    routes = of_type(resources, "aws:ec2/route:Route")
    public_tables = [
        t for t in of_type(resources, "aws:ec2/routeTable:RouteTable") if _routes_to_internet(t, gateways, routes)
    ]
    associations = of_type(resources, "aws:ec2/routeTableAssociation:RouteTableAssociation")
    public_subnets = [
        subnet
        for subnet in of_type(resources, SUBNET)
        if any(
            refers_to(a, "subnetId", subnet, keys=("id",))
            and any(refers_to(a, "routeTableId", t, keys=("id",)) for t in public_tables)
            for a in associations
        )
    ]
    for resource in resources:
        props_to_check = _node_subnets(resource)
        for subnet in public_subnets:
            hit = any(refers_to(resource, prop, subnet, keys=("id",)) for prop in props_to_check)
            if resource.resource_type == LAUNCH_TEMPLATE:
                hit = (
                    _depends_on(resource, "networkInterfaces", subnet)
                    and any(
                        i.get("subnetId") for i in as_list(resource.props.get("networkInterfaces")) if hasattr(i, "get")
                    )
                ) or any(
                    i.get("subnetId") and i.get("subnetId") == subnet.props.get("id")
                    for i in as_list(resource.props.get("networkInterfaces"))
                    if hasattr(i, "get")
                )
            if hit:
                yield (
                    resource.urn,
                    f"{_name(resource)} launches nodes in public subnet {_name(subnet)} (it routes to an internet gateway)",
                )


def check_imdsv2(resource: Any, ctx: Context) -> Iterable[str]:
    """IMDSv2 only (httpTokens required): Checkov CKV_AWS_79, Trivy AVD-AWS-0028 / AVD-AWS-0130."""
    if resource.resource_type in (LAUNCH_TEMPLATE, INSTANCE):
        options = resource.props.get("metadataOptions") or {}
        if options.get("httpTokens") != "required":
            yield f"{_name(resource)} does not require IMDSv2 (metadataOptions.httpTokens must be 'required')"


# --- user data -----------------------------------------------------------------------------------


def decode_user_data(value: Any, *, base64_encoded: bool) -> str:
    """Launch templates carry base64 (maybe of gzip); instances carry text or userDataBase64."""
    if not isinstance(value, str):
        return ""
    raw: bytes = value.encode()
    if base64_encoded:
        try:
            raw = base64.b64decode(value, validate=False)
        except (binascii.Error, ValueError):
            raw = value.encode()
    if raw[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError):
            raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace")


def _parts(text: str) -> list[str]:
    """The documents of a user-data text: MIME multipart parts (cloud-init) or the text itself."""
    if text.lstrip().startswith(("Content-Type: multipart", "MIME-Version")):
        message = email.message_from_string(text)
        parts = []
        for part in message.walk():
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                parts.append(payload.decode("utf-8", errors="replace"))
        return parts
    return [text]


def _inlined_key_files(document: str) -> list[str]:
    found = []
    if document.lstrip().startswith("#cloud-config"):
        try:
            config = yaml.safe_load(document)
        except yaml.YAMLError:
            config = None
        for entry in (config or {}).get("write_files") or [] if isinstance(config, dict) else []:
            path = str(entry.get("path", "")) if isinstance(entry, dict) else ""
            if KEY_FILES.search(path) and entry.get("content"):
                found.append(path)
    # Shell: a line that writes a key file from a literal (echo <base64> | base64 -d > munge.key).
    for line in document.splitlines():
        match = KEY_FILES.search(line)
        if match and LONG_LITERAL.search(line.replace(match.group(0), "")):
            found.append(match.group(0))
    return found


def secrets_in(text: str) -> list[str]:
    """What key-like material a user-data text embeds (kinds, never the values)."""
    found = [what for pattern, what in SECRET_PATTERNS if pattern.search(text)]
    # Cluster keys (munge, Slurm JWT) must be fetched at boot (Secrets Manager/SSM), never inlined.
    for document in _parts(text):
        found += [f"the content of {path}" for path in _inlined_key_files(document)]
    return list(dict.fromkeys(found))


def _job_containers(resource: Any) -> list[Any]:
    """The containers of a Batch job definition: containerProperties, and every node range's container
    (nodeProperties.nodeRangeProperties[].container); both arrive as JSON strings or objects."""
    containers = []
    single = decode(resource.props.get("containerProperties"))
    if hasattr(single, "get"):
        containers.append(single)
    nodes = decode(resource.props.get("nodeProperties"))
    for node_range in as_list(nodes.get("nodeRangeProperties") if hasattr(nodes, "get") else None):
        container = node_range.get("container") if hasattr(node_range, "get") else None
        if hasattr(container, "get"):
            containers.append(container)
    return containers


def _user_data(resource: Any) -> str:
    props = resource.props
    if resource.resource_type == LAUNCH_TEMPLATE:
        return decode_user_data(props.get("userData"), base64_encoded=True)
    if resource.resource_type == INSTANCE:
        return decode_user_data(props.get("userData"), base64_encoded=False) + decode_user_data(
            props.get("userDataBase64"), base64_encoded=True
        )
    return ""


def check_no_secrets_in_user_data(resource: Any, ctx: Context) -> Iterable[str]:
    """No secrets in user data (it is readable by anyone with ec2:DescribeInstanceAttribute and from
    IMDS): Checkov CKV_AWS_46, Trivy AVD-AWS-0029 / AVD-AWS-0129; nor in a Batch job definition's container
    command or environment (readable with batch:DescribeJobDefinitions): the intent of Checkov CKV_AWS_45 (no
    secrets in environment variables), and Batch's own `secrets` field is where they belong."""
    if resource.resource_type in (LAUNCH_TEMPLATE, INSTANCE):
        for what in secrets_in(_user_data(resource)):
            yield f"{_name(resource)} user data embeds {what}; fetch it at boot from Secrets Manager or SSM"
    if resource.resource_type == JOB_DEFINITION:
        for container in _job_containers(resource):
            # The environment as the container sees it (NAME=value lines), beside the command's words.
            environment = [e for e in as_list(container.get("environment")) if hasattr(e, "get")]
            text = "\n".join(
                [json.dumps(container.get("command"), default=str)]
                + [f"{e.get('name')}={e.get('value')}" for e in environment]
            )
            for what in secrets_in(text):
                yield f"{_name(resource)} job container embeds {what}; pass it through the job definition's secrets"


def check_batch_not_privileged(resource: Any, ctx: Context) -> Iterable[str]:
    """Batch job containers are not privileged (Checkov CKV_AWS_210): the fabric's devices are passed one by one
    (linuxParameters.devices), which is all EFA needs."""
    if resource.resource_type != JOB_DEFINITION:
        return
    for container in _job_containers(resource):
        if truthy(container.get("privileged")):
            yield f"{_name(resource)} runs a privileged job container; pass the devices it needs instead"


def check_no_secrets_in_user_data_final(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Stack-level repeat of `no-secrets-in-user-data` (user data is often unknown during preview)."""
    for resource in of_type(resources, LAUNCH_TEMPLATE, INSTANCE, JOB_DEFINITION):
        for message in check_no_secrets_in_user_data(resource, ctx):
            yield resource.urn, message


# --- state ---------------------------------------------------------------------------------------


# How messages name a stateful kind (the concept otherwise).
STATEFUL_NAMES = {
    "aws:s3/bucket:Bucket": "bucket",
    "aws:s3/bucketV2:BucketV2": "bucket",
    "aws:fsx/lustreFileSystem:LustreFileSystem": "Lustre file system",
    "aws:kms/key:Key": "KMS key",
    "aws:ebs/volume:Volume": "EBS volume",
}


def check_protect_stateful(resource: Any, ctx: Context) -> Iterable[str]:
    """Stateful resources (every kind of a stateful concept in policies/concepts.py: buckets, file
    systems, volumes, KMS keys, databases, image repositories) are `protect`ed so `pulumi destroy` or a
    replace cannot delete them. Ours (Pulumi's protect option)."""
    concept = concepts.concept_of(resource.resource_type)
    if concept in concepts.STATEFUL and not resource.opts.protect:
        yield f"{STATEFUL_NAMES.get(resource.resource_type, concept)} {_name(resource)} is not protected (set protect=True)"


def _matches(pattern: str, bucket: Any) -> bool:
    names = [urn_name(bucket.urn), str(bucket.props.get("bucket") or "")]
    return any(re.search(pattern, n, re.IGNORECASE) for n in names)


def check_bucket_versioning(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Checkpoint and artifact buckets are versioned (an overwritten checkpoint is recoverable):
    Checkov CKV_AWS_21, Trivy AVD-AWS-0090."""
    pattern = ctx.config.get("versionedBucketPattern") or CONFIG["versionedBucketPattern"]["default"]
    versionings = of_type(resources, *BUCKET_VERSIONING)
    for bucket in of_type(resources, *BUCKET):
        if not _matches(pattern, bucket):
            continue
        linked = [v for v in versionings if refers_to(v, "bucket", bucket)]
        enabled = [v for v in linked if (v.props.get("versioningConfiguration") or {}).get("status") == "Enabled"]
        if not enabled:
            state = "suspended" if linked else "off"
            yield bucket.urn, f"bucket {_name(bucket)} holds checkpoints/artifacts but versioning is {state}"
    # Suspending versioning on ANY bucket is a step toward losing data (the pattern only decides which
    # buckets must turn it on): once suspended, overwrites and deletes are final.
    for versioning in versionings:
        status = (versioning.props.get("versioningConfiguration") or {}).get("status")
        if status is not None and status != "Enabled":
            targets = [b for b in of_type(resources, *BUCKET) if refers_to(versioning, "bucket", b)]
            if not any(_matches(pattern, b) for b in targets):
                yield (
                    versioning.urn,
                    f"{_name(versioning)} sets versioning {status}; versioning is never suspended on a stateful bucket",
                )
    for bucket in of_type(resources, *BUCKET):
        inline = bucket.props.get("versioning")
        if isinstance(inline, Mapping) and inline.get("enabled") is not None and not truthy(inline.get("enabled")):
            yield bucket.urn, f"bucket {_name(bucket)} turns versioning off (versioning.enabled)"


def _expires_current_versions(rule: Any) -> bool:
    expiration = rule.get("expiration") if hasattr(rule, "get") else None
    if expiration is None or not hasattr(expiration, "get") or str(rule.get("status", "Enabled")) != "Enabled":
        return False
    return expiration.get("days") not in (None, 0, 0.0) or bool(expiration.get("date"))


def check_no_scheduled_data_loss(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Nothing in the stack deletes data on a schedule or on the way out: no lifecycle rule expires
    current object versions on a data bucket (log buckets, `logBucketPattern`, may), no file-system
    link exports deletions to S3 (a file removed on Lustre deletes the object: FSx DRA autoExportPolicy
    DELETED, https://docs.aws.amazon.com/fsx/latest/LustreGuide/autoexport-data-repo-dra.html), no
    bucket is `forceDestroy` (a destroy empties it). Ours; Checkov CKV_AWS_93-style protection of state."""
    logs = ctx.config.get("logBucketPattern") or CONFIG["logBucketPattern"]["default"]
    buckets = of_type(resources, *BUCKET)
    for lifecycle in of_type(resources, *BUCKET_LIFECYCLE):
        targets = [b for b in buckets if refers_to(lifecycle, "bucket", b)]
        if targets and all(_matches(logs, b) for b in targets):
            continue
        for rule in as_list(lifecycle.props.get("rules")):
            if _expires_current_versions(rule):
                yield (
                    lifecycle.urn,
                    (
                        f"{_name(lifecycle)} rule {rule.get('id')} expires current object versions; "
                        "expire only noncurrent versions on data buckets"
                    ),
                )
    for link in of_type(resources, *FILE_SYSTEM_LINKS):
        s3 = link.props.get("s3") or {}
        events = (
            [str(e) for e in as_list((s3.get("autoExportPolicy") or {}).get("events"))] if hasattr(s3, "get") else []
        )
        if "DELETED" in events:
            yield (
                link.urn,
                f"{_name(link)} exports deletions to {link.props.get('dataRepositoryPath')} (autoExportPolicy DELETED)",
            )
    for resource in resources:
        if concepts.concept_of(resource.resource_type) in concepts.STATEFUL:
            for key in ("forceDestroy", "forceDelete", "skipFinalSnapshot"):
                if truthy(resource.props.get(key)):
                    yield resource.urn, f"{_name(resource)} sets {key}: a destroy or replace deletes its data"


def check_queue_dlq(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Every queue has a dead-letter queue, or is one: poison requests must not loop forever.
    AWS SQS best practices (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html); ours."""
    queues = of_type(resources, QUEUE)
    redrives = of_type(resources, QUEUE_REDRIVE)
    for queue in queues:
        policy = decode(queue.props.get("redrivePolicy"))
        if isinstance(policy, Mapping) and policy.get("deadLetterTargetArn"):
            continue
        if any(refers_to(r, "queueUrl", queue, keys=("url", "id")) for r in redrives):
            continue
        is_dlq = any(q is not queue and refers_to(q, "redrivePolicy", queue, keys=()) for q in queues) or any(
            _targets(q, queue) for q in queues if q is not queue
        )
        if not is_dlq:
            yield queue.urn, f"queue {_name(queue)} has no dead-letter queue (redrivePolicy.deadLetterTargetArn)"


def _targets(source: Any, queue: Any) -> bool:
    policy = decode(source.props.get("redrivePolicy"))
    arn = queue.props.get("arn")
    return isinstance(policy, Mapping) and arn is not None and policy.get("deadLetterTargetArn") == arn


# --- serving front door --------------------------------------------------------------------------


def check_https_listeners(resource: Any, ctx: Context) -> Iterable[str]:
    """Listeners speak HTTPS with a TLS 1.2+ policy; an HTTP listener only redirects to HTTPS.
    Checkov CKV_AWS_2 / CKV_AWS_103, Trivy AVD-AWS-0054 / AVD-AWS-0047. The policy must be one whose
    name states a 1.2+ minimum (`TLS13-1-2-*`, `TLS-1-2-*`, `FS-1-2-*`, `TLS13-1-3-*`): a denylist
    misses `ELBSecurityPolicy-TLS13-1-0-2021-06` and `ELBSecurityPolicy-FS-2018-06`, which allow TLS 1.0
    (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/describe-ssl-policies.html)."""
    if resource.resource_type not in LISTENERS:
        return
    props, name = resource.props, _name(resource)
    # An ALB listener without `protocol` is HTTP (the provider's and the API's default), never TLS.
    protocol = props.get("protocol") or "HTTP"
    if str(protocol).upper() == "HTTP":
        actions = as_list(props.get("defaultActions"))
        redirects = [
            a for a in actions if a.get("type") == "redirect" and (a.get("redirect") or {}).get("protocol") == "HTTPS"
        ]
        if not actions or len(redirects) != len(actions):
            yield f"HTTP listener {name} must only redirect to HTTPS"
    elif str(protocol).upper() in ("HTTPS", "TLS"):
        policy = props.get("sslPolicy")
        if policy is None:
            yield f"{protocol} listener {name} names no sslPolicy (the default depends on the API used); name a TLS 1.2+ policy"
        elif policy in OUTDATED_TLS_POLICIES or not TLS12_POLICY.search(str(policy)):
            yield f"listener {name} uses {policy}, which allows TLS < 1.2 (use e.g. ELBSecurityPolicy-TLS13-1-2-2021-06)"
    elif protocol is not None:
        yield f"listener {name} uses {protocol}; use HTTPS (or an HTTP -> HTTPS redirect)"


def check_lb_deletion_protection(resource: Any, ctx: Context) -> Iterable[str]:
    """Serving (and any internet-facing) load balancers have deletion protection: Checkov CKV_AWS_150."""
    if resource.resource_type not in LOAD_BALANCERS:
        return
    public = not truthy(resource.props.get("internal"))
    if (ctx.workload == "serving" or public) and not truthy(resource.props.get("enableDeletionProtection")):
        yield f"load balancer {_name(resource)} has no deletion protection (enableDeletionProtection)"


# --- capacity and scaling ------------------------------------------------------------------------


def spot_usage(resource: Any) -> str | None:
    """Why a resource runs on spot capacity, or None."""
    kind, props = resource.resource_type, resource.props
    if kind in SPOT_TYPES:
        return "is a spot request"
    if kind in (LAUNCH_TEMPLATE, INSTANCE):
        market = props.get("instanceMarketOptions") or {}
        if str(market.get("marketType") or "").lower() == "spot" or market.get("spotOptions"):
            return "requests spot instances (instanceMarketOptions)"
    if kind == "aws:ec2/fleet:Fleet":
        capacity = props.get("targetCapacitySpecification") or {}
        if (
            str(capacity.get("defaultTargetCapacityType") or "").lower() == "spot"
            or float(capacity.get("spotTargetCapacity") or 0) > 0
        ):
            return "is an EC2 fleet with spot capacity"
    if kind == "aws:eks/nodeGroup:NodeGroup" and str(props.get("capacityType") or "").upper() == "SPOT":
        return "is a spot node group (capacityType SPOT)"
    if kind == ASG:
        mixed = props.get("mixedInstancesPolicy") or {}
        if mixed and (mixed.get("instancesDistribution") or {}).get("spotMaxPrice"):
            return "sets a spot max price (mixedInstancesPolicy.instancesDistribution.spotMaxPrice)"
        distribution = mixed.get("instancesDistribution") if mixed else None
        if distribution is not None:
            on_demand = distribution.get("onDemandPercentageAboveBaseCapacity")
            if on_demand is not None and int(on_demand) < 100:
                return f"runs {100 - int(on_demand)}% spot above its on-demand base"
    if kind == "aws:batch/computeEnvironment:ComputeEnvironment":
        compute = props.get("computeResources") or {}
        if str(compute.get("type") or "").upper() in ("SPOT", "FARGATE_SPOT"):
            return "is a spot compute environment"
    return None


def check_no_spot_serving(resource: Any, ctx: Context) -> Iterable[str]:
    """Serving replicas never run on spot: a reclaimed replica drops in-flight requests and the
    queue-depth scaler cannot replace it in time. Ours."""
    if ctx.workload == "serving" and (why := spot_usage(resource)):
        yield f"{_name(resource)} {why}; serving replica groups must be on-demand (or capacity blocks)"


def check_spot_training_checkpoints(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Spot training only with a checkpoint location: a reclaimed node must not lose the run. Ours
    (AWS guidance for spot training: https://docs.aws.amazon.com/sagemaker/latest/dg/model-managed-spot-training.html)."""
    if ctx.workload != "training":
        return
    pattern = ctx.config.get("checkpointPattern") or CONFIG["checkpointPattern"]["default"]
    if any(_matches(pattern, b) for b in of_type(resources, *BUCKET)):
        return
    for resource in resources:
        if why := spot_usage(resource):
            yield (
                resource.urn,
                (
                    f"{_name(resource)} {why} but the stack has no checkpoint bucket; "
                    "set training.storage.checkpoints or use on-demand capacity"
                ),
            )


def _metric_refs(node: Any, found: list[tuple[str, str]]) -> None:
    """Every metric a scaling configuration names, at any depth: predefined metric types (target
    tracking, predictive pairs / scaling / load metrics) and (namespace, metricName) pairs."""
    if hasattr(node, "items"):
        predefined = node.get("predefinedMetricType")
        if predefined:
            found.append(("predefined", str(predefined)))
        if node.get("metricName"):
            found.append((str(node.get("namespace")), str(node.get("metricName"))))
        for _key, value in node.items():
            _metric_refs(value, found)
    elif isinstance(node, Sequence) and not isinstance(node, str):
        for item in node:
            _metric_refs(item, found)


def _metrics_of_policy(policy: Any) -> list[tuple[str, str]]:
    """(namespace, metric name) pairs a scaling policy tracks, of every policy kind (target tracking,
    predictive, application auto scaling); step/simple policies get theirs from their alarms."""
    found: list[tuple[str, str]] = []
    for key in (
        "targetTrackingConfiguration",
        "predictiveScalingConfiguration",
        "targetTrackingScalingPolicyConfiguration",
    ):
        value = policy.props.get(key)
        if value:
            _metric_refs(value, found)
    return found


def _metrics_of_alarm(alarm: Any) -> list[tuple[str, str]]:
    found = []
    if alarm.props.get("metricName"):
        found.append((str(alarm.props.get("namespace")), str(alarm.props.get("metricName"))))
    for query in as_list(alarm.props.get("metricQueries")):
        metric = query.get("metric") or {}
        if metric.get("metricName"):
            found.append((str(metric.get("namespace")), str(metric.get("metricName"))))
    return found


def _is_queue_metric(namespace: str, metric: str) -> bool:
    return namespace == "AWS/SQS" or bool(QUEUE_METRIC.search(metric))


def _is_cpu_metric(namespace: str, metric: str) -> bool:
    return metric == "ASGAverageCPUUtilization" or bool(CPU_METRIC.search(metric))


def check_serving_scales_on_queue_depth(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Serving replica groups scale on the admission queue's depth and never on CPU: GPU inference is
    bound by the GPU, so CPU stays low while requests queue up. Ours (AWS: scaling based on Amazon SQS,
    https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-using-sqs-queue.html)."""
    if ctx.workload != "serving":
        return
    policies = of_type(resources, *SCALING_POLICIES)
    alarms = of_type(resources, METRIC_ALARM)
    for group in of_type(resources, ASG):
        linked = [p for p in policies if refers_to(p, "autoscalingGroupName", group, keys=("name", "id"))]
        metrics: list[tuple[str, str, str]] = []
        for policy in linked:
            metrics += [(_name(policy), ns, m) for ns, m in _metrics_of_policy(policy)]
            for alarm in alarms:
                if refers_to(alarm, "alarmActions", policy, keys=("arn",)):
                    metrics += [(_name(alarm), ns, m) for ns, m in _metrics_of_alarm(alarm)]
        cpu = sorted({who for who, ns, m in metrics if _is_cpu_metric(ns, m)})
        if cpu:
            yield group.urn, f"replica group {_name(group)} scales on CPU ({', '.join(cpu)}); scale on queue depth"
        elif not any(_is_queue_metric(ns, m) for _, ns, m in metrics):
            yield (
                group.urn,
                (
                    f"replica group {_name(group)} has no scaling policy on the admission queue's depth "
                    "(AWS/SQS ApproximateNumberOfMessagesVisible or a backlog-per-replica metric)"
                ),
            )


# --- Azure and GCP: each rule's per-cloud readers (policies/azure.py, policies/gcp.py) -------------


def every_cloud(*checks: Any) -> Any:
    """One policy over every cloud: the checks' findings in order (AWS's first, unchanged)."""

    def check(subject: Any, ctx: Context) -> Iterable[Any]:
        for one in checks:
            yield from one(subject, ctx)

    check.__doc__ = "\n\n".join(c.__doc__ or "" for c in checks)
    return check


def check_encryption_at_rest_azure_gcp(resource: Any, ctx: Context) -> Iterable[str]:
    yield from azure.check_encryption_at_rest(resource)


def check_customer_keys(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Where an Azure or GCP stack holds its own key, its data stores use it (see policies/azure.py,
    policies/gcp.py); AWS's data buckets always use KMS (bucket-encryption above)."""
    pattern = ctx.config.get("kmsBucketPattern") or CONFIG["kmsBucketPattern"]["default"]
    yield from azure.check_customer_keys(resources, pattern)
    yield from gcp.check_customer_keys(resources, pattern)


def check_no_public_storage_azure_gcp(resource: Any, ctx: Context) -> Iterable[str]:
    yield from azure.check_no_public_storage(resource)
    yield from gcp.check_no_public_buckets(resource)


def check_min_tls(resource: Any, ctx: Context) -> Iterable[str]:
    """TLS 1.2+ on every endpoint Azure and GCP let a stack configure: storage accounts (Checkov
    CKV_AZURE_44), Service Bus namespaces, Application Gateway SSL policies, GCP SSL policies and HTTPS
    proxies (Trivy AVD-GCP-0039); details beside each reader in policies/azure.py and policies/gcp.py.
    AWS's listeners are judged by https-listeners."""
    yield from azure.check_min_tls(resource)
    yield from gcp.check_min_tls(resource)


def check_identity_auth_azure(resource: Any, ctx: Context) -> Iterable[str]:
    """Queues take identities, not shared keys: Azure Policy "Azure Service Bus namespaces should have local
    authentication methods disabled" (https://learn.microsoft.com/azure/service-bus-messaging/disable-local-
    authentication; policies/azure.py check_identity_auth). Pub/Sub and SQS have no key of their own: IAM is the
    only way in."""
    yield from azure.check_identity_auth(resource)


def check_managed_ml_private_azure(resource: Any, ctx: Context) -> Iterable[str]:
    """Managed training on Azure Machine Learning is private and identity-only: the workspace off the internet
    (Checkov CKV_AZURE_144), the compute without local auth (CKV_AZURE_142), datastores without stored
    credentials (policies/azure.py)."""
    yield from azure.check_ml_workspace_private(resource)
    yield from azure.check_ml_compute_local_auth(resource)
    yield from azure.check_ml_datastore_identity(resource)


def check_https_listeners_azure(resource: Any, ctx: Context) -> Iterable[str]:
    yield from azure.check_https_listeners(resource)


def check_http_only_redirects_gcp(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """A GCP HTTP proxy's URL map only redirects to HTTPS (Checkov CKV_AWS_2's intent for GCP's split
    proxy/URL-map model; https://cloud.google.com/load-balancing/docs/https/setting-up-http-https-redirect)."""
    yield from gcp.http_proxy_problems(resources, refers_to)


def check_no_internet_ingress_azure_gcp(resource: Any, ctx: Context) -> Iterable[str]:
    """Azure NSG rules admit the internet (`*`, `Internet`, a public prefix or a public service tag)
    only on TCP 443/80 in serving (Checkov CKV_AZURE_9/10/160, Trivy AVD-AZU-0047/0048); GCP firewall
    rules admit no public source but Google's front ends / health checks and IAP's SSH range (Checkov
    CKV_GCP_2/3/106, Trivy AVD-GCP-0027): the external load balancer terminates at Google's edge."""
    for protocol, ports, source in azure.internet_rules(resource, is_public_range):
        if ctx.workload == "serving" and azure.web_only(protocol, ports):
            continue
        shown = f"{protocol} {', '.join(ports) or 'all ports'}"
        yield f"{_name(resource)} allows inbound {shown} from {source}; only the serving gateway's 443/80 may be public"
    for shown, source in gcp.internet_rules(resource, is_public_range):
        yield (
            f"firewall {_name(resource)} allows {shown} from {source}; only Google's front ends "
            "(35.191.0.0/16, 130.211.0.0/22) and IAP SSH may reach nodes"
        )


def check_os_login_gcp(resource: Any, ctx: Context) -> Iterable[str]:
    """GCP VMs and Cluster Director login nodes keep OS Login on: Checkov CKV_GCP_34 (policies/gcp.py)."""
    yield from gcp.check_os_login(resource)


def check_no_public_ip_azure_gcp(resource: Any, ctx: Context) -> Iterable[str]:
    yield from azure.check_no_public_ip(resource)
    yield from gcp.check_no_public_ip(resource)


def check_no_secrets_in_node_data(resource: Any, ctx: Context) -> Iterable[str]:
    """No secrets in Azure custom data / user data (readable from the instance metadata service and by
    anyone who can read the VM model: Checkov CKV_AZURE_45) or GCP metadata startup scripts and
    user-data (readable from the metadata server and by anyone with compute.instances.get:
    https://cloud.google.com/compute/docs/metadata/overview); and no secrets in a dynamic resource's inputs (stored in the
    state in clear)."""
    texts = azure.user_data(resource) + gcp.user_data(resource)
    for where, value in texts:
        for what in secrets_in(decode_user_data(value, base64_encoded=True)):
            yield f"{_name(resource)} {where} embeds {what}; fetch it at boot from Key Vault or Secret Manager"
    if concepts.is_a(resource.resource_type, "dynamic-operation"):
        for what in secrets_in(" ".join(str(v) for k, v in resource.props.items() if not str(k).startswith("__"))):
            yield f"dynamic resource {_name(resource)} inputs embed {what} (inputs are stored in the state in clear)"


# azure-native's VirtualMachine declares `osProfile` an additional secret output: the engine stores it encrypted
# and an offline export redacts it, so after the deployment it cannot be read; its inputs (customData included)
# were judged by the resource-level check (`no-secrets-in-user-data`), which sees them in clear.
SECRET_OUTPUT_NODE_DATA = ("azure-native:compute:VirtualMachine",)


def check_no_secrets_in_node_data_final(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    for resource in resources:
        try:
            found = list(check_no_secrets_in_node_data(resource, ctx))
        except UnknownValueError:
            if resource.resource_type in SECRET_OUTPUT_NODE_DATA:
                continue
            raise
        for message in found:
            yield resource.urn, message


def check_least_privilege_azure_gcp(resource: Any, ctx: Context) -> Iterable[str]:
    yield from azure.check_least_privilege(resource)
    yield from gcp.check_least_privilege(resource)


def check_queue_dlq_azure_gcp(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    for resource in resources:
        for message in azure.queue_dlq_problems(resource):
            yield resource.urn, message
    yield from gcp.queue_dlq_problems(resources, refers_to)


def check_no_spot_serving_azure_gcp(resource: Any, ctx: Context) -> Iterable[str]:
    why = azure.spot_usage(resource) or gcp.spot_usage(resource) or gcp.time_limited_usage(resource)
    if ctx.workload == "serving" and why:
        yield f"{_name(resource)} {why}; serving replica groups must be on-demand (or reserved)"


def _checkpoint_store(resource: Any, pattern: str) -> bool:
    names = [urn_name(resource.urn)] + [str(resource.props.get(k) or "") for k in ("bucket", "name", "containerName")]
    return any(re.search(pattern, n, re.IGNORECASE) for n in names)


def check_spot_training_checkpoints_azure_gcp(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """As AWS's: Spot/low-priority/preemptible training needs a checkpoint container or bucket."""
    if ctx.workload != "training":
        return
    pattern = ctx.config.get("checkpointPattern") or CONFIG["checkpointPattern"]["default"]
    if any(_checkpoint_store(b, pattern) for b in concepts.of(resources, "bucket")):
        return
    for resource in resources:
        if why := azure.spot_usage(resource) or gcp.spot_usage(resource):
            yield (
                resource.urn,
                f"{_name(resource)} {why} but the stack has no checkpoint container or bucket; "
                "set training.storage.checkpoints or use on-demand capacity",
            )


def check_scaling_azure_gcp(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    if ctx.workload != "serving":
        return
    yield from azure.scaling_problems(resources, refers_to)
    yield from gcp.scaling_problems(resources, refers_to)


def check_waf_rate_limit(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Azure and GCP internet-facing entries have a WAF with an enforced rate-limit rule: Application
    Gateway WAF policies (Checkov CKV_AZURE_120 / CKV_AZURE_122) and Cloud Armor on external backend
    services (https://cloud.google.com/armor/docs/rate-limiting-overview). AWS's web ACL is judged by
    the observability rules and the conformance suite."""
    yield from azure.waf_problems(resources, refers_to)
    yield from gcp.waf_problems(resources, refers_to)


def check_ingress_owner_azure(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    yield from azure.ingress_owner_problems(resources, refers_to, is_public_range)


def check_versioning_azure_gcp(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    pattern = ctx.config.get("versionedBucketPattern") or CONFIG["versionedBucketPattern"]["default"]
    yield from azure.versioning_problems(resources, pattern, refers_to)
    yield from gcp.versioning_problems(resources, pattern)


def check_lifecycle_azure_gcp(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    logs = ctx.config.get("logBucketPattern") or CONFIG["logBucketPattern"]["default"]
    yield from azure.lifecycle_problems(resources, logs, refers_to)
    yield from gcp.lifecycle_problems(resources, logs)


POLICIES = [
    resource_policy(
        "encryption-at-rest",
        "Data at rest is encrypted.",
        every_cloud(check_encryption_at_rest, check_encryption_at_rest_azure_gcp),
    ),
    stack_policy(
        "bucket-encryption",
        "Every bucket has default encryption; data buckets use KMS (Azure/GCP: the stack's key, if any).",
        every_cloud(check_bucket_encryption, check_customer_keys),
        config=CONFIG,
    ),
    resource_policy(
        "no-public-buckets",
        "No bucket, storage account or container is public.",
        every_cloud(check_no_public_buckets, check_no_public_storage_azure_gcp),
    ),
    resource_policy("min-tls-1-2", "Endpoints refuse TLS below 1.2 (Azure, GCP).", check_min_tls),
    resource_policy(
        "queue-identity-auth",
        "Queues accept identities only, no shared access keys (Azure).",
        check_identity_auth_azure,
    ),
    resource_policy(
        "managed-ml-private",
        "Azure Machine Learning: workspace off the internet, compute and datastores on identities only.",
        check_managed_ml_private_azure,
    ),
    stack_policy(
        "no-public-buckets-final",
        "No bucket policy makes a bucket public (final state).",
        check_public_bucket_policies_final,
    ),
    stack_policy(
        "bucket-public-access-block", "Every bucket has a public access block.", check_bucket_public_access_block
    ),
    resource_policy(
        "no-internet-ingress",
        "No ingress from the internet but the serving HTTPS entry.",
        every_cloud(check_no_internet_ingress, check_no_internet_ingress_azure_gcp),
    ),
    stack_policy(
        "internet-ingress-only-to-load-balancer",
        "Only an internet-facing load balancer's security group is open to the internet.",
        every_cloud(check_ingress_only_to_load_balancer, check_ingress_owner_azure),
    ),
    resource_policy(
        "no-public-ip-on-nodes",
        "Nodes and subnets get no public IPs.",
        every_cloud(check_no_public_ip, check_no_public_ip_azure_gcp),
    ),
    stack_policy(
        "nodes-in-private-subnets",
        "Nodes launch only in subnets without a route to an internet gateway.",
        check_nodes_in_private_subnets,
    ),
    resource_policy("imdsv2-required", "Instances require IMDSv2.", check_imdsv2),
    resource_policy("os-login-not-disabled", "GCP VMs keep OS Login on.", check_os_login_gcp),
    resource_policy("batch-not-privileged", "Batch job containers are not privileged.", check_batch_not_privileged),
    resource_policy(
        "no-secrets-in-user-data",
        "User data embeds no secrets.",
        every_cloud(check_no_secrets_in_user_data, check_no_secrets_in_node_data),
    ),
    stack_policy(
        "no-secrets-in-user-data-final",
        "User data embeds no secrets (final state).",
        every_cloud(check_no_secrets_in_user_data_final, check_no_secrets_in_node_data_final),
    ),
    resource_policy(
        "iam-least-privilege",
        "IAM policies grant least privilege.",
        every_cloud(check_iam_least_privilege, check_least_privilege_azure_gcp),
    ),
    stack_policy(
        "iam-least-privilege-final",
        "IAM policies grant least privilege (final state).",
        check_iam_least_privilege_final,
    ),
    resource_policy("protect-stateful", "Stateful resources are protected.", check_protect_stateful),
    stack_policy(
        "bucket-versioning",
        "Checkpoint and artifact buckets are versioned.",
        every_cloud(check_bucket_versioning, check_versioning_azure_gcp),
        config=CONFIG,
    ),
    stack_policy(
        "no-scheduled-data-loss",
        "No lifecycle expiry of current versions, exported deletions or forceDestroy on stateful resources.",
        every_cloud(check_no_scheduled_data_loss, check_lifecycle_azure_gcp),
        config=CONFIG,
    ),
    stack_policy(
        "queue-dlq", "Every queue has a dead-letter queue.", every_cloud(check_queue_dlq, check_queue_dlq_azure_gcp)
    ),
    resource_policy(
        "https-listeners", "Listeners are HTTPS-only.", every_cloud(check_https_listeners, check_https_listeners_azure)
    ),
    stack_policy("http-only-redirects", "HTTP proxies only redirect to HTTPS (GCP).", check_http_only_redirects_gcp),
    resource_policy(
        "lb-deletion-protection", "Serving load balancers have deletion protection.", check_lb_deletion_protection
    ),
    resource_policy(
        "no-spot-serving",
        "Serving replicas never run on spot.",
        every_cloud(check_no_spot_serving, check_no_spot_serving_azure_gcp),
    ),
    stack_policy(
        "spot-training-needs-checkpoints",
        "Spot training only with a checkpoint location.",
        every_cloud(check_spot_training_checkpoints, check_spot_training_checkpoints_azure_gcp),
        config=CONFIG,
    ),
    stack_policy(
        "serving-scales-on-queue-depth",
        "Serving scales on queue depth, never on CPU.",
        every_cloud(check_serving_scales_on_queue_depth, check_scaling_azure_gcp),
    ),
    stack_policy(
        "waf-rate-limit",
        "Internet-facing entries have a WAF with an enforced rate limit (Azure, GCP).",
        check_waf_rate_limit,
    ),
]
ENFORCEMENT_LEVEL = EnforcementLevel.MANDATORY
