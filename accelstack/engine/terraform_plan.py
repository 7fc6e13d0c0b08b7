"""A `pulumi stack export` (v3) document as a Terraform plan JSON (`terraform show -json PLAN`), so the
scanners security teams already gate Terraform with read an accelstack stack as they would a first
`terraform plan` of the same resources (Checkov's `terraform_plan` framework is tested: tests/scan).

Shape (Terraform docs, "JSON Output Format", plan representation):
  {"format_version": "1.2",
   "planned_values": {"root_module": {"resources": [{address, mode, type, name, provider_name,
                                                     schema_version, values, sensitive_values}]}},
   "resource_changes": [{address, mode, type, name, provider_name,
                         change: {actions: ["create"], before: null, after, after_unknown, ...}}],
   "configuration": {"provider_config": {...}, "root_module": {"resources": [{address, mode, type,
                                                      name, provider_config_key, expressions}]}}}

How the Pulumi view maps to it:
- Type tokens map to Terraform resource types through `TERRAFORM_TYPES` (the pulumi-aws bridge's
  own token -> resource renames, provider/cmd/pulumi-resource-aws/bridge-metadata.json; the installed
  pulumi_aws Python package ships no such metadata, so the table is kept here and a test checks
  every token the shipped stacks register maps). A token without a mapping is left out and listed
  in `TerraformPlan.unmapped`, never guessed.
- camelCase input keys become snake_case; the bridge's pluralised list-block names go back to
  Terraform's singular block names (`FIELD_RENAMES`, e.g. a lifecycle configuration's `rules` ->
  `rule`); Pulumi's flattened single blocks (`{...}`) become Terraform's one-element block lists;
  map attributes (`tags`, an alarm's `dimensions`) stay maps with their keys untouched.
- An input that names another resource (the program passed that resource's id/arn/name, which
  the capture records in `propertyDependencies`) is, as in a real first plan, unknown until apply:
  absent from `values`, `true` in `after_unknown`, and a `references` expression
  (`aws_s3_bucket.NAME.id`, `aws_s3_bucket.NAME`) in `configuration`. Checkov builds its
  cross-resource graph (bucket <-> public access block/versioning/logging, security group <->
  rules, VPC <-> flow log) from exactly these references.
- Secrets never appear: a secret input is dropped and marked in `after_sensitive`.
- Values computed from another resource's output (a bucket policy naming the bucket ARN) keep the
  mock value the preview computed, so scanners can still read the policy document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from accelstack.engine.capture import SIG_KEY, UNKNOWN
from accelstack.engine.export import PROVIDER_PREFIX, STACK_TYPE, _package_version, is_secret

FORMAT_VERSION = "1.2"
DYNAMIC_PREFIX = "pulumi-python:dynamic"  # pulumi.dynamic resources (`pulumi-python:dynamic[/module]:Name`)
PROVIDER_ADDRESSES = {
    "aws": "registry.terraform.io/hashicorp/aws",
    "gcp": "registry.terraform.io/hashicorp/google",
    "random": "registry.terraform.io/hashicorp/random",
}

# Pulumi type token -> Terraform resource type, as pulumi-aws 7.x / pulumi-random 4.x map them
# (bridge-metadata.json "renames.resources"). Every token the components register is here.
TERRAFORM_TYPES: dict[str, str] = {
    "aws:autoscaling/group:Group": "aws_autoscaling_group",
    "aws:autoscaling/policy:Policy": "aws_autoscaling_policy",
    "aws:cloudwatch/logGroup:LogGroup": "aws_cloudwatch_log_group",
    "aws:cloudwatch/logResourcePolicy:LogResourcePolicy": "aws_cloudwatch_log_resource_policy",
    "aws:cloudwatch/metricAlarm:MetricAlarm": "aws_cloudwatch_metric_alarm",
    "aws:ebs/volume:Volume": "aws_ebs_volume",
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": "aws_default_security_group",
    "aws:ec2/eip:Eip": "aws_eip",
    "aws:ec2/flowLog:FlowLog": "aws_flow_log",
    "aws:ec2/instance:Instance": "aws_instance",
    "aws:ec2/internetGateway:InternetGateway": "aws_internet_gateway",
    "aws:ec2/launchTemplate:LaunchTemplate": "aws_launch_template",
    "aws:ec2/natGateway:NatGateway": "aws_nat_gateway",
    "aws:ec2/placementGroup:PlacementGroup": "aws_placement_group",
    "aws:ec2/routeTable:RouteTable": "aws_route_table",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "aws_route_table_association",
    "aws:ec2/securityGroup:SecurityGroup": "aws_security_group",
    "aws:ec2/subnet:Subnet": "aws_subnet",
    "aws:ec2/volumeAttachment:VolumeAttachment": "aws_volume_attachment",
    "aws:ec2/vpc:Vpc": "aws_vpc",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "aws_vpc_endpoint",
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": "aws_fsx_data_repository_association",
    "aws:fsx/lustreFileSystem:LustreFileSystem": "aws_fsx_lustre_file_system",
    "aws:iam/instanceProfile:InstanceProfile": "aws_iam_instance_profile",
    "aws:iam/policy:Policy": "aws_iam_policy",
    "aws:iam/role:Role": "aws_iam_role",
    "aws:iam/rolePolicy:RolePolicy": "aws_iam_role_policy",
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "aws_iam_role_policy_attachment",
    "aws:kms/alias:Alias": "aws_kms_alias",
    "aws:kms/key:Key": "aws_kms_key",
    "aws:lb/listener:Listener": "aws_lb_listener",
    "aws:lb/loadBalancer:LoadBalancer": "aws_lb",
    "aws:lb/targetGroup:TargetGroup": "aws_lb_target_group",
    "aws:s3/bucket:Bucket": "aws_s3_bucket",
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": "aws_s3_bucket_lifecycle_configuration",
    "aws:s3/bucketLogging:BucketLogging": "aws_s3_bucket_logging",
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": "aws_s3_bucket_ownership_controls",
    "aws:s3/bucketPolicy:BucketPolicy": "aws_s3_bucket_policy",
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": "aws_s3_bucket_public_access_block",
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        "aws_s3_bucket_server_side_encryption_configuration"
    ),
    "aws:s3/bucketVersioning:BucketVersioning": "aws_s3_bucket_versioning",
    "aws:secretsmanager/secret:Secret": "aws_secretsmanager_secret",
    "aws:secretsmanager/secretVersion:SecretVersion": "aws_secretsmanager_secret_version",
    "aws:sqs/queue:Queue": "aws_sqs_queue",
    "aws:sqs/queuePolicy:QueuePolicy": "aws_sqs_queue_policy",
    "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy": "aws_sqs_queue_redrive_allow_policy",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "aws_vpc_security_group_egress_rule",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "aws_vpc_security_group_ingress_rule",
    "aws:wafv2/webAcl:WebAcl": "aws_wafv2_web_acl",
    "aws:wafv2/webAclAssociation:WebAclAssociation": "aws_wafv2_web_acl_association",
    "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration": "aws_wafv2_web_acl_logging_configuration",
    "random:index/randomBytes:RandomBytes": "random_bytes",
    # pulumi-gcp 10.x: the google provider's resources (pulumi-gcp provider/resources.go maps each
    # google_<product>_<resource> to gcp:<module>/<camelName>:<Name>; the irregular ones are the IAM and
    # secret manager names, service accounts and service networking).
    **{
        f"gcp:compute/{camel}:{camel[0].upper()}{camel[1:]}": f"google_compute_{snake}"
        for camel, snake in (
            ("address", "address"),
            ("backendService", "backend_service"),
            ("disk", "disk"),
            ("firewall", "firewall"),
            ("globalAddress", "global_address"),
            ("globalForwardingRule", "global_forwarding_rule"),
            ("healthCheck", "health_check"),
            ("instance", "instance"),
            ("instanceGroupManager", "instance_group_manager"),
            ("instanceTemplate", "instance_template"),
            ("network", "network"),
            ("regionAutoscaler", "region_autoscaler"),
            ("regionInstanceGroupManager", "region_instance_group_manager"),
            ("regionInstanceTemplate", "region_instance_template"),
            ("resourcePolicy", "resource_policy"),
            ("router", "router"),
            ("routerNat", "router_nat"),
            ("securityPolicy", "security_policy"),
            ("subnetwork", "subnetwork"),
            ("targetHttpsProxy", "target_https_proxy"),
        )
    },
    "gcp:compute/sSLPolicy:SSLPolicy": "google_compute_ssl_policy",
    "gcp:compute/uRLMap:URLMap": "google_compute_url_map",
    "gcp:kms/cryptoKey:CryptoKey": "google_kms_crypto_key",
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": "google_kms_crypto_key_iam_member",
    "gcp:kms/keyRing:KeyRing": "google_kms_key_ring",
    "gcp:lustre/instance:Instance": "google_lustre_instance",
    "gcp:pubsub/subscription:Subscription": "google_pubsub_subscription",
    "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember": "google_pubsub_subscription_iam_member",
    "gcp:pubsub/topic:Topic": "google_pubsub_topic",
    "gcp:pubsub/topicIAMMember:TopicIAMMember": "google_pubsub_topic_iam_member",
    "gcp:secretmanager/secret:Secret": "google_secret_manager_secret",
    "gcp:secretmanager/secretIamMember:SecretIamMember": "google_secret_manager_secret_iam_member",
    "gcp:secretmanager/secretVersion:SecretVersion": "google_secret_manager_secret_version",
    "gcp:serviceaccount/account:Account": "google_service_account",
    "gcp:servicenetworking/connection:Connection": "google_service_networking_connection",
    "gcp:storage/bucket:Bucket": "google_storage_bucket",
    "gcp:storage/bucketIAMMember:BucketIAMMember": "google_storage_bucket_iam_member",
}

# The google provider's VM blocks (instances and templates): singular in Terraform, plural in Pulumi.
GOOGLE_VM_BLOCKS: dict[str, str] = {
    "network_interfaces": "network_interface",
    "access_configs": "access_config",
    "ipv6_access_configs": "ipv6_access_config",
    "alias_ip_ranges": "alias_ip_range",
    "disks": "disk",
    "attached_disks": "attached_disk",
    "scratch_disks": "scratch_disk",
    "guest_accelerators": "guest_accelerator",
}

# List blocks the bridge pluralised (Terraform `rule {}` blocks -> Pulumi `rules: [...]`), per
# Terraform type, keyed by the snake_case of the Pulumi name. `*` applies to every type.
FIELD_RENAMES: dict[str, dict[str, str]] = {
    "*": {},
    "aws_autoscaling_group": {
        "initial_lifecycle_hooks": "initial_lifecycle_hook",
        "tags": "tag",  # a list of {key, value, propagate_at_launch} blocks, unlike the `tags` map elsewhere
        "vpc_zone_identifiers": "vpc_zone_identifier",
        "traffic_sources": "traffic_source",
    },
    "aws_default_security_group": {"ingress": "ingress", "egress": "egress"},
    "aws_iam_role": {"inline_policies": "inline_policy"},
    "aws_instance": {
        "ebs_block_devices": "ebs_block_device",
        "ephemeral_block_devices": "ephemeral_block_device",
        "network_interfaces": "network_interface",
    },
    "aws_cloudwatch_metric_alarm": {"metric_queries": "metric_query"},
    "aws_lb": {"subnet_mappings": "subnet_mapping"},
    "aws_lb_listener": {"default_actions": "default_action"},
    "aws_route_table": {"routes": "route"},
    "aws_s3_bucket_lifecycle_configuration": {"rules": "rule", "transitions": "transition"},
    "aws_s3_bucket_server_side_encryption_configuration": {"rules": "rule"},
    "aws_secretsmanager_secret": {"replicas": "replica"},
    "aws_wafv2_web_acl": {
        "rules": "rule",
        "statements": "statement",
        "rule_action_overrides": "rule_action_override",
        "custom_keys": "custom_key",
        "custom_response_bodies": "custom_response_body",
        "rule_labels": "rule_label",
        "text_transformations": "text_transformation",
    },
    "aws_wafv2_web_acl_logging_configuration": {"filters": "filter", "conditions": "condition"},
    # google: the provider's repeated blocks are singular in Terraform (`network_interface {}`), plural in Pulumi.
    **{
        tf_type: GOOGLE_VM_BLOCKS
        for tf_type in (
            "google_compute_instance_template",
            "google_compute_region_instance_template",
            "google_compute_instance",
        )
    },
    "google_compute_firewall": {"allows": "allow", "denies": "deny"},
    **{
        tf_type: {"versions": "version", "named_ports": "named_port"}
        for tf_type in ("google_compute_instance_group_manager", "google_compute_region_instance_group_manager")
    },
    "google_compute_region_autoscaler": {"metrics": "metric"},
    "google_compute_security_policy": {"rules": "rule"},
    "google_compute_backend_service": {"backends": "backend"},
    "google_compute_router_nat": {"subnetworks": "subnetwork"},
    "google_compute_url_map": {"host_rules": "host_rule", "path_matchers": "path_matcher", "path_rules": "path_rule"},
    "google_storage_bucket": {"lifecycle_rules": "lifecycle_rule"},
}

# Attributes of Terraform map type: kept as JSON objects, their keys untouched (a tag key is data).
MAP_ATTRIBUTES: dict[str, frozenset[str]] = {
    "*": frozenset({"tags", "tags_all"}),
    "aws_cloudwatch_metric_alarm": frozenset({"dimensions"}),
    "aws_autoscaling_group": frozenset(),  # its `tag` is a block list (see FIELD_RENAMES)
}


# The google provider's map attributes on every type that has them (labels, VM metadata, default labels).
GOOGLE_MAP_ATTRIBUTES = frozenset({"labels", "metadata", "default_labels", "resource_manager_tags"})


def snake_case(name: str) -> str:
    """`applyServerSideEncryptionByDefault` -> `apply_server_side_encryption_by_default`,
    `cidrIpv4` -> `cidr_ipv4`, `enableDnsHostnames` -> `enable_dns_hostnames`."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def terraform_name(logical_name: str) -> str:
    """A Terraform identifier (letters, digits, `_`, `-`; not starting with a digit or `-`)."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", logical_name)
    return cleaned if re.match(r"[A-Za-z_]", cleaned) else f"_{cleaned}"


@dataclass
class _Reference:
    address: str  # aws_s3_bucket.datasets
    attribute: str  # id, arn, bucket, ...

    def expression(self) -> list[str]:
        return [f"{self.address}.{self.attribute}", self.address]


@dataclass
class _Converted:
    values: Any
    unknown: Any  # after_unknown shape
    sensitive: Any  # after_sensitive shape
    expression: Any  # configuration expression shape, None where a plain constant


@dataclass
class TerraformPlan:
    document: dict[str, Any]
    addresses: dict[str, str]  # Pulumi URN -> Terraform address
    unmapped: list[str] = field(default_factory=list)  # URNs of custom resources with no Terraform type


def _integral(value: Any) -> Any:
    # The wire format carries every number as a double: 443.0 is the port 443.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class _Converter:
    def __init__(self, resources: list[dict[str, Any]]):
        self.addresses: dict[str, str] = {}
        self.entries = {entry["urn"]: entry for entry in resources}
        taken: set[str] = set()
        for entry in resources:
            tf_type = TERRAFORM_TYPES.get(entry["type"])
            if not entry.get("custom") or tf_type is None:
                continue
            base = terraform_name(entry["urn"].rpartition("::")[2])
            name, suffix = base, 2
            while f"{tf_type}.{name}" in taken:  # same name under two parents: keep both, deterministically
                name, suffix = f"{base}_{suffix}", suffix + 1
            taken.add(f"{tf_type}.{name}")
            self.addresses[entry["urn"]] = f"{tf_type}.{name}"

    def _outputs_of(self, urn: str) -> dict[str, str]:
        """String value -> Terraform attribute name, for what another resource may have passed on."""
        entry = self.entries.get(urn, {})
        found: dict[str, str] = {}
        for key, value in (entry.get("outputs") or {}).items():
            if isinstance(value, str) and value and value != UNKNOWN:
                found.setdefault(value, snake_case(key))
        if entry.get("id"):
            found[entry["id"]] = "id"
        return found

    def _convert(self, tf_type: str, key: str | None, value: Any, referents: dict[str, _Reference]) -> _Converted:
        if is_secret(value) or (isinstance(value, dict) and SIG_KEY in value):
            return _Converted(None, False, True, None)
        if value is None:
            return _Converted(None, False, False, None)
        if value == UNKNOWN:
            # Unknown during preview (e.g. an instance profile's name): still a reference when the engine
            # recorded exactly one resource behind this input, as a real first plan shows it.
            known = referents.get(UNKNOWN)
            return _Converted(None, True, False, {"references": known.expression()} if known else None)
        if isinstance(value, str) and value in referents:
            return _Converted(None, True, False, {"references": referents[value].expression()})
        if isinstance(value, dict):
            maps = MAP_ATTRIBUTES["*"] | MAP_ATTRIBUTES.get(tf_type, frozenset())
            if tf_type.startswith("google_"):
                maps |= GOOGLE_MAP_ATTRIBUTES
            if key in maps:
                return _Converted({k: _integral(v) for k, v in value.items()}, False, False, None)
            block = self._block(tf_type, value, referents)
            return _Converted([block.values], [block.unknown], [block.sensitive], [block.expression])
        if isinstance(value, list) and any(isinstance(item, dict) and not is_secret(item) for item in value):
            # A list of objects is already Terraform's block list: each object is one block.
            blocks = [self._block(tf_type, item, referents) for item in value if isinstance(item, dict)]
            return _Converted(
                [b.values for b in blocks],
                [b.unknown for b in blocks],
                [b.sensitive for b in blocks],
                [b.expression for b in blocks],
            )
        if isinstance(value, list):
            items = [self._convert(tf_type, None, item, referents) for item in value]
            references = [ref for item in items if item.expression for ref in item.expression["references"]]
            return _Converted(
                [item.values for item in items],
                [item.unknown for item in items],
                [item.sensitive for item in items],
                {"references": references} if references else None,
            )
        return _Converted(_integral(value), False, False, None)

    def _block(
        self,
        tf_type: str,
        inputs: dict[str, Any],
        referents: dict[str, _Reference],
        by_property: dict[str, dict[str, _Reference]] | None = None,
    ) -> _Converted:
        """`by_property` (top level only): each input may reference only what the engine recorded
        for that input (propertyDependencies), so a description that happens to equal another
        resource's description stays a description."""
        renames = {**FIELD_RENAMES["*"], **FIELD_RENAMES.get(tf_type, {})}
        values: dict[str, Any] = {}
        unknown: dict[str, Any] = {}
        sensitive: dict[str, Any] = {}
        expressions: dict[str, Any] = {}
        for pulumi_key, value in inputs.items():
            key = snake_case(pulumi_key)
            key = renames.get(key, key)
            if tf_type == "aws_autoscaling_group" and key == "tag" and not isinstance(value, list):
                key = "tags"  # (the map form, should a program ever pass one)
            scope = by_property.get(pulumi_key, {}) if by_property is not None else referents
            converted = self._convert(tf_type, key, value, scope)
            if converted.values is not None:
                values[key] = converted.values
            if _any_true(converted.unknown):
                unknown[key] = converted.unknown
            if _any_true(converted.sensitive):
                sensitive[key] = converted.sensitive
            if converted.expression is not None:
                expressions[key] = converted.expression
            elif converted.values is not None:
                expressions[key] = {"constant_value": converted.values}
        return _Converted(values, unknown, sensitive, expressions)

    def resource(self, entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        address = self.addresses[entry["urn"]]
        tf_type, _, name = address.partition(".")
        by_property: dict[str, dict[str, _Reference]] = {}
        for prop, urns in (entry.get("propertyDependencies") or {}).items():
            referents = by_property.setdefault(prop, {})
            mapped = [urn for urn in urns if urn in self.addresses]
            for urn in mapped:
                for value, attribute in self._outputs_of(urn).items():
                    referents.setdefault(value, _Reference(self.addresses[urn], attribute))
            if len(mapped) == 1:
                referents[UNKNOWN] = _Reference(self.addresses[mapped[0]], "id")
        block = self._block(tf_type, entry.get("inputs") or {}, {}, by_property)
        provider = entry["type"].split(":", 1)[0]
        common = {"address": address, "mode": "managed", "type": tf_type, "name": name}
        provider_name = PROVIDER_ADDRESSES.get(provider, provider)
        planned = {
            **common,
            "provider_name": provider_name,
            "schema_version": 0,
            "values": block.values,
            "sensitive_values": _only_true(block.sensitive),
        }
        change = {
            **common,
            "provider_name": provider_name,
            "change": {
                "actions": ["create"],
                "before": None,
                "after": block.values,
                "after_unknown": block.unknown,
                "before_sensitive": False,
                "after_sensitive": _only_true(block.sensitive),
            },
        }
        configuration = {
            **common,
            "provider_config_key": provider,
            "expressions": block.expression,
            "schema_version": 0,
        }
        return planned, change, configuration


def _only_true(shape: Any) -> Any:
    return shape if shape else {}


def _any_true(shape: Any) -> bool:
    if isinstance(shape, dict):
        return any(_any_true(item) for item in shape.values())
    if isinstance(shape, list):
        return any(_any_true(item) for item in shape)
    return shape is True


def _provider_config(resources: list[dict[str, Any]]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for entry in resources:
        if not entry["type"].startswith(PROVIDER_PREFIX):
            continue
        provider = entry["type"][len(PROVIDER_PREFIX) :]
        if provider in config or provider not in PROVIDER_ADDRESSES:
            continue
        region = (entry.get("inputs") or {}).get("region")
        expressions = {"region": {"constant_value": region}} if isinstance(region, str) else {}
        config[provider] = {"name": provider, "full_name": PROVIDER_ADDRESSES[provider], "expressions": expressions}
    return config


def terraform_plan(document: dict[str, Any]) -> TerraformPlan:
    """The Terraform plan JSON of a v3 export (`deployment_v3`, `accelstack preview --json`)."""
    resources = document.get("deployment", {}).get("resources", [])
    converter = _Converter(resources)
    planned, changes, configured = [], [], []
    unmapped = []
    for entry in resources:
        if not entry.get("custom") or entry["type"].startswith(PROVIDER_PREFIX) or entry["type"] == STACK_TYPE:
            continue
        if entry["type"].startswith(DYNAMIC_PREFIX):
            continue  # the program's own code behind Pulumi's dynamic provider: nothing Terraform would plan
        if entry["urn"] not in converter.addresses:
            unmapped.append(entry["urn"])
            continue
        values, change, configuration = converter.resource(entry)
        planned.append(values)
        changes.append(change)
        configured.append(configuration)
    plan = {
        "format_version": FORMAT_VERSION,
        # Required by readers (Checkov recognises a plan by it). Semver-valid, and never mistaken for
        # a Terraform release: no Terraform produced this plan.
        "terraform_version": f"0.0.0-accelstack.{_package_version('accelstack') or 'dev'}",
        "planned_values": {"root_module": {"resources": planned}},
        "resource_changes": changes,
        "configuration": {"provider_config": _provider_config(resources), "root_module": {"resources": configured}},
    }
    return TerraformPlan(document=plan, addresses=converter.addresses, unmapped=unmapped)
