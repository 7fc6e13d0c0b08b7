"""How the packs read AWS WAF (wafv2) in front of internet-facing load balancers, into the neutral form of
policies/waf.py.

Every spelling of a web ACL's rules is read: the ACL's inline `rules`, its raw `ruleJson` (the API's
PascalCase JSON), separate `aws.wafv2.WebAclRule` resources, rule groups referenced inline or through
`aws.wafv2.WebAclRuleGroupAssociation` (expanded from the stack's `aws.wafv2.RuleGroup`, with the
reference's override action). Keys are compared case-insensitively, so both spellings read alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..common import as_list, decode, of_type, refers_to, truthy
from ..links import each_referrer, of_type_once, referrers_of, targets_of
from ..readers import name_of
from ..waf import ALLOW, BLOCK, PASS, FrontDoor, WafPolicy, WafRule
from .network import LOAD_BALANCERS

WEB_ACL = "aws:wafv2/webAcl:WebAcl"
ASSOCIATION = "aws:wafv2/webAclAssociation:WebAclAssociation"
ACL_RULE = "aws:wafv2/webAclRule:WebAclRule"
GROUP_ASSOCIATION = "aws:wafv2/webAclRuleGroupAssociation:WebAclRuleGroupAssociation"
RULE_GROUP = "aws:wafv2/ruleGroup:RuleGroup"
# The key a per-client limit aggregates on: the request's source address. CONSTANT (every request together) and ASN
# (every client of a network together) let one client spend the others' budget
# (https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-aggregation-options.html).
CLIENT_ADDRESS_KEYS = frozenset({"ip"})


def _lower(node: Any) -> Any:
    """The node with every mapping key lowercased: `rateBasedStatement` (SDK) and `RateBasedStatement` (ruleJson)
    read alike."""
    if hasattr(node, "items"):
        return {str(k).lower(): _lower(v) for k, v in node.items()}
    if isinstance(node, Sequence) and not isinstance(node, str):
        return [_lower(v) for v in node]
    return node


def _rules_of(props: Any) -> list[Mapping[str, Any]]:
    """An ACL's or group's rules from `rules` and from `ruleJson` (a JSON list, or {"Rules": [...]})."""
    rules = [_lower(r) for r in as_list(props.get("rules")) if hasattr(r, "get")]
    raw = decode(props.get("ruleJson"))
    if hasattr(raw, "get"):
        raw = raw.get("Rules") or raw.get("rules")
    rules += [_lower(r) for r in as_list(raw) if hasattr(r, "get")]
    return rules


def _one_of(node: Any) -> str:
    """The one key set in an action block ({"block": {}} -> "block"); "" when none."""
    return next((str(k) for k, v in (node or {}).items() if v is not None), "") if hasattr(node, "items") else ""


def _client_key(statement: Mapping[str, Any]) -> str:
    kind = str(statement.get("aggregatekeytype") or "IP").upper()
    if kind == "FORWARDED_IP":
        header = (statement.get("forwardedipconfig") or {}).get("headername") or "X-Forwarded-For"
        return (
            f"aggregates on the forwarded IP in {header} (FORWARDED_IP), which the client writes: an ALB passes "
            "the client's own header through"
        )
    if kind == "CUSTOM_KEYS":
        keys = sorted({str(k) for key in as_list(statement.get("customkeys")) if hasattr(key, "keys") for k in key})
        chosen = [k for k in keys if k not in CLIENT_ADDRESS_KEYS]
        if chosen or not keys:  # a custom key the client writes splits (or skips) its own count
            return (
                f"aggregates on custom keys ({', '.join(chosen) or 'none'}) the client chooses; a request without "
                "them is not counted at all"
            )
    elif kind == "CONSTANT":
        return "aggregates every request together (CONSTANT), not per client: one client spends everyone's budget"
    elif kind != "IP":
        return f"aggregates on {kind}, which the packs cannot place"
    return ""


def _rule(rule: Mapping[str, Any], override: str = "", overridden: frozenset[str] = frozenset()) -> WafRule:
    """One rule; `override` is a referencing rule's override action ("count" turns every action into count),
    `overridden` the names its ruleActionOverrides set to count."""
    name = str(rule.get("name") or rule.get("rulename") or "unnamed")
    action = _one_of(rule.get("action"))
    if override == "count" or name in overridden:
        action = "count"
    statement = rule.get("statement") or {}
    rated = statement.get("ratebasedstatement")
    effect = {"allow": ALLOW, "block": BLOCK}.get(action, PASS)
    if rated is None:
        return WafRule(name, float(rule.get("priority") or 0), effect)
    return WafRule(
        name,
        float(rule.get("priority") or 0),
        effect,
        rate_limit=True,
        not_enforced="" if action == "block" else f"acts {action or 'without an action'}, not block",
        partial="applies only to requests its scopeDownStatement matches" if rated.get("scopedownstatement") else "",
        client_key=_client_key(rated),
    )


def _group_rules(
    reference: Any, priority: float, override: str, name: str, groups: Sequence[Any], holder: Any, prop: str
) -> list[WafRule]:
    """The rules of a referenced rule group, all at the referencing rule's priority (a group is evaluated as one
    rule of the ACL), or one unplaced rule when the group is not the stack's."""
    arn = reference.get("arn")
    linked = [g for g in groups if arn == g.props.get("arn") or refers_to(holder, prop, g, keys=("arn",))]
    counted = frozenset(
        str(o.get("name"))
        for o in as_list(reference.get("ruleactionoverrides"))
        if hasattr(o, "get") and _one_of(o.get("actiontouse")) == "count"
    )
    if len(linked) != 1:
        return [WafRule(name, priority, PASS, unplaced=f"references rule group {arn}, which the stack does not define")]
    return [
        WafRule(r.name, priority, r.effect, r.rate_limit, r.not_enforced, r.partial, r.client_key)
        for r in (_rule(raw, override, counted) for raw in _rules_of(linked[0].props))
    ]


def _acl_rules(acl: Any, resources: Sequence[Any]) -> tuple[WafRule, ...]:
    groups = of_type(resources, RULE_GROUP)
    found: list[WafRule] = []
    extra = referrers_of(acl, of_type_once(resources, ACL_RULE), "webAclArn", keys=("arn",))
    for holder, raw in [(acl, r) for r in _rules_of(acl.props)] + [(r, _lower(r.props)) for r in extra]:
        statement = raw.get("statement") or {}
        reference = statement.get("rulegroupreferencestatement")
        if reference is not None:
            override = _one_of(raw.get("overrideaction")) or "none"
            prop = "rules" if holder is acl else "statement"
            found += _group_rules(
                reference, float(raw.get("priority") or 0), override, str(raw.get("name")), groups, holder, prop
            )
        else:
            found.append(_rule(raw))
    for association in each_referrer(acl, of_type_once(resources, GROUP_ASSOCIATION), "webAclArn", keys=("arn",)):
        props = _lower(association.props)
        reference = props.get("rulegroupreference")
        name = str(props.get("rulename") or name_of(association))
        if reference is None:  # a managed rule group: AWS's own block rules
            found.append(WafRule(name, float(props.get("priority") or 0), PASS))
            continue
        override = str(props.get("overrideaction") or "none").lower()
        found += _group_rules(
            reference, float(props.get("priority") or 0), override, name, groups, association, "ruleGroupReference"
        )
    return tuple(found)


def _application(balancer: Any) -> bool:
    return str(balancer.props.get("loadBalancerType") or "application") == "application"


def front_doors(resources: Sequence[Any]) -> Iterable[FrontDoor]:
    """Every internet-facing load balancer (not `internal`) and the web ACL associated with it
    (aws.wafv2.WebAclAssociation, by property dependency or ARN: https://docs.aws.amazon.com/waf/latest/developerguide/web-acl-associating-aws-resource.html).
    A network or gateway load balancer cannot take a web ACL: internet traffic through it skips WAF."""
    acls = of_type(resources, WEB_ACL)
    associations = of_type(resources, ASSOCIATION)
    for balancer in of_type(resources, *LOAD_BALANCERS):
        if truthy(balancer.props.get("internal")):
            continue
        what = f"load balancer {name_of(balancer)}"
        if not _application(balancer):
            bypass = (
                f"is an internet-facing {balancer.props.get('loadBalancerType')} load balancer: no web ACL can guard it"
            )
            yield FrontDoor(balancer.urn, what, bypass=bypass)
            continue
        linked = referrers_of(balancer, associations, "resourceArn", keys=("arn", "id"))
        policies, unplaced = [], []
        for association in linked:
            named = targets_of(association, "webAclArn", acls, keys=("arn", "id"))
            unplaced += [] if named else [str(association.props.get("webAclArn"))]
            policies += [WafPolicy(acl.urn, f"web ACL {name_of(acl)}", _acl_rules(acl, resources)) for acl in named]
        yield FrontDoor(balancer.urn, what, tuple(policies), tuple(unplaced))
