"""azure-native resources as an ARM template names them (`accelstack.engine.arm_template`, the view Checkov's
`arm` framework reads). azure-native is generated from the Azure REST API specs, so each resource is one ARM
resource type; the Python SDK does not ship the type's path, so it is tabled here, checked against the API's
documented resource types (learn.microsoft.com/azure/templates/<namespace>/<type>). The API version is the one
the installed SDK calls (read from its docstring, never tabled).

`name` lists the inputs whose values form the ARM name, parent first (a child resource's name is
`parent/child`; `=default` is a literal segment). `renames` maps an input the SDK renamed back to ARM's property
(the spec's x-ms-client-name: `enableHttpsTrafficOnly` is ARM's `supportsHttpsTrafficOnly`)."""

from __future__ import annotations

from accelstack.clouds.base import ArmProvider, ArmType

STORAGE_ACCOUNT_RENAMES = {"enableHttpsTrafficOnly": "supportsHttpsTrafficOnly", "networkRuleSet": "networkAcls"}

ARM = ArmProvider(
    package="azure-native",
    types={
        # A landing stack's (components/azure/landing.py): management-group, tenant and subscription scope.
        "azure-native:authorization:PolicyAssignment": ArmType(
            "Microsoft.Authorization/policyAssignments", ("policyAssignmentName",)
        ),
        "azure-native:authorization:PolicyDefinitionAtManagementGroup": ArmType(
            "Microsoft.Authorization/policyDefinitions", ("policyDefinitionName",)
        ),
        "azure-native:consumption:Budget": ArmType("Microsoft.Consumption/budgets", ("budgetName",)),
        "azure-native:management:ManagementGroup": ArmType("Microsoft.Management/managementGroups", ("groupId",)),
        "azure-native:subscription:Alias": ArmType("Microsoft.Subscription/aliases", ("aliasName",)),
        "azure-native:authorization:RoleAssignment": ArmType(
            "Microsoft.Authorization/roleAssignments", ("roleAssignmentName",)
        ),
        "azure-native:authorization:RoleDefinition": ArmType(
            "Microsoft.Authorization/roleDefinitions", ("roleDefinitionId",), {"roleType": "type"}
        ),
        "azure-native:compute:Disk": ArmType("Microsoft.Compute/disks", ("diskName",)),
        "azure-native:compute:VirtualMachine": ArmType("Microsoft.Compute/virtualMachines", ("vmName",)),
        "azure-native:compute:VirtualMachineScaleSet": ArmType(
            "Microsoft.Compute/virtualMachineScaleSets", ("vmScaleSetName",)
        ),
        "azure-native:keyvault:Key": ArmType("Microsoft.KeyVault/vaults/keys", ("vaultName", "keyName")),
        "azure-native:keyvault:Secret": ArmType("Microsoft.KeyVault/vaults/secrets", ("vaultName", "secretName")),
        "azure-native:keyvault:Vault": ArmType("Microsoft.KeyVault/vaults", ("vaultName",)),
        "azure-native:machinelearningservices:ComponentVersion": ArmType(
            "Microsoft.MachineLearningServices/workspaces/components/versions", ("workspaceName", "name", "version")
        ),
        "azure-native:machinelearningservices:Compute": ArmType(
            "Microsoft.MachineLearningServices/workspaces/computes", ("workspaceName", "computeName")
        ),
        "azure-native:machinelearningservices:Datastore": ArmType(
            "Microsoft.MachineLearningServices/workspaces/datastores", ("workspaceName", "name")
        ),
        "azure-native:machinelearningservices:EnvironmentVersion": ArmType(
            "Microsoft.MachineLearningServices/workspaces/environments/versions", ("workspaceName", "name", "version")
        ),
        "azure-native:machinelearningservices:Workspace": ArmType(
            "Microsoft.MachineLearningServices/workspaces", ("workspaceName",)
        ),
        "azure-native:managedidentity:UserAssignedIdentity": ArmType(
            "Microsoft.ManagedIdentity/userAssignedIdentities", ("resourceName",)
        ),
        "azure-native:monitor:AutoscaleSetting": ArmType(
            "Microsoft.Insights/autoscalesettings", ("autoscaleSettingName",)
        ),
        "azure-native:monitor:DiagnosticSetting": ArmType("Microsoft.Insights/diagnosticSettings", ("name",)),
        "azure-native:monitor:MetricAlert": ArmType("Microsoft.Insights/metricAlerts", ("ruleName",)),
        "azure-native:network:ApplicationGateway": ArmType(
            "Microsoft.Network/applicationGateways", ("applicationGatewayName",)
        ),
        "azure-native:network:NatGateway": ArmType("Microsoft.Network/natGateways", ("natGatewayName",)),
        "azure-native:network:NetworkInterface": ArmType(
            "Microsoft.Network/networkInterfaces", ("networkInterfaceName",)
        ),
        "azure-native:network:NetworkSecurityGroup": ArmType(
            "Microsoft.Network/networkSecurityGroups", ("networkSecurityGroupName",)
        ),
        "azure-native:network:PrivateDnsZoneGroup": ArmType(
            "Microsoft.Network/privateEndpoints/privateDnsZoneGroups",
            ("privateEndpointName", "privateDnsZoneGroupName"),
        ),
        "azure-native:network:PrivateEndpoint": ArmType("Microsoft.Network/privateEndpoints", ("privateEndpointName",)),
        "azure-native:network:PublicIPAddress": ArmType(
            "Microsoft.Network/publicIPAddresses", ("publicIpAddressName",)
        ),
        "azure-native:network:Subnet": ArmType(
            "Microsoft.Network/virtualNetworks/subnets", ("virtualNetworkName", "subnetName")
        ),
        "azure-native:network:VirtualNetwork": ArmType("Microsoft.Network/virtualNetworks", ("virtualNetworkName",)),
        "azure-native:network:WebApplicationFirewallPolicy": ArmType(
            "Microsoft.Network/ApplicationGatewayWebApplicationFirewallPolicies", ("policyName",)
        ),
        "azure-native:privatedns:PrivateZone": ArmType("Microsoft.Network/privateDnsZones", ("privateZoneName",)),
        "azure-native:privatedns:VirtualNetworkLink": ArmType(
            "Microsoft.Network/privateDnsZones/virtualNetworkLinks", ("privateZoneName", "virtualNetworkLinkName")
        ),
        "azure-native:resources:ResourceGroup": ArmType("Microsoft.Resources/resourceGroups", ("resourceGroupName",)),
        "azure-native:servicebus:Namespace": ArmType("Microsoft.ServiceBus/namespaces", ("namespaceName",)),
        "azure-native:servicebus:Queue": ArmType(
            "Microsoft.ServiceBus/namespaces/queues", ("namespaceName", "queueName")
        ),
        "azure-native:standbypool:StandbyVirtualMachinePool": ArmType(
            "Microsoft.StandbyPool/standbyVirtualMachinePools", ("standbyVirtualMachinePoolName",)
        ),
        "azure-native:storage:BlobContainer": ArmType(
            "Microsoft.Storage/storageAccounts/blobServices/containers", ("accountName", "=default", "containerName")
        ),
        "azure-native:storage:BlobServiceProperties": ArmType(
            "Microsoft.Storage/storageAccounts/blobServices", ("accountName", "blobServicesName")
        ),
        "azure-native:storage:ManagementPolicy": ArmType(
            "Microsoft.Storage/storageAccounts/managementPolicies", ("accountName", "managementPolicyName")
        ),
        "azure-native:storage:StorageAccount": ArmType(
            "Microsoft.Storage/storageAccounts", ("accountName",), STORAGE_ACCOUNT_RENAMES
        ),
        "azure-native:storagecache:AmlFilesystem": ArmType(
            "Microsoft.StorageCache/amlFilesystems", ("amlFilesystemName",)
        ),
        "azure-native:storagecache:ImportJob": ArmType(
            "Microsoft.StorageCache/amlFilesystems/importJobs", ("amlFilesystemName", "importJobName")
        ),
    },
    # Lists whose items are ARM sub-resources ({id, name, properties}): azure-native flattens each item's
    # `properties` into it, ARM nests them.
    sub_resource_lists=frozenset(
        {
            "securityRules",
            "ipConfigurations",
            "networkInterfaces",
            "networkInterfaceConfigurations",
            "extensions",
            "gatewayIPConfigurations",
            "frontendIPConfigurations",
            "frontendPorts",
            "backendAddressPools",
            "backendHttpSettingsCollection",
            "httpListeners",
            "requestRoutingRules",
            "probes",
            "sslCertificates",
            "redirectConfigurations",
            "urlPathMaps",
            "rewriteRuleSets",
            "privateLinkServiceConnections",
            "privateDnsZoneConfigs",
        }
    ),
)
