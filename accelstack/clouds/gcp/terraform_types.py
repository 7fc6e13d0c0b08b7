"""pulumi-gcp as a Terraform plan names it (pure data; read by `accelstack.engine.terraform_plan` through the
registry, `Cloud.terraform`).
"""

from __future__ import annotations

from accelstack.clouds import random_provider, time_provider
from accelstack.clouds.base import TerraformProvider

# Pulumi type token -> Terraform resource type. Every token the components register is here.
TERRAFORM_TYPES: dict[str, str] = {
    # pulumi-gcp 10.x: the google provider's resources (pulumi-gcp provider/resources.go maps each
    # google_<product>_<resource> to gcp:<module>/<camelName>:<Name>; the irregular ones are the IAM and
    # secret manager names, service accounts and service networking).
    **{
        f"gcp:compute/{camel}:{camel[0].upper()}{camel[1:]}": f"google_compute_{snake}"
        for camel, snake in (
            ("address", "address"),
            ("backendService", "backend_service"),
            ("disk", "disk"),
            ("firewall", "firewall"),
            ("globalAddress", "global_address"),
            ("globalForwardingRule", "global_forwarding_rule"),
            ("healthCheck", "health_check"),
            ("instance", "instance"),
            ("instanceGroupManager", "instance_group_manager"),
            ("instanceTemplate", "instance_template"),
            ("network", "network"),
            ("regionAutoscaler", "region_autoscaler"),
            ("regionInstanceGroupManager", "region_instance_group_manager"),
            ("regionInstanceTemplate", "region_instance_template"),
            ("resourcePolicy", "resource_policy"),
            ("router", "router"),
            ("routerNat", "router_nat"),
            ("securityPolicy", "security_policy"),
            ("subnetwork", "subnetwork"),
            ("targetHttpsProxy", "target_https_proxy"),
        )
    },
    "gcp:compute/sSLPolicy:SSLPolicy": "google_compute_ssl_policy",
    "gcp:compute/uRLMap:URLMap": "google_compute_url_map",
    "gcp:kms/cryptoKey:CryptoKey": "google_kms_crypto_key",
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": "google_kms_crypto_key_iam_member",
    "gcp:projects/serviceIdentity:ServiceIdentity": "google_project_service_identity",
    "gcp:projects/service:Service": "google_project_service",
    "gcp:projects/iAMAuditConfig:IAMAuditConfig": "google_project_iam_audit_config",
    "gcp:kms/keyRing:KeyRing": "google_kms_key_ring",
    "gcp:lustre/instance:Instance": "google_lustre_instance",
    "gcp:pubsub/subscription:Subscription": "google_pubsub_subscription",
    "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember": "google_pubsub_subscription_iam_member",
    "gcp:pubsub/topic:Topic": "google_pubsub_topic",
    "gcp:pubsub/topicIAMMember:TopicIAMMember": "google_pubsub_topic_iam_member",
    "gcp:secretmanager/secret:Secret": "google_secret_manager_secret",
    "gcp:secretmanager/secretIamMember:SecretIamMember": "google_secret_manager_secret_iam_member",
    "gcp:secretmanager/secretVersion:SecretVersion": "google_secret_manager_secret_version",
    "gcp:serviceaccount/account:Account": "google_service_account",
    "gcp:servicenetworking/connection:Connection": "google_service_networking_connection",
    "gcp:storage/bucket:Bucket": "google_storage_bucket",
    "gcp:storage/bucketIAMMember:BucketIAMMember": "google_storage_bucket_iam_member",
    # A landing stack's (components/gcp/landing.py): organization, folder and billing level.
    "gcp:billing/budget:Budget": "google_billing_budget",
    "gcp:cloudquota/sQuotaPreference:SQuotaPreference": "google_cloud_quotas_quota_preference",
    "gcp:monitoring/notificationChannel:NotificationChannel": "google_monitoring_notification_channel",
    "gcp:organizations/folder:Folder": "google_folder",
    "gcp:organizations/project:Project": "google_project",
    "gcp:orgpolicy/customConstraint:CustomConstraint": "google_org_policy_custom_constraint",
    "gcp:orgpolicy/policy:Policy": "google_org_policy_policy",
}

# The google provider's VM blocks (instances and templates): singular in Terraform, plural in Pulumi.
GOOGLE_VM_BLOCKS: dict[str, str] = {
    "network_interfaces": "network_interface",
    "access_configs": "access_config",
    "ipv6_access_configs": "ipv6_access_config",
    "alias_ip_ranges": "alias_ip_range",
    "disks": "disk",
    "attached_disks": "attached_disk",
    "scratch_disks": "scratch_disk",
    "guest_accelerators": "guest_accelerator",
}

# List blocks the bridge pluralised, per Terraform type, keyed by the snake_case of the Pulumi name.
BLOCK_RENAMES: dict[str, dict[str, str]] = {
    "google_project_iam_audit_config": {"audit_log_configs": "audit_log_config"},
    # google: the provider's repeated blocks are singular in Terraform (`network_interface {}`), plural in Pulumi.
    **{
        tf_type: GOOGLE_VM_BLOCKS
        for tf_type in (
            "google_compute_instance_template",
            "google_compute_region_instance_template",
            "google_compute_instance",
        )
    },
    "google_compute_firewall": {"allows": "allow", "denies": "deny"},
    **{
        tf_type: {"versions": "version", "named_ports": "named_port"}
        for tf_type in ("google_compute_instance_group_manager", "google_compute_region_instance_group_manager")
    },
    "google_compute_region_autoscaler": {"metrics": "metric"},
    "google_compute_security_policy": {"rules": "rule"},
    "google_compute_backend_service": {"backends": "backend"},
    "google_compute_router_nat": {"subnetworks": "subnetwork"},
    "google_compute_url_map": {"host_rules": "host_rule", "path_matchers": "path_matcher", "path_rules": "path_rule"},
    "google_storage_bucket": {"lifecycle_rules": "lifecycle_rule"},
}

# The google provider's map attributes on every type that has them (labels, VM metadata, default labels).
GOOGLE_MAP_ATTRIBUTES = frozenset({"labels", "metadata", "default_labels", "resource_manager_tags"})

TERRAFORM = (
    TerraformProvider(
        package="gcp",
        address="registry.terraform.io/hashicorp/google",
        types=TERRAFORM_TYPES,
        block_renames=BLOCK_RENAMES,
        map_attributes={tf_type: GOOGLE_MAP_ATTRIBUTES for tf_type in TERRAFORM_TYPES.values()},
    ),
    random_provider.TERRAFORM,
    time_provider.TERRAFORM,
)
