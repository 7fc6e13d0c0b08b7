"""AWS's concept table (policies/concepts.py): concept -> pulumi-aws type tokens, the current token first,
then every alias the SDK declares for it (`pulumi.Alias(type_=...)`) and V2 twins of the same API object."""

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
    "bucket-object-lock": (
        "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration",
        "aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2",
    ),
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
    # A database engine's settings (RDS parameter groups): no data, access or exposure of their own.
    "database-settings": (
        "aws:rds/parameterGroup:ParameterGroup",
        "aws:rds/clusterParameterGroup:ClusterParameterGroup",
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
    "web-acl": (
        "aws:wafv2/webAcl:WebAcl",
        "aws:wafv2/webAclRule:WebAclRule",
        "aws:wafv2/webAclRuleGroupAssociation:WebAclRuleGroupAssociation",
        "aws:wafv2/ruleGroup:RuleGroup",
    ),
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
    # A scheduled action sets a group's min/max/desired size at a time (PutScheduledUpdateGroupAction): it scales
    # the group as a policy does, so the rules that read a group's scaling policies read it too (a Capacity Block's
    # start and end, components/aws/training.py).
    "scaling-policy": (
        "aws:autoscaling/policy:Policy",
        "aws:appautoscaling/policy:Policy",
        "aws:autoscaling/schedule:Schedule",
        "aws:appautoscaling/scheduledAction:ScheduledAction",
    ),
    "alarm": ("aws:cloudwatch/metricAlarm:MetricAlarm",),
    "log-group": ("aws:cloudwatch/logGroup:LogGroup", "aws:cloudwatch/logStream:LogStream"),
    # --- network ---
    "network": (
        "aws:ec2/vpc:Vpc",
        "aws:rds/subnetGroup:SubnetGroup",  # where a database's interfaces go (private subnets)
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
    # Links from the stack's networks to other networks and services (judged by the reachability view,
    # policies/aws/reachability.py): peering, transit gateways, PrivateLink services and acceptances (VPN: "vpn").
    "network-link": (
        "aws:ec2/vpcPeeringConnection:VpcPeeringConnection",
        "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter",
        "aws:ec2transitgateway/transitGateway:TransitGateway",
        "aws:ec2transitgateway/vpcAttachment:VpcAttachment",
        "aws:ec2transitgateway/vpcAttachmentAccepter:VpcAttachmentAccepter",
        "aws:ec2transitgateway/peeringAttachment:PeeringAttachment",
        "aws:ec2transitgateway/peeringAttachmentAccepter:PeeringAttachmentAccepter",
        "aws:ec2/transitGatewayPeeringAttachmentAccepter:TransitGatewayPeeringAttachmentAccepter",  # SDK alias
        "aws:ec2/vpcEndpointService:VpcEndpointService",
        "aws:ec2/vpcEndpointServiceAllowedPrinciple:VpcEndpointServiceAllowedPrinciple",
        "aws:ec2/vpcEndpointConnectionAccepter:VpcEndpointConnectionAccepter",
    ),
    # A site-to-site VPN and what gives its far end ranges (policies/aws/reachability.py): the connection (refused
    # across sides: its far end is in no account), its static routes, the gateways at each end and route propagation.
    "vpn": (
        "aws:ec2/vpnConnection:VpnConnection",
        "aws:ec2/vpnConnectionRoute:VpnConnectionRoute",
        "aws:ec2/vpnGateway:VpnGateway",
        "aws:ec2/vpnGatewayAttachment:VpnGatewayAttachment",
        "aws:ec2/vpnGatewayRoutePropagation:VpnGatewayRoutePropagation",
        "aws:ec2/customerGateway:CustomerGateway",
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
    # An OIDC issuer IAM trusts, and the account's switch for its roles' own signed tokens (outbound federation):
    # neither grants anything; the roles' trust policies that name them do (the access graph reads those).
    "identity-federation": (
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
        "aws:iam/outboundWebIdentityFederation:OutboundWebIdentityFederation",
    ),
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
    # --- landing (the organization: accelstack.spec.landing) ---
    # An OU (a side's container group), a member account, a service control policy and its attachment to an OU,
    # a service quota request and a cost budget: only a landing stack makes them (policies/separation/landing_rules.py).
    "org-unit": ("aws:organizations/organizationalUnit:OrganizationalUnit",),
    "member-account": ("aws:organizations/account:Account",),
    "guardrail-policy": ("aws:organizations/policy:Policy",),
    "guardrail-attachment": ("aws:organizations/policyAttachment:PolicyAttachment",),
    "quota-request": ("aws:servicequotas/serviceQuota:ServiceQuota",),
    "budget": ("aws:budgets/budget:Budget",),
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
