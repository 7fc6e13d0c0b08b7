"""Azure's concept table (policies/concepts.py): concept -> azure-native type tokens of the default
module, then the SDK's unversioned aliases. API-version modules map to the same concept (`concepts.canonical`)."""

AZURE: dict[str, tuple[str, ...]] = {
    "resource-group": ("azure-native:resources:ResourceGroup",),
    # --- storage (stateful) ---
    # The storage account holds every container's data and the account-wide public-access, TLS and
    # encryption settings; a container is the bucket.
    "storage-account": ("azure-native:storage:StorageAccount",),
    "bucket": ("azure-native:storage:BlobContainer",),
    "bucket-versioning": ("azure-native:storage:BlobServiceProperties",),
    "bucket-lifecycle": ("azure-native:storage:ManagementPolicy",),
    # Copies blobs from a source account to a destination account (either may be another subscription's).
    "bucket-replication": ("azure-native:storage:ObjectReplicationPolicy",),
    # An SFTP/NFS local user of a storage account: a password or SSH key the account checks, never a role.
    "storage-local-user": ("azure-native:storage:LocalUser",),
    "parallel-file-system": ("azure-native:storagecache:AmlFilesystem",),
    "file-system-link": (
        "azure-native:storagecache:AutoExportJob",
        "azure-native:storagecache:AutoImportJob",
    ),
    # One import run (its record): it holds no data and no link; deleting it deletes nothing imported.
    "file-system-import": ("azure-native:storagecache:ImportJob",),
    "volume": ("azure-native:compute:Disk",),
    "key-vault": ("azure-native:keyvault:Vault",),
    # One principal's permissions on a vault's keys, secrets and certificates (the vault's inline accessPolicies too).
    "key-vault-access": ("azure-native:keyvault:AccessPolicy",),
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
    # Azure Database for MySQL flexible server: the server holds the data, a database in it is a schema.
    "database": ("azure-native:dbformysql:Server", "azure-native:dbformysql:Database"),
    # A server parameter (dbformysql Configuration): engine tuning, no data, access or exposure of its own.
    "database-settings": ("azure-native:dbformysql:Configuration",),
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
    # Links from the stack's VNets to other networks and services (judged by the reachability view,
    # policies/azure/reachability.py): peering, Virtual WAN hub connections, Private Link services (VPN: "vpn").
    "network-link": (
        "azure-native:network:VirtualNetworkPeering",
        "azure-native:network:HubVirtualNetworkConnection",
        "azure-native:network:PrivateLinkService",
    ),
    # A site-to-site VPN and what gives its far end ranges (policies/azure/reachability.py): the gateway connection
    # (refused across sides unless VNet-to-VNet between placed gateways), the local network gateway (the site's
    # address space) and the virtual network gateway (its default site: forced tunnelling).
    "vpn": (
        "azure-native:network:VirtualNetworkGatewayConnection",
        "azure-native:network:LocalNetworkGateway",
        "azure-native:network:VirtualNetworkGateway",
    ),
    "public-address": ("azure-native:network:PublicIPAddress",),
    "firewall": ("azure-native:network:NetworkSecurityGroup",),
    "firewall-rule": ("azure-native:network:SecurityRule",),
    # --- identity ---
    "identity": ("azure-native:managedidentity:UserAssignedIdentity",),
    # Lets a workload of an external issuer (an OIDC subject) obtain the identity's tokens.
    "identity-federation": ("azure-native:managedidentity:FederatedIdentityCredential",),
    "role-definition": ("azure-native:authorization:RoleDefinition",),
    # A role assigned to a principal at a scope (subscription, resource group or one resource).
    "role-binding": ("azure-native:authorization:RoleAssignment",),
    # --- landing (the organization: accelstack.spec.landing) ---
    # A side's management group, its subscription (created by alias), an Azure Policy assignment at a management
    # group and a subscription's budget: only a landing stack makes them (policies/separation/landing_rules.py).
    "org-unit": ("azure-native:management:ManagementGroup",),
    "member-account": ("azure-native:subscription:Alias",),
    "guardrail-policy": ("azure-native:authorization:PolicyAssignment",),
    # A custom Azure Policy definition at a management group (the deny of role assignments to the other side).
    "guardrail-constraint": ("azure-native:authorization:PolicyDefinitionAtManagementGroup",),
    "budget": ("azure-native:consumption:Budget",),
}
