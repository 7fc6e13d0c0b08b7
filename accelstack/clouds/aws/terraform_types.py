"""pulumi-aws as a Terraform plan names it (pure data; read by `accelstack.engine.terraform_plan` through the
registry, `Cloud.terraform`). The pulumi-aws bridge's own token -> resource renames come from
provider/cmd/pulumi-resource-aws/bridge-metadata.json; the installed pulumi_aws Python package ships no such
metadata, so the table is kept here and a test checks every token the shipped stacks register maps.
"""

from __future__ import annotations

from accelstack.clouds import random_provider
from accelstack.clouds.base import TerraformProvider

# Pulumi type token -> Terraform resource type, as pulumi-aws 7.x maps them (bridge-metadata.json
# "renames.resources"). Every token the components register is here.
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
    "aws:ssm/parameter:Parameter": "aws_ssm_parameter",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "aws_vpc_security_group_egress_rule",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "aws_vpc_security_group_ingress_rule",
    "aws:wafv2/webAcl:WebAcl": "aws_wafv2_web_acl",
    "aws:wafv2/webAclAssociation:WebAclAssociation": "aws_wafv2_web_acl_association",
    "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration": "aws_wafv2_web_acl_logging_configuration",
    # A landing stack's (components/aws/landing.py): organization level and the member accounts' quotas and budgets.
    "aws:budgets/budget:Budget": "aws_budgets_budget",
    "aws:organizations/account:Account": "aws_organizations_account",
    "aws:organizations/organizationalUnit:OrganizationalUnit": "aws_organizations_organizational_unit",
    "aws:organizations/policy:Policy": "aws_organizations_policy",
    "aws:organizations/policyAttachment:PolicyAttachment": "aws_organizations_policy_attachment",
    "aws:servicequotas/serviceQuota:ServiceQuota": "aws_servicequotas_service_quota",
}

# List blocks the bridge pluralised (Terraform `rule {}` blocks -> Pulumi `rules: [...]`), per
# Terraform type, keyed by the snake_case of the Pulumi name.
BLOCK_RENAMES: dict[str, dict[str, str]] = {
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
}

# Attributes of Terraform map type besides tags and tags_all: kept as JSON objects, their keys untouched.
MAP_ATTRIBUTES: dict[str, frozenset[str]] = {"aws_cloudwatch_metric_alarm": frozenset({"dimensions"})}

# An auto scaling group's `tag` blocks, should a program pass them as a map, are the `tags` map attribute.
MAP_FORMS: dict[str, dict[str, str]] = {"aws_autoscaling_group": {"tag": "tags"}}

TERRAFORM = (
    TerraformProvider(
        package="aws",
        address="registry.terraform.io/hashicorp/aws",
        types=TERRAFORM_TYPES,
        block_renames=BLOCK_RENAMES,
        map_attributes=MAP_ATTRIBUTES,
        map_forms=MAP_FORMS,
    ),
    random_provider.TERRAFORM,
)
