"""Which inputs make pulumi-aws replace a resource rather than update it (pure data; read by
`accelstack.engine.replacement` through the registry, `Cloud.replace_rules`).

Where the lists come from. pulumi-aws 7.x bridges terraform-provider-aws 6.x, and the bridge asks the
Terraform schema at diff time (`ForceNew: true` on an SDKv2 attribute, a `RequiresReplace()` plan modifier
on a plugin-framework one). The installed Python SDK carries neither the schema nor the flag (its docstrings
only sometimes say "forces new resource"), so the lists are a table, one entry per resource type the shipped
stacks register, each naming the Terraform source file (internal/service/<svc>/<resource>.go). `region` (new
in provider 6 / pulumi-aws 7) replaces every AWS resource. Deliberately left out, because they update in
place: Lustre perUnitStorageThroughput (in place since hashicorp/terraform-provider-aws#34932) and
storageCapacity growth (a shrink replaces: SHRINK_REPLACES), logConfiguration, dataCompressionType, backups;
DRA s3 policies; KMS policy/rotation/description; EBS size/type/iops/throughput; SQS
retention/visibility/redrive/KMS; instance type and user data of an instance (stop/start, unless
userDataReplaceOnChange); an auto scaling group's sizes and launch template; a launch template's contents (a
new version).
"""

from __future__ import annotations

from accelstack.clouds import random_provider
from accelstack.clouds.base import ReplaceRules

# Inputs whose change makes the provider REPLACE the resource (Pulumi property names).
REPLACE_FORCING: dict[str, tuple[str, ...]] = {
    # internal/service/autoscaling/group.go (initial_lifecycle_hook: every field ForceNew), policy.go
    "aws:autoscaling/group:Group": ("name", "namePrefix", "initialLifecycleHooks", "region"),
    "aws:autoscaling/policy:Policy": ("autoscalingGroupName", "name", "region"),
    # internal/service/logs/group.go, resource_policy.go (policy_document updates in place)
    "aws:cloudwatch/logGroup:LogGroup": ("name", "namePrefix", "logGroupClass", "region"),
    "aws:cloudwatch/logResourcePolicy:LogResourcePolicy": ("policyName", "region"),
    # internal/service/ec2/vpc_default_security_group.go (adopts the VPC's default group)
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": ("vpcId", "region"),
    # internal/service/ec2/vpc_flow_log.go: every argument but tags is ForceNew
    "aws:ec2/flowLog:FlowLog": (
        "deliverCrossAccountRole",
        "destinationOptions",
        "eniId",
        "iamRoleArn",
        "logDestination",
        "logDestinationType",
        "logFormat",
        "maxAggregationInterval",
        "subnetId",
        "trafficType",
        "transitGatewayAttachmentId",
        "transitGatewayId",
        "vpcId",
        "region",
    ),
    # internal/service/s3/bucket_logging.go (target bucket and prefix update in place)
    "aws:s3/bucketLogging:BucketLogging": ("bucket", "expectedBucketOwner", "region"),
    # internal/service/wafv2/web_acl_logging_configuration.go
    "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration": (
        "resourceArn",
        "logDestinationConfigs",
        "region",
    ),
    # internal/service/cloudwatch/metric_alarm.go (alarm_name is Pulumi's `name`)
    "aws:cloudwatch/metricAlarm:MetricAlarm": ("name", "region"),
    # internal/service/ec2/ebs_volume.go, ebs_volume_attachment.go
    "aws:ebs/volume:Volume": ("availabilityZone", "encrypted", "kmsKeyId", "snapshotId", "outpostArn", "region"),
    "aws:ec2/volumeAttachment:VolumeAttachment": ("deviceName", "instanceId", "volumeId", "region"),
    # internal/service/ec2/ec2_eip.go
    "aws:ec2/eip:Eip": (
        "address",
        "customerOwnedIpv4Pool",
        "domain",
        "ipamPoolId",
        "networkBorderGroup",
        "publicIpv4Pool",
        "region",
    ),
    # internal/service/ec2/ec2_instance.go: the block device and network interface blocks hold ForceNew
    # sub-attributes (device names, encryption, snapshot), counted as the whole block here to stay safe.
    "aws:ec2/instance:Instance": (
        "ami",
        "associatePublicIpAddress",
        "availabilityZone",
        "cpuOptions",
        "ebsBlockDevices",
        "enclaveOptions",
        "ephemeralBlockDevices",
        "hibernation",
        "hostId",
        "instanceMarketOptions",
        "ipv6AddressCount",
        "ipv6Addresses",
        "keyName",
        "launchTemplate",
        "networkInterfaces",
        "placementGroup",
        "placementPartitionNumber",
        "privateIp",
        "securityGroups",
        "subnetId",
        "region",
    ),
    # internal/service/ec2/vpc_internet_gateway.go: vpcId attaches/detaches in place.
    "aws:ec2/internetGateway:InternetGateway": ("region",),
    # internal/service/ec2/ec2_launch_template.go: every other change is a new version.
    "aws:ec2/launchTemplate:LaunchTemplate": ("name", "namePrefix", "region"),
    # internal/service/ec2/vpc_nat_gateway.go
    "aws:ec2/natGateway:NatGateway": ("allocationId", "connectivityType", "privateIp", "subnetId", "region"),
    # internal/service/ec2/ec2_placement_group.go
    "aws:ec2/placementGroup:PlacementGroup": (
        "name",
        "namePrefix",
        "partitionCount",
        "spreadLevel",
        "strategy",
        "region",
    ),
    # internal/service/ec2/vpc_route_table.go, vpc_route_table_association.go (routeTableId: ReplaceRouteTableAssociation)
    "aws:ec2/routeTable:RouteTable": ("vpcId", "region"),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": ("subnetId", "gatewayId", "region"),
    # internal/service/ec2/vpc_security_group.go, vpc_.go, vpc_subnet.go, vpc_endpoint.go
    "aws:ec2/securityGroup:SecurityGroup": ("vpcId", "name", "namePrefix", "description", "region"),
    "aws:ec2/vpc:Vpc": ("cidrBlock", "instanceTenancy", "ipv4IpamPoolId", "region"),
    "aws:ec2/subnet:Subnet": (
        "vpcId",
        "cidrBlock",
        "availabilityZone",
        "availabilityZoneId",
        "ipv6Native",
        "outpostArn",
        "region",
    ),
    "aws:ec2/vpcEndpoint:VpcEndpoint": (
        "serviceName",
        "vpcEndpointType",
        "vpcId",
        "serviceRegion",
        "resourceConfigurationArn",
        "serviceNetworkArn",
        "region",
    ),
    # internal/service/vpc/security_group_ingress_rule.go (framework, RequiresReplace): the rule's
    # ports, protocol and CIDR change in place (ModifySecurityGroupRules).
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ("securityGroupId", "region"),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": ("securityGroupId", "region"),
    # internal/service/fsx/lustre_file_system.go; fileSystemTypeVersion only replaces on a downgrade (the
    # SDK docstring), counted as any change here to stay on the safe side.
    "aws:fsx/lustreFileSystem:LustreFileSystem": (
        "deploymentType",
        "subnetIds",
        "securityGroupIds",
        "kmsKeyId",
        "storageType",
        "driveCacheType",
        "fileSystemTypeVersion",
        "importPath",
        "exportPath",
        "importedFileChunkSize",
        "backupId",
        "copyTagsToBackups",
        "efaEnabled",
        "region",
    ),
    # internal/service/fsx/data_repository_association.go
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": (
        "fileSystemId",
        "fileSystemPath",
        "dataRepositoryPath",
        "batchImportMetaDataOnCreate",
        "region",
    ),
    # internal/service/iam/instance_profile.go, role.go, role_policy.go, role_policy_attachment.go
    "aws:iam/instanceProfile:InstanceProfile": ("name", "namePrefix", "path"),
    "aws:iam/role:Role": ("name", "namePrefix", "path"),
    "aws:iam/rolePolicy:RolePolicy": ("name", "namePrefix", "role"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ("role", "policyArn"),
    # internal/service/kms/alias.go (targetKeyId updates in place), key.go
    "aws:kms/alias:Alias": ("name", "namePrefix", "region"),
    "aws:kms/key:Key": ("customerMasterKeySpec", "keyUsage", "customKeyStoreId", "multiRegion", "xksKeyId", "region"),
    # internal/service/elbv2/load_balancer.go, listener.go, target_group.go
    "aws:lb/loadBalancer:LoadBalancer": (
        "name",
        "namePrefix",
        "internal",
        "loadBalancerType",
        "customerOwnedIpv4Pool",
        "region",
    ),
    "aws:lb/listener:Listener": ("loadBalancerArn", "region"),
    "aws:lb/targetGroup:TargetGroup": (
        "name",
        "namePrefix",
        "port",
        "protocol",
        "protocolVersion",
        "targetType",
        "vpcId",
        "ipAddressType",
        "region",
    ),
    # internal/service/s3/bucket.go and the bucket_*.go sub-resources (the bucket they configure)
    "aws:s3/bucket:Bucket": ("bucket", "bucketPrefix", "objectLockEnabled", "region"),
    "aws:s3/bucketVersioning:BucketVersioning": ("bucket", "expectedBucketOwner", "region"),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        "bucket",
        "expectedBucketOwner",
        "region",
    ),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": ("bucket", "expectedBucketOwner", "region"),
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": ("bucket", "region"),
    "aws:s3/bucketPolicy:BucketPolicy": ("bucket", "region"),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": ("bucket", "region"),
    # internal/service/secretsmanager/secret.go, secret_version.go
    "aws:secretsmanager/secret:Secret": ("name", "namePrefix", "region"),
    "aws:secretsmanager/secretVersion:SecretVersion": (
        "secretId",
        "secretString",
        "secretBinary",
        "secretStringWoVersion",
        "region",
    ),
    # internal/service/ssm/parameter.go: value, type, key and description update in place (PutParameter with
    # Overwrite, a new parameter version); a tier downgrade Advanced -> Standard replaces (CustomizeDiff), which
    # Intelligent-Tiering never asks for.
    "aws:ssm/parameter:Parameter": ("name", "dataType", "region"),
    # internal/service/sqs/queue.go, queue_redrive_allow_policy.go
    "aws:sqs/queue:Queue": ("name", "namePrefix", "fifoQueue", "region"),
    "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy": ("queueUrl", "region"),
    # internal/service/wafv2/web_acl.go, web_acl_association.go
    "aws:wafv2/webAcl:WebAcl": ("name", "namePrefix", "scope", "region"),
    "aws:wafv2/webAclAssociation:WebAclAssociation": ("resourceArn", "webAclArn", "region"),
    # A provider whose region changes is replaced, and with it every resource it manages
    # (pulumi-aws DiffConfig).
    "pulumi:providers:aws": ("region",),
    # Slurm accounting (components/aws/slurm_accounting.py). internal/service/rds/instance.go: the identifier, the
    # zone, the engine, the initial database and user, the character sets, the timezone and the encryption (a new
    # key or turning it on needs a snapshot restore) are ForceNew; size, class, version, backups, deletion
    # protection, the subnet group and the CA (ca_cert_identifier: ModifyDBInstance, at the next maintenance
    # window without apply_immediately) update in place. parameter_group.go, subnet_group.go: name, family and
    # description (its parameters, require_secure_transport among them, update in place).
    "aws:rds/instance:Instance": (
        "identifier",
        "identifierPrefix",
        "availabilityZone",
        "engine",
        "dbName",
        "username",
        "characterSetName",
        "ncharCharacterSetName",
        "timezone",
        "storageEncrypted",
        "kmsKeyId",
        "customIamInstanceProfile",
        "snapshotIdentifier",
        "restoreToPointInTime",
        "s3Import",
        "region",
    ),
    "aws:rds/subnetGroup:SubnetGroup": ("name", "namePrefix", "region"),
    "aws:rds/parameterGroup:ParameterGroup": ("name", "namePrefix", "family", "description", "region"),
}
# A smaller value replaces, a larger one grows in place (lustre_file_system.go CustomizeDiff).
SHRINK_REPLACES: dict[str, tuple[str, ...]] = {"aws:fsx/lustreFileSystem:LustreFileSystem": ("storageCapacity",)}
# Replace-forcing only when another input says so: an instance's user data with userDataReplaceOnChange
# (ec2_instance.go CustomizeDiff; otherwise the instance is stopped and started with the new user data).
REPLACE_FORCING_WHEN: dict[str, tuple[str, tuple[str, ...]]] = {
    "aws:ec2/instance:Instance": ("userDataReplaceOnChange", ("userData", "userDataBase64")),
}
# The property the provider would fill with an auto-name (pulumi-aws resources.go: `name`, a bucket's `bucket`).
AUTO_NAME: dict[str, str] = {"aws:s3/bucket:Bucket": "bucket"}
# Properties that only label a resource: the tags map, a launch template's per-resource tags and the provider's
# default tags.
TAG_PROPERTIES = frozenset({"tags", "tagSpecifications", "defaultTags"})

REPLACE_RULES = ReplaceRules(
    forcing={**REPLACE_FORCING, **random_provider.REPLACE_FORCING},
    shrink=SHRINK_REPLACES,
    forcing_when=REPLACE_FORCING_WHEN,
    auto_name=AUTO_NAME,
    tag_properties=TAG_PROPERTIES,
)
