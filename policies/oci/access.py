"""OCI (pulumi-oci) edges of the access graph (policies/access.py): each statement of an IAM policy
(policies/oci/statements.py) and each dynamic group's matching rule. The separation invariant judges them
(policies/separation/access_rules.py).

Placement is by compartment: a statement's target lives in the compartment it names by OCID (`in compartment id
...`); `in tenancy` reaches every compartment of the tenancy, the other side's too, so it is placed in every
account; a compartment named by name cannot be placed (names are not unique across the tree) and fails closed. A
`dynamic-group` subject is the stack's own dynamic group of that name, placed in the compartment its matching rule
limits its instances to; a `group` (users of the tenancy) cannot be placed in a compartment and fails closed;
`any-user` / `any-group` is every account; a `service` is the cloud acting for the compartment's resources.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..access import ADMIN, ANY, BECOME, IDENTITY, KEY, OBJECTS, READ, RESOURCE, SERVICE, WRITE, Edge, Party, Placement
from ..access import unplaced as unplaced_party
from ..common import as_list, canonical_account, decode, urn_name
from . import transfers
from .statements import Statement, Subject, matching_compartments, parse

POLICY = "oci:Identity/policy:Policy"
DYNAMIC_GROUP = "oci:Identity/dynamicGroup:DynamicGroup"
STACK_REFERENCE = "pulumi:pulumi:StackReference"
SIDES = ("training", "serving")
ACCESS_TYPES = (POLICY, DYNAMIC_GROUP, *transfers.EDGE_TYPES)

_LEVEL = {"inspect": READ, "read": READ, "use": WRITE, "manage": ADMIN}
# Resource types whose grant lets the grantee write who may do what: granting them is becoming anyone.
IDENTITY_TYPES = frozenset(
    {"policies", "dynamic-groups", "groups", "users", "domains", "identity-providers", "all-resources"}
)
OBJECT_TYPES = frozenset({"objects", "object-family"})
KEY_TYPES = frozenset({"keys", "key-delegate", "vaults", "key-family", "vault-family"})
# request.permission values that only read (Object Storage's OBJECT_READ, OBJECT_INSPECT; *_READ, *_INSPECT).
_READ_SUFFIXES = ("_READ", "_INSPECT")


def _plain(props: Any, key: str) -> Any:
    try:
        return props.get(key)
    except Exception:  # noqa: BLE001  # unknown during preview
        return None


def _access(statement: Statement) -> str:
    """The verb's level, narrowed by `request.permission` conditions (manage objects limited to OBJECT_CREATE
    writes, limited to reads reads)."""
    level = _LEVEL.get(statement.verb, ADMIN)
    permissions = [p.upper() for p in statement.condition.equal("request.permission")]
    if statement.what.startswith("{"):  # a permission list instead of a verb and a type
        permissions = [p.strip().upper() for p in statement.what.strip("{} ").split(",")]
        level = ADMIN
    if permissions and all(p.endswith(_READ_SUFFIXES) for p in permissions):
        return READ
    if permissions and not any("DELETE" in p or "OVERWRITE" in p or "MANAGE" in p for p in permissions):
        return WRITE if level == ADMIN else level
    return level


def _where(statement: Statement, origin: str) -> tuple[str | None, str]:
    """The account the statement's target is in, or None and why."""
    if statement.scope == "tenancy" or statement.scope.startswith("ocid1.tenancy."):
        return ANY, ""  # the tenancy, by keyword or by its root compartment's OCID: every compartment in it
    if statement.scope_by_id:
        return canonical_account(statement.scope), ""
    return None, f"the compartment {statement.scope!r} is named by name, not OCID ({origin})"


def _targets(statement: Statement, origin: str) -> Iterator[tuple[Party, str | None]]:
    """(target, scope) of a statement: objects of each bucket its condition names (or of every bucket of the
    place), a key, identities, or the resource type."""
    account, why = _where(statement, origin)
    where = "the tenancy" if statement.scope == "tenancy" else f"compartment {statement.scope}"
    what = statement.what.lower()

    def party(ref: str, kind: str) -> Party:
        return Party(ref, account, kind) if account is not None else unplaced_party(ref, why, kind)

    if what in OBJECT_TYPES:
        buckets = statement.condition.equal("target.bucket.name") or ("every bucket",)
        prefixes = [p.rstrip("*") for p in statement.condition.equal("target.object.name")]
        for bucket in buckets:
            for prefix in prefixes or [""]:
                yield party(f"objects of {bucket} in {where}", OBJECTS), prefix
    elif what in KEY_TYPES:
        for key in statement.condition.equal("target.key.id") or ("every key",):
            yield party(f"{key} in {where}", KEY), None
    elif what in IDENTITY_TYPES and _LEVEL.get(statement.verb) in (WRITE, ADMIN):
        yield party(f"every identity of {where} ({what})", IDENTITY), None
    else:
        yield party(f"{what} in {where}", RESOURCE), None


def dynamic_group_party(name: str, placement: Placement, origin: str) -> Party:
    """The stack's dynamic group `name`, placed in the compartment its matching rule limits it to."""
    ref = f"dynamic-group {name}"
    if placement.stack is None:
        return Party(ref, None, IDENTITY, "a dynamic group is placed with the whole stack", needs_stack=True)
    for resource in placement.stack.resources:
        if resource.resource_type == DYNAMIC_GROUP and _plain(resource.props, "name") == name:
            compartments, why = matching_compartments(str(_plain(resource.props, "matchingRule") or ""))
            if len(compartments) == 1:
                return Party(ref, canonical_account(compartments[0]), IDENTITY)
            return unplaced_party(ref, why or f"its members span compartments {', '.join(compartments)}", IDENTITY)
    landed = landed_group_compartment(name, placement.stack.resources)
    if landed is not None:
        return Party(ref, canonical_account(landed), IDENTITY)
    return unplaced_party(
        ref,
        f"no dynamic group named {name!r} is created by this stack or read from its landing stack ({origin})",
        IDENTITY,
    )


def landed_group_compartment(name: str, resources: Iterable[Any]) -> str | None:
    """The compartment of a dynamic group the stack reads from its landing stack: a stack reference's
    `<side>NodesGroupName` is the group the landing stack made for that side, matching the instances of that
    side's compartment (`<side>AccountId`) and no other, which landing-guardrails holds the landing stack to
    (policies/separation/landing_oci.py)."""
    for resource in resources:
        if resource.resource_type != STACK_REFERENCE:
            continue
        outputs = _plain(resource.props, "outputs")
        if not isinstance(outputs, Mapping):
            continue  # unknown during preview: the group is unplaced and fails closed
        for side in SIDES:
            compartment = _plain(outputs, f"{side}AccountId")
            if _plain(outputs, f"{side}NodesGroupName") == name and isinstance(compartment, str) and compartment:
                return compartment
    return None


def _source(subject: Subject, placement: Placement, origin: str) -> Party:
    if subject.kind in ("any-user", "any-group"):
        return Party(subject.kind, ANY)
    if subject.kind == "service":
        return Party(f"service {subject.name}", SERVICE)
    if subject.kind == "dynamic-group" and not subject.by_id:
        return dynamic_group_party(subject.name, placement, origin)
    shown = f"{subject.kind} {'id ' if subject.by_id else ''}{subject.name}"
    return unplaced_party(shown, f"the members of a {subject.kind} cannot be placed in a compartment", IDENTITY)


def statement_edges(text: str, placement: Placement, origin: str, policy: str) -> Iterator[Edge]:
    statement = parse(text)
    what = f"policy {policy}: {text.strip()!r}"
    if statement.unparsed:
        yield Edge(Party(policy, None, IDENTITY, statement.unparsed), ADMIN, Party(text, None), origin, what)
        return
    access = _access(statement)
    for subject in statement.subjects:
        source = _source(subject, placement, origin)
        for target, scope in _targets(statement, origin):
            level = BECOME if target.kind == IDENTITY else access
            yield Edge(source, level, target, origin, what, scope)


def edges(resource: Any, placement: Placement) -> Iterable[Edge]:
    """OCI IAM: each statement of an `oci:Identity/policy:Policy` (who, at which level, on what, where; a statement
    the pack cannot parse or place fails closed), and each dynamic group: the instances of the compartment its
    matching rule names become the group. Ours; the statement grammar is OCI's policy syntax
    (https://docs.oracle.com/iaas/Content/Identity/policysyntax/policysyntax.htm)."""
    kind, name = resource.resource_type, resource.name or urn_name(resource.urn)
    if kind in transfers.EDGE_TYPES:
        yield from transfers.edges(resource, placement)
    elif kind == POLICY:
        texts = decode(_plain(resource.props, "statements"))
        for text in as_list(texts):
            yield from statement_edges(str(text), placement, resource.urn, name)
    elif kind == DYNAMIC_GROUP:
        group = str(_plain(resource.props, "name") or name)
        rule = str(_plain(resource.props, "matchingRule") or "")
        compartments, why = matching_compartments(rule)
        target = Party(f"dynamic-group {group}", None, IDENTITY)
        what = f"dynamic group {group}: {rule!r}"
        if why:
            yield Edge(unplaced_party(f"members of {group}", why), BECOME, target, resource.urn, what)
            return
        placed = Party(target.ref, canonical_account(compartments[0]) if len(compartments) == 1 else None, IDENTITY)
        if placed.account is None:
            placed = unplaced_party(target.ref, f"its members span compartments {', '.join(compartments)}", IDENTITY)
        for compartment in compartments:
            members = Party(f"instances of compartment {compartment}", canonical_account(compartment))
            yield Edge(members, BECOME, placed, resource.urn, what)
