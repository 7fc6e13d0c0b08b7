"""What a config edit does to an existing stack: which resources `pulumi up` would update, replace (and
in which order) or delete, from the provider's replace-forcing properties.

Two captures of the same program: the stack as deployed, then the edited config under a mock cloud
that answers as the engine does for a stack that already exists (`ExistingStackCloud`): a property in
`ignoreChanges` keeps its deployed value, and a resource whose replace-forcing input changed gets a new
id, so a replacement upstream (a VPC, a subnet) reaches what references it downstream (Lustre's subnet).
`plan_changes` then compares the two registrations of each URN.

Where the replace-forcing lists come from. pulumi-aws 7.x bridges terraform-provider-aws 6.x, and the
bridge asks the Terraform schema at diff time (`ForceNew: true` on an SDKv2 attribute, a
`RequiresReplace()` plan modifier on a plugin-framework one). The installed Python SDK carries neither
the schema nor the flag (its docstrings only sometimes say "forces new resource"), so the lists are a
table, one entry per resource type the shipped stacks register, each naming the Terraform source file
(internal/service/<svc>/<resource>.go). `region` (new in provider 6 / pulumi-aws 7) replaces every AWS
resource. Deliberately left out, because they update in place: Lustre perUnitStorageThroughput (in
place since hashicorp/terraform-provider-aws#34932) and storageCapacity growth (a shrink replaces:
SHRINK_REPLACES), logConfiguration, dataCompressionType, backups; DRA s3 policies; KMS
policy/rotation/description; EBS size/type/iops/throughput; SQS retention/visibility/redrive/KMS;
instance type and user data of an instance (stop/start, unless userDataReplaceOnChange); an auto
scaling group's sizes and launch template; a launch template's contents (a new version).

Replacement order (pulumi-terraform-bridge pkg/tfbridge `Diff` and `nameRequiresDeleteBeforeReplace`):
create-first, unless the program sets `deleteBeforeReplace`, or it sets the resource's auto-name property
(`name`, a bucket's `bucket`) itself: the replacement would need the name the old one still holds, so
the old one is deleted first. A protected resource is never replaced nor deleted: `pulumi up` stops
with "resource is protected" (https://www.pulumi.com/docs/iac/concepts/options/protect/).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi

from accelstack.engine.capture import Capture, Registration, capture
from accelstack.engine.export import redact
from accelstack.testing import mocks_for_config

Props = dict[str, Any]  # a resource's inputs or outputs, as the engine passes them

PROVIDER_PREFIX = "pulumi:providers:"

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
    # internal/service/sqs/queue.go, queue_redrive_allow_policy.go
    "aws:sqs/queue:Queue": ("name", "namePrefix", "fifoQueue", "region"),
    "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy": ("queueUrl", "region"),
    # internal/service/wafv2/web_acl.go, web_acl_association.go
    "aws:wafv2/webAcl:WebAcl": ("name", "namePrefix", "scope", "region"),
    "aws:wafv2/webAclAssociation:WebAclAssociation": ("resourceArn", "webAclArn", "region"),
    # terraform-provider-random random_bytes: every argument (length, keepers) replaces.
    "random:index/randomBytes:RandomBytes": ("length", "keepers"),
    # A provider whose region changes is replaced, and with it every resource it manages
    # (pulumi-aws DiffConfig).
    "pulumi:providers:aws": ("region",),
    # --- Azure, training (azure-native 3.x) ---------------------------------------------------------
    # azure-native replaces a resource when an input Resource Manager cannot update changes: its name and
    # resource group (path parameters of the PUT), `location`, and the properties the REST specs mark
    # create-only (x-ms-mutability without "update"; azure-rest-api-specs specification/<rp>/resource-manager)
    # or the service documents as fixed at creation, cited per row. Updated in place, deliberately left out:
    # tags, NSG rules, subnet prefixes, a scale set's sku (size, capacity) and VM profile (Manual upgrade: new
    # VMs only), a VM's size, storage account network/TLS/shared-key settings, blob service properties,
    # lifecycle rules, key vault properties, AMLFS maintenance window and root squash.
    "azure-native:resources:ResourceGroup": ("resourceGroupName", "location"),
    "azure-native:network:VirtualNetwork": ("resourceGroupName", "virtualNetworkName", "location"),
    "azure-native:network:Subnet": ("resourceGroupName", "virtualNetworkName", "subnetName"),
    "azure-native:network:NetworkSecurityGroup": ("resourceGroupName", "networkSecurityGroupName", "location"),
    # Public IP: sku, zones and IP version are create-only (network publicIpAddress.json).
    "azure-native:network:PublicIPAddress": (
        "resourceGroupName",
        "publicIpAddressName",
        "location",
        "sku",
        "zones",
        "publicIPAddressVersion",
    ),
    "azure-native:network:NatGateway": ("resourceGroupName", "natGatewayName", "location", "zones"),
    "azure-native:network:NetworkInterface": ("resourceGroupName", "networkInterfaceName", "location"),
    "azure-native:keyvault:Vault": ("resourceGroupName", "vaultName", "location"),
    "azure-native:keyvault:Key": ("resourceGroupName", "vaultName", "keyName"),
    "azure-native:keyvault:Secret": ("resourceGroupName", "vaultName", "secretName"),
    "azure-native:managedidentity:UserAssignedIdentity": ("resourceGroupName", "resourceName", "location"),
    # Role assignments cannot be updated (authorization roleAssignments PUT: "RoleAssignmentUpdateNotPermitted").
    "azure-native:authorization:RoleAssignment": (
        "scope",
        "roleAssignmentName",
        "principalId",
        "roleDefinitionId",
        "principalType",
        "condition",
        "conditionVersion",
    ),
    "azure-native:authorization:RoleDefinition": ("scope", "roleDefinitionId"),
    # Storage: hierarchical namespace and NFS v3 are chosen at creation (storage-account-overview; the REST
    # spec's isHnsEnabled / isNfsV3Enabled are create-only).
    "azure-native:storage:StorageAccount": (
        "resourceGroupName",
        "accountName",
        "location",
        "isHnsEnabled",
        "enableNfsV3",
        "extendedLocation",
    ),
    "azure-native:storage:BlobContainer": ("resourceGroupName", "accountName", "containerName"),
    "azure-native:storage:BlobServiceProperties": ("resourceGroupName", "accountName", "blobServicesName"),
    "azure-native:storage:ManagementPolicy": ("resourceGroupName", "accountName", "managementPolicyName"),
    # Managed Lustre: SKU, capacity, subnet, zone, Blob integration and encryption are fixed at creation
    # (learn.microsoft.com/azure/azure-managed-lustre: only the maintenance window and root squash update).
    "azure-native:storagecache:AmlFilesystem": (
        "resourceGroupName",
        "amlFilesystemName",
        "location",
        "sku",
        "storageCapacityTiB",
        "filesystemSubnet",
        "zones",
        "hsm",
        "encryptionSettings",
    ),
    # Scale set: zones, orchestration mode and fault domain count are create-only (compute
    # virtualMachineScaleSet.json); a Spot/Regular priority change too, but it sits inside virtualMachineProfile.
    "azure-native:compute:VirtualMachineScaleSet": (
        "resourceGroupName",
        "vmScaleSetName",
        "location",
        "zones",
        "orchestrationMode",
        "platformFaultDomainCount",
    ),
    # VM: zones and osProfile (computer name, admin user, custom data) are create-only (virtualMachine.json).
    "azure-native:compute:VirtualMachine": ("resourceGroupName", "vmName", "location", "zones", "osProfile"),
    # Managed disk: zone and source are create-only; size grows in place (disk.json).
    "azure-native:compute:Disk": ("resourceGroupName", "diskName", "location", "zones", "creationData"),
    # terraform-provider-random random_password: every argument replaces.
    "random:index/randomPassword:RandomPassword": (
        "length",
        "special",
        "upper",
        "lower",
        "numeric",
        "minUpper",
        "minLower",
        "minNumeric",
        "minSpecial",
        "overrideSpecial",
        "keepers",
    ),
    # Azure Machine Learning (the managed scheduler, components/azure/machine_learning.py). A workspace's storage
    # account, key vault and HBI flag are fixed at creation (learn.microsoft.com/azure/machine-learning/
    # how-to-manage-workspace: "you can't change the storage account ... after creation"). AmlCompute updates
    # only its scale settings (min/max nodes, idle time) in place: size, priority, subnet and public-IP choice
    # replace it (the component says replace_on_changes, delete first). Environment and component versions are
    # immutable assets: any content change is a new version (created first; the old one retained). A private endpoint's subnet and target, a DNS zone's name and a zone link's network
    # are create-only (network privateEndpoint.json; privatedns).
    "azure-native:machinelearningservices:Workspace": (
        "resourceGroupName",
        "workspaceName",
        "location",
        "storageAccount",
        "keyVault",
        "hbiWorkspace",
        "encryption",
    ),
    "azure-native:machinelearningservices:Compute": (
        "resourceGroupName",
        "workspaceName",
        "computeName",
        "location",
        "properties.computeType",
        "properties.properties.vmSize",
        "properties.properties.vmPriority",
        "properties.properties.subnet",
        "properties.properties.enableNodePublicIp",
        "properties.properties.osType",
    ),
    "azure-native:machinelearningservices:Datastore": ("resourceGroupName", "workspaceName", "name"),
    "azure-native:machinelearningservices:EnvironmentVersion": (
        "resourceGroupName",
        "workspaceName",
        "name",
        "version",
        "properties",
    ),
    "azure-native:machinelearningservices:ComponentVersion": (
        "resourceGroupName",
        "workspaceName",
        "name",
        "version",
        "properties",
    ),
    "azure-native:network:PrivateEndpoint": (
        "resourceGroupName",
        "privateEndpointName",
        "location",
        "subnet",
        "privateLinkServiceConnections",
    ),
    "azure-native:network:PrivateDnsZoneGroup": ("resourceGroupName", "privateEndpointName", "privateDnsZoneGroupName"),
    "azure-native:privatedns:PrivateZone": ("resourceGroupName", "privateZoneName", "location"),
    "azure-native:privatedns:VirtualNetworkLink": (
        "resourceGroupName",
        "privateZoneName",
        "virtualNetworkLinkName",
        "location",
        "virtualNetwork",
    ),
    # The stack's provider is pinned to a subscription and tenant: another one is another cloud account.
    "pulumi:providers:azure-native": ("subscriptionId", "tenantId"),
    # --- Azure, serving (components/azure/serving; azure-native 3.x, same rule as the training block) -----
    # Service Bus: namespace name and location; a queue's sessions, partitioning and duplicate detection are
    # fixed at creation (learn.microsoft.com/azure/service-bus-messaging: "message-sessions", "service-bus-
    # partitioning", "duplicate-detection": none can be changed on an existing queue). TTL, lock duration,
    # max delivery count and dead-lettering update in place. The SKU moves Standard -> Premium by migration.
    "azure-native:servicebus:Namespace": ("resourceGroupName", "namespaceName", "location"),
    "azure-native:servicebus:Queue": (
        "resourceGroupName",
        "namespaceName",
        "queueName",
        "requiresSession",
        "enablePartitioning",
        "requiresDuplicateDetection",
    ),
    # Application Gateway: zones are create-only (network applicationGateway.json); listeners, pools, probes,
    # certificates, SSL policy, autoscale bounds and the WAF policy link update in place.
    "azure-native:network:ApplicationGateway": ("resourceGroupName", "applicationGatewayName", "location", "zones"),
    "azure-native:network:WebApplicationFirewallPolicy": ("resourceGroupName", "policyName", "location"),
    "azure-native:monitor:AutoscaleSetting": ("resourceGroupName", "autoscaleSettingName", "location"),
    "azure-native:monitor:MetricAlert": ("resourceGroupName", "ruleName", "location"),
    # A diagnostic setting is a child of the resource it reads (its id is <resourceUri>/providers/...).
    "azure-native:monitor:DiagnosticSetting": ("resourceUri", "name"),
    "azure-native:standbypool:StandbyVirtualMachinePool": (
        "resourceGroupName",
        "standbyVirtualMachinePoolName",
        "location",
    ),
    # --- gcp serving (components/gcp/serving): inputs the google provider marks ForceNew / immutable
    # (magic-modules mmv1/products/<product>/<Resource>.yaml `immutable: true`, and the hand-written
    # resource_compute_instance_template.go / resource_compute_region_instance_group_manager.go).
    # A network profile is set at creation only (the SDK docstring); the MTU is counted as replacing too, to
    # stay on the safe side (changing it needs every VM of the network stopped: cloud.google.com/vpc/docs/mtu).
    "gcp:compute/network:Network": (
        "name",
        "autoCreateSubnetworks",
        "description",
        "project",
        "networkProfile",
        "mtu",
    ),
    "gcp:compute/subnetwork:Subnetwork": ("name", "network", "region", "project"),
    "gcp:compute/router:Router": ("name", "network", "region", "project"),
    "gcp:compute/routerNat:RouterNat": ("name", "router", "region", "project"),
    "gcp:compute/firewall:Firewall": ("name", "network", "direction", "project"),
    "gcp:compute/globalAddress:GlobalAddress": (
        "name",
        "address",
        "addressType",
        "ipVersion",
        "purpose",
        "network",
        "prefixLength",
        "description",
        "project",
    ),
    "gcp:compute/healthCheck:HealthCheck": ("name", "project"),
    "gcp:compute/backendService:BackendService": ("name", "loadBalancingScheme", "project"),
    "gcp:compute/uRLMap:URLMap": ("name", "project"),
    "gcp:compute/sSLPolicy:SSLPolicy": ("name", "description", "project"),
    "gcp:compute/targetHttpsProxy:TargetHttpsProxy": ("name", "description", "project"),
    "gcp:compute/globalForwardingRule:GlobalForwardingRule": (
        "name",
        "ipAddress",
        "ipProtocol",
        "portRange",
        "loadBalancingScheme",
        "ipVersion",
        "description",
        "project",
    ),
    "gcp:compute/securityPolicy:SecurityPolicy": ("name", "project"),
    # Instance templates are immutable: every input replaces (the group rolls to the new template).
    "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate": (
        "name",
        "namePrefix",
        "region",
        "project",
        "machineType",
        "disks",
        "networkInterfaces",
        "metadata",
        "metadataStartupScript",
        "scheduling",
        "serviceAccount",
        "tags",
        "labels",
        "guestAccelerators",
        "shieldedInstanceConfig",
        "canIpForward",
        "minCpuPlatform",
        "description",
    ),
    "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager": (
        "name",
        "baseInstanceName",
        "region",
        "project",
        "distributionPolicyZones",
    ),
    "gcp:compute/regionAutoscaler:RegionAutoscaler": ("name", "region", "project"),
    "gcp:pubsub/topic:Topic": ("name", "project"),
    "gcp:pubsub/subscription:Subscription": ("name", "topic", "project"),
    "gcp:pubsub/topicIAMMember:TopicIAMMember": ("topic", "role", "member", "condition", "project"),
    "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember": (
        "subscription",
        "role",
        "member",
        "condition",
        "project",
    ),
    "gcp:storage/bucketIAMMember:BucketIAMMember": ("bucket", "role", "member", "condition"),
    "gcp:serviceaccount/account:Account": ("accountId", "project"),
    "gcp:kms/keyRing:KeyRing": ("name", "location", "project"),
    "gcp:kms/cryptoKey:CryptoKey": ("name", "keyRing", "purpose", "importOnly", "skipInitialVersionCreation"),
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": ("cryptoKeyId", "role", "member", "condition"),
    # --- gcp training (components/gcp/training, network, storage, scheduler); same sources as above ---
    # Persistent disk: type, zone, image/snapshot source and encryption key are immutable; size grows in
    # place (mmv1 compute/Disk.yaml; a smaller size is refused, not replaced).
    "gcp:compute/disk:Disk": (
        "name",
        "zone",
        "project",
        "type",
        "image",
        "snapshot",
        "sourceDisk",
        "diskEncryptionKey",
        "physicalBlockSizeBytes",
        "description",
    ),
    "gcp:compute/address:Address": (
        "name",
        "address",
        "addressType",
        "subnetwork",
        "network",
        "purpose",
        "networkTier",
        "prefixLength",
        "ipVersion",
        "region",
        "description",
        "project",
    ),
    # The Slurm head (resource_compute_instance.go): zone, boot disk and NIC subnetwork/address are ForceNew;
    # its machine type updates with allowStoppingForUpdate. Metadata would update in place, but the head's
    # component replaces it on a metadata change (replace_on_changes: cloud-init reads user-data once, at
    # first boot), so it is tabled here as replacing.
    "gcp:compute/instance:Instance": (
        "name",
        "zone",
        "project",
        "bootDisk",
        "scratchDisks",
        "networkInterfaces",
        "metadata",
    ),
    # Global instance templates are immutable like the regional ones.
    "gcp:compute/instanceTemplate:InstanceTemplate": (
        "name",
        "namePrefix",
        "project",
        "machineType",
        "disks",
        "networkInterfaces",
        "metadata",
        "metadataStartupScript",
        "scheduling",
        "serviceAccount",
        "reservationAffinity",
        "resourcePolicies",
        "tags",
        "labels",
        "guestAccelerators",
        "shieldedInstanceConfig",
        "canIpForward",
        "minCpuPlatform",
        "description",
    ),
    "gcp:compute/instanceGroupManager:InstanceGroupManager": ("name", "baseInstanceName", "zone", "project"),
    # A MIG resize request cannot be updated: every field is immutable (mmv1 compute/ResizeRequest.yaml).
    "gcp:compute/resizeRequest:ResizeRequest": (
        "name",
        "zone",
        "project",
        "instanceGroupManager",
        "resizeBy",
        "requestedRunDuration",
        "description",
    ),
    # Cluster Director: the id, the region and the login nodes' zone are immutable; the rest updates through
    # PATCH with an update mask (magic-modules mmv1/products/hypercomputecluster/Cluster.yaml).
    "gcp:hypercomputecluster/cluster:Cluster": (
        "clusterId",
        "location",
        "project",
        "orchestrator.slurm.loginNodes.zone",
    ),
    # Resource policies cannot be updated (mmv1 compute/ResourcePolicy.yaml: every field immutable).
    "gcp:compute/resourcePolicy:ResourcePolicy": (
        "name",
        "region",
        "project",
        "description",
        "groupPlacementPolicy",
        "workloadPolicy",
        "snapshotSchedulePolicy",
        "instanceSchedulePolicy",
    ),
    # Managed Lustre: id, zone, file system name, network, throughput tier, CMEK and GKE support are fixed at
    # creation; capacity grows in place (mmv1 lustre/Instance.yaml; managed-lustre/docs/increase-capacity).
    "gcp:lustre/instance:Instance": (
        "instanceId",
        "location",
        "project",
        "filesystem",
        "network",
        "perUnitStorageThroughput",
        "kmsKey",
        "gkeSupportEnabled",
        "placementPolicy",
    ),
    # Filestore: tier, protocol, share name, networks, key, location and name are immutable; the share's
    # capacity updates in place (magic-modules mmv1/products/filestore/Instance.yaml).
    "gcp:filestore/instance:Instance": (
        "name",
        "location",
        "zone",
        "project",
        "tier",
        "protocol",
        "networks",
        "kmsKeyName",
        "tags",
        "fileShares.name",
    ),
    "gcp:servicenetworking/connection:Connection": ("network", "service"),
    # Buckets: name, location and project are immutable (resource_storage_bucket.go); the rest updates.
    "gcp:storage/bucket:Bucket": ("name", "location", "project"),
    "gcp:secretmanager/secret:Secret": ("secretId", "replication", "project"),
    "gcp:secretmanager/secretVersion:SecretVersion": ("secret", "secretData", "isSecretDataBase64"),
    "gcp:secretmanager/secretIamMember:SecretIamMember": ("secretId", "role", "member", "condition", "project"),
    # The Managed Lustre import (a dynamic resource): its provider's diff replaces, i.e. imports again, when
    # the source, the destination or the trigger changes (components/gcp/lustre_import.py REIMPORT_KEYS; the
    # only dynamic resource accelstack registers, so the shared type token names it).
    "pulumi-python:dynamic:Resource": ("project", "zone", "instance_id", "gcs_uri", "lustre_path", "trigger"),
    # The gcp provider's project or region changes every resource's home (pulumi-gcp DiffConfig).
    "pulumi:providers:gcp": ("project", "region"),
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
# Properties that only label a resource: an edit touching nothing else is reported as "tags only".
TAG_PROPERTIES = frozenset({"tags", "tagSpecifications", "defaultTags"})

CREATE, UPDATE, REPLACE, DELETE, SAME = "create", "update", "replace", "delete", "same"
CREATE_FIRST, DELETE_FIRST = "create-first", "delete-first"


def known_type(type_token: str) -> bool:
    return type_token in REPLACE_FORCING or type_token == "pulumi:providers:random"


def _at(props: dict[str, Any], path: str) -> Any:
    """The input at a dotted path (`properties.properties.vmSize`: a setting nested in an object whose other
    members update in place); None where the path ends early."""
    value: Any = props
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def replacing_changes(type_token: str, old: dict[str, Any], new: dict[str, Any], ignored: list[str]) -> list[str]:
    """The replace-forcing inputs that differ between two registrations of one resource."""
    changed = [
        prop for prop in REPLACE_FORCING.get(type_token, ()) if prop not in ignored and _at(old, prop) != _at(new, prop)
    ]
    switch, props = REPLACE_FORCING_WHEN.get(type_token, ("", ()))
    if new.get(switch) is True:
        changed += [prop for prop in props if prop not in ignored and old.get(prop) != new.get(prop)]
    for prop in SHRINK_REPLACES.get(type_token, ()):
        before, after = old.get(prop), new.get(prop)
        if prop not in ignored and before is not None and after is not None and after < before:
            changed.append(prop)
    return changed


def auto_name_property(type_token: str) -> str:
    return AUTO_NAME.get(type_token, "name")


class ExistingStackCloud(pulumi.runtime.Mocks):
    """A cloud's mocks (`cloud`) answering as the engine does for a stack that already exists (`previous` =
    what the first deployment registered, by type and name): ignored properties keep their old values, and
    a resource whose replace-forcing input changed is a new physical resource (a new id)."""

    def __init__(
        self,
        cloud: pulumi.runtime.Mocks,
        previous: dict[tuple[str, str], tuple[Props, Props, list[str]]] | None = None,
    ) -> None:
        self.cloud = cloud
        self.previous = previous or {}
        self.answered: dict[tuple[str, str], tuple[Props, Props]] = {}  # (inputs, outputs) by type and name

    @classmethod
    def for_config(
        cls, config: dict[str, str], previous: dict[tuple[str, str], tuple[Props, Props, list[str]]] | None = None
    ) -> ExistingStackCloud:
        return cls(mocks_for_config(config), previous)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[Props, list[tuple[str, str]] | None]:
        answer: tuple[Props, list[tuple[str, str]] | None] = self.cloud.call(args)
        return answer

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, Props]:
        resource_id, outputs = self.cloud.new_resource(args)
        key = (args.typ, args.name)
        if key in self.previous:
            old_inputs, old_outputs, ignored = self.previous[key]
            for prop in ignored:
                if prop in old_outputs:
                    outputs[prop] = old_outputs[prop]
            # Inputs against inputs: an auto-named property (a bucket's name) is absent from both.
            if replacing_changes(args.typ, old_inputs, dict(args.inputs), ignored):
                resource_id = f"{args.name}-replacement-id"
        self.answered[key] = (dict(args.inputs), outputs)
        return resource_id, outputs

    def previous_for_edit(self, deployed: Capture) -> dict[tuple[str, str], tuple[Props, Props, list[str]]]:
        """What this cloud answered for `deployed`, as the `previous` of the next capture."""
        ignored = {(r.type, r.name): r.ignore_changes for r in deployed.resources}
        return {key: (inputs, outputs, ignored.get(key, [])) for key, (inputs, outputs) in self.answered.items()}


def capture_edit(
    program: Path, config: dict[str, str], edited_config: dict[str, str], *, stack: str, project: str = "accelstack"
) -> tuple[Capture, Capture]:
    """(the stack as deployed from `config`, the same stack after `pulumi up` with `edited_config`)."""
    cloud = ExistingStackCloud.for_config(config)
    deployed = capture(program, config, project=project, stack=stack, mocks=cloud)
    edited_cloud = ExistingStackCloud.for_config(edited_config, cloud.previous_for_edit(deployed))
    edited = capture(program, edited_config, project=project, stack=stack, mocks=edited_cloud)
    return deployed, edited


@dataclass
class Change:
    """What `pulumi up` does to one resource."""

    urn: str
    type: str
    name: str
    action: str  # create | update | replace | delete | same
    changed: list[str] = field(default_factory=list)  # input properties that differ
    replacing: list[str] = field(default_factory=list)  # of those, the replace-forcing ones ("provider" too)
    order: str | None = None  # replace: create-first | delete-first
    protect: bool = False
    retain_on_delete: bool = False
    known: bool = True  # the replace-forcing properties of this type are tabled
    before: dict[str, Any] = field(default_factory=dict)  # changed properties: deployed value
    after: dict[str, Any] = field(default_factory=dict)  # changed properties: edited value

    @property
    def blocked(self) -> bool:
        """`pulumi up` refuses to replace or delete a protected resource (and stops)."""
        return self.protect and self.action in (REPLACE, DELETE)

    @property
    def tags_only(self) -> bool:
        return self.action == UPDATE and set(self.changed) <= TAG_PROPERTIES

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"urn": self.urn, "type": self.type, "name": self.name, "action": self.action}
        if self.changed:
            document["changed"] = self.changed
            document["before"] = self.before
            document["after"] = self.after
        if self.action == REPLACE:
            document["replacing"] = self.replacing
            document["order"] = self.order
        document["protect"] = self.protect
        if self.retain_on_delete:
            document["retainOnDelete"] = True
        document["blocked"] = self.blocked
        if not self.known:
            document["replaceForcingKnown"] = False
        return document


def _replace_order(new: Registration) -> str:
    explicit_name = auto_name_property(new.type) in new.inputs
    return DELETE_FIRST if new.delete_before_replace or explicit_name else CREATE_FIRST


def plan_changes(deployed: list[Registration], edited: list[Registration]) -> list[Change]:
    """One Change per URN of either capture (custom resources and providers; components hold no
    cloud state), sorted by URN."""
    before = {r.urn: r for r in deployed if r.custom}
    after = {r.urn: r for r in edited if r.custom}
    replaced_providers: set[str] = set()
    changes: dict[str, Change] = {}
    # Providers first: a replaced provider replaces every resource it manages.
    for urn in sorted(set(before) | set(after), key=lambda u: (not (after.get(u) or before[u]).is_provider, u)):
        old, new = before.get(urn), after.get(urn)
        if old is None:
            assert new is not None  # the URN is in one capture or the other
            changes[urn] = Change(urn, new.type, new.name, CREATE, protect=new.protect, known=known_type(new.type))
            continue
        if new is None:
            changes[urn] = Change(
                urn,
                old.type,
                old.name,
                DELETE,
                protect=old.protect,
                retain_on_delete=old.retain_on_delete,
                known=known_type(old.type),
            )
            continue
        changed = sorted(
            prop
            for prop in set(old.inputs) | set(new.inputs)
            if prop not in new.ignore_changes and old.inputs.get(prop) != new.inputs.get(prop)
        )
        replacing = replacing_changes(new.type, old.inputs, new.inputs, new.ignore_changes)
        old_provider, new_provider = old.provider.rpartition("::")[0], new.provider.rpartition("::")[0]
        if old_provider != new_provider or new_provider in replaced_providers:
            replacing.append("provider")
        action = REPLACE if replacing else UPDATE if changed else SAME
        if action == REPLACE and new.is_provider:
            replaced_providers.add(urn)
        changes[urn] = Change(
            urn,
            new.type,
            new.name,
            action,
            changed=changed,
            replacing=replacing,
            order=_replace_order(new) if action == REPLACE else None,
            # Protection as deployed is what the engine checks before replacing.
            protect=old.protect,
            retain_on_delete=old.retain_on_delete,
            known=known_type(new.type),
            # Secrets never leave in clear (the same redaction as the export).
            before={prop: redact(old.inputs.get(prop)) for prop in changed},
            after={prop: redact(new.inputs.get(prop)) for prop in changed},
        )
    return [changes[urn] for urn in sorted(changes)]


def _plain(value: Any) -> Any:
    """Wire numbers are floats: 4.0 reads as 4."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def short(value: Any, limit: int = 60) -> str | None:
    """A value for one line of output (JSON), or None when it does not fit in `limit` characters."""
    text = json.dumps(_plain(value), sort_keys=True)
    return text if len(text) <= limit else None


def change_text(prop: str, before: Any, after: Any, limit: int = 40) -> str:
    """`prop 4 -> 8`, or `prop` alone when a value is too long to show on one line."""
    old, new = short(before, limit), short(after, limit)
    return f"{prop} {old} -> {new}" if old is not None and new is not None else prop
