"""GCP's concept table (policies/concepts.py): concept -> pulumi-gcp type tokens, the current token first,
then the SDK's aliases."""

GCP: dict[str, tuple[str, ...]] = {
    # --- storage (stateful) ---
    "bucket": ("gcp:storage/bucket:Bucket",),
    "parallel-file-system": ("gcp:lustre/instance:Instance",),
    "file-system": ("gcp:filestore/instance:Instance",),
    "volume": ("gcp:compute/disk:Disk",),
    # Cloud SQL: the instance holds the data; a database in it is a schema (its records go with the instance).
    "database": ("gcp:sql/databaseInstance:DatabaseInstance", "gcp:sql/database:Database"),
    # A login of a database engine (a user and its password): who may act inside the database.
    "database-user": ("gcp:sql/user:User",),
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
    "target-group": (
        "gcp:compute/backendService:BackendService",
        "gcp:compute/regionBackendService:RegionBackendService",
    ),
    "health-check": ("gcp:compute/healthCheck:HealthCheck",),
    "certificate": (
        "gcp:compute/managedSslCertificate:ManagedSslCertificate",
        "gcp:compute/mangedSslCertificate:MangedSslCertificate",
    ),
    "tls-policy": ("gcp:compute/sSLPolicy:SSLPolicy",),
    "web-acl": (
        "gcp:compute/securityPolicy:SecurityPolicy",
        "gcp:compute/securityPolicyRule:SecurityPolicyRule",
        "gcp:compute/regionSecurityPolicy:RegionSecurityPolicy",
        "gcp:compute/regionSecurityPolicyRule:RegionSecurityPolicyRule",
    ),
    # Which Cloud Audit Logs a project, folder or organization writes, and whom they exempt.
    "audit-config": (
        "gcp:projects/iAMAuditConfig:IAMAuditConfig",
        "gcp:folder/iamAuditConfig:IamAuditConfig",
        "gcp:organizations/iamAuditConfig:IamAuditConfig",
    ),
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
    # Links from the stack's networks to other networks and services (judged by the reachability view,
    # policies/gcp/reachability.py): peering, shared VPC, Private Service Connect, interconnect, NCC spokes (VPN: "vpn").
    "network-link": (
        "gcp:compute/networkPeering:NetworkPeering",
        "gcp:compute/sharedVPCServiceProject:SharedVPCServiceProject",
        "gcp:compute/sharedVPCHostProject:SharedVPCHostProject",
        "gcp:compute/forwardingRule:ForwardingRule",
        "gcp:compute/serviceAttachment:ServiceAttachment",
        "gcp:compute/interconnectAttachment:InterconnectAttachment",
        "gcp:networkconnectivity/spoke:Spoke",
    ),
    # A VPN and what gives its far end ranges (policies/gcp/reachability.py): the tunnel (refused across sides unless
    # to a placed GCP gateway), its gateways, and a Cloud Router's BGP peer (its custom learned ranges).
    "vpn": (
        "gcp:compute/vPNTunnel:VPNTunnel",
        "gcp:compute/haVpnGateway:HaVpnGateway",
        "gcp:compute/vPNGateway:VPNGateway",
        "gcp:compute/externalVpnGateway:ExternalVpnGateway",
        "gcp:compute/routerPeer:RouterPeer",
    ),
    "public-address": ("gcp:compute/globalAddress:GlobalAddress", "gcp:compute/address:Address"),
    "firewall-rule": ("gcp:compute/firewall:Firewall",),
    # --- identity ---
    "identity": ("gcp:serviceaccount/account:Account", "gcp:serviceAccount/account:Account"),
    # Outside identities admitted into a project (workload identity federation): the access graph reads the
    # provider's trust (policies/gcp/access.py provider_edges); the pool grants nothing by itself.
    "identity-federation": (
        "gcp:iam/workloadIdentityPool:WorkloadIdentityPool",
        "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider",
    ),
    # --- landing (the organization: accelstack.spec.landing) ---
    # A side's folder, its project, an organization policy on a folder and the custom constraint one enforces, a
    # Cloud Quotas preference, a billing budget and the Monitoring channel its alerts go to: only a landing stack
    # makes them (policies/separation/landing_rules.py).
    "org-unit": ("gcp:organizations/folder:Folder",),
    "member-account": ("gcp:organizations/project:Project",),
    "guardrail-policy": ("gcp:orgpolicy/policy:Policy",),
    "guardrail-constraint": ("gcp:orgpolicy/customConstraint:CustomConstraint",),
    "quota-request": ("gcp:cloudquota/sQuotaPreference:SQuotaPreference",),
    "budget": ("gcp:billing/budget:Budget",),
    "alert-channel": ("gcp:monitoring/notificationChannel:NotificationChannel",),
    # Enabling a service, and creating its Google-managed service agent (ServiceIdentity: the agent a grant names
    # must exist first); neither grants anything by itself.
    "api-enablement": ("gcp:projects/service:Service", "gcp:projects/serviceIdentity:ServiceIdentity"),
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
