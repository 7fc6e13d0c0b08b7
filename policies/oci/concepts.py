"""OCI's concept table (policies/concepts.py): concept -> pulumi-oci type tokens (pulumi_oci declares no alias
tokens for these classes)."""

OCI: dict[str, tuple[str, ...]] = {
    # --- storage (stateful) ---
    "bucket": ("oci:ObjectStorage/bucket:Bucket",),
    "parallel-file-system": ("oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem",),
    # Lustre <-> Object Storage: imports from (and exports to) a bucket prefix on request.
    "file-system-link": ("oci:Lustre/fileStorageObjectStorageLink:FileStorageObjectStorageLink",),
    # A pre-authenticated request: a URL that is its own credential to read or write a bucket's objects until it
    # expires (a Vultr serving stack's reader of OCI weights: policies/separation/handoff_rules.py).
    "resource-grant": ("oci:ObjectStorage/preauthrequest:Preauthrequest",),
    # Object Storage copies a bucket's new objects to a bucket of another region, or deletes them on a schedule.
    "bucket-replication": ("oci:ObjectStorage/replicationPolicy:ReplicationPolicy",),
    "bucket-lifecycle": ("oci:ObjectStorage/objectLifecyclePolicy:ObjectLifecyclePolicy",),
    "volume": ("oci:Core/volume:Volume",),
    "volume-attachment": ("oci:Core/volumeAttachment:VolumeAttachment",),
    # --- keys and secrets ---
    "key-vault": ("oci:Kms/vault:Vault",),
    "key": ("oci:Kms/key:Key",),
    "secret": ("oci:Vault/secret:Secret",),
    # --- identity: who (dynamic groups of instances) and what (policy statements) ---
    "identity": ("oci:Identity/dynamicGroup:DynamicGroup",),
    "identity-grant": ("oci:Identity/policy:Policy",),
    # --- compute ---
    # A cluster network is one instance pool on the RDMA fabric: the training node group.
    "node-group": ("oci:Core/clusterNetwork:ClusterNetwork", "oci:Core/instancePool:InstancePool"),
    "node-template": ("oci:Core/instanceConfiguration:InstanceConfiguration",),
    "instance": ("oci:Core/instance:Instance",),
    # A custom image imported into the compartment (the GPU nodes' HPC build), and one shape it may launch on.
    "machine-image": ("oci:Core/image:Image",),
    "image-shape-compatibility": ("oci:Core/shapeManagement:ShapeManagement",),
    # --- network ---
    "network": (
        "oci:Core/vcn:Vcn",
        "oci:Core/subnet:Subnet",
        "oci:Core/routeTable:RouteTable",
        "oci:Core/natGateway:NatGateway",
        "oci:Core/serviceGateway:ServiceGateway",
    ),
    # Links between networks (policies/oci/reachability.py): local and remote peering, a dynamic routing gateway and
    # its attachments, IPSec VPN.
    "network-link": (
        "oci:Core/localPeeringGateway:LocalPeeringGateway",
        "oci:Core/remotePeeringConnection:RemotePeeringConnection",
        "oci:Core/drg:Drg",
        "oci:Core/drgAttachment:DrgAttachment",
        "oci:Core/ipsec:Ipsec",
    ),
    "firewall": ("oci:Core/networkSecurityGroup:NetworkSecurityGroup", "oci:Core/securityList:SecurityList"),
    "firewall-rule": ("oci:Core/networkSecurityGroupSecurityRule:NetworkSecurityGroupSecurityRule",),
    # --- landing (the organization: accelstack.spec.landing) ---
    # A side's compartment, its deploy group, its quota policy (zero and set statements: the region guardrail,
    # serving's zero for the training shapes, the planner's caps), its budget and the budget's alert rules: only a
    # landing stack makes them (policies/separation/landing_rules.py).
    "org-unit": ("oci:Identity/compartment:Compartment",),
    "member-account": ("oci:Identity/group:Group",),
    "quota-request": ("oci:Limits/quota:Quota",),
    "budget": ("oci:Budget/budget:Budget",),
    "alert-channel": ("oci:Budget/rule:Rule",),
}
