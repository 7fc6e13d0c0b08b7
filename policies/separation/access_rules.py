"""The separation invariant as one check over the access graph (policies/access.py).

Across sides, exactly one thing may cross: the serving side reading training's artifacts, objects under the
artifact prefix (and the key that decrypts them, used through the storage service only). Nothing else:
no write or admin either way, no "become" of an identity on the other side (a role trust, `actAs`, Token
Creator, a machine wearing the other side's identity), no grant to an account that is neither side's (or a
configured trusted one), no grant to every account. A principal reaches, through every identity it can
become, whatever that identity reaches, and is judged for it. An end the reader could not place, or an
action or condition it could not judge, fails closed with what it could not place. Ours; the graph's
shape follows NCC Group's PMapper and Cartography.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .. import access, vendors
from ..access import (
    ANY,
    BECOME,
    FEDERATED,
    HANDOFF_URLS,
    KEY,
    OBJECTS,
    OWN,
    READ,
    SERVICE,
    THROUGH_STORAGE,
    Edge,
    Party,
    Placement,
)
from ..common import ARTIFACT_PREFIX, Context, canonical_account, own_accounts
from .copy_rules import CONFIG as COPY_CONFIG
from .copy_rules import copy_config, strings
from .handoff_rules import reader_kinds

OWN_SIDE, OTHER_SIDE, TRUSTED, EVERYONE, OUTSIDE, UNPLACED, CLOUD = (
    "own",
    "other",
    "trusted",
    "every account",
    "outside",
    "unplaced",
    "cloud",
)

# Policy config the rule reads (beside the context's accounts).
CONFIG: dict[str, dict[str, Any]] = {
    "trustedAccounts": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Extra accounts (neither side's) a grant may name, e.g. a log archive account.",
    },
    "artifactPrefix": {
        "type": "string",
        "default": ARTIFACT_PREFIX,
        "description": "Key prefix of training's artifact store that serving may read (training.artifactPrefix).",
    },
    "trainingStores": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Global names of the training side's buckets a grant may name (S3/GCS names carry no account).",
    },
    "servingStores": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Global names of the serving side's buckets a grant may name.",
    },
    "artifactHandoff": {
        "type": "object",
        "description": "A serving stack reading another cloud's training artifacts (accelstack.spec.handoff): the "
        "training cloud, account, region, stores and prefixes of the one reader it declares there, and its own cloud.",
    },
    **COPY_CONFIG,
    "servicePrincipals": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Ids of the cloud's own service principals that act for this stack's resources and that a grant "
        "names by an id the stack does not create (Azure: a resource provider's object id in the tenant).",
    },
}


def _readers() -> list[access.EdgeReader]:
    return [reader for vendor in vendors.VENDORS if (reader := vendor.separation.access) is not None]


def _trusted(ctx: Context) -> frozenset[str]:
    configured = {canonical_account(str(a)) for a in ctx.config.get("trustedAccounts") or []}
    vendor_trusted = {a for vendor in vendors.VENDORS for a in vendor.separation.trusted_accounts}
    return frozenset(configured | vendor_trusted) - ctx.other_accounts


def stores(ctx: Context) -> dict[str, str]:
    """Bucket name -> account (the first account of its side) from the policy config, and each configured
    service principal's id (lowercased: Azure object ids are GUIDs) -> SERVICE."""
    found: dict[str, str] = {}
    for key, side in (("trainingStores", ctx.training_accounts), ("servingStores", ctx.serving_accounts)):
        account = sorted(side)[0] if side else None
        for name in ctx.config.get(key) or []:
            if account is not None:
                found[str(name)] = account
    for principal in ctx.config.get("servicePrincipals") or []:
        found[str(principal).lower()] = SERVICE
    handoff = ctx.config.get("artifactHandoff") or {}
    for store in handoff.get("stores") or []:
        if ctx.training_accounts:
            found[str(store)] = canonical_account(str(handoff.get("account")))
    for issuer in handoff.get("issuers") or []:
        found[FEDERATED + str(issuer)] = OWN  # the serving replicas' own tokens, with a subject the trust fixes
    if (
        handoff.get("cloud") == "oci"
    ):  # OCI artifacts are read through pre-authenticated requests (accelstack.spec.handoff)
        found[HANDOFF_URLS] = OWN
    copies = copy_config(ctx) or {}
    for store in strings(copies, "stores"):  # a copy's source (copy_rules): the training account's store
        if ctx.training_accounts:
            found[str(store)] = canonical_account(str(copies.get("account")))
    if copies.get("cloud") == "oci":  # the copy's PAR URL is held by the copy, which the deployer runs
        found[HANDOFF_URLS] = OWN
    return found


def placement(ctx: Context, resources: Sequence[Any] | None = None) -> Placement:
    stack = access.Stack.of(resources) if resources is not None else None
    return Placement(own_accounts(ctx), stores(ctx), stack)


def side_of(party: Party, ctx: Context, trusted: frozenset[str]) -> str:
    account = party.account
    if account is None:
        return UNPLACED
    if account == OWN:
        return OWN_SIDE
    if account == SERVICE:
        return CLOUD
    if account == ANY:
        return EVERYONE
    account = canonical_account(account)
    if account in own_accounts(ctx):
        return OWN_SIDE
    if account in ctx.other_accounts:
        return OTHER_SIDE
    if account in trusted:
        return TRUSTED
    return OUTSIDE


def _is_read_path(edge: Edge, source_side: str, target_side: str, ctx: Context) -> bool:
    """Serving reads training's artifacts: objects under the prefix, or the key only the storage service uses."""
    serving_side = OWN_SIDE if ctx.workload == "serving" else OTHER_SIDE
    training_side = OTHER_SIDE if ctx.workload == "serving" else OWN_SIDE
    if ctx.workload not in ("training", "serving") or (source_side, target_side) != (serving_side, training_side):
        return False
    if edge.access != READ:
        return False
    prefix = str(ctx.config.get("artifactPrefix") or ARTIFACT_PREFIX)
    if edge.target.kind == OBJECTS:
        return edge.scope is not None and edge.scope != "" and edge.scope.startswith(prefix)
    return edge.target.kind == KEY and edge.scope == THROUGH_STORAGE


def _is_handoff_reader(edge: Edge, source_side: str, ctx: Context) -> bool:
    """The serving replicas becoming the reader their own stack declares in another cloud's training account
    (accelstack.spec.handoff): the one BECOME that crosses, into an identity of a reader kind the stack creates there,
    whose reach is judged as the replicas' own (the read path above) and by handoff-reader-read-only."""
    handoff = ctx.config.get("artifactHandoff") or {}
    if ctx.workload != "serving" or not handoff:
        return False
    origin_type = edge.origin.split("::")[-2].rsplit("$", 1)[-1] if "::" in edge.origin else ""
    if origin_type not in reader_kinds(handoff):
        return False
    if edge.access == READ and source_side == OTHER_SIDE:
        return True  # the reader's own grant inside the training account: a read, its scope handoff-reader-read-only's
    deployer = str(handoff.get("deployer") or "")
    if edge.access == BECOME and deployer and edge.source.account is not None:
        # AWS -> Vultr: the deployer's account may become the reader role, to start each replica's session; the
        # trust's exact principal (aws:PrincipalArn = serving.artifactDeployer) is handoff-reader-read-only's.
        return canonical_account(edge.source.account) == canonical_account(deployer.split(":")[4])
    if edge.access != BECOME or source_side != OWN_SIDE:
        return False
    account = edge.target.account
    return account is not None and canonical_account(account) == canonical_account(str(handoff.get("account")))


def _where(side: str, party: Party, ctx: Context) -> str:
    if side == OWN_SIDE:
        return f"this {ctx.workload or 'stack'}'s account"
    if side == OTHER_SIDE:
        return f"the {ctx.other} account {party.account}"
    if side == EVERYONE:
        return "every account"
    if side == CLOUD:
        return "the cloud's own service"
    return f"account {party.account}, which is neither a training nor a serving account"


def judge(edge: Edge, ctx: Context, trusted: frozenset[str], via: Party | None = None) -> str | None:
    """Why an edge breaks the separation (None when it does not)."""
    source, target = edge.source, edge.target
    became = f" (by becoming {via.shown()})" if via is not None else ""
    for party, role in ((source, "principal"), (target, "target")):
        if party.account is None:
            why = f": {party.unplaced}" if party.unplaced else ""
            return f"{edge.what}: the pack cannot place the {role} {party.shown()!r} in an account{why}; fail closed"
    if edge.unplaced:
        return f"{edge.what}: the pack cannot judge {edge.unplaced}; fail closed"
    source_side, target_side = side_of(source, ctx, trusted), side_of(target, ctx, trusted)
    sides = {source_side, target_side}
    if sides <= {OWN_SIDE, CLOUD} or (TRUSTED in sides and sides <= {OWN_SIDE, CLOUD, TRUSTED}):
        return None
    if _is_read_path(edge, source_side, target_side, ctx) or _is_handoff_reader(edge, source_side, ctx):
        return None
    prefix = str(ctx.config.get("artifactPrefix") or ARTIFACT_PREFIX)
    verb = "can become" if edge.access == BECOME else f"can {edge.access}"
    scope = f" under {edge.scope!r}" if edge.scope else ""
    return (
        f"{edge.what}: {source.shown()} ({_where(source_side, source, ctx)}){became} {verb} {target.shown()}{scope} "
        f"({_where(target_side, target, ctx)}); across training and serving only serving reading training's "
        f"artifacts under {prefix!r} may cross"
    )


def violations(edges: Iterable[Edge], ctx: Context, graph: access.AccessGraph | None = None) -> list[tuple[str, str]]:
    """(origin URN, message) for every edge, and every edge reached through become, that breaks the separation."""
    if ctx.workload is None:
        return []
    trusted = _trusted(ctx)
    found: dict[tuple[str, str], None] = {}
    for edge in edges:
        if (message := judge(edge, ctx, trusted)) is not None:
            found[(edge.origin, message)] = None
    if graph is not None:
        for start, edge, identity in graph.chains():
            if side_of(start, ctx, trusted) == CLOUD and side_of(identity, ctx, trusted) == OWN_SIDE:
                # The cloud's own service acting for this stack (a standby pool attaching the replicas' identity)
                # wears the identity as the stack does: its edges are the identity's, judged as such above.
                continue
            reached = Edge(start, edge.access, edge.target, edge.origin, edge.what, edge.scope, edge.unplaced)
            if (message := judge(reached, ctx, trusted, identity)) is not None:
                found[(edge.origin, message)] = None
    return list(found)


def check_resource_access(resource: Any, ctx: Context) -> Iterable[str]:
    """One resource's edges, judged alone (binds during preview, resource by resource)."""
    if ctx.workload is None:
        return
    where = placement(ctx)
    edges = [
        edge
        for reader in _readers()
        for edge in reader(resource, where)
        if not (edge.source.needs_stack or edge.target.needs_stack)  # the stack-level check places those
    ]
    for _, message in violations(edges, ctx):
        yield message


def check_stack_access(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """The stack's whole graph, built once: every edge and every edge reached through become."""
    if ctx.workload is None:
        return
    where = placement(ctx, resources)
    graph = access.graph_of(resources, _readers(), where.own, where.stores)
    yield from violations(graph.edges, ctx, graph)
