"""The real program (`__main__.py`) on the example training stack, captured under mocks.

Each assertion is something an operator relies on: every EFA interface is attached, nothing is
reachable from the internet, stateful resources are protected and encrypted with the stack key,
checkpoint deletions never propagate to S3, and the resource graph does not grow with node count.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import pulumi
import pytest
import yaml

from accelstack.components.aws.mocks import AwsMocks
from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "__main__.py"
EXAMPLE = REPO / "stacks" / "Pulumi.aws-training.yaml"
STACK = "aws-training"
NO_SCHEDULER = "training.scheduler.kind=none"

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GROUP = "aws:autoscaling/group:Group"
DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
BUCKET = "aws:s3/bucket:Bucket"
KEY = "aws:kms/key:Key"


class RecordingCloud(AwsMocks):
    """AWS mocks that also remembers which provider each invoke (data-source lookup) went to."""

    def __init__(self) -> None:
        super().__init__()
        self.invokes: list[tuple[str, str]] = []

    def call(self, args: pulumi.runtime.MockCallArgs):
        self.invokes.append((args.token, args.provider))
        return super().call(args)


@cache
def run(*overrides: str) -> tuple[Capture, RecordingCloud]:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    cloud = RecordingCloud()
    return capture(MAIN, config_for_pulumi(raw), stack=STACK, mocks=cloud), cloud


def stack(*overrides: str) -> Capture:
    return run(*overrides)[0]


def node_template(cap: Capture) -> Registration:
    [template] = [r for r in cap.by_type(LAUNCH_TEMPLATE) if r.name == f"{STACK}-nodes"]
    return template


def data_buckets(cap: Capture) -> list[Registration]:
    """The datasets and checkpoints buckets (named from their URIs); not the log buckets."""
    return [b for b in cap.by_type(BUCKET) if "bucket" in b.inputs]


def by_name(cap: Capture, type_token: str, name: str) -> Registration:
    [found] = [r for r in cap.by_type(type_token) if r.name == name]
    return found


def output_of(cap: Capture, urn: str, key: str):
    [resource] = [r for r in cap.resources if r.urn == urn]
    return resource.outputs[key]


def provider_urn(cap: Capture) -> str:
    [provider] = [r for r in cap.resources if r.type == "pulumi:providers:aws"]
    return provider.urn


# --- account separation: one explicit provider for everything ---------------------------------


@pytest.mark.parametrize("overrides", [(), (NO_SCHEDULER,)])
def test_every_resource_uses_the_stack_provider_and_lives_under_the_stack(overrides) -> None:
    cap = stack(*overrides)
    urn = provider_urn(cap)
    custom = [r for r in cap.resources if r.custom and not r.is_provider]
    assert len(custom) > 30
    strays = [r.name for r in custom if r.type.startswith("aws:") and r.provider.rsplit("::", 1)[0] != urn]
    assert strays == []
    # Other packages (the munge key's randomness) use explicit providers too: default providers are off.
    providers = {r.urn for r in cap.resources if r.is_provider}
    assert all(r.provider.rsplit("::", 1)[0] in providers for r in custom)
    [root] = [r for r in cap.resources if r.type == "accelstack:aws:TrainingStack"]
    parents = {r.urn: r.parent for r in cap.resources}
    for resource in cap.resources:
        if resource.type == "pulumi:pulumi:Stack" or resource is root:
            continue
        chain, node = [], resource.urn
        while node and node != root.urn:
            chain.append(node)
            node = parents.get(node, "")
        assert node == root.urn, f"{resource.name} is not under the stack component"


def test_lookups_go_through_the_stack_provider() -> None:
    cap, cloud = run()
    urn = provider_urn(cap)
    assert cloud.invokes, "expected the AZ and region lookups"
    assert all(provider.startswith(urn + "::") for _, provider in cloud.invokes)


def test_provider_pins_account_region_role_and_tags() -> None:
    [provider] = stack().by_type("pulumi:providers:aws")
    inputs = provider.inputs
    assert json.loads(inputs["allowedAccountIds"]) == ["111111111111"]
    assert inputs["region"] == "us-east-1"
    assert json.loads(inputs["assumeRoles"])[0]["roleArn"] == "arn:aws:iam::111111111111:role/accelstack-deploy"
    tags = json.loads(inputs["defaultTags"])["tags"]
    assert tags["accelstack:stack"] == STACK and tags["accelstack:workload"] == "training"
    # No digest among default tags: it would update every resource on every edit (S7). The node
    # group carries it to the instances it launches.
    assert "accelstack:config-digest" not in tags
    group_tags = {t["key"]: t for t in stack().one(GROUP).inputs["tags"]}
    assert group_tags["accelstack:config-digest"]["value"] == stack().stack_outputs["configDigest"]
    assert group_tags["accelstack:config-digest"]["propagateAtLaunch"] is True


# --- EFA, placement, network isolation --------------------------------------------------------


@pytest.mark.parametrize(("instance_type", "efa"), [("p5.48xlarge", 32), ("p4d.24xlarge", 4)])
def test_launch_template_attaches_every_efa_interface(instance_type: str, efa: int) -> None:
    cap = stack(NO_SCHEDULER, f"training.nodes.instanceType={instance_type}")
    interfaces = node_template(cap).inputs["networkInterfaces"]
    slots = [(int(i.get("networkCardIndex", 0)), int(i.get("deviceIndex", 0))) for i in interfaces]
    assert len(set(slots)) == len(slots)  # no two interfaces in one slot
    # EC2 guide (efa-acc-inst-types): a plain ENA primary at card 0 / device 0 (an efa-only interface
    # cannot be primary), efa-only at card 0 / device 1, efa-only at device 0 of every other card.
    types = {slot: i.get("interfaceType") for slot, i in zip(slots, interfaces, strict=True)}
    assert types.pop((0, 0)) is None
    assert types == {(0, 1): "efa-only", **{(card, 0): "efa-only" for card in range(1, efa)}}
    assert cap.stack_outputs["fabricInterfacesPerNode"] == efa  # every EFA-capable card is used


def test_nodes_share_one_cluster_placement_group_in_one_subnet() -> None:
    cap = stack(NO_SCHEDULER)
    group = cap.one("aws:ec2/placementGroup:PlacementGroup")
    assert group.inputs["strategy"] == "cluster"
    asg = cap.one(GROUP)
    assert asg.inputs["placementGroup"] == group.id
    [subnet] = asg.inputs["vpcZoneIdentifiers"]
    assert subnet == by_name(cap, "aws:ec2/subnet:Subnet", f"{STACK}-net-cluster").id
    template = node_template(cap)
    assert "groupName" in template.inputs["placement"]  # unknown at preview: the group's generated name
    assert group.urn in template.property_dependencies["placement"]


def test_cluster_security_group_admits_only_itself() -> None:
    cap = stack(NO_SCHEDULER)
    group = by_name(cap, "aws:ec2/securityGroup:SecurityGroup", f"{STACK}-net-cluster")
    assert "ingress" not in group.inputs and "egress" not in group.inputs  # rules are separate resources
    ingress = [r for r in cap.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")]
    egress = [r for r in cap.by_type("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule")]
    cluster_in = [r.inputs for r in ingress if r.inputs["securityGroupId"] == group.id]
    cluster_out = [r.inputs for r in egress if r.inputs["securityGroupId"] == group.id]
    # Exactly one ingress rule: all protocols from the group itself.
    assert [(r["ipProtocol"], r.get("referencedSecurityGroupId"), r.get("cidrIpv4")) for r in cluster_in] == [
        ("-1", group.id, None)
    ]
    assert {(r["ipProtocol"], r.get("referencedSecurityGroupId"), r.get("cidrIpv4")) for r in cluster_out} == {
        ("-1", group.id, None),  # EFA needs the self-referencing egress too
        ("-1", None, "0.0.0.0/0"),
    }
    assert not any(r.inputs.get("cidrIpv4") == "0.0.0.0/0" or r.inputs.get("cidrIpv6") == "::/0" for r in ingress)
    assert not any("cidrIpv4" in r.inputs for r in ingress)


def test_slurm_head_reaches_the_cluster_only_on_named_tcp_ports() -> None:
    cap = stack()
    cluster = by_name(cap, "aws:ec2/securityGroup:SecurityGroup", f"{STACK}-net-cluster")
    ingress = cap.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    extra = [
        r.inputs
        for r in ingress
        if r.inputs["securityGroupId"] == cluster.id and r.inputs.get("referencedSecurityGroupId") != cluster.id
    ]
    assert extra, "the head node must reach slurmd and the srun ports"
    assert all(r["ipProtocol"] == "tcp" and r.get("fromPort") and r.get("toPort") for r in extra)
    assert not any("cidrIpv4" in r.inputs or "cidrIpv6" in r.inputs for r in ingress)


def test_nodes_have_no_public_ip_and_imdsv2_only() -> None:
    cap = stack(NO_SCHEDULER)
    template = node_template(cap).inputs
    assert template["metadataOptions"]["httpTokens"] == "required"
    assert 1 <= template["metadataOptions"]["httpPutResponseHopLimit"] <= 2
    interfaces = template["networkInterfaces"]
    # 33 interfaces: EC2 rejects associatePublicIpAddress (even "false") with more than one network
    # interface, so it is absent and the private subnet keeps nodes off the internet.
    assert len(interfaces) == 33 and not any("associatePublicIpAddress" in i for i in interfaces)
    assert all(not s.inputs.get("mapPublicIpOnLaunch") for s in cap.by_type("aws:ec2/subnet:Subnet"))


@pytest.mark.parametrize("instance_type", ["g6e.12xlarge", "g5.xlarge"])
def test_single_interface_nodes_refuse_a_public_ip_explicitly(instance_type: str) -> None:
    cap = stack(NO_SCHEDULER, f"training.nodes.instanceType={instance_type}", "training.nodes.count=1")
    [interface] = node_template(cap).inputs["networkInterfaces"]
    assert interface["associatePublicIpAddress"] == "false"


def test_new_vpc_has_nat_egress_s3_gateway_and_ssm_endpoints_in_one_az() -> None:
    cap = stack()
    vpc = cap.one("aws:ec2/vpc:Vpc").inputs
    assert vpc["enableDnsSupport"] and vpc["enableDnsHostnames"] and vpc["cidrBlock"] == "10.20.0.0/16"
    subnets = {s.name: s.inputs for s in cap.by_type("aws:ec2/subnet:Subnet")}
    assert subnets[f"{STACK}-net-cluster"]["cidrBlock"] == "10.20.0.0/20"
    assert len({s["availabilityZone"] for s in subnets.values()}) == 1
    endpoints = {e.inputs["serviceName"]: e.inputs for e in cap.by_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
    assert set(endpoints) == {f"com.amazonaws.us-east-1.{s}" for s in ("s3", "ssm", "ssmmessages", "ec2messages")}
    cluster_routes = by_name(cap, "aws:ec2/routeTable:RouteTable", f"{STACK}-net-cluster")
    s3 = endpoints["com.amazonaws.us-east-1.s3"]
    assert s3["vpcEndpointType"] == "Gateway" and s3["routeTableIds"] == [cluster_routes.id]
    [default_route] = cluster_routes.inputs["routes"]
    assert default_route["natGatewayId"] == cap.one("aws:ec2/natGateway:NatGateway").id
    ssm = endpoints["com.amazonaws.us-east-1.ssm"]
    assert ssm["privateDnsEnabled"] is True
    assert ssm["subnetIds"] == [by_name(cap, "aws:ec2/subnet:Subnet", f"{STACK}-net-cluster").id]


def test_existing_vpc_is_used_as_is() -> None:
    cap = stack(NO_SCHEDULER, "training.network={vpcId: vpc-00000abc, subnetId: subnet-00000def}")
    created = {r.type for r in cap.resources}
    for token in (
        "aws:ec2/vpc:Vpc",
        "aws:ec2/subnet:Subnet",
        "aws:ec2/natGateway:NatGateway",
        "aws:ec2/vpcEndpoint:VpcEndpoint",
    ):
        assert token not in created
    assert by_name(cap, "aws:ec2/securityGroup:SecurityGroup", f"{STACK}-net-cluster").inputs["vpcId"] == "vpc-00000abc"
    assert cap.one(GROUP).inputs["vpcZoneIdentifiers"] == ["subnet-00000def"]
    assert cap.one(LUSTRE).inputs["subnetIds"] == "subnet-00000def"
    assert cap.stack_outputs["zone"] == "us-east-1a"  # from the subnet lookup


# --- storage: encryption, protection, staging -------------------------------------------------


def test_stateful_resources_are_protected() -> None:
    cap = stack()
    protected = [*cap.by_type(KEY), cap.one(LUSTRE), *cap.by_type(BUCKET)]
    assert sorted(k.name for k in cap.by_type(KEY)) == [f"{STACK}-net-flow-logs", f"{STACK}-storage-key"]
    assert sorted(b.name for b in cap.by_type(BUCKET)) == [
        f"{STACK}-net-flow-logs",
        f"{STACK}-storage-access-logs",
        f"{STACK}-storage-checkpoints",
        f"{STACK}-storage-datasets",
    ]
    assert all(r.protect for r in protected), [r.name for r in protected if not r.protect]


def test_buckets_are_private_versioned_and_encrypted_with_the_stack_key() -> None:
    cap = stack()
    key = by_name(cap, KEY, f"{STACK}-storage-key")
    assert key.inputs["enableKeyRotation"] is True
    key_arn = key.outputs.get("arn") or output_of(cap, key.urn, "arn")
    for bucket in data_buckets(cap):

        def config(token: str, bucket_id: str = bucket.id) -> dict:
            [found] = [r.inputs for r in cap.by_type(token) if r.inputs["bucket"] == bucket_id]
            return found

        assert config("aws:s3/bucketVersioning:BucketVersioning")["versioningConfiguration"]["status"] == "Enabled"
        [rule] = config("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")[
            "rules"
        ]
        assert rule["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": key_arn}
        assert rule["bucketKeyEnabled"] is True
        block = config("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
        assert all(
            block[k] is True
            for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
        )
        ownership = config("aws:s3/bucketOwnershipControls:BucketOwnershipControls")
        assert ownership["rule"]["objectOwnership"] == "BucketOwnerEnforced"
        lifecycle = config("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")["rules"]
        [abort] = [r for r in lifecycle if "abortIncompleteMultipartUpload" in r]
        assert abort["abortIncompleteMultipartUpload"]["daysAfterInitiation"] >= 1
        # No rule ever expires a current version (expiration.days / date).
        assert not any({"days", "date"} & set(r.get("expiration", {})) for r in lifecycle)
        statements = json.loads(config("aws:s3/bucketPolicy:BucketPolicy")["policy"])["Statement"]
        assert any(
            s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in statements
        )
    lustre = cap.one(LUSTRE).inputs
    assert lustre["kmsKeyId"] == key_arn
    [root] = node_template(stack(NO_SCHEDULER)).inputs["blockDeviceMappings"]
    assert root["ebs"]["encrypted"] == "true" and root["ebs"]["volumeType"] == "gp3" and root["ebs"]["kmsKeyId"]


def test_lustre_settings() -> None:
    lustre = stack().one(LUSTRE).inputs
    assert lustre["deploymentType"] == "PERSISTENT_2"
    assert lustre["storageCapacity"] == 4800 and lustre["perUnitStorageThroughput"] == 250
    assert lustre["fileSystemTypeVersion"] == "2.15" and lustre["dataCompressionType"] == "LZ4"
    assert "importPath" not in lustre  # PERSISTENT_2 links buckets through DRAs


@pytest.mark.parametrize(
    ("overrides", "backup_days"),
    [
        ((), 0),
        (
            (
                "training.storage.lustre.tier=PERSISTENT_1",
                "training.storage.lustre.throughputPerTiB=200",
                "training.storage.lustre.capacityGiB=4800",
            ),
            0,
        ),
        (("training.storage.lustre.tier=SCRATCH_2", "training.storage.lustre.throughputPerTiB=null"), None),
    ],
)
def test_lustre_linked_to_s3_has_no_backups_but_logs_repository_errors(overrides, backup_days) -> None:
    # FSx backs up only persistent file systems NOT linked to S3; ours always is. Scratch takes no
    # backup setting at all.
    lustre = stack(*overrides).one(LUSTRE).inputs
    assert lustre.get("automaticBackupRetentionDays") == backup_days
    assert lustre["logConfiguration"] == {"level": "WARN_ERROR"}


def lifecycle_rules(cap: Capture, bucket_name: str) -> list[dict]:
    [bucket] = [b for b in data_buckets(cap) if b.inputs["bucket"] == bucket_name]
    [config] = [
        r
        for r in cap.by_type("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")
        if r.inputs["bucket"] == bucket.id
    ]
    return config.inputs["rules"], config


def test_checkpoint_versions_expire_after_the_window_and_current_ones_never() -> None:
    cap = stack()
    rules, config = lifecycle_rules(cap, "acme-train-checkpoints")
    [expire] = [r for r in rules if "noncurrentVersionExpiration" in r]
    assert expire["status"] == "Enabled" and expire["filter"] == {"prefix": ""}
    assert expire["noncurrentVersionExpiration"] == {"noncurrentDays": 30}  # the spec default
    assert expire["expiration"] == {"expiredObjectDeleteMarker": True}  # markers only, never data
    versioning = [
        r
        for r in cap.by_type("aws:s3/bucketVersioning:BucketVersioning")
        if r.inputs["bucket"] == config.inputs["bucket"]
    ]
    assert versioning[0].urn in config.dependencies  # versioning is on before the rule lands
    datasets, _ = lifecycle_rules(cap, "acme-train-datasets")
    # Overwritten dataset versions expire too (S3 keeps and bills every version otherwise); current ones never.
    [dataset_expiry] = [r for r in datasets if "noncurrentVersionExpiration" in r]
    assert dataset_expiry["noncurrentVersionExpiration"] == {"noncurrentDays": 30}
    assert dataset_expiry["expiration"] == {"expiredObjectDeleteMarker": True}
    custom, _ = lifecycle_rules(
        stack("training.storage.checkpoints.noncurrentVersionDays=90"), "acme-train-checkpoints"
    )
    assert [
        r["noncurrentVersionExpiration"]["noncurrentDays"] for r in custom if "noncurrentVersionExpiration" in r
    ] == [90]


def test_datasets_are_imported_and_checkpoints_exported_without_deletes() -> None:
    cap = stack()
    associations = {r.inputs["fileSystemPath"]: r.inputs for r in cap.by_type(DRA)}
    assert set(associations) == {"/datasets", "/checkpoints"}
    datasets = associations["/datasets"]
    assert datasets["dataRepositoryPath"] == "s3://acme-train-datasets"
    assert datasets["batchImportMetaDataOnCreate"] is True
    assert sorted(datasets["s3"]["autoImportPolicy"]["events"]) == ["CHANGED", "DELETED", "NEW"]
    assert "autoExportPolicy" not in datasets["s3"]
    checkpoints = associations["/checkpoints"]
    assert checkpoints["dataRepositoryPath"] == "s3://acme-train-checkpoints"
    assert sorted(checkpoints["s3"]["autoExportPolicy"]["events"]) == ["CHANGED", "NEW"]  # never DELETED
    assert "NEW" in checkpoints["s3"]["autoImportPolicy"]["events"]


def test_existing_datasets_bucket_is_referenced_not_created() -> None:
    cap = stack("training.storage.datasets.create=false")
    assert [b.inputs["bucket"] for b in data_buckets(cap)] == ["acme-train-checkpoints"]
    [datasets] = [r.inputs for r in cap.by_type(DRA) if r.inputs["fileSystemPath"] == "/datasets"]
    assert datasets["dataRepositoryPath"] == "s3://acme-train-datasets"
    policy = json.loads(by_name(cap, "aws:iam/rolePolicy:RolePolicy", f"{STACK}-node-storage").inputs["policy"])
    assert any("arn:aws:s3:::acme-train-datasets/*" in s["Resource"] for s in policy["Statement"])


def test_scratch_file_system_uses_the_legacy_import_path() -> None:
    cap = stack("training.storage.lustre.tier=SCRATCH_2", "training.storage.lustre.throughputPerTiB=null")
    lustre = cap.one(LUSTRE).inputs
    assert lustre["importPath"] == "s3://acme-train-datasets"
    assert "perUnitStorageThroughput" not in lustre and "kmsKeyId" not in lustre
    assert cap.by_type(DRA) == []


def test_serving_accounts_read_artifacts_only() -> None:
    cap = stack()
    [checkpoints] = [b for b in data_buckets(cap) if b.inputs["bucket"] == "acme-train-checkpoints"]
    [policy] = [p for p in cap.by_type("aws:s3/bucketPolicy:BucketPolicy") if p.inputs["bucket"] == checkpoints.id]
    statements = json.loads(policy.inputs["policy"])["Statement"]
    readers = [s for s in statements if s["Effect"] == "Allow"]
    assert {s["Action"] for s in readers} == {"s3:GetObject", "s3:ListBucket"}
    assert all(s["Principal"] == {"AWS": ["arn:aws:iam::222222222222:root"]} for s in readers)
    get = next(s for s in readers if s["Action"] == "s3:GetObject")
    assert get["Resource"].endswith("/models/*")
    key_policy = json.loads(by_name(cap, KEY, f"{STACK}-storage-key").inputs["policy"])
    [decrypt] = [
        s for s in key_policy["Statement"] if s.get("Principal") == {"AWS": ["arn:aws:iam::222222222222:root"]}
    ]
    assert "kms:Encrypt" not in decrypt["Action"] and decrypt["Condition"]["StringEquals"]["kms:ViaService"].startswith(
        "s3."
    )


# --- compute ----------------------------------------------------------------------------------


def test_instance_role_is_least_privilege() -> None:
    cap = stack()
    attachments = cap.by_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    assert len(attachments) == 2  # node and head role: Session Manager only
    assert all(a.inputs["policyArn"].endswith("/AmazonSSMManagedInstanceCore") for a in attachments)
    for role_policy in cap.by_type("aws:iam/rolePolicy:RolePolicy"):
        for statement in json.loads(role_policy.inputs["policy"])["Statement"]:
            actions = [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]
            resources = [statement["Resource"]] if isinstance(statement["Resource"], str) else statement["Resource"]
            assert "s3:*" not in actions and "*" not in actions
            if any(a.startswith("s3:") for a in actions):
                assert "*" not in resources
                assert all(r.startswith("arn:aws:s3:::acme-train-") for r in resources), resources
    node_role = by_name(cap, "aws:iam/role:Role", f"{STACK}-node")
    assume = json.loads(node_role.inputs["assumeRolePolicy"])
    assert [s["Principal"] for s in assume["Statement"]] == [{"Service": "ec2.amazonaws.com"}]


def test_head_node_has_its_own_role_without_data_access() -> None:
    """The controller reads the munge key and its Slurm configuration parameter; it never needs datasets or
    checkpoints (least privilege)."""
    cap = stack()
    head = cap.one("aws:ec2/instance:Instance")
    profile = by_name(cap, "aws:iam/instanceProfile:InstanceProfile", f"{STACK}-head")
    assert profile.urn in head.property_dependencies["iamInstanceProfile"]
    [head_role_urn] = profile.property_dependencies["role"]
    head_policies = [
        p
        for p in cap.by_type("aws:iam/rolePolicy:RolePolicy")
        if p.property_dependencies.get("role") == [head_role_urn]
    ]
    policies = {p.name: json.loads(p.inputs["policy"])["Statement"] for p in head_policies}
    assert sorted(policies) == [f"{STACK}-head-read-munge-key", f"{STACK}-head-read-slurm-config"]
    actions = {a for st in policies[f"{STACK}-head-read-munge-key"] for a in st["Action"]}
    assert actions == {"secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret", "kms:Decrypt"}
    read, decrypt = policies[f"{STACK}-head-read-slurm-config"]
    parameter = by_name(cap, "aws:ssm/parameter:Parameter", f"{STACK}-slurm-config")
    assert read["Action"] == ["ssm:GetParameter"] and read["Resource"] == [
        f"arn:aws:ssm:us-east-1:111111111111:parameter{parameter.inputs['name']}"
    ]
    assert decrypt["Action"] == ["kms:Decrypt"]
    assert decrypt["Condition"] == {"StringEquals": {"kms:ViaService": "ssm.us-east-1.amazonaws.com"}}
    assert parameter.inputs["type"] == "SecureString" and parameter.inputs["keyId"]
    node_profile = by_name(cap, "aws:iam/instanceProfile:InstanceProfile", f"{STACK}-node")
    assert node_profile.urn not in head.dependencies


@pytest.mark.parametrize("count", [4, 64])
def test_node_group_is_fixed_size_and_replaces_unhealthy_nodes(count: int) -> None:
    asg = stack(NO_SCHEDULER, f"training.nodes.count={count}").one(GROUP).inputs
    assert asg["minSize"] == asg["maxSize"] == asg["desiredCapacity"] == count
    assert asg["healthCheckType"] == "EC2"
    assert "suspendedProcesses" not in asg  # ReplaceUnhealthy stays on
    assert asg.get("capacityRebalance") is False


def test_spot_nodes_use_spot_market_and_capacity_rebalance() -> None:
    cap = stack(NO_SCHEDULER, "training.nodes.capacity=spot")
    assert node_template(cap).inputs["instanceMarketOptions"]["marketType"] == "spot"
    assert cap.one(GROUP).inputs["capacityRebalance"] is True


def test_capacity_block_targets_the_reservation() -> None:
    cap = stack(
        NO_SCHEDULER,
        "training.nodes.capacity=capacity-block",
        "training.nodes.reservationId=cr-0123456789abcdef0",
        "training.network.availabilityZone=us-east-1b",
    )
    template = node_template(cap).inputs
    assert template["instanceMarketOptions"]["marketType"] == "capacity-block"
    target = template["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target["capacityReservationId"] == "cr-0123456789abcdef0"
    # No cluster placement group: it adds a placement constraint outside the block's capacity.
    assert cap.by_type("aws:ec2/placementGroup:PlacementGroup") == []
    assert "placement" not in template and "placementGroup" not in cap.one(GROUP).inputs
    assert "placementGroup" not in cap.stack_outputs


CAPACITY_BLOCK = (
    "training.nodes.capacity=capacity-block",
    "training.nodes.reservationId=cr-0123456789abcdef0",
    "training.network.availabilityZone=us-east-1b",
)


def test_capacity_block_group_waits_for_the_block_and_leaves_40_minutes_before_its_end() -> None:
    """The mock block runs 2099-01-05 11:30 to 2099-01-19 11:30 UTC (dates from EC2, not the spec)."""
    cap = stack(NO_SCHEDULER, *CAPACITY_BLOCK)
    group = cap.one(GROUP)
    assert (group.inputs["minSize"], group.inputs["desiredCapacity"], group.inputs["maxSize"]) == (0, 0, 4)
    schedules = {s.inputs["scheduledActionName"]: s for s in cap.by_type("aws:autoscaling/schedule:Schedule")}
    start, end = schedules["accelstack-block-start"].inputs, schedules["accelstack-block-end"].inputs
    assert start["startTime"] == "2099-01-05T11:30:00Z"
    assert (start["minSize"], start["desiredCapacity"], start["maxSize"]) == (4, 4, 4)
    assert end["startTime"] == "2099-01-19T10:50:00Z"
    assert (end["minSize"], end["desiredCapacity"]) == (0, 0)
    assert all(group.urn in s.property_dependencies["autoscalingGroupName"] for s in schedules.values())
    [invoke] = [t for t, _ in run(NO_SCHEDULER, *CAPACITY_BLOCK)[1].invokes if "CapacityBlock" in t]
    assert invoke == "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation"


class RunningBlockCloud(RecordingCloud):
    """A block that started yesterday and ends in three days."""

    def call(self, args: pulumi.runtime.MockCallArgs):
        if args.token == "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation":
            now = datetime.now(UTC).replace(microsecond=0)
            iso = lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
            return {
                "id": args.args["id"],
                "startDate": iso(now - timedelta(days=1)),
                "endDate": iso(now + timedelta(days=3)),
            }, []
        return super().call(args)


def test_capacity_block_in_progress_runs_now_and_only_schedules_its_end() -> None:
    raw = apply_overrides(read_stack_file(EXAMPLE), [NO_SCHEDULER, *CAPACITY_BLOCK])
    cap = capture(MAIN, config_for_pulumi(raw), stack=STACK, mocks=RunningBlockCloud())
    group = cap.one(GROUP)
    assert group.inputs["minSize"] == group.inputs["desiredCapacity"] == 4
    [schedule] = cap.by_type("aws:autoscaling/schedule:Schedule")
    assert schedule.inputs["scheduledActionName"] == "accelstack-block-end" and schedule.inputs["desiredCapacity"] == 0


@pytest.mark.parametrize("capacity", [(), ("training.nodes.capacity=spot",), CAPACITY_BLOCK])
def test_node_group_pins_a_template_version_and_never_refreshes_running_nodes(capacity) -> None:
    cap = stack(NO_SCHEDULER, *capacity)
    group, template = cap.one(GROUP), node_template(cap)
    assert group.inputs["launchTemplate"]["version"] not in ("$Latest", "$Default")
    assert template.urn in group.property_dependencies["launchTemplate"]
    assert "instanceRefresh" not in group.inputs  # a refresh would terminate nodes mid-job


@pytest.mark.parametrize(
    "stack_overrides", [("training.nodes.count=1",), ("training.nodes.capacity=spot", "training.nodes.count=1")]
)
def test_one_node_has_no_placement_group_and_no_efa(stack_overrides) -> None:
    cap = stack(NO_SCHEDULER, *stack_overrides)
    assert cap.by_type("aws:ec2/placementGroup:PlacementGroup") == []
    [interface] = node_template(cap).inputs["networkInterfaces"]
    assert "interfaceType" not in interface
    assert cap.stack_outputs["fabricInterfacesPerNode"] == 0


def test_on_demand_has_no_market_options() -> None:
    template = node_template(stack(NO_SCHEDULER)).inputs
    assert "instanceMarketOptions" not in template and "capacityReservationSpecification" not in template


def test_resource_graph_does_not_grow_with_node_count() -> None:
    small = Counter(r.type for r in stack("training.nodes.count=4").resources)
    large = Counter(r.type for r in stack("training.nodes.count=4000").resources)
    assert small == large


def test_without_scheduler_nodes_mount_lustre_from_cloud_init() -> None:
    cap = stack(NO_SCHEDULER)
    text = base64.b64decode(node_template(cap).inputs["userData"]).decode()
    assert text.startswith("#cloud-config\n")
    config = yaml.safe_load(text)
    source, path, fstype, options, *_ = config["write_files"][0]["content"].split()
    lustre = cap.one(LUSTRE)
    assert source == f"{lustre.outputs.get('dnsName') or output_of(cap, lustre.urn, 'dnsName')}@tcp:/abcdefgh"
    assert (path, fstype) == ("/fsx", "lustre") and {"noatime", "flock"} <= set(options.split(","))


def test_stack_outputs_name_what_operators_need() -> None:
    outputs = stack(NO_SCHEDULER).stack_outputs
    for key in (
        "lustreAddress",
        "lustreMountName",
        "datasetBucket",
        "checkpointBucket",
        "nodeGroup",
        "placementGroup",
        "configDigest",
        "account",
    ):
        assert key in outputs, key
    assert outputs["datasetBucket"] == "acme-train-datasets"
    assert outputs["checkpointBucket"] == "acme-train-checkpoints"
    assert outputs["account"] == "111111111111"


def test_without_lustre_there_is_no_file_system_and_no_mount() -> None:
    cap = stack(NO_SCHEDULER, "training.storage.lustre=null")
    assert cap.by_type(LUSTRE) == [] and cap.by_type(DRA) == []
    text = base64.b64decode(node_template(cap).inputs["userData"]).decode()
    assert "lustre" not in text
    assert "lustreAddress" not in cap.stack_outputs


def test_without_checkpoints_nodes_get_no_write_access() -> None:
    cap = stack(NO_SCHEDULER, "training.storage.checkpoints=null", "training.artifactReaders=[]")
    assert [b.inputs["bucket"] for b in data_buckets(cap)] == ["acme-train-datasets"]
    assert [r.inputs["fileSystemPath"] for r in cap.by_type(DRA)] == ["/datasets"]
    policy = json.loads(cap.one("aws:iam/rolePolicy:RolePolicy").inputs["policy"])
    assert not any("s3:PutObject" in s["Action"] for s in policy["Statement"])


# --- S3 server access logs ---------------------------------------------------------------------------

LOGGING = "aws:s3/bucketLogging:BucketLogging"


def test_data_buckets_log_every_request_to_an_sse_s3_log_bucket() -> None:
    """Who read or deleted which dataset or checkpoint object (Checkov CKV_AWS_18). S3 delivers
    server access logs only to an SSE-S3 bucket, through a policy naming the logging service, limited
    to our source buckets and account."""
    cap = stack()
    logs = by_name(cap, BUCKET, f"{STACK}-storage-access-logs")
    assert logs.protect
    sources = {b.id: b for b in data_buckets(cap)}
    loggings = cap.by_type(LOGGING)
    assert sorted(sources[r.inputs["bucket"]].inputs["bucket"] for r in loggings) == [
        "acme-train-checkpoints",
        "acme-train-datasets",
    ]
    for logging in loggings:
        assert logging.inputs["targetBucket"] == logs.outputs["bucket"]
        assert logging.inputs["targetPrefix"] == sources[logging.inputs["bucket"]].inputs["bucket"] + "/"
        policy = by_name(cap, "aws:s3/bucketPolicy:BucketPolicy", f"{STACK}-storage-access-logs-policy")
        assert policy.urn in logging.dependencies, "PutBucketLogging checks delivery may write: policy first"
    [sse] = [
        r
        for r in cap.by_type("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
        if r.inputs["bucket"] == logs.id
    ]
    assert sse.inputs["rules"][0]["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "AES256"}
    statements = json.loads(
        by_name(cap, "aws:s3/bucketPolicy:BucketPolicy", f"{STACK}-storage-access-logs-policy").inputs["policy"]
    )["Statement"]
    [delivery] = [s for s in statements if s["Effect"] == "Allow"]
    assert delivery["Principal"] == {"Service": "logging.s3.amazonaws.com"} and delivery["Action"] == "s3:PutObject"
    assert sorted(delivery["Condition"]["ArnLike"]["aws:SourceArn"]) == [
        "arn:aws:s3:::acme-train-checkpoints",
        "arn:aws:s3:::acme-train-datasets",
    ]
    assert delivery["Condition"]["StringEquals"] == {"aws:SourceAccount": "111111111111"}
    rules = {
        r["id"]: r
        for r in by_name(
            cap,
            "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
            f"{STACK}-storage-access-logs-lifecycle",
        ).inputs["rules"]
    }
    assert rules["expire-current-versions"]["expiration"] == {"days": 365}
    assert "expiredObjectDeleteMarker" not in rules["expire-current-versions"]["expiration"]


def test_operator_buckets_get_no_access_logging_from_us() -> None:
    cap = stack("training.storage.datasets.create=false", "training.storage.checkpoints.create=false")
    assert cap.by_type(LOGGING) == []
    assert [b.name for b in cap.by_type(BUCKET)] == [f"{STACK}-net-flow-logs"]
