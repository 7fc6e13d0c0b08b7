"""Azure through the access graph (policies/azure/access.py): each class of cross-subscription path the red team
used, in at least two spellings, draws a mandatory `cross-account-read-only` (or its -final twin) verdict naming
the resource that made it; the legitimate changes beside them draw nothing. Everything runs through the packs'
analyzer servicer, over the compliant Azure sets of test_policy_multicloud."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accelstack.engine.policy_runner import run_packs
from tests.policies.test_policy_multicloud import (
    AZ,
    AZS,
    AZT,
    BLOB_PATH,
    BLOB_READ,
    BLOB_READER,
    NODES_PRINCIPAL,
    OTHER_SUB,
    OWNER,
    READER,
    SERVE_SUB,
    STACKS,
    TRAIN_SUB,
    Doc,
    add,
    both,
    context,
    find,
    identity_id,
    models_condition,
    put,
    retype,
)

SEPARATION = "cross-account-read-only"
LEAST_PRIVILEGE = "iam-least-privilege"
UAA, RBAC_ADMIN = "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9", "f58310d9-a9f6-439a-9e8d-f62e7b41a168"
MI_OPERATOR, SECRETS_USER = "f1a07417-d97a-45cb-824c-7a7467783830", "4633458b-17de-408a-b874-0445c86b69e6"
BLOB_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
STRANGER = "0f0f0f0f-0000-4000-8000-00000000000f"  # an object id no stack creates
HPC_CACHE = "5c4d3e2f-1a0b-4c9d-8e7f-6a5b4c3d2e1f"


def role_id(subscription: str, role: str) -> str:
    return f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleDefinitions/{role}"


def account_id(subscription: str, account: str) -> str:
    return f"/subscriptions/{subscription}/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/{account}"


def assignment(stack: str, name: str, scope: str, role: str, principal: str, **extra: Any) -> Callable[[Doc], None]:
    subscription = TRAIN_SUB if stack == AZT else SERVE_SUB
    inputs = {"scope": scope, "roleDefinitionId": role_id(subscription, role), "principalId": principal, **extra}
    return add(stack, f"{AZ}:authorization:RoleAssignment", name, inputs)


def condition(group: str) -> Callable[[Doc], None]:
    return put("read-training-artifacts", "condition", group)


def wear(name: str, *identities: str, as_map: bool = False) -> Callable[[Doc], None]:
    value: Any = {i: {} for i in identities} if as_map else list(identities)
    return put(name, "identity", {"type": "UserAssigned", "userAssignedIdentities": value})


SCALE_SET = {
    "sku": {"name": "Standard_NC24ads_A100_v4", "capacity": 1},
    "virtualMachineProfile": {"priority": "Regular"},
}
TRAINING_IDENTITY = identity_id(TRAIN_SUB, "nodes")
SERVING_IDENTITY = identity_id(SERVE_SUB, "nodes")

# (id, stack, mutation, policy, resource the verdict names)
MUTATIONS: list[tuple[str, str, Callable[[Doc], None], str, str]] = [
    # --- a principal the pack cannot place fails closed ---
    (
        "unknown-object-id",
        AZT,
        put("nodes-read-checkpoints", "principalId", STRANGER),
        SEPARATION,
        "nodes-read-checkpoints",
    ),
    (
        "foreign-group",
        AZS,
        assignment(
            AZS,
            "partners",
            f"/subscriptions/{SERVE_SUB}/resourceGroups/rg",
            READER,
            STRANGER,
            principalType="ForeignGroup",
        ),
        SEPARATION,
        "partners",
    ),
    (
        "vault-access-policy-unknown-object",
        AZT,
        add(
            AZT,
            f"{AZ}:keyvault:AccessPolicy",
            "vault-reader",
            {
                "vaultName": "acmevault",
                "policy": {"objectId": STRANGER, "tenantId": "t", "permissions": {"secrets": ["get"]}},
            },
        ),
        SEPARATION,
        "vault-reader",
    ),
    (
        "vault-inline-access-policy",
        AZT,
        put("vault", "properties.accessPolicies", [{"objectId": STRANGER, "permissions": {"keys": ["all"]}}]),
        SEPARATION,
        "vault",
    ),
    # --- the other side's principal given admin on this side's scope (Owner, UAA, RBAC admin) ---
    *(
        (
            f"{label}-to-serving-principal",
            AZT,
            assignment(AZT, label, f"/subscriptions/{TRAIN_SUB}/resourceGroups/rg", role, NODES_PRINCIPAL["serving"]),
            SEPARATION,
            label,
        )
        for label, role in (("owner", OWNER), ("uaa", UAA), ("rbac-admin", RBAC_ADMIN))
    ),
    # --- becoming the other side's identity ---
    (
        "identity-operator-on-training-identity",
        AZS,
        assignment(AZS, "borrow", TRAINING_IDENTITY, MI_OPERATOR, NODES_PRINCIPAL["serving"]),
        SEPARATION,
        "borrow",
    ),
    (
        "identity-operator-api-version-token",
        AZS,
        both(
            assignment(AZS, "borrow2", TRAINING_IDENTITY.upper(), MI_OPERATOR, NODES_PRINCIPAL["serving"]),
            retype("borrow2", f"{AZ}:authorization/v20220401:RoleAssignment"),
        ),
        SEPARATION,
        "borrow2",
    ),
    (
        "owner-on-training-identity",
        AZS,
        assignment(AZS, "own-it", TRAINING_IDENTITY, OWNER, NODES_PRINCIPAL["serving"]),
        SEPARATION,
        "own-it",
    ),
    (
        "role-defined-in-another-subscription",
        AZS,
        both(
            assignment(AZS, "borrowed-role", f"/subscriptions/{SERVE_SUB}", READER, NODES_PRINCIPAL["serving"]),
            put("borrowed-role", "roleDefinitionId", role_id(OTHER_SUB, READER)),
        ),
        SEPARATION,
        "borrowed-role",
    ),
    ("scale-set-wears-training-identity", AZS, wear("replicas", TRAINING_IDENTITY), SEPARATION, "replicas"),
    ("scale-set-wears-it-api-map", AZS, wear("replicas", TRAINING_IDENTITY, as_map=True), SEPARATION, "replicas"),
    (
        "vm-wears-serving-identity",
        AZT,
        add(
            AZT,
            f"{AZ}:compute:VirtualMachine",
            "side-door",
            {"identity": {"type": "UserAssigned", "userAssignedIdentities": [SERVING_IDENTITY]}},
        ),
        SEPARATION,
        "side-door",
    ),
    (
        "federated-wide-subject",
        AZT,
        add(
            AZT,
            f"{AZ}:managedidentity:FederatedIdentityCredential",
            "ci",
            {
                "resourceName": "nodes",
                "issuer": "https://token.actions.githubusercontent.com",
                "subject": "repo:acme/*",
            },
        ),
        SEPARATION,
        "ci",
    ),
    (
        "federated-claims-expression",
        AZS,
        add(
            AZS,
            f"{AZ}:managedidentity:FederatedIdentityCredential",
            "ci-flex",
            {
                "resourceName": "nodes",
                "issuer": "https://token.actions.githubusercontent.com",
                "claimsMatchingExpression": {"value": "claims['sub'] matches 'repo:acme/*'", "languageVersion": 1},
            },
        ),
        SEPARATION,
        "ci-flex",
    ),
    # --- the read path loses its condition, or its condition is wider than the artifacts ---
    (
        "reader-without-condition",
        AZS,
        put("read-training-artifacts", "condition", None, delete=True),
        SEPARATION,
        "read-training-artifacts",
    ),
    ("reader-empty-condition", AZS, condition(""), SEPARATION, "read-training-artifacts"),
    ("condition-prefix-wider", AZS, condition(models_condition("mod")), SEPARATION, "read-training-artifacts"),
    (
        "condition-string-like-everything",
        AZS,
        condition(models_condition("").replace("StringStartsWith ''", "StringLike '*'")),
        SEPARATION,
        "read-training-artifacts",
    ),
    (
        "condition-or-without-path",
        AZS,
        condition(
            f"((!(ActionMatches{{'{BLOB_READ}'}})) OR ({BLOB_PATH} StringStartsWith 'models/') "
            "OR (@Principal[Microsoft.Directory/CustomSecurityAttributes/Id:team] StringEquals 'ml'))"
        ),
        SEPARATION,
        "read-training-artifacts",
    ),
    (
        "condition-negated-path",
        AZS,
        condition(f"((!(ActionMatches{{'{BLOB_READ}'}})) OR ({BLOB_PATH} StringNotStartsWith 'secrets/'))"),
        SEPARATION,
        "read-training-artifacts",
    ),
    (
        "condition-on-listing-only",
        AZS,
        condition(models_condition("models/").replace("AND NOT Sub", "AND Sub")),
        SEPARATION,
        "read-training-artifacts",
    ),
    (
        "contributor-role-on-training",
        AZS,
        put("read-training-artifacts", "roleDefinitionId", role_id(TRAIN_SUB, BLOB_CONTRIBUTOR)),
        SEPARATION,
        "read-training-artifacts",
    ),
    # --- above any one subscription ---
    (
        "management-group-scope",
        AZS,
        put("read-training-artifacts", "scope", "/providers/Microsoft.Management/managementGroups/acme"),
        SEPARATION,
        "read-training-artifacts",
    ),
    ("tenant-root-scope", AZT, put("nodes-read-checkpoints", "scope", "/"), SEPARATION, "nodes-read-checkpoints"),
    # --- where data is written, forwarded or encrypted ---
    (
        "replication-to-serving",
        AZT,
        add(
            AZT,
            f"{AZ}:storage:ObjectReplicationPolicy",
            "copy-out",
            {
                "accountName": "acmecheckpoints",
                "sourceAccount": "acmecheckpoints",
                "destinationAccount": account_id(SERVE_SUB, "acmeserve"),
            },
        ),
        SEPARATION,
        "copy-out",
    ),
    (
        "replication-from-an-outsider",
        AZT,
        add(
            AZT,
            f"{AZ}:storage:ObjectReplicationPolicy",
            "copy-in",
            {
                "accountName": "acmecheckpoints",
                "sourceAccount": account_id(OTHER_SUB, "evil"),
                "destinationAccount": "acmecheckpoints",
            },
        ),
        SEPARATION,
        "copy-in",
    ),
    (
        "diagnostics-to-training-storage",
        AZS,
        add(
            AZS,
            f"{AZ}:monitor:DiagnosticSetting",
            "gateway-logs",
            {
                "resourceUri": f"/subscriptions/{SERVE_SUB}/resourceGroups/rg/providers/Microsoft.Network/applicationGateways/gateway",
                "storageAccountId": account_id(TRAIN_SUB, "acmelogs"),
            },
        ),
        SEPARATION,
        "gateway-logs",
    ),
    (
        "diagnostics-to-outside-workspace-insights-token",
        AZT,
        add(
            AZT,
            f"{AZ}:insights:DiagnosticSetting",
            "audit",
            {
                "workspaceId": f"/subscriptions/{OTHER_SUB}/resourceGroups/rg/providers/Microsoft.OperationalInsights/workspaces/w"
            },
        ),
        SEPARATION,
        "audit",
    ),
    (
        "lustre-key-in-serving-vault",
        AZT,
        put(
            "lustre",
            "encryptionSettings.keyEncryptionKey.sourceVault.id",
            f"/subscriptions/{SERVE_SUB}/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/theirs",
        ),
        SEPARATION,
        "lustre",
    ),
    (
        "account-key-in-foreign-vault",
        AZT,
        put("checkpointsacct", "encryption.keyVaultProperties.keyVaultUri", "https://theirs.vault.azure.net/"),
        SEPARATION,
        "checkpointsacct",
    ),
    (
        "private-endpoint-into-training",
        AZS,
        add(
            AZS,
            f"{AZ}:network:PrivateEndpoint",
            "into-training",
            {
                "privateLinkServiceConnections": [
                    {
                        "name": "blob",
                        "groupIds": ["blob"],
                        "privateLinkServiceId": account_id(TRAIN_SUB, "acmecheckpoints"),
                    }
                ]
            },
        ),
        SEPARATION,
        "into-training",
    ),
    (
        "private-endpoint-manual-outsider",
        AZT,
        add(
            AZT,
            f"{AZ}:network:PrivateEndpoint",
            "out",
            {
                "manualPrivateLinkServiceConnections": [
                    {"name": "x", "privateLinkServiceId": account_id(OTHER_SUB, "x")}
                ]
            },
        ),
        SEPARATION,
        "out",
    ),
    # --- escalation through a custom role that is neither `*` nor Owner ---
    (
        "custom-role-assignments-write",
        AZT,
        add(
            AZT,
            f"{AZ}:authorization:RoleDefinition",
            "granter",
            {
                "permissions": [{"actions": ["Microsoft.Authorization/roleAssignments/write"]}],
                "assignableScopes": [f"/subscriptions/{TRAIN_SUB}"],
            },
        ),
        LEAST_PRIVILEGE,
        "granter",
    ),
    (
        "custom-role-authorization-wildcard",
        AZS,
        add(
            AZS,
            f"{AZ}:authorization:RoleDefinition",
            "granter2",
            {
                "permissions": [{"actions": ["Microsoft.Authorization/*"]}],
                "assignableScopes": [f"/subscriptions/{SERVE_SUB}"],
            },
        ),
        LEAST_PRIVILEGE,
        "granter2",
    ),
    (
        "custom-role-assignable-in-training",
        AZS,
        add(
            AZS,
            f"{AZ}:authorization:RoleDefinition",
            "granter3",
            {
                "permissions": [{"actions": ["Microsoft.Authorization/roleAssignments/write"]}],
                "assignableScopes": [f"/subscriptions/{TRAIN_SUB}"],
            },
        ),
        SEPARATION,
        "granter3",
    ),
    (
        "custom-role-keys-assigned-to-serving",
        AZT,
        both(
            add(
                AZT,
                f"{AZ}:authorization:RoleDefinition",
                "keys",
                {
                    "roleDefinitionId": "6b6b6b6b-6666-4666-a666-66666666666b",
                    "permissions": [{"actions": ["Microsoft.Storage/storageAccounts/listKeys/action"]}],
                    "assignableScopes": [f"/subscriptions/{TRAIN_SUB}"],
                },
            ),
            assignment(
                AZT,
                "keys-to-serving",
                account_id(TRAIN_SUB, "acmecheckpoints"),
                "6b6b6b6b-6666-4666-a666-66666666666b",
                NODES_PRINCIPAL["serving"],
            ),
        ),
        SEPARATION,
        "keys-to-serving",
    ),
]


def verdicts(stack: str, doc: Doc, **config: Any) -> list[Any]:
    return run_packs(doc, context={**context("azure", stack.split("-")[1]), **config})


def mutated(stack: str, mutation: Callable[[Doc], None]) -> Doc:
    doc = STACKS[stack]().doc()
    mutation(doc)
    return doc


@pytest.mark.parametrize(("case", "stack", "mutation", "policy", "resource"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_each_cross_subscription_path_draws_a_mandatory_verdict(
    case: str, stack: str, mutation: Callable[[Doc], None], policy: str, resource: str
) -> None:
    found = verdicts(stack, mutated(stack, mutation))
    hits = [
        v
        for v in found
        if v.policy in (policy, f"{policy}-final")
        and v.level == "mandatory"
        and (f"::{resource}" in v.urn or resource in v.message)
    ]
    assert hits, f"{case}: no {policy} verdict on {resource}; got {[v.line() for v in found]}"


def test_an_unplaced_principal_says_what_it_could_not_place() -> None:
    found = verdicts(AZT, mutated(AZT, put("nodes-read-checkpoints", "principalId", STRANGER)))
    messages = [v.message for v in found if v.policy == "cross-account-read-only-final"]
    assert any(STRANGER in m and "fail closed" in m and "no identity this stack creates" in m for m in messages), (
        messages
    )


def test_the_read_path_without_its_condition_says_so() -> None:
    found = verdicts(AZS, mutated(AZS, put("read-training-artifacts", "condition", None, delete=True)))
    assert any("loses its condition" in v.message for v in found), [v.line() for v in found]


# --- legitimate changes: nothing ---------------------------------------------------------------------------------

LEGITIMATE: list[tuple[str, str, Callable[[Doc], None], dict[str, Any]]] = [
    ("narrower-prefix", AZS, condition(models_condition("models/llama-3.1-8b/")), {}),
    (
        "string-like-prefix",
        AZS,
        condition(models_condition("models/").replace("StringStartsWith 'models/'", "StringLike 'models/*'")),
        {},
    ),
    (
        "stack-condition-shape-with-container",
        AZS,
        condition(
            models_condition("models/llama/").replace(
                f"({BLOB_PATH}",
                "(@Resource[Microsoft.Storage/storageAccounts/blobServices/containers:name] StringEquals 'checkpoints' AND "
                + BLOB_PATH,
            )
        ),
        {},
    ),
    (
        "secrets-user-on-own-vault",
        AZT,
        assignment(
            AZT,
            "read-secret",
            f"/subscriptions/{TRAIN_SUB}/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/acmevault/secrets/munge",
            SECRETS_USER,
            NODES_PRINCIPAL["training"],
        ),
        {},
    ),
    (
        "built-in-role-by-its-tenant-level-id",
        AZS,
        both(
            assignment(AZS, "tenant-form", f"/subscriptions/{SERVE_SUB}", READER, NODES_PRINCIPAL["serving"]),
            put("tenant-form", "roleDefinitionId", f"/providers/Microsoft.Authorization/roleDefinitions/{READER}"),
        ),
        {},
    ),
    ("scale-set-wears-own-identity", AZT, wear("gpu-nodes", identity_id(TRAIN_SUB, "nodes")), {}),
    ("replicas-wear-own-identity-api-map", AZS, wear("replicas", identity_id(SERVE_SUB, "nodes"), as_map=True), {}),
    (
        "operator-on-own-identity",
        AZS,
        assignment(AZS, "standby-mio", identity_id(SERVE_SUB, "nodes"), MI_OPERATOR, NODES_PRINCIPAL["serving"]),
        {},
    ),
    (
        "configured-service-principal-on-own-account",
        AZT,
        assignment(
            AZT,
            "hpc-blob",
            account_id(TRAIN_SUB, "acmecheckpoints"),
            BLOB_CONTRIBUTOR,
            HPC_CACHE,
            principalType="ServicePrincipal",
        ),
        {"servicePrincipals": [HPC_CACHE.upper()]},
    ),
    (
        "diagnostics-to-own-account",
        AZS,
        add(AZS, f"{AZ}:monitor:DiagnosticSetting", "logs", {"storageAccountId": account_id(SERVE_SUB, "acmelogs")}),
        {},
    ),
    (
        "replication-between-own-accounts",
        AZT,
        add(
            AZT,
            f"{AZ}:storage:ObjectReplicationPolicy",
            "copy",
            {
                "accountName": "acmecheckpoints",
                "sourceAccount": "acmecheckpoints",
                "destinationAccount": account_id(TRAIN_SUB, "acmebackup"),
            },
        ),
        {},
    ),
    (
        "reader-custom-role-in-own-group",
        AZT,
        add(
            AZT,
            f"{AZ}:authorization:RoleDefinition",
            "reader",
            {
                "permissions": [{"actions": ["Microsoft.Storage/*/read"]}],
                "assignableScopes": [f"/subscriptions/{TRAIN_SUB}/resourceGroups/rg"],
            },
        ),
        {},
    ),
    (
        "private-endpoint-to-own-account",
        AZT,
        add(
            AZT,
            f"{AZ}:network:PrivateEndpoint",
            "blob-pe",
            {
                "privateLinkServiceConnections": [
                    {"name": "blob", "privateLinkServiceId": account_id(TRAIN_SUB, "acmecheckpoints")}
                ]
            },
        ),
        {},
    ),
    (
        "api-version-assignment",
        AZS,
        retype("read-training-artifacts", f"{AZ}:authorization/v20220401:RoleAssignment"),
        {},
    ),
]


@pytest.mark.parametrize(("case", "stack", "mutation", "config"), LEGITIMATE, ids=[c[0] for c in LEGITIMATE])
def test_legitimate_changes_draw_nothing(
    case: str, stack: str, mutation: Callable[[Doc], None], config: dict[str, Any]
) -> None:
    found = verdicts(stack, mutated(stack, mutation), **config)
    assert [v.line() for v in found] == [], case


def test_the_mutations_start_from_compliant_sets() -> None:
    for stack in (AZT, AZS):
        assert verdicts(stack, STACKS[stack]().doc()) == []
    assert find(STACKS[AZS]().doc(), "read-training-artifacts")["inputs"]["condition"]
    assert BLOB_READER in find(STACKS[AZS]().doc(), "read-training-artifacts")["inputs"]["roleDefinitionId"]


def test_an_assignment_on_a_resource_group_becomes_the_identities_under_it() -> None:
    """Managed Identity Operator on a resource group is every user-assigned identity in it: the graph links the
    assignee to each identity of the stack under that scope (not only to a nameless "every identity under"), so
    what those identities reach is what the assignee reaches (issue 28: `become` through a scope)."""
    from accelstack.policies import access
    from accelstack.policies.azure import access as azure_access

    doc = STACKS[AZT]().doc()
    group = f"/subscriptions/{TRAIN_SUB}/resourceGroups/rg"
    assignment(AZT, "rg-operator", group, MI_OPERATOR, HPC_CACHE, principalType="ServicePrincipal")(doc)
    resources = [_Resource(r) for r in doc["deployment"]["resources"]]
    where = access.Placement(frozenset({TRAIN_SUB}), {HPC_CACHE: TRAIN_SUB}, access.Stack.of(resources))
    graph = access.build(resources, [azure_access.edges], where)
    becomes = graph.becomes()
    start = next(p for p in becomes if p.ref == f"service principal {HPC_CACHE}")
    assert {p.ref for p in becomes[start]} >= {"managed identity nodes", f"every identity under {group}"}
    # The identity's own edges (the checkpoints it writes) are reached through the scope.
    reached = {(s.ref, e.what) for s, e, _ in graph.chains() if s == start}
    assert reached and all(ref == start.ref for ref, _ in reached)
    # An identity outside the scope is not linked: another group of the same subscription holds none of them.
    other = f"/subscriptions/{TRAIN_SUB}/resourceGroups/elsewhere"
    assert azure_access.identities_under(other, where) == []
    assert [p.ref for p in azure_access.identities_under(group.upper(), where)] == ["managed identity nodes"]


class _Resource:
    """An export entry as the packs' stack policies see it."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.resource_type, self.urn = entry["type"], entry["urn"]
        self.name = self.urn.rsplit("::", 1)[-1]
        self.props = entry.get("outputs") or entry.get("inputs") or {}
        self.property_dependencies: dict[str, list[Any]] = {}
