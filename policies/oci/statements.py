"""OCI IAM policy statements, parsed: `Allow <subject> to <verb> <resource-type> in <location> [where <conditions>]`
(https://docs.oracle.com/iaas/Content/Identity/policysyntax/policysyntax.htm). A statement is text, so the packs
parse it into who, what, where and the conditions that narrow it; a statement they cannot parse is returned with
why (the access graph then fails closed on it). `define`, `endorse` and `admit` (cross-tenancy statements) are
not parsed: each reaches another tenancy, which the packs cannot place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

VERBS = ("inspect", "read", "use", "manage")

_STATEMENT = re.compile(
    r"^\s*allow\s+(?P<subject>.+?)\s+to\s+(?P<verb>\S+)\s+(?P<what>.+?)\s+in\s+"
    r"(?P<location>tenancy|compartment\s+id\s+\S+|compartment\s+\S+)"
    r"(?:\s+where\s+(?P<where>.+?))?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_SUBJECT = re.compile(
    r"^(?:(?P<kind>group|dynamic-group|service)\s+(?:(?P<by_id>id)\s+)?(?P<name>[^\s,]+)|(?P<any>any-user|any-group))$",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"^(?P<variable>[a-z][a-z0-9_.]*)\s*(?P<op>=|!=)\s*'(?P<value>[^']*)'$", re.IGNORECASE)


@dataclass(frozen=True)
class Subject:
    """Who a statement grants: `group`, `dynamic-group`, `service`, `any-user` or `any-group`; `name` is the
    name, or the OCID where `by_id`."""

    kind: str
    name: str = ""
    by_id: bool = False


@dataclass(frozen=True)
class Condition:
    """The `where` clause as `all` / `any` of `variable = 'value'` clauses (nested blocks flattened into
    `groups`: the clauses of each `any` block apart). `unparsed` holds what the parser could not read."""

    clauses: tuple[tuple[str, str, str], ...] = ()  # (variable, op, value) of the top-level `all`
    any_blocks: tuple[tuple[tuple[str, str, str], ...], ...] = ()  # each `any {...}` block's clauses
    unparsed: str = ""

    def equal(self, variable: str) -> tuple[str, ...]:
        """The values a variable must equal: from an `all` clause, or each value of an `any` block of only that
        variable (either narrows the statement to those values)."""
        found = [v for name, op, v in self.clauses if name.lower() == variable and op == "="]
        if found:
            return tuple(found)
        for block in self.any_blocks:
            if block and all(name.lower() == variable and op == "=" for name, op, _ in block):
                return tuple(v for _, _, v in block)
        return ()


@dataclass(frozen=True)
class Statement:
    text: str
    subjects: tuple[Subject, ...] = ()
    verb: str = ""
    what: str = ""  # a resource type or family (`objects`, `virtual-network-family`), or `{PERMISSION, ...}`
    scope: str = ""  # "tenancy", or the compartment's OCID (`compartment id`) or name
    scope_by_id: bool = False
    condition: Condition = field(default_factory=Condition)
    unparsed: str = ""  # why the statement could not be read ("" when it was)


def _split_top(text: str, separator: str = ",") -> list[str]:
    """Split on a separator outside braces and quotes."""
    parts: list[str] = []
    current: list[str] = []
    depth, quoted = 0, False
    for char in text:
        if char == "'":
            quoted = not quoted
        elif not quoted and char == "{":
            depth += 1
        elif not quoted and char == "}":
            depth -= 1
        if char == separator and depth == 0 and not quoted:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def _block(text: str) -> tuple[str, str] | None:
    """`all {...}` / `any {...}` -> (kind, inner text); None for a bare clause."""
    match = re.match(r"^(all|any)\s*\{(.*)\}$", text.strip(), re.IGNORECASE | re.DOTALL)
    return (match.group(1).lower(), match.group(2)) if match else None


def _clause(text: str) -> tuple[str, str, str] | None:
    match = _CLAUSE.match(text.strip())
    return (match.group("variable"), match.group("op"), match.group("value")) if match else None


def parse_condition(text: str) -> Condition:
    """`a = 'x'`, `all {a = 'x', any {b = 'y', b = 'z'}}` or `any {...}`; deeper nesting is left unparsed."""
    block = _block(text)
    kind, inner = block if block is not None else ("all", text)
    clauses: list[tuple[str, str, str]] = []
    any_blocks: list[tuple[tuple[str, str, str], ...]] = []
    for part in _split_top(inner):
        nested = _block(part)
        if nested is not None and nested[0] == "any" and kind == "all":
            read = [_clause(p) for p in _split_top(nested[1])]
            if any(c is None for c in read):
                return Condition(unparsed=part)
            any_blocks.append(tuple(c for c in read if c is not None))
            continue
        clause = _clause(part)
        if clause is None:
            return Condition(unparsed=part)
        clauses.append(clause)
    if kind == "any":
        return Condition(any_blocks=(tuple(clauses),))
    return Condition(tuple(clauses), tuple(any_blocks))


def parse(text: str) -> Statement:
    """One statement, or a Statement whose `unparsed` says why not."""
    words = text.strip().split(None, 1)
    if not words or words[0].lower() != "allow":
        first = words[0] if words else "(empty)"
        return Statement(text, unparsed=f"a {first!r} statement (only allow statements are read)")
    match = _STATEMENT.match(text)
    if match is None:
        return Statement(
            text, unparsed="a statement not of the form 'allow <subject> to <verb> <resources> in <where>'"
        )
    subjects: list[Subject] = []
    for part in _split_top(match.group("subject")):
        found = _SUBJECT.match(part)
        if found is None:
            return Statement(text, unparsed=f"the subject {part!r}")
        if found.group("any"):
            subjects.append(Subject(found.group("any").lower()))
        else:
            subjects.append(Subject(found.group("kind").lower(), found.group("name"), bool(found.group("by_id"))))
    verb = match.group("verb").lower()
    what = match.group("what").strip()
    if verb not in VERBS and not what.startswith("{"):
        return Statement(text, unparsed=f"the verb {verb!r} (allowed: {', '.join(VERBS)})")
    location = match.group("location").split()
    scope_by_id = len(location) == 3
    condition = parse_condition(match.group("where")) if match.group("where") else Condition()
    if condition.unparsed:
        return Statement(text, unparsed=f"the condition {condition.unparsed!r}")
    return Statement(
        text,
        tuple(subjects),
        verb,
        what,
        "tenancy" if location[0].lower() == "tenancy" else location[-1],
        scope_by_id,
        condition,
    )


def matching_compartments(rule: str) -> tuple[tuple[str, ...], str]:
    """The compartments a dynamic group's matching rule limits its instances to, and why not ("" when it does):
    `ALL {instance.compartment.id = 'X', ...}` -> (X,); `ANY {instance.compartment.id = 'X', ... = 'Y'}` -> (X, Y)
    (https://docs.oracle.com/iaas/Content/Identity/dynamicgroups/Writing_Matching_Rules_to_Define_Dynamic_Groups.htm)."""
    block = _block(rule)
    if block is None:
        block = ("all", rule)
    kind, inner = block
    clauses = [_clause(p) for p in _split_top(inner)]
    if not clauses or any(c is None for c in clauses):
        return (), f"the matching rule {rule!r} is not a list of variable = 'value' clauses"
    read = [c for c in clauses if c is not None]
    compartments = tuple(v for name, op, v in read if name.lower() == "instance.compartment.id" and op == "=")
    if kind == "any" and len(compartments) != len(read):
        return (), f"the matching rule {rule!r} admits instances by something other than their compartment"
    if not compartments:
        return (), f"the matching rule {rule!r} does not limit its instances to a compartment"
    return (compartments[:1] if kind == "all" else compartments), ""
