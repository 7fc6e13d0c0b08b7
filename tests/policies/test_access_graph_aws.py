"""AWS's access-graph reader (policies/aws/access.py, documents.py), through the runner the CLI uses.

Each class of cross-side path is spelled at least two ways, applied to the shipped stacks' own exports:
a mandatory `cross-account-read-only` verdict (or its `-final` twin) must name the edited resource, with
the message saying what crosses (or what the pack could not place). The documented read path (serving
reads training's `models/` prefix; training's bucket and key let serving read it through S3) draws
nothing, and policy documents given as objects are judged exactly like their JSON strings.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from test_policy_real_mutations import (
    ATTACHMENT,
    BUCKET,
    BUCKET_POLICY,
    INSTANCE,
    KMS_KEY,
    LT,
    QUEUE,
    ROLE,
    ROLE_POLICY,
    SERVING,
    SERVING_ACCOUNT,
    TRAINING,
    TRAINING_ACCOUNT,
    VOLUME,
    Doc,
    add,
    add_statement,
    edit_json_string,
    edit_props,
    previewed,
    put,
    set_props,
)

from accelstack.engine.policy_runner import Verdict, policy_verdicts
from accelstack.policies import access
from accelstack.policies.aws import access as aws_access

CHECKPOINTS = "acme-train-checkpoints"
CHECKPOINTS_ARN = f"arn:aws:s3:::{CHECKPOINTS}"
CHECKPOINTS_BUCKET = ("aws-training-storage-checkpoints", BUCKET)
CHECKPOINTS_POLICY = ("aws-training-storage-checkpoints-policy", BUCKET_POLICY)
TRAINING_NODE_ROLE = ("aws-training-node", ROLE)
SERVING_ROLE = ("aws-serving-replica", ROLE)
SERVING_QUEUES_POLICY = ("aws-serving-replica-queues", ROLE_POLICY)
SERVING_MODEL_READ = ("aws-serving-replica-model-read", ROLE_POLICY)
TRAINING_ROLE_ARN = f"arn:aws:iam::{TRAINING_ACCOUNT}:role/aws-training-node"
SERVING_ROLE_ARN = f"arn:aws:iam::{SERVING_ACCOUNT}:role/aws-serving-replica"
SERVING_KEY_ARN = f"arn:aws:kms:us-east-1:{SERVING_ACCOUNT}:key/aws-serving-key"
TRAINING_KEY_ARN = f"arn:aws:kms:us-east-1:{TRAINING_ACCOUNT}:key/aws-training-storage-key"
SEPARATION = ("cross-account-read-only", "cross-account-read-only-final")


@dataclass(frozen=True)
class Path:
    id: str
    stack: str
    apply: Callable[[Doc], str]  # edits the export; returns the URN a verdict must name
    says: str  # a phrase the verdict's message carries


def verdicts_after(stack: str, apply: Callable[[Doc], Any]) -> tuple[list[Verdict], Any]:
    result = previewed(stack)
    doc = copy.deepcopy(result.export)
    urn = apply(doc)
    assert doc != result.export, "the edit changed nothing"
    return policy_verdicts(doc, result.spec), urn


def statement(principal: Any, actions: Any, resource: Any, condition: dict[str, Any] | None = None) -> dict[str, Any]:
    found = {"Effect": "Allow", "Principal": principal, "Action": actions, "Resource": resource}
    if principal is None:
        del found["Principal"]
    if condition:
        found["Condition"] = condition
    return found


def document(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


SERVING_ROOT = {"AWS": f"arn:aws:iam::{SERVING_ACCOUNT}:root"}
SERVING_PUTS = statement(SERVING_ROOT, ["s3:PutObject"], f"{CHECKPOINTS_ARN}/models/*")
OIDC = f"arn:aws:iam::{TRAINING_ACCOUNT}:oidc-provider/token.actions.githubusercontent.com"


def trust(principal: Any, condition: dict[str, Any] | None = None, action: str = "sts:AssumeRole") -> dict[str, Any]:
    found = {"Effect": "Allow", "Principal": principal, "Action": action}
    if condition:
        found["Condition"] = condition
    return found


PATHS = [
    # --- cross-account write: bucket policy, inline bucket policy (either bucket token), identity policy ---
    Path("write-via-bucket-policy", TRAINING, add_statement(*CHECKPOINTS_POLICY, "policy", SERVING_PUTS), "can write"),
    Path(
        "write-via-bucket-policy-not-action",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY,
            "policy",
            {
                "Effect": "Allow",
                "Principal": SERVING_ROOT,
                "NotAction": "s3:GetObject",
                "Resource": f"{CHECKPOINTS_ARN}/*",
            },
        ),
        "the serving account 222222222222",
    ),
    Path(
        "write-via-inline-bucket-policy",
        TRAINING,
        set_props(*CHECKPOINTS_BUCKET, policy=json.dumps(document(SERVING_PUTS))),
        "inline bucket policy aws-training-storage-checkpoints",
    ),
    Path(
        "write-via-inline-policy-on-bucket-v2",
        TRAINING,
        add(
            TRAINING,
            "aws:s3/bucketV2:BucketV2",
            "aws-training-scratch",
            {
                "bucket": "acme-train-scratch",
                "policy": document(statement(SERVING_ROOT, "s3:DeleteObject", "arn:aws:s3:::acme-train-scratch/*")),
            },
            protect=True,
        ),
        "can write",
    ),
    # The older survivor: serving's own role asks to write training's checkpoints.
    Path(
        "serving-identity-writes-training-checkpoints",
        SERVING,
        add_statement(
            *SERVING_QUEUES_POLICY,
            "policy",
            statement(None, ["s3:PutObject", "s3:DeleteObject"], f"{CHECKPOINTS_ARN}/*"),
        ),
        "can write bucket acme-train-checkpoints",
    ),
    Path(
        "serving-inline-role-policy-writes-training-models",
        SERVING,
        set_props(
            *SERVING_ROLE,
            inlinePolicies=[
                {
                    "name": "sync",
                    "policy": json.dumps(document(statement(None, "s3:PutObject", f"{CHECKPOINTS_ARN}/models/*"))),
                }
            ],
        ),
        "inline policy sync of role aws-serving-replica",
    ),
    # --- become: role trust, a machine wearing the other side's role, AssumeRole / PassRole on it ---
    Path(
        "become-via-role-trust",
        TRAINING,
        add_statement(*TRAINING_NODE_ROLE, "assumeRolePolicy", trust(SERVING_ROOT)),
        "can become role aws-training-node",
    ),
    Path(
        "become-via-role-trust-bare-account",
        TRAINING,
        add_statement(*TRAINING_NODE_ROLE, "assumeRolePolicy", trust({"AWS": SERVING_ACCOUNT})),
        "can become",
    ),
    Path(
        "launch-template-wears-serving-profile",
        TRAINING,
        edit_props(
            "aws-training-nodes",
            LT,
            put({"arn": f"arn:aws:iam::{SERVING_ACCOUNT}:instance-profile/aws-serving-replica"}, "iamInstanceProfile"),
        ),
        "can become instance profile aws-serving-replica",
    ),
    Path(
        "instance-wears-serving-profile",
        TRAINING,
        set_props(
            "aws-training-head", INSTANCE, iamInstanceProfile=f"arn:aws:iam::{SERVING_ACCOUNT}:instance-profile/x"
        ),
        "can become",
    ),
    Path(
        "serving-assumes-training-role",
        SERVING,
        add_statement(*SERVING_QUEUES_POLICY, "policy", statement(None, "sts:AssumeRole", TRAINING_ROLE_ARN)),
        "can become role aws-training-node",
    ),
    Path(
        "serving-passes-training-role",
        SERVING,
        add_statement(*SERVING_QUEUES_POLICY, "policy", statement(None, "iam:PassRole", TRAINING_ROLE_ARN)),
        "can become role aws-training-node",
    ),
    # --- principals the pack cannot place fail closed ---
    Path(
        "federated-without-sub",
        TRAINING,
        add_statement(
            *TRAINING_NODE_ROLE,
            "assumeRolePolicy",
            trust(
                {"Federated": OIDC},
                {"StringEquals": {"token.actions.githubusercontent.com:aud": "sts.amazonaws.com"}},
                "sts:AssumeRoleWithWebIdentity",
            ),
        ),
        "cannot place the principal",
    ),
    Path(
        "federated-wildcard-sub",
        TRAINING,
        add_statement(
            *TRAINING_NODE_ROLE,
            "assumeRolePolicy",
            trust(
                {"Federated": OIDC},
                {"StringLike": {"token.actions.githubusercontent.com:sub": "repo:*"}},
                "sts:AssumeRoleWithWebIdentity",
            ),
        ),
        "any subject of the provider",
    ),
    Path(
        "canonical-user-on-bucket",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY,
            "policy",
            statement(
                {"CanonicalUser": "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"},
                "s3:GetObject",
                f"{CHECKPOINTS_ARN}/models/*",
            ),
        ),
        "canonical user",
    ),
    Path(
        "canonical-user-acl-grant",
        TRAINING,
        set_props(
            *CHECKPOINTS_BUCKET,
            grants=[{"type": "CanonicalUser", "id": "79a59df900b949e5", "permissions": ["READ"]}],
        ),
        "cannot place the principal",
    ),
    Path(
        "for-all-values-on-principal-account",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY,
            "policy",
            statement(
                "*",
                "s3:GetObject",
                f"{CHECKPOINTS_ARN}/models/*",
                {"ForAllValues:StringEquals": {"aws:PrincipalAccount": [TRAINING_ACCOUNT]}},
            ),
        ),
        "admits a caller that omits the key",
    ),
    Path(
        "for-all-values-on-key-caller",
        TRAINING,
        add_statement(
            "aws-training-storage-key",
            KMS_KEY,
            "policy",
            statement(
                {"AWS": "*"}, "kms:Decrypt", "*", {"ForAllValues:StringEquals": {"kms:CallerAccount": TRAINING_ACCOUNT}}
            ),
        ),
        "admits a caller that omits the key",
    ),
    Path(
        "org-only-principal",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY,
            "policy",
            statement(
                "*", "s3:GetObject", f"{CHECKPOINTS_ARN}/models/*", {"StringEquals": {"aws:PrincipalOrgID": "o-abc123"}}
            ),
        ),
        "organization",
    ),
    # --- where data is written: replication and log destinations on the other side ---
    Path(
        "replication-config-to-serving",
        TRAINING,
        add(
            TRAINING,
            "aws:s3/bucketReplicationConfig:BucketReplicationConfig",
            "aws-training-checkpoints-replication",
            {
                "bucket": CHECKPOINTS,
                "role": f"arn:aws:iam::{TRAINING_ACCOUNT}:role/replication",
                "rules": [
                    {
                        "id": "all",
                        "status": "Enabled",
                        "destination": {"bucket": "arn:aws:s3:::acme-serve-copy", "account": SERVING_ACCOUNT},
                    }
                ],
            },
        ),
        "can write bucket acme-serve-copy",
    ),
    Path(
        "inline-replication-to-serving",
        TRAINING,
        set_props(
            *CHECKPOINTS_BUCKET,
            replicationConfiguration={
                "role": f"arn:aws:iam::{TRAINING_ACCOUNT}:role/replication",
                "rules": [
                    {
                        "id": "all",
                        "status": "Enabled",
                        "destination": {"bucket": "arn:aws:s3:::acme-serve-copy", "accountId": SERVING_ACCOUNT},
                    }
                ],
            },
        ),
        "replicationConfiguration.rules.destination.bucket",
    ),
    Path(
        "access-logs-to-an-unplaced-bucket",
        TRAINING,
        edit_props(
            "aws-training-storage-checkpoints-access-logging",
            "aws:s3/bucketLogging:BucketLogging",
            put("aws-serving-alb-logs", "targetBucket"),
        ),
        "is in neither trainingStores nor servingStores",
    ),
    Path(
        "log-subscription-to-training",
        SERVING,
        add(
            SERVING,
            "aws:cloudwatch/logSubscriptionFilter:LogSubscriptionFilter",
            "aws-serving-waf-forward",
            {
                "logGroup": "aws-waf-logs-aws-serving",
                "filterPattern": "",
                "destinationArn": f"arn:aws:logs:us-east-1:{TRAINING_ACCOUNT}:destination:central",
            },
        ),
        "can write",
    ),
    # --- a key of the other side encrypts this stack's data (that side can read it) ---
    Path(
        "volume-encrypted-with-serving-key",
        TRAINING,
        set_props("aws-training-slurmctld-state", VOLUME, kmsKeyId=SERVING_KEY_ARN),
        "is encrypted with the key",
    ),
    Path(
        "queue-encrypted-with-training-key",
        SERVING,
        set_props("aws-serving-requests", QUEUE, kmsMasterKeyId=TRAINING_KEY_ARN),
        "is encrypted with the key",
    ),
    # --- escalation: administrator policies reach every account's roles; another account's policy is unreadable ---
    Path(
        "attached-administrator-access",
        SERVING,
        add(
            SERVING,
            ATTACHMENT,
            "aws-serving-replica-admin",
            {"role": "aws-serving-replica-id", "policyArn": "arn:aws:iam::aws:policy/AdministratorAccess"},
            depends={"role": SERVING_ROLE},
        ),
        "can become every role of every account",
    ),
    Path(
        "managed-power-user-access",
        SERVING,
        set_props(*SERVING_ROLE, managedPolicyArns=["arn:aws:iam::aws:policy/PowerUserAccess"]),
        "can become every role of every account",
    ),
    Path(
        "attached-policy-of-training-account",
        SERVING,
        add(
            SERVING,
            ATTACHMENT,
            "aws-serving-replica-borrowed",
            {"role": "aws-serving-replica-id", "policyArn": f"arn:aws:iam::{TRAINING_ACCOUNT}:policy/deploy"},
            depends={"role": SERVING_ROLE},
        ),
        "whose document the pack cannot read",
    ),
]


def _separation(verdicts: list[Verdict], urn: str) -> list[Verdict]:
    return [v for v in verdicts if v.mandatory and v.urn == urn and v.policy in SEPARATION]


@pytest.mark.parametrize("path", PATHS, ids=[p.id for p in PATHS])
def test_every_cross_side_path_fails_with_what_crosses(path: Path) -> None:
    verdicts, urn = verdicts_after(path.stack, path.apply)
    caught = _separation(verdicts, urn)
    assert caught, [v.line() for v in verdicts]
    assert any(path.says.lower() in v.message.lower() for v in caught), [v.message for v in caught]


def test_every_class_has_two_spellings() -> None:
    classes = (
        "write-via",
        "identity-writes",
        "become",
        "wears",
        "assumes",
        "passes",
        "federated",
        "canonical",
        "for-all-values",
        "replication",
        "logs-to",
        "subscription",
        "encrypted-with",
        "administrator",
        "power-user",
    )
    for phrase in classes:
        assert any(phrase in p.id for p in PATHS), phrase
    assert len({p.id for p in PATHS}) == len(PATHS)


@pytest.mark.parametrize(
    "escalation",
    ["arn:aws:iam::aws:policy/IAMFullAccess", "arn:aws:iam::aws:policy/AdministratorAccess"],
)
@pytest.mark.parametrize("spelling", ["attachment", "managedPolicyArns"])
def test_iam_administrator_policies_are_admin_edges_and_least_privilege_findings(
    escalation: str, spelling: str
) -> None:
    """IAMFullAccess rewrites this account's IAM (admin over it, and every role of it can be passed);
    AdministratorAccess reaches every resource here and every account's roles (sts:AssumeRole on `*`)."""
    if spelling == "attachment":
        apply = add(
            SERVING,
            ATTACHMENT,
            "aws-serving-replica-escalates",
            {"role": "aws-serving-replica-id", "policyArn": escalation},
            depends={"role": SERVING_ROLE},
        )
    else:
        apply = set_props(*SERVING_ROLE, managedPolicyArns=[escalation])
    verdicts, urn = verdicts_after(SERVING, apply)
    assert any(v.mandatory and v.urn == urn and v.policy.startswith("iam-least-privilege") for v in verdicts)
    result = previewed(SERVING)
    doc = copy.deepcopy(result.export)
    apply(doc)
    edges = [e for e in _graph(doc, SERVING_ACCOUNT).edges if e.origin == urn]
    assert {e.access for e in edges} >= {access.ADMIN, access.BECOME}, edges
    crosses = any(e.access == access.BECOME and e.target.account == access.ANY for e in edges)
    assert crosses == escalation.endswith("AdministratorAccess")
    assert bool(_separation(verdicts, urn)) == crosses


def _graph(doc: Doc, account: str, stores: dict[str, str] | None = None) -> access.AccessGraph:
    """The stack's graph as the stack-level check builds it, from the export's final state."""
    from accelstack.engine.policy_runner import export_resources

    resources = [_Resource(r) for r in export_resources(doc)]
    by_urn = {r.urn: r for r in resources}
    for resource in resources:
        deps = resource.raw.get("propertyDependencies") or {}
        resource.property_dependencies = {k: [by_urn[u] for u in urns if u in by_urn] for k, urns in deps.items()}
    placement = access.Placement(frozenset({account}), stores or {}, access.Stack.of(resources))
    return access.build(resources, [aws_access.read_edges], placement)


@dataclass
class _Resource:
    """An export resource as a reader sees it (type, final-state props, URN, name, dependencies)."""

    raw: dict[str, Any]

    def __post_init__(self) -> None:
        self.resource_type = self.raw["type"]
        self.props = self.raw.get("outputs") or self.raw.get("inputs") or {}
        self.urn = self.raw["urn"]
        self.name = self.urn.rsplit("::", 1)[-1]
        self.property_dependencies: dict[str, Any] = {}


# --- the documented read path draws nothing -------------------------------------------------------

LEGITIMATE = [
    (
        "serving-reads-another-model-prefix",
        SERVING,
        add_statement(
            *SERVING_MODEL_READ,
            "policy",
            statement(None, ["s3:GetObject", "s3:GetObjectVersion"], f"{CHECKPOINTS_ARN}/models/new/*"),
        ),
    ),
    (
        "serving-lists-a-model-prefix",
        SERVING,
        add_statement(
            *SERVING_MODEL_READ,
            "policy",
            statement(None, "s3:ListBucket", CHECKPOINTS_ARN, {"StringLike": {"s3:prefix": ["models/new/*"]}}),
        ),
    ),
    (
        "training-grants-serving-object-versions-under-models",
        TRAINING,
        add_statement(
            *CHECKPOINTS_POLICY, "policy", statement(SERVING_ROOT, "s3:GetObjectVersion", f"{CHECKPOINTS_ARN}/models/*")
        ),
    ),
    (
        "training-key-decrypts-for-serving-through-s3",
        TRAINING,
        add_statement(
            "aws-training-storage-key",
            KMS_KEY,
            "policy",
            statement(
                SERVING_ROOT, "kms:Decrypt", "*", {"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}}
            ),
        ),
    ),
    (
        "training-role-trusts-its-own-account",
        TRAINING,
        add_statement(*TRAINING_NODE_ROLE, "assumeRolePolicy", trust({"AWS": f"arn:aws:iam::{TRAINING_ACCOUNT}:root"})),
    ),
    (
        "oidc-trust-for-one-repository",
        TRAINING,
        add_statement(
            *TRAINING_NODE_ROLE,
            "assumeRolePolicy",
            trust(
                {"Federated": OIDC},
                {"StringEquals": {"token.actions.githubusercontent.com:sub": "repo:acme/train:ref:refs/heads/main"}},
                "sts:AssumeRoleWithWebIdentity",
            ),
        ),
    ),
]


@pytest.mark.parametrize(("case", "stack", "apply"), LEGITIMATE, ids=[c[0] for c in LEGITIMATE])
def test_the_read_path_and_own_account_grants_draw_nothing(case: str, stack: str, apply: Callable[[Doc], Any]) -> None:
    verdicts, _ = verdicts_after(stack, apply)
    assert [v.line() for v in verdicts] == []


@pytest.mark.parametrize("stack", [TRAINING, SERVING, "aws-finetune"])
def test_the_shipped_read_path_is_in_the_graph(stack: str) -> None:
    """The shipped stacks draw no verdict because their read path is judged, not because it is unread."""
    result = previewed(stack)
    assert [v.line() for v in policy_verdicts(result.export, result.spec)] == []
    if stack == SERVING:
        graph = _graph(result.export, SERVING_ACCOUNT, {CHECKPOINTS: TRAINING_ACCOUNT})
        reads = [e for e in graph.edges if e.target.account == TRAINING_ACCOUNT]
        assert reads and all(e.access == access.READ for e in reads), reads
        assert {e.target.kind for e in reads} == {access.OBJECTS, access.KEY}
        assert all(e.scope == access.THROUGH_STORAGE or str(e.scope).startswith("models/") for e in reads)


# --- documents as objects are judged like JSON strings ------------------------------------------------

DOCUMENT_PROPS = ("policy", "assumeRolePolicy", "policyDocument", "accessPolicy")


def as_objects(doc: Doc) -> int:
    """Every JSON-string policy document of the export as the object the SDK also accepts."""
    changed = 0
    for resource in doc["deployment"]["resources"]:
        for side in ("inputs", "outputs"):
            props = resource.get(side) or {}
            for key in DOCUMENT_PROPS:
                if isinstance(props.get(key), str) and props[key].startswith("{"):
                    props[key] = json.loads(props[key])
                    changed += 1
    return changed


@pytest.mark.parametrize("stack", [TRAINING, SERVING])
def test_documents_as_objects_draw_nothing_on_the_shipped_stacks(stack: str) -> None:
    result = previewed(stack)
    doc = copy.deepcopy(result.export)
    assert as_objects(doc) >= 5
    assert [v.line() for v in policy_verdicts(doc, result.spec)] == []


def _object_form(apply: Callable[[Doc], str]) -> Callable[[Doc], str]:
    def both(doc: Doc) -> str:
        urn = apply(doc)
        as_objects(doc)
        return urn

    return both


# One mutation per rule that reads a policy document, each judged in both forms.
DOCUMENT_RULES = [
    (
        "no-public-buckets",
        TRAINING,
        set_props(
            *CHECKPOINTS_BUCKET, policy=json.dumps(document(statement("*", "s3:GetObject", f"{CHECKPOINTS_ARN}/*")))
        ),
    ),
    (
        "no-public-buckets",
        TRAINING,
        add_statement(*CHECKPOINTS_POLICY, "policy", statement("*", "s3:GetObject", f"{CHECKPOINTS_ARN}/*")),
    ),
    (
        "iam-least-privilege",
        SERVING,
        add_statement(*SERVING_QUEUES_POLICY, "policy", statement(None, "s3:*", "*")),
    ),
    ("cross-account-read-only", TRAINING, add_statement(*CHECKPOINTS_POLICY, "policy", SERVING_PUTS)),
    ("cross-account-read-only", TRAINING, add_statement(*TRAINING_NODE_ROLE, "assumeRolePolicy", trust(SERVING_ROOT))),
    (
        "cross-account-read-only",
        TRAINING,
        add_statement("aws-training-storage-key", KMS_KEY, "policy", statement(SERVING_ROOT, "kms:Encrypt", "*")),
    ),
    (
        "cross-account-read-only",
        SERVING,
        edit_props(
            "aws-serving-waf-logs",
            "aws:cloudwatch/logResourcePolicy:LogResourcePolicy",
            lambda p: p.__setitem__(
                "policyDocument",
                edit_json_string(
                    p["policyDocument"],
                    lambda d: d["Statement"].append(statement(SERVING_ROOT, "logs:PutLogEvents", "*")),
                ).replace(SERVING_ACCOUNT + ":root", TRAINING_ACCOUNT + ":root"),
            ),
        ),
    ),
]


@pytest.mark.parametrize(
    ("policy", "stack", "apply"), DOCUMENT_RULES, ids=[f"{r[0]}-{i}" for i, r in enumerate(DOCUMENT_RULES)]
)
@pytest.mark.parametrize("form", ["json-string", "object"])
def test_each_document_rule_judges_both_forms_alike(
    policy: str, stack: str, apply: Callable[[Doc], str], form: str
) -> None:
    verdicts, urn = verdicts_after(stack, apply if form == "json-string" else _object_form(apply))
    caught = {(v.policy.removesuffix("-final"), v.urn) for v in verdicts if v.mandatory}
    assert (policy, urn) in caught, [v.line() for v in verdicts]
    string_form, _ = verdicts_after(stack, apply)
    assert sorted(v.line() for v in verdicts) == sorted(v.line() for v in string_form)


# --- the reader alone: conditions, principal forms and grants outside documents ------------------------


@dataclass
class _Fake:
    resource_type: str
    props: dict[str, Any]
    name: str = "r"
    urn: str = "urn:pulumi:s::p::t::r"


PLACEMENT = access.Placement(frozenset({TRAINING_ACCOUNT}), {})


def _edges(kind: str, **props: Any) -> list[access.Edge]:
    return list(aws_access.read_edges(_Fake(kind, props), PLACEMENT))


def _key_policy(*statements: dict[str, Any]) -> list[access.Edge]:
    return _edges(KMS_KEY, policy=json.dumps(document(*statements)))


def test_every_kind_the_reader_reads_is_a_resource_of_the_installed_sdk() -> None:
    from test_policy_concepts import sdk

    tokens, aliases = sdk("aws")
    assert [t for t in aws_access.ACCESS_TYPES if t not in tokens and t not in aliases] == []


@pytest.mark.parametrize(
    ("condition", "accounts"),
    [
        ({"StringEquals": {"aws:PrincipalAccount": SERVING_ACCOUNT}}, {SERVING_ACCOUNT}),
        ({"ForAnyValue:StringEquals": {"aws:PrincipalAccount": [TRAINING_ACCOUNT]}}, {access.OWN}),
        ({"ArnLike": {"aws:PrincipalArn": f"arn:aws:iam::{SERVING_ACCOUNT}:role/*"}}, {SERVING_ACCOUNT}),
        ({"StringEqualsIfExists": {"aws:PrincipalAccount": TRAINING_ACCOUNT}}, {access.ANY}),
        ({"StringNotEquals": {"aws:PrincipalAccount": TRAINING_ACCOUNT}}, {access.ANY}),
        ({"StringLike": {"aws:PrincipalAccount": "*"}}, {access.ANY}),
        ({"ForAllValues:StringEquals": {"aws:PrincipalAccount": TRAINING_ACCOUNT}}, {None}),
        ({"StringEquals": {"aws:PrincipalOrgID": "o-abc"}}, {None}),
    ],
)
def test_conditions_narrow_principal_star_only_to_accounts_they_pin(
    condition: dict[str, Any], accounts: set[Any]
) -> None:
    edges = _key_policy(statement({"AWS": "*"}, "kms:Decrypt", "*", condition))
    assert {e.source.account for e in edges} == accounts


def test_a_service_principal_acts_for_the_account_its_conditions_name() -> None:
    logs = {"Service": "delivery.logs.amazonaws.com"}
    for_serving = _edges(
        BUCKET_POLICY,
        policy=document(
            statement(
                logs, "s3:PutObject", "arn:aws:s3:::b/*", {"StringEquals": {"aws:SourceAccount": SERVING_ACCOUNT}}
            )
        ),
    )
    assert {(e.source.account, e.access) for e in for_serving} == {(SERVING_ACCOUNT, access.WRITE)}
    unnarrowed = _edges(BUCKET_POLICY, policy=document(statement(logs, "s3:PutObject", "arn:aws:s3:::b/*")))
    assert {e.source.account for e in unnarrowed} == {access.SERVICE}


def test_access_levels_follow_aws_action_table_and_fail_closed() -> None:
    edges = _key_policy(
        statement({"AWS": SERVING_ACCOUNT}, ["kms:Decrypt", "kms:Encrypt", "kms:PutKeyPolicy", "kms:NoSuchAction"], "*")
    )
    levels = {e.access: e.what for e in edges}
    assert set(levels) == {access.READ, access.WRITE, access.ADMIN}
    assert "kms:nosuchaction unknown to AWS's action table, counted as admin" in levels[access.ADMIN]


def test_the_key_read_path_needs_s3_as_the_only_caller_path() -> None:
    via_s3 = {"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}}
    via_any = {"StringEquals": {"kms:ViaService": ["s3.us-east-1.amazonaws.com", "ec2.us-east-1.amazonaws.com"]}}
    assert {e.scope for e in _key_policy(statement(SERVING_ROOT, "kms:Decrypt", "*", via_s3))} == {
        access.THROUGH_STORAGE
    }
    assert {e.scope for e in _key_policy(statement(SERVING_ROOT, "kms:Decrypt", "*", via_any))} == {None}


def test_object_scopes_follow_the_key_pattern_and_the_list_prefix() -> None:
    edges = _edges(
        BUCKET_POLICY,
        policy=document(
            statement(
                SERVING_ROOT, "s3:GetObject", ["arn:aws:s3:::b/models/*", "arn:aws:s3:::b/mod*", "arn:aws:s3:::b/*"]
            ),
            statement(SERVING_ROOT, "s3:ListBucket", "arn:aws:s3:::b", {"StringLike": {"s3:prefix": ["models/x/*"]}}),
            statement(SERVING_ROOT, "s3:ListBucket", "arn:aws:s3:::b"),
            statement(SERVING_ROOT, "s3:GetBucketAcl", "arn:aws:s3:::b"),
        ),
    )
    scopes = {(e.target.kind, e.scope) for e in edges}
    assert scopes == {
        (access.OBJECTS, "models/"),
        (access.OBJECTS, "mod"),
        (access.OBJECTS, ""),
        (access.OBJECTS, "models/x/"),
        (access.RESOURCE, None),
    }


def test_grants_outside_documents() -> None:
    grant = _edges(
        "aws:kms/grant:Grant",
        keyId="k",
        granteePrincipal=f"arn:aws:iam::{SERVING_ACCOUNT}:role/x",
        operations=["Decrypt", "GenerateDataKey", "CreateGrant"],
    )
    assert {(e.source.account, e.access, e.target.kind, e.scope) for e in grant} == {
        (SERVING_ACCOUNT, access.READ, access.KEY, None),
        (SERVING_ACCOUNT, access.WRITE, access.KEY, None),
        (SERVING_ACCOUNT, access.ADMIN, access.KEY, None),
    }
    invoke = _edges(
        "aws:lambda/permission:Permission",
        principal="s3.amazonaws.com",
        sourceAccount=SERVING_ACCOUNT,
        function="f",
        action="lambda:InvokeFunction",
    )
    assert [(e.source.account, e.access) for e in invoke] == [(SERVING_ACCOUNT, access.WRITE)]
    org = _edges(
        "aws:ram/principalAssociation:PrincipalAssociation",
        principal="arn:aws:organizations::123456789012:organization/o-abc",
        resourceShareArn="arn:aws:ram:us-east-1:111111111111:resource-share/s",
    )
    assert [e.source.account for e in org] == [None] and "organization" in org[0].source.unplaced
    public = _edges("aws:s3/bucketAclV2:BucketAclV2", bucket="b", acl="public-read-write")
    assert [(e.source.account, e.access) for e in public] == [(access.ANY, access.WRITE)]


def test_unknown_names_during_preview_label_edges_without_stopping_the_check() -> None:
    """A role id unknown during preview only names the holder; the document is still judged."""
    from pulumi_policy.proxy import unknown_checking_proxy

    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's unknown-value sentinel
    props = unknown_checking_proxy(
        {"role": unknown, "policy": document(statement(None, "s3:PutObject", "arn:aws:s3:::b/*"))}
    )
    edges = list(aws_access.read_edges(_Fake(ROLE_POLICY, props, name="p"), PLACEMENT))  # type: ignore[arg-type]
    assert [e.source.ref for e in edges] == ["role of p"]
