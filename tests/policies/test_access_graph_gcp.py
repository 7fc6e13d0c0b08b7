"""GCP's edges of the access graph (policies/gcp/access.py), through both packs on the shipped stacks' own exports.

Each class of the issue's GCP misses is tried in at least two spellings on a deep copy of `accelstack preview`'s
export of gcp-training or gcp-serving: a mutation is caught when a MANDATORY verdict of cross-account-read-only
(or its -final twin) names the resource the change touched. Legitimate changes draw no verdict at all.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.policy_runner import Verdict, policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.policies.access import ANY, OWN, SERVICE
from accelstack.policies.gcp.iam import StackFacts, member_party, object_prefixes, role_access

REPO = Path(__file__).resolve().parents[2]
TRAINING, SERVING = "gcp-training", "gcp-serving"
TRAIN, SERVE = "acme-train", "acme-serve"
POLICY = "cross-account-read-only"
Doc = dict[str, Any]

TRAINING_NODES = f"gcp-training-nodes@{TRAIN}.iam.gserviceaccount.com"
TRAINING_HEAD = f"gcp-training-head@{TRAIN}.iam.gserviceaccount.com"
REPLICA = f"gcp-serving-replica@{SERVE}.iam.gserviceaccount.com"
CHECKPOINTS = f"{TRAIN}-checkpoints"  # training's bucket, where serving reads models/
BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
BUCKET_BINDING = "gcp:storage/bucketIAMBinding:BucketIAMBinding"
BUCKET_POLICY = "gcp:storage/bucketIAMPolicy:BucketIAMPolicy"
PROJECT_MEMBER = "gcp:projects/iAMMember:IAMMember"
PROJECT_BINDING = "gcp:projects/iAMBinding:IAMBinding"
PROJECT_POLICY = "gcp:projects/iAMPolicy:IAMPolicy"
SA_MEMBER = "gcp:serviceaccount/iAMMember:IAMMember"
SA_BINDING_ALIAS = "gcp:serviceAccount/iAMBinding:IAMBinding"
TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
BUCKET = "gcp:storage/bucket:Bucket"
OTHER_KEY = f"projects/{SERVE}/locations/us-central1/keyRings/serving/cryptoKeys/queues"
TRAINING_KEY = f"projects/{TRAIN}/locations/us-central1/keyRings/training/cryptoKeys/data"


@cache
def previewed(stack: str) -> PreviewResult:
    return preview_stack(REPO / "stacks" / f"Pulumi.{stack}.yaml", [], REPO)


def models_condition(bucket: str = CHECKPOINTS, prefix: str = "models/") -> dict[str, str]:
    """The condition accelstack's replicas read the weights under (components/gcp/serving/identity.py)."""
    return {
        "title": "models-prefix-only",
        "expression": f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{prefix}") || '
        '(resource.type == "storage.googleapis.com/Bucket" && '
        f'api.getAttribute("storage.googleapis.com/objectListPrefix", "").startsWith("{prefix}"))',
    }


# --- editing an export ---------------------------------------------------------------------------------------------


def entry(doc: Doc, name: str, type_token: str) -> dict[str, Any]:
    found = [r for r in doc["deployment"]["resources"] if r["type"] == type_token and r["urn"].endswith(f"::{name}")]
    assert len(found) == 1, f"{type_token} {name}: {len(found)} in the export"
    return found[0]


def add(stack: str, type_token: str, name: str, inputs: dict[str, Any]) -> Callable[[Doc], None]:
    """A resource as the program would register it (the stack's explicit provider, parented to the stack)."""

    def apply(doc: Doc) -> None:
        resources = doc["deployment"]["resources"]
        provider = next(r["provider"] for r in resources if r["type"].startswith("gcp:"))
        resources.append(
            {
                "urn": f"urn:pulumi:{stack}::accelstack::{type_token}::{name}",
                "custom": True,
                "id": f"{name}-id",
                "type": type_token,
                "inputs": copy.deepcopy(inputs),
                "outputs": {**copy.deepcopy(inputs), "id": f"{name}-id"},
                "parent": resources[0]["urn"],
                "provider": provider,
                "dependencies": [],
                "propertyDependencies": {},
            }
        )

    return apply


def edit(name: str, type_token: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Doc], None]:
    def apply(doc: Doc) -> None:
        resource = entry(doc, name, type_token)
        for side in ("inputs", "outputs"):
            change(resource[side])

    return apply


def put(name: str, type_token: str, **values: Any) -> Callable[[Doc], None]:
    return edit(name, type_token, lambda props: props.update(copy.deepcopy(values)))


def drop(name: str, type_token: str, key: str) -> Callable[[Doc], None]:
    return edit(name, type_token, lambda props: props.pop(key, None))


def both(*changes: Callable[[Doc], None]) -> Callable[[Doc], None]:
    def apply(doc: Doc) -> None:
        for change in changes:
            change(doc)

    return apply


def verdicts(stack: str, change: Callable[[Doc], None]) -> list[Verdict]:
    result = previewed(stack)
    doc = copy.deepcopy(result.export)
    change(doc)
    return policy_verdicts(doc, result.spec)


# --- what must be caught -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    stack: str
    change: Callable[[Doc], None]
    resource: str  # the name the verdict must carry


def bucket_grant(stack: str, name: str, member: str, role: str = "roles/storage.objectViewer", **extra: Any) -> Case:
    bucket = extra.pop("bucket", CHECKPOINTS)
    inputs = {"bucket": bucket, "role": role, "member": member, **extra}
    return Case(name, stack, add(stack, BUCKET_MEMBER, name, inputs), name)


TOKEN_CREATOR = "roles/iam.serviceAccountTokenCreator"
POOL_SET = "principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github"
CASES = [
    # --- principals the pack cannot place fail closed ---
    bucket_grant(TRAINING, "pool-readers", f"{POOL_SET}/attribute.repository/acme/infra"),
    bucket_grant(TRAINING, "pool-subject", POOL_SET.replace("principalSet", "principal") + "/subject/repo:acme/x"),
    bucket_grant(TRAINING, "gke-workload", f"serviceAccount:{TRAIN}.svc.id.goog[jobs/loader]"),
    bucket_grant(TRAINING, "gmail-reader", "user:alice@gmail.com"),
    Case(
        "googlemail-group-binding",
        TRAINING,
        add(
            TRAINING,
            PROJECT_BINDING,
            "personal-viewers",
            {"role": "roles/viewer", "members": ["user:bob@googlemail.com"]},
        ),
        "personal-viewers",
    ),
    Case(
        "gmail-in-policy-data-object",
        TRAINING,
        add(
            TRAINING,
            BUCKET_POLICY,
            "datasets-policy",
            {
                "bucket": f"{TRAIN}-datasets",
                "policyData": {"bindings": [{"role": "roles/storage.objectViewer", "members": ["user:eve@gmail.com"]}]},
            },
        ),
        "datasets-policy",
    ),
    bucket_grant(TRAINING, "deleted-member", f"deleted:serviceAccount:{REPLICA}?uid=123"),
    # --- serving may become a training identity ---
    Case(
        "token-creator-on-training-sa",
        TRAINING,
        add(
            TRAINING,
            SA_MEMBER,
            "replica-mints-node-tokens",
            {
                "serviceAccountId": f"projects/{TRAIN}/serviceAccounts/{TRAINING_NODES}",
                "role": TOKEN_CREATOR,
                "member": f"serviceAccount:{REPLICA}",
            },
        ),
        "replica-mints-node-tokens",
    ),
    Case(
        "act-as-project-wide-binding",
        TRAINING,
        add(
            TRAINING,
            PROJECT_BINDING,
            "replica-acts-as",
            {"project": TRAIN, "role": "roles/iam.serviceAccountUser", "members": [f"serviceAccount:{REPLICA}"]},
        ),
        "replica-acts-as",
    ),
    Case(
        "serving-takes-act-as-on-training-sa",
        SERVING,
        add(
            SERVING,
            SA_BINDING_ALIAS,
            "act-as-head",
            {
                "serviceAccountId": f"projects/{TRAIN}/serviceAccounts/{TRAINING_HEAD}",
                "role": "roles/iam.serviceAccountUser",
                "members": [f"serviceAccount:{REPLICA}"],
            },
        ),
        "act-as-head",
    ),
    # --- serving machines wearing a training identity ---
    Case(
        "replica-template-as-training-sa",
        SERVING,
        edit("gcp-serving-replica", TEMPLATE, lambda p: p["serviceAccount"].update(email=TRAINING_NODES)),
        "gcp-serving-replica",
    ),
    Case(
        "serving-vm-as-training-sa",
        SERVING,
        add(
            SERVING,
            "gcp:compute/instance:Instance",
            "debug-vm",
            {"machineType": "e2-small", "serviceAccount": {"email": TRAINING_HEAD, "scopes": ["cloud-platform"]}},
        ),
        "debug-vm",
    ),
    Case(
        "serving-node-pool-as-training-sa",
        SERVING,
        add(SERVING, "gcp:container/nodePool:NodePool", "gpu-pool", {"nodeConfig": {"serviceAccount": TRAINING_NODES}}),
        "gpu-pool",
    ),
    # --- the read path loses its condition ---
    Case(
        "models-read-without-condition",
        SERVING,
        drop("gcp-serving-replica-models", BUCKET_MEMBER, "condition"),
        "gcp-serving-replica-models",
    ),
    Case(
        "models-read-binding-without-condition",
        SERVING,
        add(
            SERVING,
            BUCKET_BINDING,
            "replica-reads-all",
            {"bucket": CHECKPOINTS, "role": "roles/storage.objectViewer", "members": [f"serviceAccount:{REPLICA}"]},
        ),
        "replica-reads-all",
    ),
    Case(
        "models-read-whole-bucket-condition",
        SERVING,
        put("gcp-serving-replica-models", BUCKET_MEMBER, condition=models_condition(prefix="")),
        "gcp-serving-replica-models",
    ),
    Case(
        "models-read-prefix-without-slash",
        SERVING,
        put("gcp-serving-replica-models", BUCKET_MEMBER, condition=models_condition(prefix="models")),
        "gcp-serving-replica-models",
    ),
    Case(
        "models-read-or-any-time",
        SERVING,
        edit(
            "gcp-serving-replica-models",
            BUCKET_MEMBER,
            lambda p: p["condition"].update(
                expression=p["condition"]["expression"] + ' || request.time > timestamp("2020-01-01T00:00:00Z")'
            ),
        ),
        "gcp-serving-replica-models",
    ),
    # --- IAM-admin-equivalent roles to the other side ---
    Case(
        "security-admin-to-serving",
        TRAINING,
        add(
            TRAINING,
            PROJECT_MEMBER,
            "replica-security-admin",
            {"role": "roles/iam.securityAdmin", "member": f"serviceAccount:{REPLICA}"},
        ),
        "replica-security-admin",
    ),
    Case(
        "project-iam-admin-in-policy-object",
        TRAINING,
        add(
            TRAINING,
            PROJECT_POLICY,
            "project-policy",
            {
                "project": TRAIN,
                "policyData": json.dumps(
                    {
                        "bindings": [
                            {"role": "roles/resourcemanager.projectIamAdmin", "members": [f"serviceAccount:{REPLICA}"]}
                        ]
                    }
                ),
            },
        ),
        "project-policy",
    ),
    Case(
        "serving-grants-itself-iam-admin-on-training",
        SERVING,
        add(
            SERVING,
            PROJECT_MEMBER,
            "take-training",
            {"project": TRAIN, "role": "roles/resourcemanager.projectIamAdmin", "member": f"serviceAccount:{REPLICA}"},
        ),
        "take-training",
    ),
    Case(
        "custom-role-set-iam-policy-to-serving",
        TRAINING,
        both(
            add(
                TRAINING,
                "gcp:projects/iAMCustomRole:IAMCustomRole",
                "bucket-keeper",
                {
                    "roleId": "bucketKeeper",
                    "project": TRAIN,
                    "title": "k",
                    "permissions": ["storage.buckets.get", "storage.buckets.setIamPolicy"],
                },
            ),
            add(
                TRAINING,
                PROJECT_MEMBER,
                "keeper-to-replica",
                {"role": f"projects/{TRAIN}/roles/bucketKeeper", "member": f"serviceAccount:{REPLICA}"},
            ),
        ),
        "keeper-to-replica",
    ),
    # --- where data is written or encrypted ---
    Case(
        "sink-to-serving-bigquery",
        TRAINING,
        add(
            TRAINING,
            "gcp:logging/projectSink:ProjectSink",
            "audit-out",
            {"destination": f"bigquery.googleapis.com/projects/{SERVE}/datasets/logs"},
        ),
        "audit-out",
    ),
    Case(
        "sink-to-serving-topic",
        TRAINING,
        add(
            TRAINING,
            "gcp:logging/projectSink:ProjectSink",
            "stream-out",
            {"destination": f"pubsub.googleapis.com/projects/{SERVE}/topics/t"},
        ),
        "stream-out",
    ),
    Case(
        "folder-sink-into-training",
        TRAINING,
        add(
            TRAINING,
            "gcp:logging/folderSink:FolderSink",
            "folder-logs",
            {"folder": "folders/42", "destination": f"storage.googleapis.com/{CHECKPOINTS}"},
        ),
        "folder-logs",
    ),
    Case(
        "checkpoints-on-serving-key",
        TRAINING,
        edit("gcp-training-checkpoints", BUCKET, lambda p: p["encryption"].update(defaultKmsKeyName=OTHER_KEY)),
        "gcp-training-checkpoints",
    ),
    Case(
        "lustre-on-serving-key",
        TRAINING,
        put("gcp-training-lustre", "gcp:lustre/instance:Instance", kmsKey=OTHER_KEY),
        "gcp-training-lustre",
    ),
    Case(
        "serving-topic-on-training-key",
        SERVING,
        put("gcp-serving-requests", "gcp:pubsub/topic:Topic", kmsKeyName=TRAINING_KEY),
        "gcp-serving-requests",
    ),
    Case(
        "subscription-exports-to-training-bigquery",
        SERVING,
        put(
            "gcp-serving-requests",
            "gcp:pubsub/subscription:Subscription",
            bigqueryConfig={"table": f"{TRAIN}.logs.requests"},
        ),
        "gcp-serving-requests",
    ),
    Case(
        "transfer-job-copies-checkpoints-out",
        TRAINING,
        add(
            TRAINING,
            "gcp:storage/transferJob:TransferJob",
            "copy-out",
            {
                "description": "x",
                "transferSpec": {
                    "gcsDataSource": {"bucketName": CHECKPOINTS},
                    "gcsDataSink": {"bucketName": "elsewhere"},
                },
            },
        ),
        "copy-out",
    ),
    Case(
        "bucket-acl-writer-to-serving",
        TRAINING,
        add(
            TRAINING,
            "gcp:storage/bucketACL:BucketACL",
            "checkpoints-acl",
            {"bucket": CHECKPOINTS, "roleEntities": [f"WRITER:user-{REPLICA}"]},
        ),
        "checkpoints-acl",
    ),
    Case(
        "object-acl-public-read",
        TRAINING,
        add(
            TRAINING,
            "gcp:storage/objectACL:ObjectACL",
            "weights-acl",
            {"bucket": CHECKPOINTS, "object": "models/w.bin", "predefinedAcl": "publicRead"},
        ),
        "weights-acl",
    ),
    Case(
        "shared-vpc-serving-attached",
        TRAINING,
        add(
            TRAINING,
            "gcp:compute/sharedVPCServiceProject:SharedVPCServiceProject",
            "attach",
            {"hostProject": TRAIN, "serviceProject": SERVE},
        ),
        "attach",
    ),
    # --- long-lived credentials and federation ---
    Case(
        "service-account-key",
        TRAINING,
        add(
            TRAINING,
            "gcp:serviceaccount/key:Key",
            "nodes-key",
            {"serviceAccountId": f"projects/{TRAIN}/serviceAccounts/{TRAINING_NODES}"},
        ),
        "nodes-key",
    ),
    Case(
        "hmac-key",
        TRAINING,
        add(TRAINING, "gcp:storage/hmacKey:HmacKey", "nodes-hmac", {"serviceAccountEmail": TRAINING_NODES}),
        "nodes-hmac",
    ),
    Case(
        "pool-provider-any-repository",
        TRAINING,
        add(
            TRAINING,
            "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider",
            "github",
            {
                "workloadIdentityPoolId": "ci",
                "workloadIdentityPoolProviderId": "github",
                "attributeCondition": "assertion.repository_owner.startsWith('acme')",
                "oidc": {"issuerUri": "https://token.actions.githubusercontent.com"},
            },
        ),
        "github",
    ),
]


def caught(case: Case, found: list[Verdict]) -> list[Verdict]:
    return [
        v
        for v in found
        if v.mandatory
        and v.policy in (POLICY, f"{POLICY}-final")
        and (v.urn.endswith(f"::{case.resource}") or case.resource in v.message)
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_gcp_access_class_is_caught(case: Case) -> None:
    found = verdicts(case.stack, case.change)
    assert caught(case, found), "\n".join(v.line() for v in found) or "no verdict at all"


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


def test_the_unplaced_principal_says_what_it_could_not_place() -> None:
    found = verdicts(
        TRAINING,
        add(
            TRAINING,
            BUCKET_MEMBER,
            "x",
            {"bucket": CHECKPOINTS, "role": "roles/storage.objectViewer", "member": "user:a@gmail.com"},
        ),
    )
    assert any("consumer Google account (gmail.com)" in v.message and "fail closed" in v.message for v in found)


# --- what must not be caught ---------------------------------------------------------------------------------------

LEGITIMATE: list[tuple[str, str, Callable[[Doc], None]]] = [
    (
        "training-shares-models-by-member",
        TRAINING,
        add(
            TRAINING,
            BUCKET_MEMBER,
            "serving-reads",
            {
                "bucket": CHECKPOINTS,
                "role": "roles/storage.objectViewer",
                "member": f"serviceAccount:{REPLICA}",
                "condition": models_condition(),
            },
        ),
    ),
    (
        "training-shares-models-by-binding-exact-object",
        TRAINING,
        add(
            TRAINING,
            BUCKET_BINDING,
            "serving-reads-config",
            {
                "bucket": CHECKPOINTS,
                "role": "roles/storage.objectViewer",
                "members": [f"serviceAccount:{REPLICA}"],
                "condition": {
                    "title": "one",
                    "expression": f'resource.name == "projects/_/buckets/{CHECKPOINTS}/objects/models/llama/config.json"',
                },
            },
        ),
    ),
    (
        "training-shares-models-managed-folder",
        TRAINING,
        add(
            TRAINING,
            "gcp:storage/managedFolderIamMember:ManagedFolderIamMember",
            "models-folder",
            {
                "bucket": CHECKPOINTS,
                "managedFolder": "models/",
                "role": "roles/storage.objectViewer",
                "member": f"serviceAccount:{REPLICA}",
            },
        ),
    ),
    (
        "serving-read-with-a-narrower-condition",
        SERVING,
        put(
            "gcp-serving-replica-models",
            BUCKET_MEMBER,
            condition=models_condition(prefix="models/llama-3.1-8b-instruct/"),
        ),
    ),
    (
        "training-own-logging-writer",
        TRAINING,
        add(
            TRAINING,
            PROJECT_MEMBER,
            "nodes-log",
            {"project": TRAIN, "role": "roles/logging.logWriter", "member": f"serviceAccount:{TRAINING_NODES}"},
        ),
    ),
    (
        "training-own-time-bound-grant",
        TRAINING,
        add(
            TRAINING,
            BUCKET_MEMBER,
            "head-reads-datasets",
            {
                "bucket": f"{TRAIN}-datasets",
                "role": "roles/storage.objectViewer",
                "member": f"serviceAccount:{TRAINING_HEAD}",
                "condition": {"title": "t", "expression": 'request.time < timestamp("2030-01-01T00:00:00Z")'},
            },
        ),
    ),
    (
        "training-own-custom-reader-role",
        TRAINING,
        both(
            add(
                TRAINING,
                "gcp:projects/iAMCustomRole:IAMCustomRole",
                "lister",
                {"roleId": "lister", "project": TRAIN, "title": "l", "permissions": ["storage.objects.list"]},
            ),
            add(
                TRAINING,
                PROJECT_MEMBER,
                "lister-to-head",
                {"role": f"projects/{TRAIN}/roles/lister", "member": f"serviceAccount:{TRAINING_HEAD}"},
            ),
        ),
    ),
    (
        "training-shares-models-with-a-custom-reader-role",
        TRAINING,
        both(
            add(
                TRAINING,
                "gcp:projects/iAMCustomRole:IAMCustomRole",
                "model-reader",
                {"roleId": "modelReader", "title": "m", "permissions": ["storage.objects.get", "storage.objects.list"]},
            ),
            add(
                TRAINING,
                BUCKET_MEMBER,
                "serving-reads-custom",
                {
                    "bucket": CHECKPOINTS,
                    "role": f"projects/{TRAIN}/roles/modelReader",
                    "member": f"serviceAccount:{REPLICA}",
                    "condition": models_condition(),
                },
            ),
        ),
    ),
    (
        "training-sink-to-own-bucket",
        TRAINING,
        add(
            TRAINING,
            "gcp:logging/projectSink:ProjectSink",
            "keep-logs",
            {"destination": f"storage.googleapis.com/{CHECKPOINTS}"},
        ),
    ),
    (
        "serving-own-token-creator",
        SERVING,
        add(
            SERVING,
            SA_MEMBER,
            "replica-self-token",
            {
                "serviceAccountId": f"projects/{SERVE}/serviceAccounts/{REPLICA}",
                "role": TOKEN_CREATOR,
                "member": f"serviceAccount:{REPLICA}",
            },
        ),
    ),
    (
        "serving-agent-publishes-dead-letters",
        SERVING,
        add(
            SERVING,
            "gcp:pubsub/topicIAMMember:TopicIAMMember",
            "agent-publish",
            {
                "topic": "gcp-serving-dead-letters",
                "role": "roles/pubsub.publisher",
                "member": "serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com",
            },
        ),
    ),
]


# Kinds the concept tables do not list yet (known-resource-kinds fails them closed) whose edges the reader judges:
# a legitimate use draws that verdict and no other.
NOT_YET_KNOWN = (
    "gcp:storage/managedFolderIamMember:ManagedFolderIamMember",
    "gcp:projects/iAMCustomRole:IAMCustomRole",
    "gcp:logging/projectSink:ProjectSink",
)


@pytest.mark.parametrize(("stack", "change"), [(s, c) for _, s, c in LEGITIMATE], ids=[i for i, _, _ in LEGITIMATE])
def test_legitimate_gcp_access_draws_no_verdict(stack: str, change: Callable[[Doc], None]) -> None:
    found = verdicts(stack, change)
    unknown = [
        v for v in found if v.policy == "known-resource-kinds" and any(f"::{t}::" in v.urn for t in NOT_YET_KNOWN)
    ]
    assert [v.line() for v in found if v not in unknown] == []


@pytest.mark.parametrize("stack", [TRAINING, SERVING])
def test_the_shipped_exports_draw_no_verdict(stack: str) -> None:
    assert [v.line() for v in verdicts(stack, lambda doc: None)] == []


# --- the pieces -------------------------------------------------------------------------------------------------


def test_members_are_placed_by_what_they_name() -> None:
    facts = StackFacts(numbers=frozenset({"42"}), pools=frozenset({"ci"}))
    placed = {
        f"serviceAccount:{REPLICA}": SERVE,
        f"serviceAccount:{SERVE}@appspot.gserviceaccount.com": SERVE,
        "serviceAccount:42-compute@developer.gserviceaccount.com": OWN,
        "serviceAccount:service-9@gcp-sa-pubsub.iam.gserviceaccount.com": SERVICE,
        "serviceAccount:service-9@compute-system.iam.gserviceaccount.com": SERVICE,
        "allUsers": ANY,
        "user:alex@example.com": "domain:example.com",
        "principal://iam.googleapis.com/projects/42/locations/global/workloadIdentityPools/ci/subject/x": OWN,
    }
    assert {m: member_party(m, facts, False).account for m in placed} == placed
    unplaced = [
        "user:a@gmail.com",
        "serviceAccount:7-compute@developer.gserviceaccount.com",
        f"serviceAccount:{TRAIN}.svc.id.goog[ns/ksa]",
        f"{POOL_SET}/*",
        "deleted:user:a@example.com?uid=1",
        "something:else",
    ]
    assert [m for m in unplaced if member_party(m, facts, False).account is not None] == []
    # A user-managed account named like an agent, in a project of someone's: its project, not the cloud.
    assert (
        member_party("serviceAccount:service-9@acme-other.iam.gserviceaccount.com", facts, False).account
        == "acme-other"
    )


def test_roles_fail_closed() -> None:
    assert role_access("roles/storage.objectViewer", None).level == "read"
    assert role_access("roles/compute.viewer", None).level == "read"
    assert role_access("roles/iam.workloadIdentityUser", None).becomes
    assert role_access("roles/resourcemanager.projectIamAdmin", None).level == "admin"
    assert role_access("roles/somethingNew.operator", None).level == "admin"
    assert role_access("projects/p/roles/unknown", None).level == "admin"


@pytest.mark.parametrize(
    ("expression", "prefixes"),
    [
        (models_condition()["expression"], ["models/"]),
        (f'resource.name.startsWith("projects/_/buckets/{CHECKPOINTS}/objects/models/a/")', ["models/a/"]),
        (f"(resource.name.startsWith('projects/_/buckets/{CHECKPOINTS}/objects/models/'))", ["models/"]),
        ('resource.name.startsWith("projects/_/buckets/other/objects/models/")', None),
        ('request.time < timestamp("2030-01-01T00:00:00Z")', None),
        (models_condition()["expression"] + " || true", None),
        (
            f'request.time < timestamp("2030-01-01T00:00:00Z") && {models_condition()["expression"].split(" || ")[0]}',
            ["models/"],
        ),
    ],
)
def test_conditions_narrow_to_what_they_say(expression: str, prefixes: list[str] | None) -> None:
    assert object_prefixes(expression, CHECKPOINTS) == prefixes


def test_a_workspace_domain_is_outside_both_sides_unless_trusted() -> None:
    """Workspace / Cloud Identity users and groups live in no project: a grant to one names neither side, so it fails
    closed until the policy config trusts the domain (trustedAccounts: ["domain:example.com"])."""
    result = previewed(TRAINING)
    doc = copy.deepcopy(result.export)
    inputs = {"bucket": f"{TRAIN}-datasets", "role": "roles/storage.objectViewer", "member": "group:ml@example.com"}
    add(TRAINING, BUCKET_MEMBER, "ml-team-reads", inputs)(doc)
    found = policy_verdicts(doc, result.spec)
    assert any(
        v.mandatory and "domain:example.com" in v.message
        for v in caught(Case("", TRAINING, both(), "ml-team-reads"), found)
    )
    trusted = {policy: {"trustedAccounts": ["domain:example.com"]} for policy in (POLICY, f"{POLICY}-final")}
    assert [v.line() for v in policy_verdicts(doc, result.spec, trusted)] == []
