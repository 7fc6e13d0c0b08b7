"""A second red-team round (issue 28), on all five clouds: AWS, Azure, GCP, OCI and Vultr, training, serving and
landing stacks alike.

Each attack is one realistic edit of a shipped stack's own export (previewed once per stack), in a spelling the
other suites do not use: a federation subject with a wildcard, a principal-type condition, an OCI dynamic group or
`any-user`, the identity a machine wears, a replication or pre-authenticated request, a peering or DRG attachment,
an admin-equivalent predefined role, a WAF rule in count mode, a deprecated property. Both packs run through the
analyzer path the CLI uses; an attack is stopped when either returns a MANDATORY verdict (the unmutated stacks get
none, landing stacks with their plan's context). Legitimate changes must draw no verdict at all. The kill rate and
false-positive rate are printed, by class and cloud.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from red_team_edits import Edit, add, add_dynamic, allow, at, both, edit, entry, put, with_statement
from red_team_suite import (
    BECOME,
    CAPACITY,
    CLASSES,
    CONDITION,
    DATA_LOSS,
    ESCALATION,
    FIELD,
    LOGGING,
    NETWORK,
    PLACEMENT,
    PRINCIPAL,
    WAF,
    Change,
    attack_cases,
    report_kill_rate,
    stopped,
    verdicts_after,
)
from vpn_edits import ROUTE, SPELLINGS, oci_vpn

CLOUDS = ("aws", "azure", "gcp", "oci", "vultr")


def appended(name: str, type_token: str, key: str, *items: Any) -> Edit:
    """Appends to a list property (an OCI policy's statements, a rule list)."""

    def change(props: dict[str, Any]) -> None:
        props[key] = [*props.get(key, []), *copy.deepcopy(list(items))]

    return edit(name, type_token, change)


# --- AWS --------------------------------------------------------------------------------------------------------------
AT, AS, AL = "aws-training", "aws-serving", "aws-landing"
TRAIN_ACCT, SERVE_ACCT = "111111111111", "222222222222"
A_ROLE, A_ROLE_POLICY = "aws:iam/role:Role", "aws:iam/rolePolicy:RolePolicy"
CKPT = "acme-train-checkpoints"
SERVE_MODEL_READ = ("aws-serving-replica-model-read", A_ROLE_POLICY)
GITHUB_OIDC = f"arn:aws:iam::{TRAIN_ACCT}:oidc-provider/token.actions.githubusercontent.com"

AWS = [
    Change(
        "aws-node-role-trusts-any-github-repo",
        AT,
        with_statement(
            "aws-training-node",
            A_ROLE,
            "assumeRolePolicy",
            {
                "Effect": "Allow",
                "Principal": {"Federated": GITHUB_OIDC},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {"StringLike": {"token.actions.githubusercontent.com:sub": "repo:*"}},
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "aws-checkpoints-open-to-any-assumed-role",
        AT,
        with_statement(
            "aws-training-storage-checkpoints-policy",
            "aws:s3/bucketPolicy:BucketPolicy",
            "policy",
            allow(
                "s3:GetObject",
                f"arn:aws:s3:::{CKPT}/*",
                "*",
                {"StringEquals": {"aws:PrincipalType": "AssumedRole"}},
            ),
        ),
        PRINCIPAL,
    ),
    Change(
        "aws-artifact-list-condition-if-exists",
        AT,
        edit(
            "aws-training-storage-checkpoints-policy",
            "aws:s3/bucketPolicy:BucketPolicy",
            lambda props: props.update(
                policy=props["policy"].replace('"StringLike": {"s3:prefix"', '"StringLikeIfExists": {"s3:prefix"')
            ),
        ),
        CONDITION,
    ),
    Change(
        "aws-checkpoints-replicated-to-serving",
        AT,
        add(
            "aws:s3/bucketReplicationConfig:BucketReplicationConfig",
            "aws-training-ckpt-replication",
            {
                "bucket": CKPT,
                "role": f"arn:aws:iam::{TRAIN_ACCT}:role/aws-training-node",
                "rules": [
                    {
                        "id": "all",
                        "status": "Enabled",
                        "destination": {"bucket": "arn:aws:s3:::acme-serve-models", "account": SERVE_ACCT},
                    }
                ],
            },
        ),
        PLACEMENT,
    ),
    Change(
        "aws-training-vpc-peered-with-serving",
        AT,
        add(
            "aws:ec2/vpcPeeringConnection:VpcPeeringConnection",
            "aws-training-to-serving",
            {"vpcId": "vpc-training", "peerVpcId": "vpc-serving", "peerOwnerId": SERVE_ACCT, "autoAccept": False},
        ),
        NETWORK,
    ),
    Change(
        "aws-serving-role-iam-full-access",
        AS,
        add(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            "aws-serving-replica-iam",
            {"role": "aws-serving-replica-id", "policyArn": "arn:aws:iam::aws:policy/IAMFullAccess"},
        ),
        ESCALATION,
    ),
    Change(
        "aws-waf-log-group-unencrypted-and-short",
        AS,
        put("aws-serving-waf-logs", "aws:cloudwatch/logGroup:LogGroup", kmsKeyId="", retentionInDays=1),
        LOGGING,
    ),
    Change(
        "aws-rate-keyed-on-forwarded-header",
        AS,
        at(
            "aws-serving-edge",
            "aws:wafv2/webAcl:WebAcl",
            "rules.0.statement.rateBasedStatement",
            {
                "aggregateKeyType": "FORWARDED_IP",
                "forwardedIpConfig": {"headerName": "X-Client-IP", "fallbackBehavior": "MATCH"},
                "evaluationWindowSec": 60,
                "limit": 600,
            },
        ),
        WAF,
    ),
    Change(
        "aws-rate-rule-in-count-mode",
        AS,
        at("aws-serving-edge", "aws:wafv2/webAcl:WebAcl", "rules.0.action", {"count": {}}),
        WAF,
    ),
    Change(
        "aws-checkpoints-expire-after-a-day",
        AT,
        at(
            "aws-training-storage-checkpoints-lifecycle",
            "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
            "rules.0.expiration",
            {"days": 1},
        ),
        DATA_LOSS,
    ),
]

# --- Azure ------------------------------------------------------------------------------------------------------------
ZT, ZS = "azure-training", "azure-serving"
TRAIN_SUB, SERVE_SUB = "3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c", "7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098"
Z_ASSIGN = "azure-native:authorization:RoleAssignment"
Z_ACCOUNT = "azure-native:storage:StorageAccount"
Z_BLOBS = "azure-native:storage:BlobServiceProperties"
Z_VMSS = "azure-native:compute:VirtualMachineScaleSet"
Z_WAF = "azure-native:network:WebApplicationFirewallPolicy"
TRAIN_RG = f"/subscriptions/{TRAIN_SUB}/resourceGroups/azure-training-rg"
SERVE_RG = f"/subscriptions/{SERVE_SUB}/resourceGroups/azure-serving-rg"
SERVE_ACCOUNT = f"{SERVE_RG}/providers/Microsoft.Storage/storageAccounts/azure-serving-logs"
SERVE_VNET = f"{SERVE_RG}/providers/Microsoft.Network/virtualNetworks/azure-serving-net-vnet"
SERVE_REPLICAS = ("azure-serving-id-replicas", "azure-native:managedidentity:UserAssignedIdentity")
RBAC_ADMINISTRATOR = "f58310d9-a9f6-439a-9e8d-f62e7b41a168"  # Role Based Access Control Administrator
MODELS_ASSIGNMENT = ("azure-serving-id-replicas-models", Z_ASSIGN)


def wear_identities(props: dict[str, Any], change: Any) -> None:
    """Rewrites the user-assigned identities a machine wears: a list of ids in inputs, a map keyed by id in outputs."""
    worn = props["identity"]["userAssignedIdentities"]
    ids = change(list(worn))
    props["identity"]["userAssignedIdentities"] = ids if isinstance(worn, list) else {i: {} for i in ids}


AZURE = [
    Change(
        "azure-training-identity-trusts-any-namespace",
        ZT,
        add(
            "azure-native:managedidentity:FederatedIdentityCredential",
            "azure-training-nodes-ci",
            {
                "resourceName": "azure-training-nodes-id",
                "resourceGroupName": "azure-training-rg",
                "issuer": "https://token.actions.githubusercontent.com",
                "subject": "repo:acme/*",
                "audiences": ["api://AzureADTokenExchange"],
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "azure-models-condition-any-path",
        ZS,
        edit(
            *MODELS_ASSIGNMENT,
            lambda props: props.update(
                condition=props["condition"].replace(
                    "StringStartsWith 'models/llama-3.1-8b-instruct/'", "StringLike '*'"
                )
            ),
        ),
        CONDITION,
    ),
    Change(
        "azure-rbac-administrator-for-serving-on-training",
        ZS,
        add(
            Z_ASSIGN,
            "azure-serving-rbac-admin",
            {
                "scope": TRAIN_RG,
                "roleDefinitionId": f"/subscriptions/{TRAIN_SUB}/providers/Microsoft.Authorization/roleDefinitions/"
                f"{RBAC_ADMINISTRATOR}",
                "principalId": "22222222-2222-2222-2222-222222222222",
                "principalType": "ServicePrincipal",
            },
            depends={"principalId": SERVE_REPLICAS},
        ),
        ESCALATION,
    ),
    Change(
        "azure-checkpoints-object-replication-to-serving",
        ZT,
        add(
            "azure-native:storage:ObjectReplicationPolicy",
            "azure-training-ckpt-replication",
            {
                "accountName": "acmetrainckpts",
                "resourceGroupName": "azure-training-rg",
                "objectReplicationPolicyId": "default",
                "sourceAccount": "acmetrainckpts",
                "destinationAccount": SERVE_ACCOUNT,
                "rules": [{"sourceContainer": "checkpoints", "destinationContainer": "models"}],
            },
        ),
        PLACEMENT,
    ),
    Change(
        "azure-training-vnet-inline-peering-to-serving",
        ZT,
        put(
            "azure-training-net-vnet",
            "azure-native:network:VirtualNetwork",
            addressSpace={"addressPrefixes": ["10.40.0.0/16"]},
            virtualNetworkPeerings=[
                {
                    "name": "to-serving",
                    "remoteVirtualNetwork": {"id": SERVE_VNET},
                    "allowVirtualNetworkAccess": True,
                    "allowForwardedTraffic": True,
                }
            ],
        ),
        NETWORK,
    ),
    Change(
        "azure-blob-deletes-permanent",
        ZT,
        at("azure-training-storage-checkpoints", Z_BLOBS, "deleteRetentionPolicy.allowPermanentDelete", True),
        DATA_LOSS,
    ),
    Change(
        "azure-container-soft-delete-off",
        ZT,
        at("azure-training-storage-checkpoints", Z_BLOBS, "containerDeleteRetentionPolicy", {"enabled": False}),
        DATA_LOSS,
    ),
    Change(
        "azure-checkpoints-on-platform-keys",
        ZT,
        edit(
            "azure-training-storage-checkpoints",
            Z_ACCOUNT,
            lambda props: props.update(encryption={"keySource": "Microsoft.Storage"}),
        ),
        LOGGING,
    ),
    Change(
        "azure-waf-detection-mode",
        ZS,
        at("azure-serving-waf", Z_WAF, "policySettings.mode", "Detection"),
        WAF,
    ),
    Change(
        "azure-rate-rule-log-only",
        ZS,
        at("azure-serving-waf", Z_WAF, "customRules.0.action", "Log"),
        WAF,
    ),
    Change(
        "azure-serving-low-priority-spelling",
        ZS,
        at("azure-serving-replicas", Z_VMSS, "virtualMachineProfile.priority", "Low"),
        CAPACITY,
    ),
]

# --- GCP --------------------------------------------------------------------------------------------------------------
GT, GS, GL = "gcp-training", "gcp-serving", "gcp-landing"
G_CKPT = "acme-train-checkpoints"
G_BUCKET = "gcp:storage/bucket:Bucket"
G_ARMOR = "gcp:compute/securityPolicy:SecurityPolicy"
G_TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
G_REPLICA = "serviceAccount:gcp-serving-replica@acme-serve.iam.gserviceaccount.com"
G_NODES_SA = "projects/acme-train/serviceAccounts/gcp-training-nodes@acme-train.iam.gserviceaccount.com"
G_NODES_EMAIL = "gcp-training-nodes@acme-train.iam.gserviceaccount.com"

GCP = [
    Change(
        "gcp-deleted-principal-on-checkpoints",
        GT,
        add(
            "gcp:storage/bucketIAMMember:BucketIAMMember",
            "gcp-training-ghost-reads",
            {
                "bucket": G_CKPT,
                "role": "roles/storage.objectViewer",
                "member": "deleted:serviceAccount:old-ci@acme-ci.iam.gserviceaccount.com?uid=123456789012345678901",
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "gcp-legacy-acl-all-users",
        GT,
        add(
            "gcp:storage/defaultObjectAccessControl:DefaultObjectAccessControl",
            "gcp-training-ckpt-default-acl",
            {"bucket": G_CKPT, "entity": "allUsers", "role": "READER"},
        ),
        FIELD,
    ),
    Change(
        "gcp-serving-template-wears-training-sa",
        GS,
        at("gcp-serving-replica", G_TEMPLATE, "serviceAccount", {"email": G_NODES_EMAIL, "scopes": ["cloud-platform"]}),
        BECOME,
    ),
    Change(
        "gcp-serving-openid-token-creator-on-training-sa",
        GS,
        add(
            "gcp:serviceaccount/iAMMember:IAMMember",
            "gcp-serving-mints-training-tokens",
            {
                "serviceAccountId": G_NODES_SA,
                "role": "roles/iam.serviceAccountOpenIdTokenCreator",
                "member": G_REPLICA,
            },
        ),
        BECOME,
    ),
    Change(
        "gcp-models-condition-whole-bucket",
        GS,
        at(
            "gcp-serving-replica-models",
            "gcp:storage/bucketIAMMember:BucketIAMMember",
            "condition.expression",
            'resource.name.startsWith("projects/_/buckets/acme-train-checkpoints/objects/")',
        ),
        CONDITION,
    ),
    Change(
        "gcp-training-logs-sink-to-serving-topic",
        GT,
        add(
            "gcp:logging/projectSink:ProjectSink",
            "gcp-training-audit-export",
            {
                "project": "acme-train",
                "destination": "pubsub.googleapis.com/projects/acme-serve/topics/audit",
                "uniqueWriterIdentity": True,
            },
        ),
        PLACEMENT,
    ),
    Change(
        "gcp-checkpoints-transfer-to-serving",
        GT,
        add(
            "gcp:storage/transferJob:TransferJob",
            "gcp-training-ckpt-copy",
            {
                "project": "acme-train",
                "description": "nightly copy",
                "transferSpec": {
                    "gcsDataSource": {"bucketName": G_CKPT},
                    "gcsDataSink": {"bucketName": "acme-serve-models"},
                },
                "schedule": {"scheduleStartDate": {"year": 2026, "month": 1, "day": 1}},
            },
        ),
        PLACEMENT,
    ),
    Change(
        "gcp-training-net-peered-with-serving",
        GT,
        add(
            "gcp:compute/networkPeering:NetworkPeering",
            "gcp-training-to-serving",
            {
                "network": "projects/acme-train/global/networks/gcp-training-net",
                "peerNetwork": "projects/acme-serve/global/networks/gcp-serving-net",
                "exportCustomRoutes": True,
            },
        ),
        NETWORK,
    ),
    Change(
        "gcp-serving-project-iam-admin-on-training",
        GS,
        add(
            "gcp:projects/iAMMember:IAMMember",
            "gcp-serving-iam-admin",
            {"project": "acme-train", "role": "roles/resourcemanager.projectIamAdmin", "member": G_REPLICA},
        ),
        ESCALATION,
    ),
    Change(
        "gcp-checkpoints-google-managed-key",
        GT,
        edit("gcp-training-checkpoints", G_BUCKET, lambda props: props.pop("encryption")),
        LOGGING,
    ),
    Change(
        "gcp-rate-rule-in-preview",
        GS,
        at("gcp-serving-armor", G_ARMOR, "rules.0.preview", True),
        WAF,
    ),
    Change(
        "gcp-checkpoints-force-destroy",
        GT,
        put("gcp-training-checkpoints", G_BUCKET, forceDestroy=True),
        DATA_LOSS,
    ),
    Change(
        "gcp-serving-spot-provisioning-model",
        GS,
        at("gcp-serving-replica", G_TEMPLATE, "scheduling", {"provisioningModel": "SPOT", "automaticRestart": False}),
        CAPACITY,
    ),
]

# --- OCI --------------------------------------------------------------------------------------------------------------
OT, OL = "oci-training", "oci-landing"
O_POLICY = "oci:Identity/policy:Policy"
O_BUCKET = "oci:ObjectStorage/bucket:Bucket"
O_TRAIN = "ocid1.compartment.oc1..aaaaaaaaacmetrain"
O_SERVE = "ocid1.compartment.oc1..aaaaaaaaacmeserve"
NODES_POLICY = ("oci-training-nodes", O_POLICY)
O_VCN = ("oci-training-vcn", "oci:Core/vcn:Vcn")


def oci_statement(text: str) -> Edit:
    return appended(*NODES_POLICY, "statements", text)


OCI = [
    Change(
        "oci-any-user-of-instance-type",
        OT,
        oci_statement(
            f"allow any-user to read objects in compartment id {O_TRAIN} where request.principal.type = 'instance'"
        ),
        PRINCIPAL,
    ),
    Change(
        "oci-dynamic-group-by-tag",
        OT,
        put(
            "oci-training-nodes",
            "oci:Identity/dynamicGroup:DynamicGroup",
            matchingRule="ANY {tag.accelstack.workload.value = 'training'}",
        ),
        PRINCIPAL,
    ),
    Change(
        "oci-serving-instances-dynamic-group-reads-checkpoints",
        OT,
        both(
            add(
                "oci:Identity/dynamicGroup:DynamicGroup",
                "oci-training-helpers",
                {
                    "compartmentId": "ocid1.tenancy.oc1..aaaaaaaaacmetenancy",
                    "name": "oci-training-helpers",
                    "description": "helpers",
                    "matchingRule": f"ALL {{instance.compartment.id = '{O_SERVE}'}}",
                },
            ),
            oci_statement(
                f"allow dynamic-group oci-training-helpers to read objects in compartment id {O_TRAIN} "
                "where target.bucket.name = 'acme-train-checkpoints'"
            ),
        ),
        BECOME,
    ),
    Change(
        "oci-checkpoints-replicated-away",
        OT,
        add(
            "oci:ObjectStorage/replicationPolicy:ReplicationPolicy",
            "oci-training-ckpt-replication",
            {
                "bucket": "acme-train-checkpoints",
                "namespace": "acmetenancy",
                "name": "to-phoenix",
                "destinationBucketName": "acme-serve-models",
                "destinationRegionName": "us-phoenix-1",
            },
        ),
        PLACEMENT,
    ),
    Change(
        "oci-checkpoints-any-object-read-par",
        OT,
        add(
            "oci:ObjectStorage/preauthrequest:Preauthrequest",
            "oci-training-ckpt-par",
            {
                "bucket": "acme-train-checkpoints",
                "namespace": "acmetenancy",
                "name": "share",
                "accessType": "AnyObjectRead",
                "bucketListingAction": "ListObjects",
                "timeExpires": "2030-01-01T00:00:00Z",
            },
        ),
        PLACEMENT,
    ),
    Change(
        "oci-datasets-object-write-par",
        OT,
        add(
            "oci:ObjectStorage/preauthrequest:Preauthrequest",
            "oci-training-datasets-upload",
            {
                "bucket": "acme-train-datasets",
                "namespace": "acmetenancy",
                "name": "upload",
                "accessType": "AnyObjectWrite",
                "timeExpires": "2030-01-01T00:00:00Z",
            },
        ),
        PLACEMENT,
    ),
    Change(
        "oci-local-peering-to-serving",
        OT,
        add(
            "oci:Core/localPeeringGateway:LocalPeeringGateway",
            "oci-training-lpg",
            {
                "compartmentId": O_TRAIN,
                "vcnId": "ocid1.vcn.oc1.us-ashburn-1.training",
                "peerId": "ocid1.localpeeringgateway.oc1.us-ashburn-1.serving",
            },
            depends={"vcnId": O_VCN},
        ),
        NETWORK,
    ),
    Change(
        "oci-drg-attachment-in-serving",
        OT,
        add(
            "oci:Core/drgAttachment:DrgAttachment",
            "oci-training-drg",
            {"drgId": "ocid1.drg.oc1.us-ashburn-1.serving", "networkDetails": {"id": "vcn", "type": "VCN"}},
            depends={"networkDetails": O_VCN},
        ),
        NETWORK,
    ),
    Change(
        "oci-own-drg-vpn-default-route",
        OT,
        oci_vpn(["0.0.0.0/0"]),
        NETWORK,
    ),
    Change(
        "oci-nodes-manage-dynamic-groups",
        OT,
        oci_statement("allow dynamic-group oci-training-nodes to use dynamic-groups in tenancy"),
        ESCALATION,
    ),
    Change(
        "oci-checkpoints-lifecycle-deletes",
        OT,
        add(
            "oci:ObjectStorage/objectLifecyclePolicy:ObjectLifecyclePolicy",
            "oci-training-ckpt-lifecycle",
            {
                "bucket": "acme-train-checkpoints",
                "namespace": "acmetenancy",
                "rules": [
                    {"name": "purge", "action": "DELETE", "isEnabled": True, "timeAmount": 1, "timeUnit": "DAYS"}
                ],
            },
        ),
        DATA_LOSS,
    ),
    Change(
        "oci-landing-training-deployers-in-serving",
        OL,
        appended(
            "oci-landing-training-deploy",
            O_POLICY,
            "statements",
            "allow group id ocid1.group.oc1.us-ashburn-1.a083b401b606830967ee to read objects in compartment "
            "id ocid1.compartment.oc1.us-ashburn-1.bc9d1ee3d4693b85e1eb",
        ),
        BECOME,
    ),
]

# --- Vultr ------------------------------------------------------------------------------------------------------------
VS = "vultr-serving"
V_INSTANCE = "vultr:index/instance:Instance"
V_RULE = "vultr:index/firewallRule:FirewallRule"
V_GROUP = "vultr:index/firewallGroup:FirewallGroup"


def vultr_open_group(name: str) -> Edit:
    return both(
        add(V_GROUP, name, {"description": "debug"}),
        add(
            V_RULE,
            f"{name}-ssh",
            {
                "firewallGroupId": f"{name}-id",
                "ipType": "v4",
                "protocol": "tcp",
                "port": "22",
                "subnet": "0.0.0.0",
                "subnetSize": 0,
            },
            depends={"firewallGroupId": (name, V_GROUP)},
        ),
    )


V_SCRIPT = "vultr:index/startupScript:StartupScript"
FOREIGN_SCRIPT_ID = "ff8f36a8-eb86-4b8d-8667-b9d5459b6390"  # a startup script kept in the account by hand


def vultr_script(name: str, text: str) -> Edit:
    """A startup script of this stack (Vultr takes its body base64-encoded)."""
    return add(V_SCRIPT, name, {"name": name, "type": "boot", "script": base64.b64encode(text.encode()).decode()})


def runs_script(instance: str, script: str) -> Edit:
    """The instance names the script by id, as the program would wire it (`scriptId=script.id`)."""

    def apply(doc: dict[str, Any]) -> None:
        resource = entry(doc, instance, V_INSTANCE)
        for props in (resource["inputs"], resource["outputs"]):
            props["scriptId"] = f"{script}-id"
        resource.setdefault("propertyDependencies", {})["scriptId"] = [entry(doc, script, V_SCRIPT)["urn"]]

    return apply


VULTR = [
    Change(
        "vultr-replica-runs-a-startup-script-kept-by-hand",
        VS,
        put("vultr-serving-replica-0", V_INSTANCE, scriptId=FOREIGN_SCRIPT_ID),
        FIELD,
    ),
    Change(
        "vultr-replica-marketplace-app-variables",
        VS,
        put("vultr-serving-replica-1", V_INSTANCE, appVariables={"hf_token": "hf_0123456789abcdefghij"}),
        FIELD,
    ),
    Change(
        "vultr-own-startup-script-carries-a-key",
        VS,
        both(
            vultr_script("vultr-serving-boot", "#!/bin/sh\nexport AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\n"),
            runs_script("vultr-serving-replica-0", "vultr-serving-boot"),
        ),
        FIELD,
    ),
    Change(
        "vultr-replica-moved-to-open-group",
        VS,
        both(
            vultr_open_group("vultr-serving-debug-fw"),
            put("vultr-serving-replica-0", V_INSTANCE, firewallGroupId="vultr-serving-debug-fw-id"),
        ),
        NETWORK,
    ),
    Change(
        "vultr-replica-without-group-ipv6-on",
        VS,
        edit(
            "vultr-serving-replica-1",
            V_INSTANCE,
            lambda props: (props.pop("firewallGroupId"), props.update(enableIpv6=True)),
        ),
        NETWORK,
    ),
    Change(
        "vultr-group-admits-every-ipv6",
        VS,
        add(
            V_RULE,
            "vultr-serving-v6-any",
            {
                "firewallGroupId": "1fabd058-9d1d-3633-1c69-812b64b333dd",
                "ipType": "v6",
                "protocol": "tcp",
                "port": "8000",
                "subnet": "::",
                "subnetSize": 0,
            },
        ),
        NETWORK,
    ),
    Change(
        "vultr-rule-admits-a-foreign-load-balancer",
        VS,
        put("vultr-serving-lb-to-replicas", V_RULE, source="5f5f5f5f-0000-4000-8000-00000000005f"),
        NETWORK,
    ),
    Change(
        "vultr-rule-private-base-size-zero",
        VS,
        put("vultr-serving-lb-to-replicas", V_RULE, subnetSize=0),
        NETWORK,
    ),
]

# --- a second wave: other spellings of the classes above, and the landing stacks ----------------------------------
TRAIN_ID_LOWER = (
    f"/subscriptions/{TRAIN_SUB}/resourcegroups/AZURE-TRAINING-RG/providers/microsoft.managedidentity/"
    "userassignedidentities/azure-training-nodes-id"
)
OWNER = "8E3AF657-A8FF-443C-A75C-2FE8C4BCB635"  # Owner, its GUID in capitals (ARM compares ids case-insensitively)

SECOND_WAVE = [
    Change(
        "aws-serving-rewrites-training-trust",
        AS,
        with_statement(
            *SERVE_MODEL_READ,
            "policy",
            allow("iam:UpdateAssumeRolePolicy", f"arn:aws:iam::{TRAIN_ACCT}:role/aws-training-node"),
        ),
        ESCALATION,
    ),
    Change(
        "aws-training-trust-bare-serving-account-id",
        AT,
        with_statement(
            "aws-training-node",
            A_ROLE,
            "assumeRolePolicy",
            {"Effect": "Allow", "Principal": {"AWS": SERVE_ACCT}, "Action": "sts:AssumeRole"},
        ),
        BECOME,
    ),
    Change(
        "aws-serving-role-inline-policies-block",
        AS,
        put(
            "aws-serving-replica",
            A_ROLE,
            inlinePolicies=[
                {
                    "name": "extra",
                    "policy": json.dumps(
                        {"Version": "2012-10-17", "Statement": [allow("s3:PutObject", f"arn:aws:s3:::{CKPT}/*")]}
                    ),
                }
            ],
        ),
        FIELD,
    ),
    Change(
        "aws-serving-role-managed-arns-admin",
        AS,
        put("aws-serving-replica", A_ROLE, managedPolicyArns=["arn:aws:iam::aws:policy/AdministratorAccess"]),
        FIELD,
    ),
    Change(
        "aws-alb-access-logs-off",
        AS,
        at("aws-serving-alb", "aws:lb/loadBalancer:LoadBalancer", "accessLogs.enabled", False),
        LOGGING,
    ),
    Change(
        "aws-serving-template-spot-market",
        AS,
        put(
            "aws-serving-replica", "aws:ec2/launchTemplate:LaunchTemplate", instanceMarketOptions={"marketType": "spot"}
        ),
        CAPACITY,
    ),
    Change(
        "aws-landing-apart-scp-detached",
        AL,
        put(
            "aws-landing-training-apart-training",
            "aws:organizations/policyAttachment:PolicyAttachment",
            targetId="ou-unrelated-000000",
        ),
        BECOME,
    ),
    Change(
        "azure-serving-scale-set-wears-training-identity-case",
        ZS,
        edit(
            "azure-serving-replicas",
            Z_VMSS,
            lambda props: wear_identities(props, lambda ids: [*ids, TRAIN_ID_LOWER]),
        ),
        BECOME,
    ),
    Change(
        "azure-owner-guid-in-capitals-on-training",
        ZS,
        add(
            Z_ASSIGN,
            "azure-serving-owner",
            {
                "scope": TRAIN_RG,
                "roleDefinitionId": f"/subscriptions/{TRAIN_SUB}/providers/Microsoft.Authorization/roleDefinitions/{OWNER}",
                "principalId": "22222222-2222-2222-2222-222222222222",
                "principalType": "ServicePrincipal",
            },
            depends={"principalId": SERVE_REPLICAS},
        ),
        ESCALATION,
    ),
    Change(
        "azure-foreign-group-reads-checkpoints",
        ZT,
        add(
            Z_ASSIGN,
            "azure-training-partner-group",
            {
                "scope": TRAIN_RG,
                "roleDefinitionId": f"/subscriptions/{TRAIN_SUB}/providers/Microsoft.Authorization/roleDefinitions/"
                "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1",
                "principalId": "0f0f0f0f-0000-4000-8000-0000000000aa",
                "principalType": "ForeignGroup",
            },
        ),
        PRINCIPAL,
    ),
    Change(
        "azure-rate-rule-negation-flipped",
        ZS,
        at("azure-serving-waf", Z_WAF, "customRules.0.matchConditions.0.negationConditon", False),
        WAF,
    ),
    Change(
        "azure-landing-deny-ids-not-enforced",
        "azure-landing",
        put(
            "azure-landing-training-no-serving-ids",
            "azure-native:authorization:PolicyAssignment",
            enforcementMode="DoNotEnforce",
        ),
        FIELD,
    ),
    Change(
        "gcp-public-principal-set",
        GT,
        add(
            "gcp:storage/bucketIAMMember:BucketIAMMember",
            "gcp-training-public-set",
            {"bucket": G_CKPT, "role": "roles/storage.objectViewer", "member": "principalSet://goog/public:all"},
        ),
        PRINCIPAL,
    ),
    Change(
        "gcp-bucket-acl-role-entities",
        GT,
        add(
            "gcp:storage/bucketACL:BucketACL",
            "gcp-training-ckpt-acl",
            {"bucket": G_CKPT, "roleEntities": ["READER:allAuthenticatedUsers"]},
        ),
        FIELD,
    ),
    Change(
        "gcp-serving-vm-wears-training-sa",
        GS,
        add(
            "gcp:compute/instance:Instance",
            "gcp-serving-debug",
            {
                "machineType": "e2-small",
                "zone": "us-central1-a",
                "bootDisk": {"initializeParams": {"image": "debian-cloud/debian-12"}},
                "networkInterfaces": [
                    {"subnetwork": "projects/acme-serve/regions/us-central1/subnetworks/gcp-serving-replicas"}
                ],
                "serviceAccount": {"email": G_NODES_EMAIL, "scopes": ["cloud-platform"]},
            },
        ),
        BECOME,
    ),
    Change(
        "gcp-serving-security-admin-on-own-project",
        GS,
        add(
            "gcp:projects/iAMMember:IAMMember",
            "gcp-serving-security-admin",
            {"project": "acme-serve", "role": "roles/iam.securityAdmin", "member": G_REPLICA},
        ),
        ESCALATION,
    ),
    Change(
        "gcp-data-read-audit-dropped",
        GT,
        put(
            "gcp-training-storage-data-access-logs",
            "gcp:projects/iAMAuditConfig:IAMAuditConfig",
            auditLogConfigs=[{"logType": "DATA_WRITE"}],
        ),
        LOGGING,
    ),
    Change(
        "gcp-allow-everything-before-throttle",
        GS,
        appended(
            "gcp-serving-armor",
            G_ARMOR,
            "rules",
            {
                "action": "allow",
                "description": "health",
                "match": {"expr": {"expression": "true"}},
                "priority": 10,
            },
        ),
        WAF,
    ),
    Change(
        "gcp-landing-no-serving-members-off",
        GL,
        put(
            "gcp-landing-training-custom-accelstackTrainingNoServingMembers",
            "gcp:orgpolicy/policy:Policy",
            spec={"rules": [{"enforce": "FALSE"}]},
        ),
        BECOME,
    ),
    Change(
        "gcp-landing-audit-logs-admin-only",
        GL,
        put(
            "gcp-landing-training-audit-logs",
            "gcp:projects/iAMAuditConfig:IAMAuditConfig",
            auditLogConfigs=[{"logType": "ADMIN_READ"}],
        ),
        LOGGING,
    ),
    Change(
        "oci-statement-in-capitals",
        OT,
        oci_statement("Allow Dynamic-Group oci-training-nodes To MANAGE objects In Tenancy"),
        FIELD,
    ),
    Change(
        "oci-any-user-from-serving-compartment-whole-bucket",
        OT,
        oci_statement(
            f"allow any-user to read objects in compartment id {O_TRAIN} where all "
            f"{{request.principal.compartment.id = '{O_SERVE}', target.bucket.name = 'acme-train-checkpoints'}}"
        ),
        CONDITION,
    ),
    Change(
        "oci-checkpoints-versioning-suspended",
        OT,
        put("oci-training-checkpoints", O_BUCKET, versioning="Suspended"),
        DATA_LOSS,
    ),
    Change(
        "oci-nodes-manage-policies",
        OT,
        oci_statement(f"allow dynamic-group oci-training-nodes to manage policies in compartment id {O_TRAIN}"),
        ESCALATION,
    ),
    Change(
        "oci-datasets-unencrypted-by-stack-key",
        OT,
        edit("oci-training-datasets", O_BUCKET, lambda props: props.pop("kmsKeyId")),
        LOGGING,
    ),
    Change(
        "oci-landing-serving-deployers-tenancy-wide",
        OL,
        appended(
            "oci-landing-serving-deploy",
            O_POLICY,
            "statements",
            "allow group id ocid1.group.oc1.us-ashburn-1.2514b4d8577c184cb2ed to read objects in tenancy",
        ),
        BECOME,
    ),
    Change(
        "gcp-models-prefix-without-slash",
        GS,
        at(
            "gcp-serving-replica-models",
            "gcp:storage/bucketIAMMember:BucketIAMMember",
            "condition.expression",
            'resource.name.startsWith("projects/_/buckets/acme-train-checkpoints/objects/models")',
        ),
        CONDITION,
    ),
    Change(
        "azure-models-prefix-without-slash",
        ZS,
        edit(
            *MODELS_ASSIGNMENT,
            lambda props: props.update(
                condition=props["condition"].replace(
                    "StringStartsWith 'models/llama-3.1-8b-instruct/'", "StringStartsWith 'models'"
                )
            ),
        ),
        CONDITION,
    ),
    Change(
        "vultr-replica-empty-group",
        VS,
        put("vultr-serving-replica-0", V_INSTANCE, firewallGroupId=""),
        NETWORK,
    ),
]

# A VPN's far end given internet ranges in each spelling of AWS, Azure and GCP (tests/policies/vpn_edits.py; OCI's is
# above): a default route where a route carries it, a public range where a selector does (a match-all selector
# narrows nothing). The tunnel is refused across sides whatever it carries; tests/policies/test_vpn_far_end_ranges.py
# checks the ranges' own verdict, the internet reaching the networks.
VPN_RANGES = [
    Change(
        f"{s.id}-vpn-internet-range",
        s.stack,
        s.build(["0.0.0.0/0"] if s.form == ROUTE else ["203.0.113.0/24"]),
        NETWORK,
    )
    for s in SPELLINGS
    if s.cloud != "oci"
]

# Issue 31's copy handoff (components/handoff/copy.py): a copy the deployer runs at `pulumi up` writes wherever its
# props say. Only a serving stack pulls the copy its config names into its own store (handoff-copy-into-own-store).
ARTIFACT_COPY = "pulumi-python:dynamic/handoff:ArtifactCopy"


def artifact_copy(name: str, **values: Any) -> Edit:
    props = {
        "source_cloud": "oci",
        "source": "oci://ckpt@axaxnpcrorw5/models/llama-70b/step-12000/",
        "source_url": None,
        "destination_cloud": "vultr",
        "destination": "s3://acme-weights/llama-70b/step-12000/",
        "destination_endpoint": "ewr1.vultrobjects.com",
        "destination_keys": None,
        "clock": "2026-12-05T12:00:00Z",
        **values,
    }
    return add_dynamic(ARTIFACT_COPY, name, props)


COPIES = [
    Change(
        "aws-training-pushes-checkpoints-into-serving",
        AT,
        artifact_copy(
            "aws-training-push",
            source_cloud="aws",
            source=f"s3://{CKPT}/models/llama-3.1-8b/",
            destination_cloud="aws",
            destination="s3://acme-serve-models/llama-3.1-8b/",
            destination_endpoint="us-east-1",
        ),
        PLACEMENT,
    ),
    Change("oci-training-pushes-weights-to-vultr", OT, artifact_copy("oci-training-push"), PLACEMENT),
    Change(
        "vultr-serving-copy-nobody-configured",
        VS,
        artifact_copy(
            "vultr-serving-copy",
            source_cloud="azure",
            source="https://acmetrainckpt.blob.core.windows.net/checkpoints/models/llama/",
            destination_keys='{"accessKey": "VULTRACCESSKEY000001", "secretKey": "secret"}',
        ),
        PLACEMENT,
    ),
    Change(
        "azure-serving-copy-with-a-sas-url",
        ZS,
        artifact_copy(
            "azure-serving-copy",
            source_cloud="azure",
            source="https://acmetrainckpt.blob.core.windows.net/checkpoints/models/llama/",
            source_url="https://acmetrainckpt.blob.core.windows.net/checkpoints?sv=2024-08-04&sp=rl&sig=x",
            destination_cloud="azure",
            destination="https://acmeservemodels.blob.core.windows.net/models/llama/",
            destination_endpoint="",
        ),
        PLACEMENT,
    ),
]

ATTACKS = AWS + AZURE + GCP + OCI + VULTR + SECOND_WAVE + VPN_RANGES + COPIES

LEGITIMATE = [
    Change(
        "aws-serving-queue-attributes",
        AS,
        with_statement(
            "aws-serving-replica-queues",
            A_ROLE_POLICY,
            "policy",
            allow("sqs:GetQueueAttributes", f"arn:aws:sqs:us-east-1:{SERVE_ACCT}:aws-serving-requests"),
        ),
    ),
    Change(
        "aws-waf-logs-kept-longer",
        AS,
        put("aws-serving-waf-logs", "aws:cloudwatch/logGroup:LogGroup", retentionInDays=731),
    ),
    Change(
        "aws-node-role-description",
        AT,
        put("aws-training-node", A_ROLE, description="accelstack aws-training: training nodes (H100)"),
    ),
    Change(
        "azure-waf-stricter-body-limit",
        ZS,
        at("azure-serving-waf", Z_WAF, "policySettings.maxRequestBodySizeInKb", 1000),
    ),
    Change(
        "azure-container-soft-delete-longer",
        ZT,
        at(
            "azure-training-storage-checkpoints",
            Z_BLOBS,
            "containerDeleteRetentionPolicy",
            {"enabled": True, "days": 60},
        ),
    ),
    Change(
        "gcp-serving-replica-bigger-boot-disk",
        GS,
        at("gcp-serving-replica", G_TEMPLATE, "disks.0.diskSizeGb", 300),
    ),
    Change(
        "gcp-checkpoint-labels",
        GT,
        put("gcp-training-checkpoints", G_BUCKET, labels={"team": "research"}),
    ),
    Change(
        "oci-nodes-inspect-own-buckets",
        OT,
        oci_statement(
            f"allow dynamic-group oci-training-nodes to inspect buckets in compartment id {O_TRAIN} "
            "where target.bucket.name = 'acme-train-checkpoints'"
        ),
    ),
    Change(
        "oci-own-drg-joins-own-vcn",
        OT,
        both(
            add(
                "oci:Core/drg:Drg",
                "oci-training-drg",
                {
                    "compartmentId": O_TRAIN,
                    "displayName": "training",
                    "freeformTags": {"accelstack-workload": "training", "accelstack-stack": "oci-training"},
                },
            ),
            add(
                "oci:Core/drgAttachment:DrgAttachment",
                "oci-training-vcn-on-drg",
                {
                    "drgId": "oci-training-drg-id",
                    "vcnId": "vcn",
                    "freeformTags": {"accelstack-workload": "training", "accelstack-stack": "oci-training"},
                },
                depends={"drgId": ("oci-training-drg", "oci:Core/drg:Drg"), "vcnId": O_VCN},
            ),
        ),
    ),
    Change(
        "oci-checkpoints-previous-versions-expire",
        OT,
        add(
            "oci:ObjectStorage/objectLifecyclePolicy:ObjectLifecyclePolicy",
            "oci-training-ckpt-versions",
            {
                "bucket": "acme-train-checkpoints",
                "namespace": "acmetenancy",
                "rules": [
                    {
                        "name": "old-versions",
                        "action": "DELETE",
                        "target": "previous-object-versions",
                        "isEnabled": True,
                        "timeAmount": 30,
                        "timeUnit": "DAYS",
                    }
                ],
            },
        ),
    ),
    Change(
        "oci-checkpoints-object-events",
        OT,
        put("oci-training-checkpoints", O_BUCKET, objectEventsEnabled=True),
    ),
    Change(
        "oci-landing-training-deploy-own-buckets",
        OL,
        appended(
            "oci-landing-training-deploy",
            O_POLICY,
            "statements",
            "allow group id ocid1.group.oc1.us-ashburn-1.a083b401b606830967ee to read buckets in compartment "
            "id ocid1.compartment.oc1.us-ashburn-1.fd9584580fc934153410",
        ),
    ),
    Change(
        "vultr-second-lb-port-from-vpc",
        VS,
        add(
            V_RULE,
            "vultr-serving-lb-to-metrics",
            {
                "firewallGroupId": "1fabd058-9d1d-3633-1c69-812b64b333dd",
                "ipType": "v4",
                "protocol": "tcp",
                "port": "9400",
                "subnet": "10.50.0.0",
                "subnetSize": 24,
            },
        ),
    ),
    Change(
        "vultr-rule-admits-own-load-balancer",
        VS,
        add(
            V_RULE,
            "vultr-serving-from-own-lb",
            {
                "firewallGroupId": "1fabd058-9d1d-3633-1c69-812b64b333dd",
                "ipType": "v4",
                "protocol": "tcp",
                "port": "8000",
                "source": "own-lb-id",
            },
            depends={"source": ("vultr-serving-lb", "vultr:index/loadBalancer:LoadBalancer")},
        ),
    ),
    Change(
        "aws-landing-bigger-training-budget",
        AL,
        put("aws-landing-training-budget", "aws:budgets/budget:Budget", limitAmount="500000.00"),
    ),
    Change(
        "gcp-landing-audit-config-reordered",
        GL,
        put(
            "gcp-landing-training-audit-logs",
            "gcp:projects/iAMAuditConfig:IAMAuditConfig",
            auditLogConfigs=[{"logType": "DATA_WRITE"}, {"logType": "DATA_READ"}, {"logType": "ADMIN_READ"}],
        ),
    ),
    Change(
        "azure-serving-scale-set-own-identity-case",
        ZS,
        edit(
            "azure-serving-replicas",
            Z_VMSS,
            lambda props: wear_identities(props, lambda ids: [i.lower() for i in ids]),
        ),
    ),
    Change(
        "vultr-replica-relabelled",
        VS,
        put("vultr-serving-replica-0", V_INSTANCE, label="vultr-serving-replica-0-l40s"),
    ),
    Change(
        "vultr-replica-runs-own-startup-script",
        VS,
        both(
            vultr_script("vultr-serving-boot", "#!/bin/sh\nsysctl -w net.core.somaxconn=4096\n"),
            runs_script("vultr-serving-replica-0", "vultr-serving-boot"),
        ),
    ),
]


# Measured when this round was written (2026-12-06), on the packs of main at c7419d8: 73 of the first 77 attacks
# stopped, 6 of those (OCI's pre-authenticated requests, replication, lifecycle, peering and DRG) only as unknown
# kinds, and 2 of 18 legitimate changes flagged (an OCI DRG joining the stack's own VCN, a lifecycle rule expiring
# old versions: unknown kinds too). Survivors then: Azure's allowPermanentDelete, a Vultr rule admitting another
# stack's load balancer, GCP's securityAdmin and OCI nodes managing policies in their own scope. After this round's
# fixes: all stopped by a rule of their class, none flagged. The two prefix-without-slash cases came later, and the
# Vultr boot-by-reference and OCI VPN route cases with the rules of the last unjudged inputs (issue 28, item 2).
# Survivors not fixed yet, each with why (strict: the test fails once a fix stops it, so the entry goes).
OPEN: dict[str, str] = {}


@pytest.mark.parametrize("attack", attack_cases(ATTACKS, OPEN))
def test_every_attack_is_stopped(attack: Change) -> None:
    verdicts = verdicts_after(attack)
    assert stopped(verdicts), f"{attack.id} ({attack.kind}) passed both packs: {[v.line() for v in verdicts]}"


@pytest.mark.parametrize("change", LEGITIMATE, ids=[c.id for c in LEGITIMATE])
def test_legitimate_changes_draw_no_verdict(change: Change) -> None:
    verdicts = verdicts_after(change)
    assert not verdicts, [v.line() for v in verdicts]


def test_the_table_spans_five_clouds_and_the_classes() -> None:
    assert len({a.id for a in ATTACKS}) == len(ATTACKS) >= 30
    assert set(OPEN) <= {a.id for a in ATTACKS}
    assert len(LEGITIMATE) >= 10
    for cloud in CLOUDS:
        assert any(a.id.startswith(f"{cloud}-") for a in ATTACKS), cloud
        assert any(c.id.startswith(f"{cloud}-") for c in LEGITIMATE), cloud
    assert {a.kind for a in ATTACKS} == set(CLASSES)


def test_kill_rate(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints the kill rate by class and cloud and the false-positive rate (the per-case tests above are what fail)."""
    with capsys.disabled():
        tried, _ = report_kill_rate("red team (five clouds)", ATTACKS, LEGITIMATE, CLOUDS)
    assert tried == len(ATTACKS)
