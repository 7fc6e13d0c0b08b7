"""The access graph: who can do what to which resource, on every cloud, in one form.

Every identity-bearing construct a vendor reads (identity and resource policies, role assignments and
definitions, IAM bindings at any scope, impersonation and `actAs`, instance profiles, managed identities
and service accounts machines wear, federation and workload identity, keys, SAS, ACLs, KMS grants,
replication and log destinations) becomes edges `principal -[read | write | admin | become]-> target`,
each end placed in an account (an AWS account, an Azure subscription, a GCP project). "become" edges are
followed transitively: a principal reaches whatever any identity it can become reaches.

The separation invariant is then one check over the graph (policies/separation/access_rules.py): across
sides, only the serving side reading training's artifact prefix, and nothing that becomes an identity on
the other side. An end the reader could not place (an unknown principal form, a bucket named by a name
the stack does not own, a condition it cannot evaluate) is recorded as unplaced and fails closed, with
what could not be placed. Modelled on NCC Group's PMapper (principals with "can become" edges) and
Cartography's one asset graph across clouds; read, not copied.

The graph is built once per stack (`graph_of`), not once per rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from . import concepts

# Access levels, weakest first. "become" is separate: it lends the source every edge of the target.
READ, WRITE, ADMIN, BECOME = "read", "write", "admin", "become"
LEVELS = (READ, WRITE, ADMIN, BECOME)
_RANK = {READ: 0, WRITE: 1, ADMIN: 2, BECOME: 3}

# Placements that are not one account.
ANY = "*"  # every account (a public principal, `Principal: *`, allUsers, a wildcard subscription)
OWN = "<this stack's account>"  # a resource or identity this stack creates: the provider's account
SERVICE = "<the cloud itself>"
FEDERATED = "federated:"  # a `stores` key: an identity provider whose fixed-subject tokens the config places  # a cloud service principal acting for the account that owns the resource
# A `stores` key: the bearer URLs (OCI pre-authenticated requests) a serving stack makes through its artifact handoff
# provider are held by its own replicas (the URL is written only into their boot; policies/separation/handoff_rules.py
# holds each to read-only, the artifact prefix, that provider and a day's life).
HANDOFF_URLS = "handoff-urls"

# Target kinds the neutral rule distinguishes (anything else is "resource").
OBJECTS = "objects"  # objects in a bucket / container (scope: the key prefix the edge is limited to)
KEY = "key"  # an encryption key (scope: THROUGH_STORAGE when only the storage service may use it for the caller)
IDENTITY = "identity"  # a role, service account or managed identity: what `become` reaches
RESOURCE = "resource"
THROUGH_STORAGE = "<through the storage service only>"


@dataclass(frozen=True)
class Party:
    """One end of an edge. `account` is where it lives: an account id, ANY, OWN, SERVICE, or None when the
    reader could not place it (then `unplaced` says why)."""

    ref: str
    account: str | None
    kind: str = RESOURCE
    unplaced: str = ""
    # True when only the whole stack can place it (a bucket named by its global name): a resource-level
    # check leaves it to the stack-level one instead of failing it.
    needs_stack: bool = False

    def shown(self) -> str:
        return self.ref


@dataclass(frozen=True)
class Edge:
    """`source` can `access` `target`, because of the resource `origin` (a URN). `scope` narrows the target:
    the object key prefix an OBJECTS edge is limited to ("" for the whole container), THROUGH_STORAGE on a KEY
    used only by the storage service, None when nothing narrows it. `unplaced` names an action or condition
    the reader could not judge (the edge then fails closed)."""

    source: Party
    access: str
    target: Party
    origin: str
    what: str
    scope: str | None = None
    unplaced: str = ""

    def __post_init__(self) -> None:
        if self.access not in _RANK:
            raise ValueError(f"access {self.access!r}; allowed: {', '.join(LEVELS)}")


def stronger(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


def unplaced(ref: str, why: str, kind: str = RESOURCE) -> Party:
    """A party the reader could not place in an account: it fails closed."""
    return Party(ref, None, kind, why)


# The concepts whose resources create the thing their name/bucket/arn names (a store, a key, an identity...).
NAMED_CONCEPTS = frozenset(
    {
        "bucket",
        "storage-account",
        "key",
        "key-vault",
        "identity",
        "secret",
        "queue",
        "topic",
        "image-repository",
        "file-system",
        "parallel-file-system",
        "log-group",
    }
)


@dataclass
class Stack:
    """What a reader may ask about the rest of the stack: the resources, and which names, ids and ARNs the
    stack's own resources carry (a grant naming one of them names this stack's account). None for a
    resource-level check, which judges one resource alone."""

    resources: Sequence[Any]
    own_names: frozenset[str] = frozenset()
    by_urn: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, resources: Sequence[Any]) -> Stack:
        """Every resource's own `id` and `arn`; names (`name`, `bucket`) only of the kinds that create what they
        name: a grant or an association carries a `bucket` or `name` too, and what it names is not the stack's."""
        names: set[str] = set()
        for resource in resources:
            keys: tuple[str, ...] = ("id", "arn")
            if concepts.concept_of(getattr(resource, "resource_type", "")) in NAMED_CONCEPTS:
                keys += ("name", "bucket")
            for key in keys:
                value = _plain(resource.props, key)
                if isinstance(value, str) and value:
                    names.add(value)
        return cls(resources, frozenset(names), {r.urn: r for r in resources})

    def owns(self, value: str) -> bool:
        return value in self.own_names


def _plain(props: Any, key: str) -> Any:
    """props[key], None when the value is unknown during preview (pulumi-policy raises on unknowns)."""
    try:
        return props.get(key)
    except Exception:  # noqa: BLE001  # pulumi_policy's UnknownValueError: nothing to read yet
        return None


@dataclass(frozen=True)
class Placement:
    """How a reader places the parties it reads. `stores` maps a store's global name (an S3 or GCS bucket,
    whose ARN or name carries no account) to the account the policy config says it lives in."""

    own: frozenset[str]
    stores: Mapping[str, str]
    stack: Stack | None = None

    def federated_own(self, issuer: str) -> bool:
        """Whether the policy config says tokens of `issuer` with a fixed subject are this stack's own replicas
        (a serving stack reading another cloud's artifacts: accelstack.spec.handoff, `artifactHandoff`)."""
        return self.stores.get(FEDERATED + issuer) == OWN

    def handoff_urls_own(self) -> bool:
        return self.stores.get(HANDOFF_URLS) == OWN

    def store(self, name: str) -> str | None:
        """The account of a bucket named only by its global name: the stack's own, a configured side's, or None."""
        if self.stack is not None and self.stack.owns(name):
            return OWN
        return self.stores.get(name)

    def store_party(self, name: str, ref: str, kind: str = OBJECTS) -> Party:
        """A bucket named by its global name, placed by the stack's own names and the configured stores."""
        account = self.store(name)
        if account is not None:
            return Party(ref, account, kind)
        return Party(
            ref,
            None,
            kind,
            f"bucket {name!r} is not created by this stack and is in neither trainingStores nor servingStores",
            needs_stack=self.stack is None,
        )


# A vendor's edge reader: one resource -> its edges (it skips kinds that are not its own).
EdgeReader = Callable[[Any, Placement], Iterable[Edge]]


@dataclass
class AccessGraph:
    edges: list[Edge] = field(default_factory=list)

    def add(self, edges: Iterable[Edge]) -> None:
        self.edges.extend(edges)

    def becomes(self) -> dict[Party, set[Party]]:
        """Every party -> every identity it can become, transitively (itself excluded)."""
        direct: dict[Party, set[Party]] = {}
        for edge in self.edges:
            if edge.access == BECOME:
                direct.setdefault(edge.source, set()).add(edge.target)
        closure: dict[Party, set[Party]] = {}
        for start in direct:
            seen: set[Party] = set()
            frontier = list(direct[start])
            while frontier:
                party = frontier.pop()
                if party in seen or party == start:
                    continue
                seen.add(party)
                frontier.extend(direct.get(party, ()))
            closure[start] = seen
        return closure

    def chains(self) -> Iterable[tuple[Party, Edge, Party]]:
        """(principal, edge, identity it became to get it): every edge a principal reaches through become."""
        by_source: dict[Party, list[Edge]] = {}
        for edge in self.edges:
            by_source.setdefault(edge.source, []).append(edge)
        for start, identities in self.becomes().items():
            for identity in identities:
                for edge in by_source.get(identity, ()):
                    yield start, edge, identity


def build(resources: Sequence[Any], readers: Sequence[EdgeReader], placement: Placement) -> AccessGraph:
    graph = AccessGraph()
    for resource in resources:
        for reader in readers:
            graph.add(reader(resource, placement))
    return graph


_Built = TypeVar("_Built")


def once_per_stack(
    cache: list[tuple[Sequence[Any], Any, _Built]], resources: Sequence[Any], key: Any, build: Callable[[], _Built]
) -> _Built:
    """The last stack's result, built once however many rules ask with the same resource list and key. The cache
    holds the very list it was built from, so that list's id cannot be reused by a later stack's while cached."""
    if cache and cache[0][0] is resources and cache[0][1] == key:
        return cache[0][2]
    built = build()
    cache[:] = [(resources, key, built)]
    return built


_cache: list[tuple[Sequence[Any], Any, AccessGraph]] = []


def graph_of(
    resources: Sequence[Any], readers: Sequence[EdgeReader], own: frozenset[str], stores: Mapping[str, str]
) -> AccessGraph:
    """The stack's graph, built once however many rules ask with the same resource list and placement."""
    key = (own, tuple(sorted(stores.items())), tuple(readers))
    return once_per_stack(
        _cache, resources, key, lambda: build(resources, readers, Placement(own, stores, Stack.of(resources)))
    )


__all__ = [
    "ADMIN",
    "ANY",
    "BECOME",
    "IDENTITY",
    "KEY",
    "OBJECTS",
    "OWN",
    "READ",
    "RESOURCE",
    "SERVICE",
    "THROUGH_STORAGE",
    "WRITE",
    "AccessGraph",
    "Edge",
    "EdgeReader",
    "Party",
    "Placement",
    "Stack",
    "build",
    "graph_of",
    "unplaced",
]
