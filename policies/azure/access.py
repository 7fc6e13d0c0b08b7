"""Azure's edges of the access graph (policies/access.py): who can read, write, administer or become what, in
which subscription, from every azure-native construct that carries identity.

- Role assignments: principal -[the role's levels]-> the scope (policies/azure/roles.py), blob reads narrowed by
  the assignment's ABAC condition; a management group or the tenant root is every subscription (ANY).
- Role definitions: the stack -> every assignable scope, at the level of the role's actions.
- Resources wearing user-assigned identities (scale sets, VMs, ML computes, storage accounts, gateways...): the
  resource -become-> each identity (its instance metadata service hands out their tokens).
- Federated identity credentials: the external subject -become-> the identity (never placed: fails closed).
- Key Vault access policies (inline and `keyvault:AccessPolicy`): the object id -> the vault.
- Service Bus SAS rules: the key's holders -> the namespace or queue (Listen read, Send write, Manage admin).
- Object replication, diagnostic settings, ML workspaces' and datastores' stores, customer-managed keys and
  private endpoints: the resource -> where it writes, forwards, encrypts with or opens a network path to.

A principal is placed by its object id: an identity this stack creates (matched by its principalId in the
stack), a configured cloud service principal (policy config `servicePrincipals`), else not at all (it fails
closed: an Entra object id says nothing about whose side it acts for). Ours; the effective-access model is
Azure RBAC's (https://learn.microsoft.com/azure/role-based-access-control/overview#how-azure-rbac-determines-if-a-user-has-access-to-a-resource).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from .. import concepts
from ..access import ADMIN, BECOME, IDENTITY, KEY, OBJECTS, OWN, READ, RESOURCE, WRITE, Edge, Party, Placement
from ..common import as_list, urn_name
from ..readers import get, items_at, name_of
from ..vendor import tokens_of
from .concepts import AZURE
from .disk_keys import DISK_KEY_PATHS, disk_encryption_sets
from .parties import (
    IDENTITY_ID,
    VAULT_HOST,
    identities_under,
    identity_party,
    kind_of,
    last_segment,
    principal_parties,
    resource_party,
    subscription_of,
    text_of,
)
from .roles import BUILT_IN_ROLES, ReadScope, custom_grants, read_scope

ROLE_ASSIGNMENT = tokens_of(AZURE, "role-binding")
ROLE_DEFINITION = tokens_of(AZURE, "role-definition")
IDENTITY_KIND = tokens_of(AZURE, "identity")
FEDERATION = tokens_of(AZURE, "identity-federation")
VAULT, VAULT_POLICY = tokens_of(AZURE, "key-vault"), tokens_of(AZURE, "key-vault-access")
SAS_RULES = tokens_of(AZURE, "queue-policy")
REPLICATION = tokens_of(AZURE, "bucket-replication")
DIAGNOSTICS = tokens_of(AZURE, "log-routing")
ML_WORKSPACE, ML_DATASTORE = tokens_of(AZURE, "ml-workspace"), tokens_of(AZURE, "ml-datastore")
STORAGE_ACCOUNT = tokens_of(AZURE, "storage-account")
FILE_SYSTEM = tokens_of(AZURE, "parallel-file-system")
PRIVATE_ENDPOINT = ("azure-native:network:PrivateEndpoint", "azure-native:network:InterfaceEndpoint")
# Kinds that wear user-assigned identities (`identity.userAssignedIdentities`).
WEARERS = tokens_of(
    AZURE, "node-group", "instance", "fleet", "ml-workspace", "storage-account", "parallel-file-system", "load-balancer"
)

# Every kind this reader draws edges from (the resource-level policy's filter; the stack-level one reads all).
ACCESS_TYPES = tuple(
    dict.fromkeys(
        ROLE_ASSIGNMENT
        + ROLE_DEFINITION
        + FEDERATION
        + VAULT
        + VAULT_POLICY
        + SAS_RULES
        + REPLICATION
        + DIAGNOSTICS
        + ML_DATASTORE
        + PRIVATE_ENDPOINT
        + WEARERS
        + tuple(DISK_KEY_PATHS)
    )
)

# --- roles --------------------------------------------------------------------------------------------------------


def _custom_role(role_id: str, placement: Placement) -> Any:
    if placement.stack is None:
        return None
    for resource in placement.stack.resources:
        if kind_of(resource) not in ROLE_DEFINITION:
            continue
        try:
            names = {text_of(resource.props.get(k)) for k in ("roleDefinitionId", "name")}
            names.add(last_segment(str(resource.props.get("id") or "")))
        except UnknownValueError:
            continue
        if role_id in {str(n).lower() for n in names if n}:
            return resource
    return None


def _permissions(definition: Any) -> tuple[list[str], list[str]]:
    permissions = items_at(definition.props, "permissions")
    actions = [str(a) for p in permissions for a in as_list(p.get("actions"))]
    data = [str(a) for p in permissions for a in as_list(p.get("dataActions"))]
    return actions, data


def role_grants(role_id: str, placement: Placement) -> tuple[str, tuple[tuple[str, str], ...], bool]:
    """(the role's name, its (access, kind) grants, whether only the stack-level check can tell)."""
    if role_id in BUILT_IN_ROLES:
        role = BUILT_IN_ROLES[role_id]
        return role.name, role.grants, False
    definition = _custom_role(role_id, placement)
    if definition is not None:
        return f"custom role {name_of(definition)}", custom_grants(*_permissions(definition)), False
    # An id neither built in (to the pack's table) nor defined by this stack: judged as admin (fail closed).
    return f"role {role_id} (unknown to the pack: judged as admin)", ((ADMIN, RESOURCE),), placement.stack is None


def _assignment_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    props, name = resource.props, name_of(resource)
    scope, role_ref = text_of(props.get("scope")), text_of(props.get("roleDefinitionId"))
    if scope is None or role_ref is None:
        return
    role_name, grants, later = role_grants(last_segment(role_ref).lower(), placement)
    sources = principal_parties(props.get("principalId"), props.get("principalType"), placement)
    reads = read_scope(props.get("condition"))
    foreign_role = _foreign_role(role_ref, scope, placement)
    for access, kind in grants:
        if kind == IDENTITY:
            # Becoming the identities under the scope: the identity itself when the scope is one.
            target = (
                identity_party(scope, placement)
                if IDENTITY_ID.search(scope)
                else resource_party(scope, placement, IDENTITY, "every identity under")
            )
        else:
            target = resource_party(scope, placement, kind, _container(reads) if kind == OBJECTS else "")
        if later:
            target = Party(target.ref, target.account, target.kind, target.unplaced, needs_stack=True)
        what = f"role assignment {name} ({role_name})"
        edge_scope = None
        if kind == OBJECTS:
            edge_scope = reads.prefix
            what += (
                f": its condition limits blob reads to {reads.prefix!r}"
                if reads.prefix
                else ": no ABAC condition limits it to a blob path prefix (the read path loses its condition)"
            )
        for source in sources:
            yield Edge(source, access, target, resource.urn, what, edge_scope, reads.unplaced or foreign_role)
            if kind == IDENTITY and not IDENTITY_ID.search(scope):
                for identity in identities_under(scope, placement):
                    yield Edge(source, access, identity, resource.urn, f"{what}: {identity.ref} is under its scope")


def _foreign_role(role_ref: str, scope: str, placement: Placement) -> str:
    """Why a role definition id cannot be judged here: it names a subscription that is neither the assignment's
    nor this stack's. The pack reads a role by its GUID (built-in table, or a definition this stack creates); one
    read from another subscription may be that subscription's custom role under a built-in's name."""
    named = subscription_of(role_ref)
    if named is None or named in {a.lower() for a in placement.own} or named == subscription_of(scope):
        return ""
    return (
        f"its role definition id names subscription {named}, neither the assignment's scope nor this stack's: "
        "the pack cannot read a role defined elsewhere"
    )


def _container(reads: ReadScope) -> str:
    return f"container {reads.container} under" if reads.container else ""


def _definition_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    """A role definition assignable at a scope lets that scope's owners grant it there: the stack's role reaches
    every assignable scope, at the level of its actions."""
    name = name_of(resource)
    grants = custom_grants(*_permissions(resource))
    level = ADMIN if any(a == ADMIN for a, _ in grants) else max((a for a, _ in grants), default=READ, key=_rank)
    source = Party(f"role definition {name}", OWN, RESOURCE)
    for scope in as_list(resource.props.get("assignableScopes")):
        if isinstance(scope, str) and scope:
            target = resource_party(scope, placement, RESOURCE, "assignable scope")
            yield Edge(source, level, target, resource.urn, f"role definition {name} (assignable at {scope})")


def _rank(level: str) -> int:
    return (READ, WRITE, ADMIN, BECOME).index(level)


# --- identities worn and federated -------------------------------------------------------------------------------


def worn_identities(props: Any) -> list[str]:
    """ARM ids of the user-assigned identities a resource wears: the SDK's list, or the API's map keyed by id."""
    assigned = get(props, "identity", "userAssignedIdentities")
    if hasattr(assigned, "keys") and not isinstance(assigned, str):
        ids = assigned.keys()  # a pulumi-policy proxy: its keys, not iteration
        return [str(k) for k in ids]
    return [str(i) for i in as_list(assigned) if isinstance(i, str) and i]


def _wearer_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    name = name_of(resource)
    wearer = Party(f"{resource.resource_type.rsplit(':', 1)[-1]} {name}", OWN, RESOURCE)
    for identity in worn_identities(resource.props):
        what = f"{name} wears the managed identity {last_segment(identity)} (its machines get its tokens)"
        yield Edge(wearer, BECOME, identity_party(identity, placement), resource.urn, what)
    encryption = text_of(get(resource.props, "encryption", "encryptionIdentity", "encryptionUserAssignedIdentity"))
    if encryption is not None and encryption not in worn_identities(resource.props):
        what = f"{name} encrypts as the managed identity {last_segment(encryption)}"
        yield Edge(wearer, BECOME, identity_party(encryption, placement), resource.urn, what)


def _owns(placement: Placement, name: str, kinds: tuple[str, ...], name_input: str) -> bool:
    """Whether this stack creates the resource of these kinds named `name` (its output name or its name input)."""
    stack = placement.stack
    if stack is None:
        return False
    return stack.owns(name) or any(
        kind_of(r) in kinds and name in (r.props.get(name_input), r.props.get("name")) for r in stack.resources
    )


def _identity_by_name(name: str, placement: Placement) -> Party:
    if placement.stack is not None:
        for resource in placement.stack.resources:
            if kind_of(resource) in IDENTITY_KIND and name in (
                resource.props.get("resourceName"),
                resource.props.get("name"),
                urn_name(resource.urn),
            ):
                return identity_party(text_of(resource.props.get("id")) or urn_name(resource.urn), placement)
    return Party(f"managed identity {name}", OWN, IDENTITY)  # created in the stack's own resource group


# AWS outbound identity federation: the token's subject is the calling role's ARN, which names its account.
AWS_ROLE_SUBJECT = re.compile(r"^arn:aws[a-z-]*:iam::([0-9]{12}):role/[^*?]+$")


def _federation_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    """A federated credential lets whoever the issuer vouches for as `subject` get the identity's tokens
    (https://learn.microsoft.com/entra/workload-id/workload-identity-federation). No issuer says which side a
    workload is on: never placed."""
    props, name = resource.props, name_of(resource)
    issuer, subject = str(props.get("issuer") or ""), str(props.get("subject") or "")
    expression = props.get("claimsMatchingExpression")
    wide = "*" in subject or expression is not None or not subject
    why = (
        f"the subject {subject or get(expression, 'value') or '(none)'!r} matches many workloads"
        if wide
        else f"the issuer {issuer!r} is no cluster this stack runs, so the pack cannot tell whose workload {subject!r} is"
    )
    where: str | None = None
    if not wide and placement.federated_own(issuer):
        where = OWN  # the serving stack's own replicas on another cloud (artifactHandoff.issuers)
    elif not wide and (role := AWS_ROLE_SUBJECT.match(subject)) is not None:
        where = OWN if role.group(1) in placement.own else role.group(1)  # AWS's subject is the role's ARN
    source = Party(f"workload {subject or '*'} of {issuer or 'an unknown issuer'}", where, IDENTITY, why)
    identity_name = text_of(props.get("resourceName"))
    if identity_name is not None:
        target = _identity_by_name(identity_name, placement)
        yield Edge(source, BECOME, target, resource.urn, f"federated credential {name}")


# --- keys, vaults, SAS ---------------------------------------------------------------------------------------------

# Key Vault access policy permissions (https://learn.microsoft.com/azure/key-vault/general/rbac-access-policy):
# reading and using a key or secret is read; setting one is write; the rest (delete, purge, backup, restore,
# import, release, "all", a certificate's manage* ops) is admin.
_POLICY_READ = frozenset(
    {"get", "list", "decrypt", "encrypt", "unwrapkey", "wrapkey", "verify", "sign", "getrotationpolicy"}
)
_POLICY_WRITE = frozenset({"set", "create", "update"})


def _policy_access(permissions: Any) -> str:
    level = READ
    for group in ("keys", "secrets", "certificates", "storage"):
        for permission in as_list(get(permissions, group)):
            text = str(permission).lower()
            if text in _POLICY_READ:
                continue
            level = WRITE if text in _POLICY_WRITE and level == READ else ADMIN
    return level


def _vault_edges(resource: Any, placement: Placement, policies: list[Any], vault: str) -> Iterator[Edge]:
    target = Party(f"key vault {vault}", OWN, KEY)
    for policy in policies:
        sources = principal_parties(policy.get("objectId"), None, placement)
        level = _policy_access(policy.get("permissions"))
        for source in sources:
            yield Edge(
                source, level, target, resource.urn, f"key vault access policy of {vault} ({policy.get('objectId')})"
            )


def _sas_edges(resource: Any) -> Iterator[Edge]:
    """Whoever holds a SAS rule's key can do what its rights say; only a caller with listKeys on the namespace
    (judged on the role assignments) gets the key, so the holders are placed at the stack's own account."""
    rights = {str(r).lower() for r in as_list(resource.props.get("rights"))}
    level = ADMIN if "manage" in rights else WRITE if "send" in rights else READ
    name = name_of(resource)
    source = Party(f"holders of SAS key {name}", OWN, IDENTITY)
    target = Party(f"Service Bus entity of {name}", OWN, RESOURCE)
    yield Edge(
        source, level, target, resource.urn, f"Service Bus authorization rule {name} ({', '.join(sorted(rights))})"
    )


def _key_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    """Customer-managed keys: the storage service reads the key for the account (THROUGH_STORAGE is left to the
    neutral rule's documented read path only; another subscription's vault is a dependency on that side)."""
    name = name_of(resource)
    source = Party(f"{resource.resource_type.rsplit(':', 1)[-1]} {name}", OWN, RESOURCE)
    uri = text_of(get(resource.props, "encryption", "keyVaultProperties", "keyVaultUri"))
    if uri is not None:
        host = VAULT_HOST.match(uri)
        vault = host.group(1) if host else uri
        owned = _owns(placement, vault, VAULT, "vaultName")
        target = (
            Party(f"key vault {vault}", OWN, KEY)
            if owned
            else Party(
                f"key vault {vault}",
                None,
                KEY,
                f"the vault {uri!r} is no vault this stack creates",
                needs_stack=placement.stack is None,
            )
        )
        yield Edge(source, READ, target, resource.urn, f"{name} encrypts with a key of {uri}")
    vault_id = text_of(get(resource.props, "encryptionSettings", "keyEncryptionKey", "sourceVault", "id"))
    if vault_id is not None:
        target = resource_party(vault_id, placement, KEY, "key vault")
        yield Edge(source, READ, target, resource.urn, f"{name} encrypts with a key of {last_segment(vault_id)}")


def _disk_key_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    """A disk encrypted through a disk encryption set: whoever holds the set's key reads the disk, so a set in the
    other subscription is a crossing (as a storage account's key in another vault)."""
    name = name_of(resource)
    source = Party(f"{resource.resource_type.rsplit(':', 1)[-1]} {name}", OWN, RESOURCE)
    for set_id in disk_encryption_sets(resource):
        target = resource_party(set_id, placement, KEY, "disk encryption set")
        yield Edge(source, READ, target, resource.urn, f"{name} encrypts its disks with {last_segment(set_id)}")


# --- where data goes ----------------------------------------------------------------------------------------------


def _account_party(value: str, placement: Placement) -> Party:
    """An object replication policy names accounts by ARM id, or by name within the tenant."""
    if value.startswith("/"):
        return resource_party(value, placement, OBJECTS, "storage account")
    if _owns(placement, value, STORAGE_ACCOUNT, "accountName"):
        return Party(f"storage account {value}", OWN, OBJECTS)
    return Party(
        f"storage account {value}",
        None,
        OBJECTS,
        f"account {value!r} is named without its subscription and is no account of this stack",
        needs_stack=placement.stack is None,
    )


def _replication_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    props, name = resource.props, name_of(resource)
    source, destination = text_of(props.get("sourceAccount")), text_of(props.get("destinationAccount"))
    if source is None or destination is None:
        return
    what = f"object replication policy {name} (copies blobs from {source} to {destination})"
    yield Edge(_account_party(source, placement), WRITE, _account_party(destination, placement), resource.urn, what, "")


def _forward_edges(resource: Any, placement: Placement, keys: Iterable[str], verb: str) -> Iterator[Edge]:
    """A resource that writes (logs, job outputs, secrets) to the resources these inputs name by ARM id."""
    name = name_of(resource)
    origin_id = text_of(resource.props.get("resourceUri"))
    source = (
        resource_party(origin_id, placement, RESOURCE, "monitored resource")
        if origin_id is not None
        else Party(f"{resource.resource_type.rsplit(':', 1)[-1]} {name}", OWN, RESOURCE)
    )
    for key in keys:
        value = text_of(get(resource.props, *key.split(".")))
        if value is not None:
            target = resource_party(value, placement, RESOURCE, key.rsplit(".", 1)[-1])
            yield Edge(source, WRITE, target, resource.urn, f"{name} {verb} {value} ({key})")


DIAGNOSTIC_DESTINATIONS = (
    "storageAccountId",
    "workspaceId",
    "eventHubAuthorizationRuleId",
    "serviceBusRuleId",
    "marketplacePartnerId",
)
WORKSPACE_STORES = ("keyVault", "storageAccount", "applicationInsights", "containerRegistry")


def _datastore_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    """An ML datastore names its account's subscription when it is not the workspace's; jobs read and write it."""
    props, name = resource.props, name_of(resource)
    subscription = text_of(get(props, "properties", "subscriptionId"))
    account = text_of(get(props, "properties", "accountName")) or "?"
    if subscription is not None:
        target = Party(f"storage account {account}", subscription.lower(), OBJECTS)
        source = Party(f"ML datastore {name}", OWN, RESOURCE)
        yield Edge(source, WRITE, target, resource.urn, f"ML datastore {name} (account {account})", "")


def _endpoint_edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    """A private endpoint is a network path from the stack's network into the resource it links to."""
    name = name_of(resource)
    source = Party(f"private endpoint {name}", OWN, RESOURCE)
    for key in ("privateLinkServiceConnections", "manualPrivateLinkServiceConnections"):
        for connection in items_at(resource.props, key):
            target_id = text_of(connection.get("privateLinkServiceId"))
            if target_id is not None:
                target = resource_party(target_id, placement, RESOURCE, "private link to")
                yield Edge(source, READ, target, resource.urn, f"private endpoint {name} (a network path, {key})")


# --- the reader ---------------------------------------------------------------------------------------------------


def _edges(resource: Any, placement: Placement) -> Iterator[Edge]:
    kind = kind_of(resource)
    if kind in ROLE_ASSIGNMENT:
        yield from _assignment_edges(resource, placement)
    elif kind in ROLE_DEFINITION:
        yield from _definition_edges(resource, placement)
    elif kind in FEDERATION:
        yield from _federation_edges(resource, placement)
    elif kind in VAULT:
        vault = text_of(resource.props.get("vaultName")) or name_of(resource)
        yield from _vault_edges(
            resource, placement, items_at(resource.props.get("properties"), "accessPolicies"), vault
        )
    elif kind in VAULT_POLICY:
        vault = str(resource.props.get("vaultName") or name_of(resource))
        yield from _vault_edges(
            resource, placement, [p for p in [resource.props.get("policy")] if p is not None], vault
        )
    elif kind in SAS_RULES:
        yield from _sas_edges(resource)
    elif kind in REPLICATION:
        yield from _replication_edges(resource, placement)
    elif kind in DIAGNOSTICS:
        yield from _forward_edges(resource, placement, DIAGNOSTIC_DESTINATIONS, "sends its logs to")
    elif kind in ML_DATASTORE:
        yield from _datastore_edges(resource, placement)
    elif kind in PRIVATE_ENDPOINT:
        yield from _endpoint_edges(resource, placement)
    if kind in WEARERS:
        yield from _wearer_edges(resource, placement)
    if kind in ML_WORKSPACE:
        yield from _forward_edges(resource, placement, WORKSPACE_STORES, "keeps its records in")
    if kind in STORAGE_ACCOUNT or kind in FILE_SYSTEM:
        yield from _key_edges(resource, placement)
    if resource.resource_type in DISK_KEY_PATHS:
        yield from _disk_key_edges(resource, placement)


def edges(resource: Any, placement: Placement) -> list[Edge]:
    """The resource's edges; none for other vendors' kinds, and none yet for a value unknown during preview
    (the stack-level check reads the final state)."""
    if concepts.cloud_of(resource.resource_type) != "azure-native":
        return []
    found: list[Edge] = []
    try:
        for edge in _edges(resource, placement):
            found.append(edge)
    except UnknownValueError:
        return []
    return found
