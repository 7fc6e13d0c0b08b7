"""Which inputs make azure-native replace a resource rather than update it (pure data; read by
`accelstack.engine.replacement` through the registry, `Cloud.replace_rules`). The rule and its sources are
said at the head of the table.
"""

from __future__ import annotations

from accelstack.clouds import random_provider, time_provider
from accelstack.clouds.base import ReplaceRules

# Inputs whose change makes the provider REPLACE the resource (Pulumi property names; a dotted path is an
# input nested in an object whose other members update in place).
REPLACE_FORCING: dict[str, tuple[str, ...]] = {
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
    # An import job runs once when created; only its tags update (ImportJob, API 2024-03-01), the rest is fixed.
    "azure-native:storagecache:ImportJob": (
        "resourceGroupName",
        "amlFilesystemName",
        "importJobName",
        "location",
        "importPrefixes",
        "conflictResolutionMode",
        "maximumErrors",
    ),
    # Scale set: zones, orchestration mode and fault domain count are create-only (compute
    # virtualMachineScaleSet.json); so are Spot priority and its eviction policy ("setting the Spot flag is only
    # supported at creation time", use-spot FAQ), which the components mark replace_on_changes.
    "azure-native:compute:VirtualMachineScaleSet": (
        "resourceGroupName",
        "vmScaleSetName",
        "location",
        "zones",
        "orchestrationMode",
        "platformFaultDomainCount",
        "virtualMachineProfile.priority",
        "virtualMachineProfile.evictionPolicy",
    ),
    # VM: zones and osProfile (computer name, admin user, custom data) are create-only (virtualMachine.json).
    "azure-native:compute:VirtualMachine": ("resourceGroupName", "vmName", "location", "zones", "osProfile"),
    # Managed disk: zone and source are create-only; size grows in place (disk.json).
    "azure-native:compute:Disk": ("resourceGroupName", "diskName", "location", "zones", "creationData"),
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
    # Slurm accounting (components/azure/slurm_accounting.py). mysql flexible server (specification/mysql/
    # resource-manager, FlexibleServers): the admin login, the zone and the private access (delegated subnet and DNS
    # zone) are set at creation (learn.microsoft.com/azure/mysql/flexible-server/concepts-networking: "you can't
    # change the connectivity method after the server is created"); sku, storage, backups, version and the key
    # update in place. A database's name and charset, a parameter's name are path or create-only inputs.
    "azure-native:dbformysql:Server": (
        "resourceGroupName",
        "serverName",
        "location",
        "administratorLogin",
        "availabilityZone",
        "network.delegatedSubnetResourceId",
        "network.privateDnsZoneResourceId",
        "createMode",
    ),
    "azure-native:dbformysql:Database": ("resourceGroupName", "serverName", "databaseName", "charset", "collation"),
    "azure-native:dbformysql:Configuration": ("resourceGroupName", "serverName", "configurationName"),
}
# Resource Manager's tags map: an edit touching nothing else is reported as "tags only".
TAG_PROPERTIES = frozenset({"tags"})

REPLACE_RULES = ReplaceRules(
    forcing={**REPLACE_FORCING, **random_provider.REPLACE_FORCING, **time_provider.REPLACE_FORCING},
    tag_properties=TAG_PROPERTIES,
)
