"""Which resource kinds the packs know, by concept: rules name a concept ("bucket", "load-balancer"),
never one type token, so an alias token of the same resource (`aws:alb/...` for `aws:lb/...`,
`aws:s3/bucketV2:BucketV2` for `aws:s3/bucket:Bucket`) cannot slip past a rule.

The packs fail closed: a cloud resource whose type token is in no row is a violation
(`known-resource-kinds`), not a pass. AWS rows hold the current token and every alias the installed
pulumi-aws SDK declares for it (`pulumi.Alias(type_=...)` in the SDK's resource classes; the test
suite checks each token against the installed SDK). AZURE (pulumi-azure-native) and GCP (pulumi-gcp)
rows follow the same rule; azure-native's API-version modules (`azure-native:network/v20240501:Subnet`)
are the same API object as the default module's token and map to its concept (`canonical`).
`concept_of`, `is_a` and `of` read every table; `tokens(..., cloud=)` names one cloud's tokens, for
rules that read that cloud's properties.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# concept -> AWS type tokens (current token first, then SDK aliases / V2 twins of the same API object).
AWS: dict[str, tuple[str, ...]] = {
    # --- storage (stateful: a replace or destroy loses data) ---
    "bucket": ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", "aws:s3/directoryBucket:DirectoryBucket"),
    "bucket-encryption": (
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
    ),
    "bucket-public-access-block": ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",),
    "bucket-versioning": ("aws:s3/bucketVersioning:BucketVersioning", "aws:s3/bucketVersioningV2:BucketVersioningV2"),
    "bucket-acl": ("aws:s3/bucketAcl:BucketAcl", "aws:s3/bucketAclV2:BucketAclV2"),
    "bucket-lifecycle": (
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
        "aws:s3/bucketLifecycleConfigurationV2:BucketLifecycleConfigurationV2",
    ),
    "bucket-ownership": ("aws:s3/bucketOwnershipControls:BucketOwnershipControls",),
    "bucket-logging": ("aws:s3/bucketLogging:BucketLogging", "aws:s3/bucketLoggingV2:BucketLoggingV2"),
    "bucket-policy": ("aws:s3/bucketPolicy:BucketPolicy",),
    # Parallel file systems (training's scratch/checkpoint tier): FSx for Lustre and the Lustre-based File Cache.
    "parallel-file-system": ("aws:fsx/lustreFileSystem:LustreFileSystem", "aws:fsx/fileCache:FileCache"),
    "file-system": (
        "aws:fsx/openZfsFileSystem:OpenZfsFileSystem",
        "aws:fsx/ontapFileSystem:OntapFileSystem",
        "aws:fsx/windowsFileSystem:WindowsFileSystem",
        "aws:efs/fileSystem:FileSystem",
    ),
    "file-system-link": ("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation",),
    "volume": ("aws:ebs/volume:Volume",),
    "volume-attachment": ("aws:ec2/volumeAttachment:VolumeAttachment",),
    "key": ("aws:kms/key:Key",),
    "key-policy": ("aws:kms/keyPolicy:KeyPolicy",),
    "key-alias": ("aws:kms/alias:Alias",),
    "key-grant": ("aws:kms/grant:Grant",),
    "database": (
        "aws:dynamodb/table:Table",
        "aws:rds/cluster:Cluster",
        "aws:rds/instance:Instance",
    ),
    "image-repository": ("aws:ecr/repository:Repository",),
    "secret": ("aws:secretsmanager/secret:Secret", "aws:ssm/parameter:Parameter"),
    "secret-version": ("aws:secretsmanager/secretVersion:SecretVersion",),
    # --- serving front door and admission ---
    "queue": ("aws:sqs/queue:Queue",),
    "queue-policy": ("aws:sqs/queuePolicy:QueuePolicy",),
    "queue-redrive": ("aws:sqs/redrivePolicy:RedrivePolicy",),
    "queue-redrive-allow": ("aws:sqs/redriveAllowPolicy:RedriveAllowPolicy",),
    "load-balancer": (
        "aws:lb/loadBalancer:LoadBalancer",
        "aws:alb/loadBalancer:LoadBalancer",
        "aws:elasticloadbalancingv2/loadBalancer:LoadBalancer",
        "aws:applicationloadbalancing/loadBalancer:LoadBalancer",
        "aws:elb/loadBalancer:LoadBalancer",
        "aws:elasticloadbalancing/loadBalancer:LoadBalancer",
    ),
    "listener": (
        "aws:lb/listener:Listener",
        "aws:alb/listener:Listener",
        "aws:elasticloadbalancingv2/listener:Listener",
        "aws:applicationloadbalancing/listener:Listener",
    ),
    "target-group": (
        "aws:lb/targetGroup:TargetGroup",
        "aws:alb/targetGroup:TargetGroup",
        "aws:elasticloadbalancingv2/targetGroup:TargetGroup",
        "aws:applicationloadbalancing/targetGroup:TargetGroup",
    ),
    "web-acl": ("aws:wafv2/webAcl:WebAcl",),
    "web-acl-association": ("aws:wafv2/webAclAssociation:WebAclAssociation",),
    "web-acl-logging": ("aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration",),
    # --- compute ---
    "node-group": ("aws:autoscaling/group:Group", "aws:eks/nodeGroup:NodeGroup"),
    "node-template": ("aws:ec2/launchTemplate:LaunchTemplate",),
    "instance": ("aws:ec2/instance:Instance",),
    "fleet": (
        "aws:ec2/fleet:Fleet",
        "aws:ec2/spotFleetRequest:SpotFleetRequest",
        "aws:ec2/spotInstanceRequest:SpotInstanceRequest",
        "aws:batch/computeEnvironment:ComputeEnvironment",
    ),
    # AWS Batch: a queue routes jobs to compute environments (no data of its own); a job definition is a
    # job's template (image, command, environment, devices), judged for what it embeds and asks for.
    "job-queue": ("aws:batch/jobQueue:JobQueue",),
    "job-template": ("aws:batch/jobDefinition:JobDefinition",),
    "rdma-placement": ("aws:ec2/placementGroup:PlacementGroup",),
    "scaling-policy": ("aws:autoscaling/policy:Policy", "aws:appautoscaling/policy:Policy"),
    "alarm": ("aws:cloudwatch/metricAlarm:MetricAlarm",),
    "log-group": ("aws:cloudwatch/logGroup:LogGroup", "aws:cloudwatch/logStream:LogStream"),
    # --- network ---
    "network": (
        "aws:ec2/vpc:Vpc",
        "aws:ec2/subnet:Subnet",
        "aws:ec2/routeTable:RouteTable",
        "aws:ec2/routeTableAssociation:RouteTableAssociation",
        "aws:ec2/route:Route",
        "aws:ec2/internetGateway:InternetGateway",
        "aws:ec2/natGateway:NatGateway",
        "aws:ec2/vpcEndpoint:VpcEndpoint",
        "aws:ec2/flowLog:FlowLog",
        "aws:ec2/networkAcl:NetworkAcl",
        "aws:ec2/defaultNetworkAcl:DefaultNetworkAcl",
        "aws:ec2/defaultRouteTable:DefaultRouteTable",
    ),
    "public-address": ("aws:ec2/eip:Eip", "aws:ec2/eipAssociation:EipAssociation"),
    "firewall": ("aws:ec2/securityGroup:SecurityGroup", "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"),
    "firewall-rule": (
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
        "aws:ec2/securityGroupRule:SecurityGroupRule",
    ),
    # --- identity ---
    "identity": ("aws:iam/role:Role", "aws:iam/instanceProfile:InstanceProfile"),
    "identity-grant": (
        "aws:iam/rolePolicy:RolePolicy",
        "aws:iam/policy:Policy",
        "aws:iam/userPolicy:UserPolicy",
        "aws:iam/groupPolicy:GroupPolicy",
    ),
    "identity-attachment": (
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "aws:iam/userPolicyAttachment:UserPolicyAttachment",
        "aws:iam/groupPolicyAttachment:GroupPolicyAttachment",
        "aws:iam/policyAttachment:PolicyAttachment",
    ),
    # Resource policies other than buckets', keys' and queues': who may reach a topic, repository, secret.
    "resource-grant": (
        "aws:sns/topicPolicy:TopicPolicy",
        "aws:ecr/repositoryPolicy:RepositoryPolicy",
        "aws:secretsmanager/secretPolicy:SecretPolicy",
        "aws:s3control/accessPointPolicy:AccessPointPolicy",
        "aws:lambda/permission:Permission",
        "aws:cloudwatch/logResourcePolicy:LogResourcePolicy",
    ),
}

# concept -> azure-native type tokens (default module; unversioned SDK aliases after it).
AZURE: dict[str, tuple[str, ...]] = {
    "resource-group": ("azure-native:resources:ResourceGroup",),
    # --- storage (stateful) ---
    # The storage account holds every container's data and the account-wide public-access, TLS and
    # encryption settings; a container is the bucket.
    "storage-account": ("azure-native:storage:StorageAccount",),
    "bucket": ("azure-native:storage:BlobContainer",),
    "bucket-versioning": ("azure-native:storage:BlobServiceProperties",),
    "bucket-lifecycle": ("azure-native:storage:ManagementPolicy",),
    "parallel-file-system": ("azure-native:storagecache:AmlFilesystem",),
    "file-system-link": (
        "azure-native:storagecache:ImportJob",
        "azure-native:storagecache:AutoExportJob",
        "azure-native:storagecache:AutoImportJob",
    ),
    "volume": ("azure-native:compute:Disk",),
    "key-vault": ("azure-native:keyvault:Vault",),
    "key": ("azure-native:keyvault:Key",),
    "secret": ("azure-native:keyvault:Secret",),
    # --- serving front door and admission ---
    "queue-namespace": ("azure-native:servicebus:Namespace",),
    # Service Bus queues and topic subscriptions hold messages (and dead-letter them); topics fan out.
    "queue": ("azure-native:servicebus:Queue", "azure-native:servicebus:Subscription"),
    "topic": ("azure-native:servicebus:Topic",),
    "queue-policy": (
        "azure-native:servicebus:NamespaceAuthorizationRule",
        "azure-native:servicebus:QueueAuthorizationRule",
    ),
    "load-balancer": ("azure-native:network:ApplicationGateway", "azure-native:network:LoadBalancer"),
    "web-acl": ("azure-native:network:WebApplicationFirewallPolicy",),
    # --- compute ---
    "node-group": ("azure-native:compute:VirtualMachineScaleSet",),
    "instance": ("azure-native:compute:VirtualMachine",),
    "fleet": (
        "azure-native:machinelearningservices:Compute",
        "azure-native:machinelearningservices/v20210401:MachineLearningCompute",  # SDK alias (old name)
    ),
    "ml-workspace": ("azure-native:machinelearningservices:Workspace",),
    # A workspace's pointer to a storage container, with or without stored credentials.
    "ml-datastore": (
        "azure-native:machinelearningservices:Datastore",
        "azure-native:machinelearningservices:MachineLearningDatastore",  # SDK alias (old name)
    ),
    # Immutable, versioned job templates (an image reference, a command): no data, no access of their own.
    "ml-asset": (
        "azure-native:machinelearningservices:EnvironmentVersion",
        "azure-native:machinelearningservices:ComponentVersion",
        # SDK aliases (old names) of EnvironmentVersion
        "azure-native:machinelearningservices:EnvironmentSpecificationVersion",
        "azure-native:machinelearningservices/v20210301preview:EnvironmentSpecificationVersion",
    ),
    "warm-pool": ("azure-native:standbypool:StandbyVirtualMachinePool",),
    "capacity-reservation": (
        "azure-native:compute:CapacityReservationGroup",
        "azure-native:compute:CapacityReservation",
    ),
    "rdma-placement": ("azure-native:compute:ProximityPlacementGroup",),
    "scaling-policy": ("azure-native:monitor:AutoscaleSetting", "azure-native:insights:AutoscaleSetting"),
    "alarm": ("azure-native:monitor:MetricAlert", "azure-native:insights:MetricAlert"),
    "log-group": ("azure-native:operationalinsights:Workspace",),
    "log-routing": ("azure-native:monitor:DiagnosticSetting", "azure-native:insights:DiagnosticSetting"),
    # --- network ---
    "network": (
        "azure-native:network:VirtualNetwork",
        "azure-native:network:Subnet",
        "azure-native:network:NatGateway",
        "azure-native:network:PrivateEndpoint",
        "azure-native:network:InterfaceEndpoint",
        "azure-native:network:RouteTable",
        "azure-native:network:Route",
        "azure-native:network:NetworkInterface",
        "azure-native:network:PrivateDnsZoneGroup",
        "azure-native:privatedns:PrivateZone",
        "azure-native:network:PrivateZone",
        "azure-native:privatedns:VirtualNetworkLink",
        "azure-native:network:VirtualNetworkLink",
    ),
    "public-address": ("azure-native:network:PublicIPAddress",),
    "firewall": ("azure-native:network:NetworkSecurityGroup",),
    "firewall-rule": ("azure-native:network:SecurityRule",),
    # --- identity ---
    "identity": ("azure-native:managedidentity:UserAssignedIdentity",),
    "role-definition": ("azure-native:authorization:RoleDefinition",),
    # A role assigned to a principal at a scope (subscription, resource group or one resource).
    "role-binding": ("azure-native:authorization:RoleAssignment",),
}

# concept -> gcp type tokens (current token first, then SDK aliases).
GCP: dict[str, tuple[str, ...]] = {
    # --- storage (stateful) ---
    "bucket": ("gcp:storage/bucket:Bucket",),
    "parallel-file-system": ("gcp:lustre/instance:Instance",),
    "file-system": ("gcp:filestore/instance:Instance",),
    "volume": ("gcp:compute/disk:Disk",),
    # Key rings cannot be deleted (a destroy only forgets them), so they are not state to protect;
    # their crypto keys are: destroying one destroys its versions and the data they encrypt.
    "key-ring": ("gcp:kms/keyRing:KeyRing",),
    "key": ("gcp:kms/cryptoKey:CryptoKey",),
    "secret": ("gcp:secretmanager/secret:Secret",),
    "secret-version": ("gcp:secretmanager/secretVersion:SecretVersion",),
    # --- serving front door and admission ---
    "topic": ("gcp:pubsub/topic:Topic",),
    # A Pub/Sub subscription holds the messages (and dead-letters them): it is the queue.
    "queue": ("gcp:pubsub/subscription:Subscription",),
    # The internet-facing entry: the forwarding rule holds the address and port.
    "load-balancer": ("gcp:compute/globalForwardingRule:GlobalForwardingRule",),
    "listener": ("gcp:compute/targetHttpsProxy:TargetHttpsProxy", "gcp:compute/targetHttpProxy:TargetHttpProxy"),
    "url-map": ("gcp:compute/uRLMap:URLMap",),
    "target-group": ("gcp:compute/backendService:BackendService",),
    "health-check": ("gcp:compute/healthCheck:HealthCheck",),
    "certificate": (
        "gcp:compute/managedSslCertificate:ManagedSslCertificate",
        "gcp:compute/mangedSslCertificate:MangedSslCertificate",
    ),
    "tls-policy": ("gcp:compute/sSLPolicy:SSLPolicy",),
    "web-acl": ("gcp:compute/securityPolicy:SecurityPolicy",),
    # --- compute ---
    "node-group": (
        "gcp:compute/instanceGroupManager:InstanceGroupManager",
        "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
    ),
    "node-template": (
        "gcp:compute/instanceTemplate:InstanceTemplate",
        "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate",
    ),
    "instance": ("gcp:compute/instance:Instance",),
    # Cluster Director's managed Slurm: it creates and runs the login and GPU VMs itself (its inputs hold
    # their startup scripts, public-IP and OS Login settings and how the GPUs are bought).
    "fleet": ("gcp:hypercomputecluster/cluster:Cluster",),
    # A MIG resize request: how many flex-start VMs, for how long (the VMs belong to the group).
    "capacity-request": (
        "gcp:compute/resizeRequest:ResizeRequest",
        "gcp:compute/regionResizeRequest:RegionResizeRequest",
    ),
    "capacity-reservation": ("gcp:compute/reservation:Reservation",),
    # Compact placement (group_placement_policy COLLOCATED) for the training fabric.
    "rdma-placement": ("gcp:compute/resourcePolicy:ResourcePolicy",),
    "scaling-policy": (
        "gcp:compute/autoscaler:Autoscaler",
        "gcp:compute/autoscalar:Autoscalar",
        "gcp:compute/regionAutoscaler:RegionAutoscaler",
    ),
    # --- network ---
    "network": (
        "gcp:compute/network:Network",
        "gcp:compute/subnetwork:Subnetwork",
        "gcp:compute/router:Router",
        "gcp:compute/routerNat:RouterNat",
        "gcp:compute/route:Route",
        "gcp:servicenetworking/connection:Connection",
    ),
    "public-address": ("gcp:compute/globalAddress:GlobalAddress", "gcp:compute/address:Address"),
    "firewall-rule": ("gcp:compute/firewall:Firewall",),
    # --- identity ---
    "identity": ("gcp:serviceaccount/account:Account", "gcp:serviceAccount/account:Account"),
    "api-enablement": ("gcp:projects/service:Service",),
    # Project-wide role grants (the scope is the project).
    "role-binding": (
        "gcp:projects/iAMMember:IAMMember",
        "gcp:projects/iAMBinding:IAMBinding",
        "gcp:projects/iAMPolicy:IAMPolicy",
    ),
    # Grants on one resource: who may use a bucket, key, secret, topic, subscription or service account.
    "resource-grant": (
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        "gcp:storage/bucketIAMBinding:BucketIAMBinding",
        "gcp:storage/bucketIAMPolicy:BucketIAMPolicy",
        "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember",
        "gcp:kms/cryptoKeyIAMBinding:CryptoKeyIAMBinding",
        "gcp:kms/cryptoKeyIAMPolicy:CryptoKeyIAMPolicy",
        "gcp:kms/keyRingIAMMember:KeyRingIAMMember",
        "gcp:kms/keyRingIAMBinding:KeyRingIAMBinding",
        "gcp:secretmanager/secretIamMember:SecretIamMember",
        "gcp:secretmanager/secretIamBinding:SecretIamBinding",
        "gcp:secretmanager/secretIamPolicy:SecretIamPolicy",
        "gcp:pubsub/topicIAMMember:TopicIAMMember",
        "gcp:pubsub/topicIAMBinding:TopicIAMBinding",
        "gcp:pubsub/topicIAMPolicy:TopicIAMPolicy",
        "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember",
        "gcp:pubsub/subscriptionIAMBinding:SubscriptionIAMBinding",
        "gcp:pubsub/subscriptionIAMPolicy:SubscriptionIAMPolicy",
        "gcp:serviceaccount/iAMMember:IAMMember",
        "gcp:serviceAccount/iAMMember:IAMMember",
        "gcp:serviceaccount/iAMBinding:IAMBinding",
        "gcp:serviceAccount/iAMBinding:IAMBinding",
        "gcp:serviceaccount/iAMPolicy:IAMPolicy",
        "gcp:serviceAccount/iAMPolicy:IAMPolicy",
    ),
}

# Dynamic providers (`pulumi.dynamic.ResourceProvider`) run the program's own Python in the deployer's
# process: a known kind (the project's code, reviewed with it), but one whose inputs land in the
# state in clear, so the packs judge its inputs like user data.
DYNAMIC: dict[str, tuple[str, ...]] = {"dynamic-operation": ("pulumi-python:dynamic:Resource",)}

TABLES: dict[str, dict[str, tuple[str, ...]]] = {
    "aws": AWS,
    "azure-native": AZURE,
    "gcp": GCP,
    "pulumi-python": DYNAMIC,
}

# Stateful concepts: `protect` is required, and nothing in the stack may schedule their deletion.
STATEFUL = (
    "bucket",
    "storage-account",
    "parallel-file-system",
    "file-system",
    "volume",
    "key",
    "key-vault",
    "database",
    "image-repository",
    "ml-workspace",  # job history, registered models and assets
)

# Packages that make no cloud calls of their own (pulumi-random, pulumi-tls) and the engine's own types;
# accelstack's component resources (`accelstack:aws:...`) only group children. Any other package
# (e.g. pulumi-command, whose `command:local:Command` runs with the deployer's ambient credentials) is
# unknown and fails.
LOCAL_PACKAGES = frozenset({"pulumi", "random", "tls", "accelstack"})

_BY_TOKEN = {token: concept for table in TABLES.values() for concept, ts in table.items() for token in ts}
_API_VERSION = re.compile(r"^(azure-native:[A-Za-z]+)/v[0-9]{8}(?:preview|privatepreview)?(:.+)$")


_DYNAMIC = re.compile(r"^pulumi-python:dynamic(?:/[^:]+)?:[^:]+$")


def canonical(type_token: str) -> str:
    """`azure-native:network/v20240501:Subnet` -> `azure-native:network:Subnet` (same API object);
    a named dynamic resource (`pulumi-python:dynamic/lustre:Import`, from `Resource` subclasses with
    `module=`/`name=`: pulumi/dynamic/dynamic.py) -> `pulumi-python:dynamic:Resource`."""
    if _DYNAMIC.match(type_token):
        return "pulumi-python:dynamic:Resource"
    match = _API_VERSION.match(type_token)
    return match.group(1) + match.group(2) if match else type_token


def concept_of(type_token: str) -> str | None:
    return _BY_TOKEN.get(type_token) or _BY_TOKEN.get(canonical(type_token))


def cloud_of(type_token: str) -> str | None:
    """The table (cloud package) that knows a token, or None."""
    found = [t for t in (type_token, canonical(type_token)) if t in _BY_TOKEN]
    return next((c for c, table in TABLES.items() for ts in table.values() if found and found[0] in ts), None)


def tokens(*concepts: str, cloud: str = "aws") -> tuple[str, ...]:
    """One cloud's tokens of these concepts (a rule reading that cloud's properties)."""
    table = TABLES[cloud]
    return tuple(token for concept in concepts for token in table.get(concept, ()))


def is_a(resource_type: str, *concepts: str) -> bool:
    return concept_of(resource_type) in concepts


def of(resources: Iterable[object], *concepts: str, cloud: str | None = None) -> list:
    """Resources of these concepts, of every cloud (or of `cloud` only)."""
    return [
        r
        for r in resources
        if concept_of(getattr(r, "resource_type", "")) in concepts
        and (cloud is None or cloud_of(getattr(r, "resource_type", "")) == cloud)
    ]
