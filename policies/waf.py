"""What a web application firewall does to internet traffic, in one neutral form, and the one judgement of
the per-client rate limit over it (policy `waf-rate-limit`).

Each vendor reads its own front doors (AWS web ACLs on internet-facing ALBs, Azure WAF policies on
Application Gateway listeners, Cloud Armor policies on external backend services) into `FrontDoor`s: every
policy that sees the door's traffic and its rules in evaluation order, each rule reduced to what the
judgement needs. The judgement is the same on every cloud: a rate-limit rule that blocks (not counts,
logs or previews), covers all traffic (no scope-down, no match condition narrowed or negated to a part),
is keyed on the client address (never on all traffic together or a geography, where one client spends
everyone's budget, nor on a header, cookie or path the client chooses), and is evaluated before any rule that allows (an allow ends evaluation, so every request it
matches skips the limit). What a reader cannot place (a policy or rule group the stack does not define)
fails closed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

# The rule's effect on a request it matches (after count/preview overrides): ALLOW ends evaluation and admits
# it; BLOCK ends evaluation and refuses it; PASS lets evaluation go on (count, log, labels, a managed group of
# block-only rules).
ALLOW, BLOCK, PASS = "allow", "block", "pass"


@dataclass(frozen=True)
class WafRule:
    """One rule as the judgement needs it."""

    name: str
    priority: float  # lower is evaluated first, on every cloud
    effect: str  # ALLOW, BLOCK or PASS: what it does to what it matches
    rate_limit: bool = False  # a rate-limit rule (its effect is on requests over the limit)
    # Why the rule does not enforce ("" when it does): count mode, preview, disabled, a non-blocking action.
    not_enforced: str = ""
    # Why the rule covers only part of the traffic ("" when it covers all): a scope-down, a narrow match.
    partial: str = ""
    # The key the client chooses ("" when keyed on the client address or on all traffic together).
    client_key: str = ""
    # What the reader could not judge about the rule (a rule group the stack does not define): fails closed.
    unplaced: str = ""


@dataclass(frozen=True)
class WafPolicy:
    urn: str
    what: str  # "web ACL acme-edge", "WAF policy acme-waf", "security policy acme-armor"
    rules: tuple[WafRule, ...]
    # Why the whole policy does not enforce (Azure Detection mode, state Disabled), "" when it does.
    not_enforced: str = ""


@dataclass(frozen=True)
class FrontDoor:
    """An internet-facing entry and the policies that see its traffic (none: it is unguarded)."""

    urn: str
    what: str  # "load balancer acme-alb", "application gateway acme-gw listener https"
    policies: tuple[WafPolicy, ...] = ()
    # A policy attached by a reference the reader cannot resolve to a resource of the stack.
    unplaced: tuple[str, ...] = field(default_factory=tuple)
    # Internet traffic that reaches the backends past any WAF (a public Azure load balancer, an AWS NLB).
    bypass: str = ""


def _enforcing(rule: WafRule) -> bool:
    return rule.rate_limit and not (rule.not_enforced or rule.partial or rule.client_key or rule.unplaced)


def policy_problems(policy: WafPolicy) -> list[str]:
    """Why the policy's per-client rate limit is not enforced on all traffic; empty when it is."""
    if policy.not_enforced:
        return [f"{policy.what} {policy.not_enforced}"]
    ordered = sorted(policy.rules, key=lambda r: r.priority)
    limit = next((r for r in ordered if _enforcing(r)), None)
    if limit is None:
        found = [
            f"rate-limit rule {r.name} {r.not_enforced or r.partial or r.client_key or r.unplaced}"
            for r in ordered
            if r.rate_limit
        ]
        return [f"{policy.what} has no enforced per-client rate limit" + (f": {'; '.join(found)}" if found else "")]
    problems = []
    for rule in ordered:
        if rule.priority >= limit.priority or rule is limit:
            break
        if rule.unplaced:
            problems.append(
                f"{policy.what}: {rule.name} is evaluated before rate-limit rule {limit.name} and {rule.unplaced}"
            )
        elif rule.effect == ALLOW and not rule.not_enforced:
            problems.append(
                f"{policy.what}: allow rule {rule.name} (priority {rule.priority:g}) is evaluated before rate-limit "
                f"rule {limit.name} (priority {limit.priority:g}); every request it admits skips the limit"
            )
    return problems


def judge(door: FrontDoor) -> Iterable[tuple[str, str]]:
    """(urn, message) for every way internet traffic through `door` escapes the per-client rate limit."""
    if door.bypass:
        yield door.urn, f"{door.what} {door.bypass}"
        return
    for reference in door.unplaced:
        yield (
            door.urn,
            f"{door.what} names WAF policy {reference}, which the stack does not define: it cannot be judged",
        )
    if not door.policies and not door.unplaced:
        yield door.urn, f"{door.what} has no WAF policy with an enforced per-client rate limit"
    for policy in door.policies:
        for problem in policy_problems(policy):
            yield policy.urn, f"{problem} (it guards {door.what})"
