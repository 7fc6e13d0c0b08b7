"""How the packs read Cloud Armor in front of external backend services, into the neutral form of policies/waf.py.

A backend service of an external load balancer (global or regional) names one security policy; its rules (inline
`rules`, or separate SecurityPolicyRule resources) run in priority order and the first match decides
(https://cloud.google.com/armor/docs/security-policy-overview#rule-evaluation-order). A rate limit is a rule of
action throttle or rate_based_ban whose exceed action denies
(https://cloud.google.com/armor/docs/rate-limiting-overview).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..common import as_list, truthy
from ..links import of_type_once, referrers_of, targets_of
from ..readers import get, items_at, name_of
from ..waf import ALLOW, BLOCK, PASS, FrontDoor, WafPolicy, WafRule
from .readers import EXTERNAL

BACKEND_SERVICES = (
    "gcp:compute/backendService:BackendService",
    "gcp:compute/regionBackendService:RegionBackendService",
)
SECURITY_POLICIES = (
    "gcp:compute/securityPolicy:SecurityPolicy",
    "gcp:compute/regionSecurityPolicy:RegionSecurityPolicy",
)
SEPARATE_RULES = (
    "gcp:compute/securityPolicyRule:SecurityPolicyRule",
    "gcp:compute/regionSecurityPolicyRule:RegionSecurityPolicyRule",
)
RATE_LIMIT_ACTIONS = ("throttle", "rate_based_ban")
# The key a per-client limit is enforced on: the source address. ALL (the API's default when enforceOnKey is unset)
# and REGION_CODE count many clients together, so one spends the others' budget; the rest are values the client
# writes (enforceOnKey: https://cloud.google.com/armor/docs/rate-limiting-overview#identifying_clients_for_rate_limiting).
CLIENT_ADDRESS_KEYS = frozenset({"IP"})
SHARED_KEYS = frozenset({"", "ALL", "REGION_CODE"})
EVERYONE = frozenset({"*", "0.0.0.0/0"})


def _partial(match: Any) -> str:
    """Why a rule's match covers only part of the traffic; "" when it matches every request."""
    expression = str(get(match, "expr", "expression") or "").strip()
    if expression:
        return "" if expression == "true" else f"matches only requests where {expression}"
    ranges = {str(r).strip() for r in as_list(get(match, "config", "srcIpRanges"))}
    if str(get(match, "versionedExpr") or "") == "SRC_IPS_V1" and ranges & EVERYONE:
        return ""
    return f"matches only source ranges {', '.join(sorted(ranges)) or '(none)'}"


def _client_key(options: Any) -> str:
    configs = [str(c.get("enforceOnKeyType") or "") for c in items_at(options, "enforceOnKeyConfigs")]
    keys = configs or [str(get(options, "enforceOnKey") or "")]  # the configs replace enforceOnKey when set
    chosen = sorted({k for k in keys if k.upper() not in CLIENT_ADDRESS_KEYS | SHARED_KEYS})
    if chosen:
        return f"is enforced on {', '.join(chosen)}, which the client chooses"
    shared = sorted({k.upper() or "ALL (enforceOnKey unset)" for k in keys if k.upper() in SHARED_KEYS})
    return f"is enforced on {', '.join(shared)}, not per client: one client spends everyone's budget" if shared else ""


def _rule(rule: Any) -> WafRule:
    action = str(rule.get("action") or "")
    name = str(rule.get("description") or f"priority {float(rule.get('priority') or 0):g}")
    priority = float(rule.get("priority") or 0)
    preview = truthy(rule.get("preview"))
    if action not in RATE_LIMIT_ACTIONS:
        effect = ALLOW if action == "allow" else BLOCK if action.startswith("deny") else PASS
        return WafRule(name, priority, PASS if preview else effect)
    options = rule.get("rateLimitOptions")
    exceed = str(get(options, "exceedAction") or "")
    not_enforced = "is in preview (preview true)" if preview else ""
    if not not_enforced and not exceed.startswith("deny"):
        not_enforced = f"exceeds with {exceed or 'no action'}, not deny"
    return WafRule(name, priority, BLOCK, True, not_enforced, _partial(rule.get("match")), _client_key(options))


def _policy(policy: Any, resources: Sequence[Any]) -> WafPolicy:
    rules = list(items_at(policy.props, "rules"))
    separate = of_type_once(resources, *SEPARATE_RULES)
    rules += [r.props for r in referrers_of(policy, separate, "securityPolicy", keys=("name", "id", "selfLink"))]
    return WafPolicy(policy.urn, f"security policy {name_of(policy)}", tuple(_rule(r) for r in rules))


def front_doors(resources: Sequence[Any]) -> Iterable[FrontDoor]:
    """Every backend service of an external load balancer (loadBalancingScheme EXTERNAL, the API's default, or
    EXTERNAL_MANAGED) with the Cloud Armor policy it names (securityPolicy)."""
    policies = [r for r in resources if r.resource_type in SECURITY_POLICIES]
    for backend in (r for r in resources if r.resource_type in BACKEND_SERVICES):
        if str(backend.props.get("loadBalancingScheme") or "EXTERNAL") not in EXTERNAL:
            continue
        linked = targets_of(backend, "securityPolicy", policies, keys=("id", "selfLink", "name"))
        reference = backend.props.get("securityPolicy")
        unplaced = (str(reference),) if reference and not linked else ()
        what = f"backend service {name_of(backend)}"
        yield FrontDoor(backend.urn, what, tuple(_policy(p, resources) for p in linked), unplaced)
