"""Which inputs make pulumi-gcp replace a resource rather than update it (pure data; read by
`accelstack.engine.replacement` through the registry, `Cloud.replace_rules`). The sources are said at the
head of each block.
"""

from __future__ import annotations

from accelstack.clouds import random_provider, time_provider
from accelstack.clouds.base import ReplaceRules

# Inputs whose change makes the provider REPLACE the resource (Pulumi property names; a dotted path is an
# input nested in an object whose other members update in place).
REPLACE_FORCING: dict[str, tuple[str, ...]] = {
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
    # A service's agent (google_project_service_identity: project and service are ForceNew); replacing it only
    # reads the same agent again, and destroying it leaves the agent in place.
    "gcp:projects/serviceIdentity:ServiceIdentity": ("project", "service"),
    # An enabled API (google_project_service: project and service are ForceNew); disable_on_destroy and
    # disable_dependent_services update in place. A replacement re-enables the same API.
    "gcp:projects/service:Service": ("project", "service"),
    # A project's audit config for one service (google_project_iam_audit_config: project and service are
    # ForceNew; the log types update in place).
    "gcp:projects/iAMAuditConfig:IAMAuditConfig": ("project", "service"),
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
    # its machine type updates with allowStoppingForUpdate. Metadata updates in place (setMetadata), but the
    # head's component replaces it when its user-data key changes (replace_on_changes: cloud-init reads it
    # once, at first boot), so that key is tabled here as replacing; its other keys (Slurm's configuration
    # files, OS Login) are not.
    "gcp:compute/instance:Instance": (
        "name",
        "zone",
        "project",
        "bootDisk",
        "scratchDisks",
        "networkInterfaces",
        "metadata.user-data",
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
    # Slurm accounting (components/gcp/slurm_accounting.py). resource_sql_database_instance.go: the name, region,
    # project, CMEK key, primary and replica settings are ForceNew (the version, tier, flags, backups and IP
    # settings update in place); mmv1 Database.yaml: name, instance, project; resource_sql_user.go: name,
    # instance, host, project (the password updates in place).
    "gcp:sql/databaseInstance:DatabaseInstance": (
        "name",
        "region",
        "project",
        "encryptionKeyName",
        "masterInstanceName",
        "replicaConfiguration",
        "clone",
    ),
    "gcp:sql/database:Database": ("name", "instance", "project"),
    "gcp:sql/user:User": ("name", "instance", "host", "project", "type"),
}

REPLACE_RULES = ReplaceRules(
    forcing={**REPLACE_FORCING, **random_provider.REPLACE_FORCING, **time_provider.REPLACE_FORCING}
)
