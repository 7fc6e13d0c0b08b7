"""Which inputs make pulumi-oci replace a resource rather than update it (pure data; read by
`accelstack.engine.replacement` through the registry, `Cloud.replace_rules`).

Source: pulumi-oci 5.5.0's docstrings, which mark every input the OCI API updates in place "(Updatable)"; the
others are ForceNew in terraform-provider-oci (the bridged provider). Read from the installed SDK, one class at a
time, for the types components/oci registers.
"""

from __future__ import annotations

from accelstack.clouds import random_provider, time_provider
from accelstack.clouds.base import ReplaceRules

REPLACE_FORCING: dict[str, tuple[str, ...]] = {
    "oci:Core/vcn:Vcn": ("cidrBlock", "dnsLabel", "isIpv6Enabled"),
    "oci:Core/subnet:Subnet": (
        "vcnId",
        "availabilityDomain",
        "dnsLabel",
        "prohibitInternetIngress",
        "prohibitPublicIpOnVnic",
    ),
    "oci:Core/networkSecurityGroup:NetworkSecurityGroup": ("vcnId",),
    "oci:Core/networkSecurityGroupSecurityRule:NetworkSecurityGroupSecurityRule": (
        "direction",
        "networkSecurityGroupId",
        "protocol",
        "description",
        "destination",
        "destinationType",
        "source",
        "sourceType",
        "stateless",
        "tcpOptions",
        "udpOptions",
    ),
    "oci:Core/natGateway:NatGateway": ("vcnId",),
    "oci:Core/serviceGateway:ServiceGateway": ("vcnId",),
    "oci:Core/routeTable:RouteTable": ("vcnId",),
    "oci:Core/securityList:SecurityList": ("vcnId",),
    # UpdateInstanceConfiguration changes only the name and tags: new instance details are a new configuration
    # (the cluster network then points its pool at it, in place).
    "oci:Core/instanceConfiguration:InstanceConfiguration": ("instanceDetails", "instanceId", "source"),
    "oci:Core/clusterNetwork:ClusterNetwork": ("placementConfiguration", "clusterConfiguration"),
    "oci:Core/computeCapacityReservation:ComputeCapacityReservation": ("availabilityDomain",),
    # An imported image: its source and launch mode are fixed at import (only name, tags and compartment update).
    "oci:Core/image:Image": ("imageSourceDetails", "instanceId", "launchMode"),
    # One shape compatibility entry of an image (Add/RemoveImageShapeCompatibilityEntry): nothing updates in place.
    "oci:Core/shapeManagement:ShapeManagement": ("compartmentId", "imageId", "shapeName"),
    "oci:Core/instance:Instance": (
        "availabilityDomain",
        "hostnameLabel",
        "image",
        "preemptibleInstanceConfig",
        "subnetId",
        "createVnicDetails.privateIp",
        "createVnicDetails.subnetId",
        "sourceDetails",
        # The SDK marks `metadata` "(Updatable)", but cloud-init reads user_data once, at first boot: the Slurm head
        # asks for replacement on it (components/oci/scheduler.py HEAD_REPLACED_ON, replace_on_changes), so a change
        # of the head's setup is a replacement in `accelstack diff` too. Its other metadata keys update in place.
        "metadata.user_data",
    ),
    "oci:Core/volume:Volume": ("availabilityDomain", "backupPolicyId", "sourceDetails", "volumeBackupId"),
    "oci:Core/volumeAttachment:VolumeAttachment": ("attachmentType", "instanceId", "volumeId", "device", "isReadOnly"),
    "oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem": (
        "availabilityDomain",
        "fileSystemName",
        "performanceTier",
        "subnetId",
        "clusterPlacementGroupId",
    ),
    "oci:Lustre/fileStorageObjectStorageLink:FileStorageObjectStorageLink": (
        "availabilityDomain",
        "fileSystemPath",
        "lustreFileSystemId",
        "objectStoragePrefix",
    ),
    "oci:ObjectStorage/bucket:Bucket": ("namespace", "name", "storageTier"),
    "oci:Identity/policy:Policy": ("compartmentId", "name"),
    "oci:Identity/dynamicGroup:DynamicGroup": ("compartmentId", "name"),
    # A landing stack's quota policy: its statements (caps and zeros) update in place (limits/quota.py: statements,
    # description and tags "(Updatable)"; locks are not set).
    "oci:Limits/quota:Quota": ("compartmentId", "name"),
    "oci:Kms/vault:Vault": ("vaultType",),
    "oci:Kms/key:Key": ("keyShape", "managementEndpoint", "protectionMode"),
    "oci:Vault/secret:Secret": ("keyId", "secretName", "vaultId"),
    "pulumi:providers:oci": ("tenancyOcid", "region"),
    **random_provider.REPLACE_FORCING,
    **time_provider.REPLACE_FORCING,
}

# OCI grows Lustre only (file-system-capacity.htm): a smaller capacity is refused by the API, so the diff reports it
# as the replacement it would take.
REPLACE_SHRINK: dict[str, tuple[str, ...]] = {
    "oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem": ("capacityInGbs",),
    "oci:Core/volume:Volume": ("sizeInGbs",),
}

REPLACE_RULES = ReplaceRules(
    forcing=REPLACE_FORCING,
    shrink=REPLACE_SHRINK,
    tag_properties=frozenset({"freeformTags", "definedTags"}),
)
