"""How the packs read Azure's web application firewall in front of internet-facing Application Gateways, into the
neutral form of policies/waf.py.

A gateway's WAF policy (`firewallPolicy`) guards every listener that does not name its own; a listener's
`firewallPolicy` replaces it for that listener's traffic
(https://learn.microsoft.com/azure/web-application-firewall/ag/per-site-policies), so each listener is a front
door of its own. Custom rules run in priority order before the managed rule sets; a rate-limit rule is a custom
rule of ruleType RateLimitRule (https://learn.microsoft.com/azure/web-application-firewall/ag/rate-limiting-overview).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Any

from ..common import as_list
from ..links import targets_of
from ..readers import get, is_public_range, items_at, name_of
from ..waf import ALLOW, BLOCK, PASS, FrontDoor, WafPolicy, WafRule
from .readers import APP_GATEWAY, LOAD_BALANCER, WAF_POLICY, _kind, _last_segment, _public_frontends

# The GroupByVariable a per-client limit groups on: the client address. GeoLocation and None (or no grouping) count
# many clients together, so one spends the others' budget; the rest are values the client writes
# (https://learn.microsoft.com/azure/web-application-firewall/ag/rate-limiting-overview).
CLIENT_ADDRESS_KEYS = frozenset({"clientaddr"})
SHARED_KEYS = frozenset({"geolocation", "none"})
# Match variables holding the address the connection came from (not a header the client writes).
ADDRESS_VARIABLES = frozenset({"remoteaddr", "socketaddr"})
# Never a client's source address: Microsoft's own "match all traffic" rule negates 255.255.255.255/32
# (https://learn.microsoft.com/azure/web-application-firewall/ag/rate-limiting-configure).
NOT_A_SOURCE = (ipaddress.ip_network("255.255.255.255/32"), ipaddress.ip_network("0.0.0.0/32"))


def _never_a_client(value: str) -> bool:
    try:
        network = ipaddress.ip_network(value.strip(), strict=False)
    except ValueError:
        return False
    if any(network.version == n.version and network.subnet_of(n) for n in NOT_A_SOURCE):  # type: ignore[arg-type]
        return True
    return not is_public_range(value)


def _everyone(value: str) -> bool:
    return value.strip() in ("0.0.0.0/0", "::/0")


def _condition_part(condition: Any) -> str:
    """Why a match condition covers only part of the traffic; "" when it matches every request."""
    operator = str(condition.get("operator") or "")
    # The API's own spelling (sic): negationConditon.
    negated_flag = str(condition.get("negationConditon")).lower() == "true"
    variables = {str(v.get("variableName") or "").lower() for v in items_at(condition, "matchVariables")}
    values = [str(v) for v in as_list(condition.get("matchValues"))]
    if operator.lower() == "any":
        return "negates operator Any (matches nothing)" if negated_flag else ""
    if operator.lower() == "ipmatch" and variables <= ADDRESS_VARIABLES and values:
        if negated_flag and all(_never_a_client(v) for v in values):
            return ""
        if not negated_flag and any(_everyone(v) for v in values):
            return ""
    shown = f"{'not ' if negated_flag else ''}{operator} {', '.join(values)} on {', '.join(sorted(variables))}"
    return f"matches only requests where {shown} (negationConditon {negated_flag})"


def _rule(rule: Any) -> WafRule:
    name = str(rule.get("name") or "unnamed")
    action = str(rule.get("action") or "")
    state = str(rule.get("state") or "Enabled")
    effect = {"allow": ALLOW, "block": BLOCK}.get(action.lower(), PASS)
    if state.lower() != "enabled":
        effect = PASS
    if str(rule.get("ruleType") or "") != "RateLimitRule":
        return WafRule(name, float(rule.get("priority") or 0), effect)
    not_enforced = ""
    if state.lower() != "enabled":
        not_enforced = f"is {state}"
    elif action.lower() != "block":
        not_enforced = f"acts {action or 'without an action'}, not Block"
    partial = "; ".join(p for p in (_condition_part(c) for c in items_at(rule, "matchConditions")) if p)
    keys = [
        str(v.get("variableName") or "")
        for session in items_at(rule, "groupByUserSession")
        for v in items_at(session, "groupByVariables")
    ]
    chosen = [k for k in keys if k.lower() not in CLIENT_ADDRESS_KEYS | SHARED_KEYS]
    client_key = f"groups requests by {', '.join(chosen)}, which the client chooses" if chosen else ""
    if not client_key and not any(k.lower() in CLIENT_ADDRESS_KEYS for k in keys):
        shared = ", ".join(keys) or "nothing (groupByUserSession unset)"
        client_key = f"groups requests by {shared}, not per client: one client spends everyone's budget"
    return WafRule(name, float(rule.get("priority") or 0), effect, True, not_enforced, partial, client_key)


def _policy(policy: Any) -> WafPolicy:
    settings = policy.props.get("policySettings")
    state, mode = str(get(settings, "state") or "Enabled"), str(get(settings, "mode") or "Detection")
    not_enforced = "" if (state, mode) == ("Enabled", "Prevention") else f"is {state} in {mode} mode (only logs)"
    rules = tuple(_rule(r) for r in items_at(policy.props, "customRules"))
    return WafPolicy(policy.urn, f"WAF policy {name_of(policy)}", rules, not_enforced)


def _named(reference: Any, policies: Sequence[Any]) -> list[Any]:
    """The stack's WAF policies an ARM id names (by id, or by its last segment: the policy's name)."""
    ref = str(get(reference, "id") or reference or "")
    last = _last_segment(ref).lower()
    return [
        p
        for p in policies
        if ref == p.props.get("id") or last in {str(p.props.get("policyName") or "").lower(), name_of(p).lower()}
    ]


def front_doors(resources: Sequence[Any]) -> Iterable[FrontDoor]:
    """Every listener of an internet-facing Application Gateway with the WAF policy that sees its traffic (its
    own `firewallPolicy`, else the gateway's); a public Azure load balancer with inbound rules takes internet
    traffic past any WAF (Checkov CKV_AZURE_120 / CKV_AZURE_122 ask for the gateway's WAF)."""
    policies = [r for r in resources if _kind(r) == WAF_POLICY]
    for balancer in (r for r in resources if _kind(r) == LOAD_BALANCER and _public_frontends(r)):
        if items_at(balancer.props, "loadBalancingRules") or items_at(balancer.props, "inboundNatRules"):
            bypass = "takes internet traffic past any WAF; serve through the application gateway"
            yield FrontDoor(balancer.urn, f"load balancer {name_of(balancer)}", bypass=bypass)
    for gateway in (r for r in resources if _kind(r) == APP_GATEWAY and _public_frontends(r)):
        own = targets_of(gateway, "firewallPolicy", policies, keys=("id",))
        reference = gateway.props.get("firewallPolicy")
        own = own or (_named(reference, policies) if reference else [])
        listeners = items_at(gateway.props, "httpListeners") or [{"name": "(every listener)"}]
        for listener in listeners:
            what = f"application gateway {name_of(gateway)} listener {listener.get('name')}"
            named = listener.get("firewallPolicy")
            linked, unplaced = own, [] if own or not reference else [str(get(reference, "id") or reference)]
            if named is not None:
                linked = _named(named, policies)
                unplaced = [] if linked else [str(get(named, "id") or named)]
            yield FrontDoor(gateway.urn, what, tuple(_policy(p) for p in linked), tuple(unplaced))
