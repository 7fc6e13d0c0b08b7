"""Issue 28's "no rule at all" class, on every cloud, through the packs as `accelstack policy` runs them.

Each class (a per-client rate limit that is not enforced; serving on capacity that can be taken away; logging and
encryption turned off or down; soft delete and retention shortened) is spelled at least two ways per cloud as
realistic edits of the shipped example stacks' exports; each must draw a mandatory verdict of its policy naming the
resource a reviewer must look at. Beside them, legitimate edits of the same resources must draw no verdict at all.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from test_policy_real_mutations import entry, previewed, sides

from accelstack.engine.policy_runner import Verdict, policy_verdicts

Doc = dict[str, Any]
Edit = Callable[[Doc], str]

AWS_SERVING, AWS_TRAINING = "aws-serving", "aws-training"
AZURE_SERVING, AZURE_TRAINING = "azure-serving", "azure-training"
GCP_SERVING, GCP_TRAINING = "gcp-serving", "gcp-training"

WEB_ACL = "aws:wafv2/webAcl:WebAcl"
ASSOCIATION = "aws:wafv2/webAclAssociation:WebAclAssociation"
ALB = "aws:lb/loadBalancer:LoadBalancer"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
BUCKET = "aws:s3/bucket:Bucket"
WAF_POLICY = "azure-native:network:WebApplicationFirewallPolicy"
GATEWAY = "azure-native:network:ApplicationGateway"
SCALE_SET = "azure-native:compute:VirtualMachineScaleSet"
DIAGNOSTICS = "azure-native:monitor:DiagnosticSetting"
ACCOUNT = "azure-native:storage:StorageAccount"
BLOB_SERVICE = "azure-native:storage:BlobServiceProperties"
VAULT = "azure-native:keyvault:Vault"
ARMOR = "gcp:compute/securityPolicy:SecurityPolicy"
BACKEND = "gcp:compute/backendService:BackendService"
TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
GCS = "gcp:storage/bucket:Bucket"
CRYPTO_KEY = "gcp:kms/cryptoKey:CryptoKey"

ACL = ("aws-serving-edge", WEB_ACL)
LB = ("aws-serving-alb", ALB)
AZ_WAF = ("azure-serving-waf", WAF_POLICY)
AZ_GATEWAY = ("azure-serving-gateway", GATEWAY)
POLICY = ("gcp-serving-armor", ARMOR)
GCP_BACKEND = ("gcp-serving-backend", BACKEND)
KEY_VAULT = ("azure-training-storage-kv", VAULT)


# --- editing an export ---------------------------------------------------------------------------


def add_resource(
    doc: Doc, stack: str, type_token: str, name: str, inputs: dict[str, Any], *, depends: dict[str, str] | None = None
) -> str:
    """Register a resource as the program would: the stack's explicit provider of its package, parent the stack,
    the engine's property dependencies for `depends` (property -> URN)."""
    resources, depends = doc["deployment"]["resources"], depends or {}
    package = type_token.split(":", 1)[0]
    provider = next(r["provider"] for r in resources if r.get("provider") and r["type"].split(":", 1)[0] == package)
    urn = f"urn:pulumi:{stack}::accelstack::{type_token}::{name}"
    resources.append(
        {
            "urn": urn,
            "custom": True,
            "id": f"{name}-id",
            "type": type_token,
            "inputs": copy.deepcopy(inputs),
            "outputs": {**copy.deepcopy(inputs), "id": f"{name}-id"},
            "parent": resources[0]["urn"],
            "protect": False,
            "provider": provider,
            "dependencies": sorted(set(depends.values())),
            "propertyDependencies": {prop: [target] for prop, target in depends.items()},
        }
    )
    return urn


def edit(
    target: tuple[str, str], change: Callable[[dict[str, Any]], None], *, named: tuple[str, str] | None = None
) -> Edit:
    """Change both sides (inputs, outputs) of one resource; the verdict must name `named` (default: the target)."""

    def apply(doc: Doc) -> str:
        resource = entry(doc, *target)
        for props in sides(resource):
            change(props)
        return entry(doc, *(named or target))["urn"]

    return apply


def unlink(target: tuple[str, str], prop: str, *, named: tuple[str, str] | None = None) -> Edit:
    """Remove a reference the program would no longer make: the input and the engine's property dependency."""

    def apply(doc: Doc) -> str:
        resource = entry(doc, *target)
        for props in sides(resource):
            props.pop(prop, None)
        resource["propertyDependencies"].pop(prop, None)
        return entry(doc, *(named or target))["urn"]

    return apply


def repoint(target: tuple[str, str], prop: str, value: Any, *, named: tuple[str, str] | None = None) -> Edit:
    """Point a reference at something the stack does not define (a literal id, no dependency)."""

    def apply(doc: Doc) -> str:
        unlink(target, prop)(doc)
        for props in sides(entry(doc, *target)):
            props[prop] = copy.deepcopy(value)
        return entry(doc, *(named or target))["urn"]

    return apply


def drop(target: tuple[str, str], *, named: tuple[str, str]) -> Edit:
    def apply(doc: Doc) -> str:
        doc["deployment"]["resources"].remove(entry(doc, *target))
        return entry(doc, *named)["urn"]

    return apply


def adding(
    stack: str,
    type_token: str,
    name: str,
    inputs: dict[str, Any],
    depends: dict[str, tuple[str, str]] | None = None,
    *,
    named: tuple[str, str] | None = None,
    then: Edit | None = None,
) -> Edit:
    """Add a resource as the program would register it; the verdict names it (or `named`)."""

    def apply(doc: Doc) -> str:
        deps = {prop: entry(doc, *target)["urn"] for prop, target in (depends or {}).items()}
        urn = add_resource(doc, stack, type_token, name, inputs, depends=deps)
        if then is not None:
            then(doc)
        return entry(doc, *named)["urn"] if named else urn

    return apply


def both(*edits: Edit) -> Edit:
    """Several edits; the verdict names what the last one names."""

    def apply(doc: Doc) -> str:
        return [e(doc) for e in edits][-1]

    return apply


def at(*path: Any) -> Callable[[Any], Any]:
    def node(props: Any) -> Any:
        for key in path:
            props = props[key]
        return props

    return node


def put(value: Any, *path: Any) -> Callable[[dict[str, Any]], None]:
    def change(props: dict[str, Any]) -> None:
        at(*path[:-1])(props)[path[-1]] = copy.deepcopy(value)

    return change


def pop(*path: Any) -> Callable[[dict[str, Any]], None]:
    def change(props: dict[str, Any]) -> None:
        del at(*path[:-1])(props)[path[-1]]

    return change


def changes(*steps: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def change(props: dict[str, Any]) -> None:
        for step in steps:
            step(props)

    return change


@dataclass(frozen=True)
class Case:
    id: str
    stack: str
    apply: Edit
    policy: str = ""  # the mandatory verdict the edit must draw; "" for a legitimate edit (no verdict at all)


# --- WAF: the per-client rate limit is enforced ---------------------------------------------------

VISIBILITY = {"cloudwatchMetricsEnabled": True, "metricName": "edit", "sampledRequestsEnabled": True}
AWS_RATE = ("rules", 0, "statement", "rateBasedStatement")


def _aws_allow_first(props: dict[str, Any]) -> None:
    props["rules"][0]["priority"] = 5
    props["rules"].insert(
        0,
        {
            "name": "allow-partners",
            "priority": 1,
            "action": {"allow": {}},
            "statement": {"ipSetReferenceStatement": {"arn": "arn:aws:wafv2:us-east-1:222222222222:regional/ipset/p"}},
            "visibilityConfig": VISIBILITY,
        },
    )


def _aws_rule_json(action: str) -> Callable[[dict[str, Any]], None]:
    """The same rules moved to ruleJson (the API's PascalCase JSON)."""

    def change(props: dict[str, Any]) -> None:
        props.pop("rules")
        props["ruleJson"] = json.dumps(
            [
                {
                    "Name": "rate-per-client-ip",
                    "Priority": 0,
                    "Action": {action: {}},
                    "Statement": {"RateBasedStatement": {"AggregateKeyType": "IP", "Limit": 600}},
                    "VisibilityConfig": {
                        "CloudWatchMetricsEnabled": True,
                        "MetricName": "r",
                        "SampledRequestsEnabled": True,
                    },
                }
            ]
        )

    return change


def _aws_rate_in_group(override: str) -> Edit:
    """The rate limit moved into a rule group of the stack, referenced from the web ACL with `override`."""
    group = {
        "capacity": 10,
        "scope": "REGIONAL",
        "rules": [
            {
                "name": "rate-per-client-ip",
                "priority": 0,
                "action": {"block": {}},
                "statement": {"rateBasedStatement": {"aggregateKeyType": "IP", "limit": 600}},
                "visibilityConfig": VISIBILITY,
            }
        ],
        "visibilityConfig": VISIBILITY,
    }

    def reference(doc: Doc) -> str:
        group_urn = entry(doc, "aws-serving-rate", "aws:wafv2/ruleGroup:RuleGroup")["urn"]
        acl = entry(doc, *ACL)
        for props in sides(acl):
            props["rules"][0] = {
                "name": "rate-group",
                "priority": 0,
                "overrideAction": {override: {}},
                "statement": {"ruleGroupReferenceStatement": {"arn": "arn:aws:wafv2:us-east-1:222222222222:rg/rate"}},
                "visibilityConfig": VISIBILITY,
            }
        acl["propertyDependencies"]["rules"] = [group_urn]
        return acl["urn"]

    return adding(AWS_SERVING, "aws:wafv2/ruleGroup:RuleGroup", "aws-serving-rate", group, then=reference, named=ACL)


AZ_RULE = ("customRules", 0)
AZ_CONDITION = (*AZ_RULE, "matchConditions", 0)
AZ_GROUP_BY = (*AZ_RULE, "groupByUserSession", 0, "groupByVariables", 0, "variableName")
LISTENER_POLICY = ("httpListeners", 0, "firewallPolicy")


def _policy_id(name: str) -> dict[str, str]:
    return {
        "id": "/subscriptions/7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098/resourceGroups/azure-serving-rg/providers/"
        f"Microsoft.Network/webApplicationFirewallPolicies/{name}"
    }


def _azure_second_policy(mode: str) -> Edit:
    """A listener-level WAF policy (it replaces the gateway's for that listener), in `mode`."""

    def apply(doc: Doc) -> str:
        original = entry(doc, *AZ_WAF)["inputs"]
        inputs = {**copy.deepcopy(original), "policyName": "azure-serving-waf-api"}
        inputs["policySettings"]["mode"] = mode
        urn = add_resource(doc, AZURE_SERVING, WAF_POLICY, "azure-serving-waf-api", inputs)
        edit(AZ_GATEWAY, put(_policy_id("azure-serving-waf-api"), *LISTENER_POLICY))(doc)
        return urn

    return apply


GCP_RATE = ("rules", 0)
GCP_OPTIONS = (*GCP_RATE, "rateLimitOptions")
ALLOW_ALL = {
    "action": "allow",
    "priority": 500,
    "match": {"versionedExpr": "SRC_IPS_V1", "config": {"srcIpRanges": ["*"]}},
}

WAF = [
    # AWS: count, not block; detached; shadowed; narrowed (negated scope-down); keyed on what the client writes.
    Case("aws-count", AWS_SERVING, edit(ACL, put({"count": {}}, "rules", 0, "action")), "waf-rate-limit"),
    Case("aws-rule-json-count", AWS_SERVING, edit(ACL, _aws_rule_json("Count")), "waf-rate-limit"),
    Case("aws-group-overridden-to-count", AWS_SERVING, _aws_rate_in_group("count"), "waf-rate-limit"),
    Case("aws-detached", AWS_SERVING, drop(("aws-serving-edge", ASSOCIATION), named=LB), "waf-rate-limit"),
    Case(
        "aws-foreign-acl",
        AWS_SERVING,
        repoint(
            ("aws-serving-edge", ASSOCIATION),
            "webAclArn",
            "arn:aws:wafv2:us-east-1:222222222222:regional/webacl/x",
            named=LB,
        ),
        "waf-rate-limit",
    ),
    Case("aws-network-lb", AWS_SERVING, edit(LB, put("network", "loadBalancerType")), "waf-rate-limit"),
    Case("aws-allow-first", AWS_SERVING, edit(ACL, _aws_allow_first), "waf-rate-limit"),
    Case(
        "aws-allow-first-separate-rule",
        AWS_SERVING,
        adding(
            AWS_SERVING,
            "aws:wafv2/webAclRule:WebAclRule",
            "aws-serving-allow-health",
            {
                "name": "allow-health",
                "priority": 0,
                "action": {"allow": {}},
                "statement": {"byteMatchStatement": {"searchString": "/health", "positionalConstraint": "STARTS_WITH"}},
                "visibilityConfig": VISIBILITY,
            },
            {"webAclArn": ACL},
            named=ACL,
            then=edit(ACL, put(10, "rules", 0, "priority")),
        ),
        "waf-rate-limit",
    ),
    Case(
        "aws-negated-scope-down",
        AWS_SERVING,
        edit(
            ACL,
            put(
                {
                    "notStatement": {
                        "statement": {
                            "byteMatchStatement": {"searchString": "/v1/", "positionalConstraint": "STARTS_WITH"}
                        }
                    }
                },
                *AWS_RATE,
                "scopeDownStatement",
            ),
        ),
        "waf-rate-limit",
    ),
    Case(
        "aws-forwarded-ip",
        AWS_SERVING,
        edit(
            ACL,
            changes(
                put("FORWARDED_IP", *AWS_RATE, "aggregateKeyType"),
                put({"headerName": "X-Forwarded-For", "fallbackBehavior": "MATCH"}, *AWS_RATE, "forwardedIpConfig"),
            ),
        ),
        "waf-rate-limit",
    ),
    Case(
        "aws-custom-header-key",
        AWS_SERVING,
        edit(
            ACL,
            changes(
                put("CUSTOM_KEYS", *AWS_RATE, "aggregateKeyType"),
                put(
                    [
                        {"ip": {}},
                        {"header": {"name": "x-api-client", "textTransformations": [{"priority": 0, "type": "NONE"}]}},
                    ],
                    *AWS_RATE,
                    "customKeys",
                ),
            ),
        ),
        "waf-rate-limit",
    ),
    # Azure: logs or disabled, not Block; Detection on a listener's own policy; detached; shadowed; negation
    # flipped; grouped by a header the client writes.
    Case("azure-log", AZURE_SERVING, edit(AZ_WAF, put("Log", *AZ_RULE, "action")), "waf-rate-limit"),
    Case("azure-disabled", AZURE_SERVING, edit(AZ_WAF, put("Disabled", *AZ_RULE, "state")), "waf-rate-limit"),
    Case("azure-listener-policy-detection", AZURE_SERVING, _azure_second_policy("Detection"), "waf-rate-limit"),
    Case("azure-detached", AZURE_SERVING, unlink(AZ_GATEWAY, "firewallPolicy"), "waf-rate-limit"),
    Case(
        "azure-listener-foreign-policy",
        AZURE_SERVING,
        edit(AZ_GATEWAY, put(_policy_id("legacy-waf"), *LISTENER_POLICY)),
        "waf-rate-limit",
    ),
    Case(
        "azure-allow-first",
        AZURE_SERVING,
        edit(
            AZ_WAF,
            lambda p: p["customRules"].insert(
                0,
                {
                    "name": "allowPartners",
                    "priority": 5,
                    "ruleType": "MatchRule",
                    "action": "Allow",
                    "matchConditions": [
                        {
                            "matchVariables": [{"variableName": "RequestUri"}],
                            "operator": "BeginsWith",
                            "matchValues": ["/"],
                        }
                    ],
                },
            ),
        ),
        "waf-rate-limit",
    ),
    Case(
        "azure-negation-flipped",
        AZURE_SERVING,
        edit(AZ_WAF, put(False, *AZ_CONDITION, "negationConditon")),
        "waf-rate-limit",
    ),
    Case(
        "azure-matches-a-header",
        AZURE_SERVING,
        edit(
            AZ_WAF,
            put(
                [{"variableName": "RequestHeaders", "selector": "X-Forwarded-For"}],
                *AZ_CONDITION,
                "matchVariables",
            ),
        ),
        "waf-rate-limit",
    ),
    Case(
        "azure-grouped-by-xff", AZURE_SERVING, edit(AZ_WAF, put("ClientAddrXFFHeader", *AZ_GROUP_BY)), "waf-rate-limit"
    ),
    Case(
        "azure-grouped-by-xff-geo",
        AZURE_SERVING,
        edit(AZ_WAF, put("GeoLocationXFFHeader", *AZ_GROUP_BY)),
        "waf-rate-limit",
    ),
    # GCP: preview or redirect, not deny; detached; shadowed (inline and as a separate rule); narrowed; keyed on
    # what the client writes.
    Case("gcp-preview", GCP_SERVING, edit(POLICY, put(True, *GCP_RATE, "preview")), "waf-rate-limit"),
    Case(
        "gcp-redirect",
        GCP_SERVING,
        edit(
            POLICY,
            changes(
                put("redirect", *GCP_OPTIONS, "exceedAction"),
                put({"type": "GOOGLE_RECAPTCHA"}, *GCP_OPTIONS, "exceedRedirectOptions"),
            ),
        ),
        "waf-rate-limit",
    ),
    Case("gcp-detached", GCP_SERVING, unlink(GCP_BACKEND, "securityPolicy"), "waf-rate-limit"),
    Case(
        "gcp-foreign-policy",
        GCP_SERVING,
        repoint(GCP_BACKEND, "securityPolicy", "projects/acme-serve/global/securityPolicies/legacy"),
        "waf-rate-limit",
    ),
    Case(
        "gcp-allow-first",
        GCP_SERVING,
        edit(POLICY, lambda p: p["rules"].append(copy.deepcopy(ALLOW_ALL))),
        "waf-rate-limit",
    ),
    Case(
        "gcp-allow-first-separate-rule",
        GCP_SERVING,
        adding(
            GCP_SERVING,
            "gcp:compute/securityPolicyRule:SecurityPolicyRule",
            "gcp-serving-allow-partners",
            {
                **{k: v for k, v in ALLOW_ALL.items() if k != "priority"},
                "priority": 100,
                "securityPolicy": "gcp-serving-armor",
            },
            {"securityPolicy": POLICY},
            named=POLICY,
        ),
        "waf-rate-limit",
    ),
    Case(
        "gcp-narrowed",
        GCP_SERVING,
        edit(POLICY, put(["203.0.113.0/24"], *GCP_RATE, "match", "config", "srcIpRanges")),
        "waf-rate-limit",
    ),
    Case(
        "gcp-negated-expression",
        GCP_SERVING,
        edit(POLICY, put({"expr": {"expression": "!inIpRange(origin.ip, '198.51.100.7/32')"}}, *GCP_RATE, "match")),
        "waf-rate-limit",
    ),
    Case(
        "gcp-header-key",
        GCP_SERVING,
        edit(
            POLICY,
            changes(
                put("HTTP_HEADER", *GCP_OPTIONS, "enforceOnKey"), put("X-Client", *GCP_OPTIONS, "enforceOnKeyName")
            ),
        ),
        "waf-rate-limit",
    ),
    Case("gcp-xff-key", GCP_SERVING, edit(POLICY, put("XFF_IP", *GCP_OPTIONS, "enforceOnKey")), "waf-rate-limit"),
    Case(
        "gcp-cookie-key-config",
        GCP_SERVING,
        edit(
            POLICY,
            changes(
                pop(*GCP_OPTIONS, "enforceOnKey"),
                put(
                    [{"enforceOnKeyType": "HTTP_COOKIE", "enforceOnKeyName": "session"}],
                    *GCP_OPTIONS,
                    "enforceOnKeyConfigs",
                ),
            ),
        ),
        "waf-rate-limit",
    ),
]

WAF_LEGITIMATE = [
    Case(
        "aws-higher-limit",
        AWS_SERVING,
        edit(ACL, changes(put(1200, *AWS_RATE, "limit"), put(300, *AWS_RATE, "evaluationWindowSec"))),
    ),
    Case(
        "aws-block-before-the-limit",
        AWS_SERVING,
        edit(
            ACL,
            changes(
                put(5, "rules", 0, "priority"),
                lambda p: p["rules"].insert(
                    0,
                    {
                        "name": "block-embargoed",
                        "priority": 1,
                        "action": {"block": {}},
                        "statement": {"geoMatchStatement": {"countryCodes": ["KP"]}},
                        "visibilityConfig": VISIBILITY,
                    },
                ),
            ),
        ),
    ),
    Case("aws-rate-limit-in-a-group", AWS_SERVING, _aws_rate_in_group("none")),
    Case("azure-higher-limit", AZURE_SERVING, edit(AZ_WAF, put(1200, *AZ_RULE, "rateLimitThreshold"))),
    Case(
        "azure-listener-names-the-same-policy",
        AZURE_SERVING,
        edit(AZ_GATEWAY, put(_policy_id("azure-serving-waf"), *LISTENER_POLICY)),
    ),
    Case("azure-listener-policy-prevention", AZURE_SERVING, _azure_second_policy("Prevention")),
    Case(
        "gcp-ban",
        GCP_SERVING,
        edit(
            POLICY,
            changes(
                put("rate_based_ban", *GCP_RATE, "action"),
                put(600, *GCP_OPTIONS, "banDurationSec"),
                put({"count": 6000, "intervalSec": 600}, *GCP_OPTIONS, "banThreshold"),
            ),
        ),
    ),
    Case(
        "gcp-deny-a-range-first",
        GCP_SERVING,
        edit(
            POLICY,
            lambda p: p["rules"].append(
                {
                    **ALLOW_ALL,
                    "action": "deny(403)",
                    "match": {"versionedExpr": "SRC_IPS_V1", "config": {"srcIpRanges": ["192.0.2.0/24"]}},
                }
            ),
        ),
    ),
]


# --- serving on capacity that can be taken away ---------------------------------------------------

REPLICA_LT = ("aws-serving-replica", LT)
AZ_REPLICAS = ("azure-serving-replicas", SCALE_SET)
GCP_REPLICA = ("gcp-serving-replica", TEMPLATE)

CAPACITY = [
    Case(
        "aws-capacity-block",
        AWS_SERVING,
        edit(REPLICA_LT, put({"marketType": "capacity-block"}, "instanceMarketOptions")),
        "no-spot-serving",
    ),
    Case(
        "aws-scheduled-to-zero",
        AWS_SERVING,
        adding(
            AWS_SERVING,
            "aws:autoscaling/schedule:Schedule",
            "aws-serving-nightly",
            {
                "autoscalingGroupName": "aws-serving-replicas",
                "scheduledActionName": "night",
                "minSize": 0,
                "maxSize": 0,
                "desiredCapacity": 0,
                "recurrence": "0 20 * * *",
            },
            {"autoscalingGroupName": ("aws-serving-replicas", ASG)},
        ),
        "no-spot-serving",
    ),
    Case(
        "aws-launch-configuration-bid",
        AWS_SERVING,
        adding(
            AWS_SERVING,
            "aws:ec2/launchConfiguration:LaunchConfiguration",
            "aws-serving-bid",
            {"imageId": "ami-0abc", "instanceType": "g6e.xlarge", "spotPrice": "0.9"},
        ),
        "no-spot-serving",
    ),
    Case(
        "azure-low-priority",
        AZURE_SERVING,
        edit(AZ_REPLICAS, put("Low", "virtualMachineProfile", "priority")),
        "no-spot-serving",
    ),
    Case(
        "azure-eviction-settings",
        AZURE_SERVING,
        edit(
            AZ_REPLICAS,
            changes(
                pop("virtualMachineProfile", "priority"),
                put("Delete", "virtualMachineProfile", "evictionPolicy"),
                put({"maxPrice": -1}, "virtualMachineProfile", "billingProfile"),
            ),
        ),
        "no-spot-serving",
    ),
    Case(
        "azure-priority-mix",
        AZURE_SERVING,
        edit(
            AZ_REPLICAS,
            put({"baseRegularPriorityCount": 1, "regularPriorityPercentageAboveBase": 50}, "priorityMixPolicy"),
        ),
        "no-spot-serving",
    ),
    Case(
        "azure-spot-restore",
        AZURE_SERVING,
        edit(AZ_REPLICAS, put({"enabled": True, "restoreTimeout": "PT1H"}, "spotRestorePolicy")),
        "no-spot-serving",
    ),
    Case(
        "gcp-max-run-duration",
        GCP_SERVING,
        edit(
            GCP_REPLICA,
            changes(
                put({"seconds": 14400}, "scheduling", "maxRunDuration"),
                put("DELETE", "scheduling", "instanceTerminationAction"),
            ),
        ),
        "no-spot-serving",
    ),
    Case(
        "gcp-reservation-bound",
        GCP_SERVING,
        edit(GCP_REPLICA, put("RESERVATION_BOUND", "scheduling", "provisioningModel")),
        "no-spot-serving",
    ),
    Case(
        "gcp-termination-time",
        GCP_SERVING,
        edit(GCP_REPLICA, put("2026-12-31T00:00:00Z", "scheduling", "terminationTime")),
        "no-spot-serving",
    ),
]

CAPACITY_LEGITIMATE = [
    Case(
        "aws-open-reservations",
        AWS_SERVING,
        edit(REPLICA_LT, put({"capacityReservationPreference": "open"}, "capacityReservationSpecification")),
    ),
    Case(
        "azure-priority-mix-all-regular",
        AZURE_SERVING,
        edit(
            AZ_REPLICAS,
            put({"baseRegularPriorityCount": 1, "regularPriorityPercentageAboveBase": 100}, "priorityMixPolicy"),
        ),
    ),
    Case(
        "gcp-any-reservation", GCP_SERVING, edit(GCP_REPLICA, put({"type": "ANY_RESERVATION"}, "reservationAffinity"))
    ),
]


# --- logging and encryption off -------------------------------------------------------------------

CHECKPOINT_SSE = ("aws-training-storage-checkpoints-encryption", SSE)
SSE_DEFAULT = ("rules", 0, "applyServerSideEncryptionByDefault")
GATEWAY_LOGS = ("azure-serving-gateway-logs", DIAGNOSTICS)
CHECKPOINT_ACCOUNT = ("azure-training-storage-checkpoints", ACCOUNT)
AUDIT = "gcp:projects/iAMAuditConfig:IAMAuditConfig"


def _audit_config(name: str, configs: list[dict[str, Any]], service: str = "storage.googleapis.com") -> Edit:
    return adding(GCP_SERVING, AUDIT, name, {"project": "acme-serve", "service": service, "auditLogConfigs": configs})


def _vault_diagnostics(categories: list[str]) -> Edit:
    """Diagnostics on the training Key Vault, into the checkpoint account, with these log categories."""
    return adding(
        AZURE_TRAINING,
        DIAGNOSTICS,
        "azure-training-kv-logs",
        {
            "logs": [{"category": c, "enabled": True} for c in categories],
            "storageAccountId": "/subscriptions/3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c/resourceGroups/azure-training-rg/"
            "providers/Microsoft.Storage/storageAccounts/acmetrainckpts",
        },
        {"resourceUri": KEY_VAULT},
        named=KEY_VAULT,
    )


LOGGING = [
    Case("aws-alb-logs-off", AWS_SERVING, edit(LB, put(False, "accessLogs", "enabled")), "service-logs"),
    Case("aws-alb-logs-removed", AWS_SERVING, unlink(LB, "accessLogs"), "service-logs"),
    Case(
        "aws-sse-managed-key",
        AWS_TRAINING,
        edit(CHECKPOINT_SSE, pop(*SSE_DEFAULT, "kmsMasterKeyId")),
        "bucket-encryption",
    ),
    Case(
        "aws-sse-aws-s3-alias",
        AWS_TRAINING,
        edit(CHECKPOINT_SSE, put("alias/aws/s3", *SSE_DEFAULT, "kmsMasterKeyId")),
        "bucket-encryption",
    ),
    Case("azure-gateway-log-off", AZURE_SERVING, edit(GATEWAY_LOGS, put(False, "logs", 0, "enabled")), "service-logs"),
    Case("azure-gateway-logs-removed", AZURE_SERVING, drop(GATEWAY_LOGS, named=AZ_GATEWAY), "service-logs"),
    Case("azure-gateway-logs-nowhere", AZURE_SERVING, unlink(GATEWAY_LOGS, "storageAccountId"), "service-logs"),
    Case(
        "azure-no-infrastructure-encryption",
        AZURE_TRAINING,
        edit(CHECKPOINT_ACCOUNT, put(False, "encryption", "requireInfrastructureEncryption")),
        "bucket-encryption",
    ),
    Case(
        "azure-microsoft-managed-keys",
        AZURE_TRAINING,
        edit(
            CHECKPOINT_ACCOUNT,
            changes(put("Microsoft.Storage", "encryption", "keySource"), pop("encryption", "keyVaultProperties")),
        ),
        "bucket-encryption",
    ),
    Case(
        "azure-vault-audit-dropped",
        AZURE_TRAINING,
        _vault_diagnostics(["AzurePolicyEvaluationDetails"]),
        "service-logs",
    ),
    Case("gcp-backend-logs-off", GCP_SERVING, edit(GCP_BACKEND, put(False, "logConfig", "enable")), "service-logs"),
    Case(
        "gcp-backend-logs-unsampled",
        GCP_SERVING,
        edit(GCP_BACKEND, put(0.0, "logConfig", "sampleRate")),
        "service-logs",
    ),
    Case(
        "gcp-audit-exempts",
        GCP_SERVING,
        _audit_config(
            "gcp-serving-audit",
            [
                {"logType": "DATA_READ", "exemptedMembers": ["serviceAccount:ops@acme-serve.iam.gserviceaccount.com"]},
                {"logType": "DATA_WRITE"},
            ],
        ),
        "service-logs",
    ),
    Case(
        "gcp-audit-admin-only",
        GCP_SERVING,
        _audit_config("gcp-serving-audit", [{"logType": "ADMIN_READ"}], "allServices"),
        "service-logs",
    ),
    Case(
        "gcp-bucket-google-managed",
        GCP_TRAINING,
        edit(("gcp-training-checkpoints", GCS), pop("encryption")),
        "bucket-encryption",
    ),
]

LOGGING_LEGITIMATE = [
    Case("aws-alb-log-prefix", AWS_SERVING, edit(LB, put("edge", "accessLogs", "prefix"))),
    Case(
        "azure-all-logs-group",
        AZURE_SERVING,
        edit(GATEWAY_LOGS, put([{"categoryGroup": "allLogs", "enabled": True}], "logs")),
    ),
    Case(
        "gcp-audit-data-access",
        GCP_SERVING,
        _audit_config(
            "gcp-serving-audit", [{"logType": t} for t in ("ADMIN_READ", "DATA_READ", "DATA_WRITE")], "allServices"
        ),
    ),
    Case("azure-vault-audit", AZURE_TRAINING, _vault_diagnostics(["AuditEvent", "AzurePolicyEvaluationDetails"])),
    Case("gcp-backend-half-sampled", GCP_SERVING, edit(GCP_BACKEND, put(0.5, "logConfig", "sampleRate"))),
]


# --- soft delete and retention --------------------------------------------------------------------

CHECKPOINT_BLOBS = ("azure-training-storage-checkpoints", BLOB_SERVICE)
GCP_CHECKPOINTS = ("gcp-training-checkpoints", GCS)
GCP_DATASETS = ("gcp-training-datasets", GCS)
DATASETS_BUCKET = ("aws-training-storage-datasets", BUCKET)
LOCK = "aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2"


def _object_lock(days: int) -> Edit:
    return adding(
        AWS_TRAINING,
        LOCK,
        "aws-training-storage-datasets-lock",
        {"bucket": "acme-train-datasets", "rule": {"defaultRetention": {"mode": "GOVERNANCE", "days": days}}},
        {"bucket": DATASETS_BUCKET},
        named=DATASETS_BUCKET,
        then=edit(DATASETS_BUCKET, put(True, "objectLockEnabled")),
    )


RETENTION = [
    Case(
        "azure-blob-soft-delete-off",
        AZURE_TRAINING,
        edit(CHECKPOINT_BLOBS, put(False, "deleteRetentionPolicy", "enabled")),
        "soft-delete-retention",
    ),
    Case(
        "azure-container-soft-delete-1-day",
        AZURE_TRAINING,
        edit(CHECKPOINT_BLOBS, put(1, "containerDeleteRetentionPolicy", "days")),
        "soft-delete-retention",
    ),
    Case(
        "azure-blob-soft-delete-removed",
        AZURE_TRAINING,
        edit(CHECKPOINT_BLOBS, pop("deleteRetentionPolicy")),
        "soft-delete-retention",
    ),
    Case(
        "azure-blob-service-removed",
        AZURE_TRAINING,
        drop(CHECKPOINT_BLOBS, named=CHECKPOINT_ACCOUNT),
        "soft-delete-retention",
    ),
    Case(
        "azure-vault-soft-delete-off",
        AZURE_TRAINING,
        edit(KEY_VAULT, put(False, "properties", "enableSoftDelete")),
        "soft-delete-retention",
    ),
    Case(
        "azure-vault-3-days",
        AZURE_TRAINING,
        edit(KEY_VAULT, put(3, "properties", "softDeleteRetentionInDays")),
        "soft-delete-retention",
    ),
    Case(
        "gcp-soft-delete-off",
        GCP_TRAINING,
        edit(GCP_CHECKPOINTS, put("0", "softDeletePolicy", "retentionDurationSeconds")),
        "soft-delete-retention",
    ),
    Case(
        "gcp-soft-delete-one-day",
        GCP_TRAINING,
        edit(GCP_DATASETS, put(86400, "softDeletePolicy", "retentionDurationSeconds")),
        "soft-delete-retention",
    ),
    Case(
        "gcp-key-destroyed-in-a-day",
        GCP_TRAINING,
        edit(("gcp-training-data", CRYPTO_KEY), put("86400s", "destroyScheduledDuration")),
        "soft-delete-retention",
    ),
    Case(
        "gcp-versioning-off",
        GCP_TRAINING,
        edit(GCP_CHECKPOINTS, put(False, "versioning", "enabled")),
        "bucket-versioning",
    ),
    Case("aws-object-lock-1-day", AWS_TRAINING, _object_lock(1), "soft-delete-retention"),
    Case(
        "aws-object-lock-without-retention",
        AWS_TRAINING,
        edit(DATASETS_BUCKET, put(True, "objectLockEnabled")),
        "soft-delete-retention",
    ),
]

RETENTION_LEGITIMATE = [
    Case(
        "azure-blob-soft-delete-60-days",
        AZURE_TRAINING,
        edit(CHECKPOINT_BLOBS, put(60, "deleteRetentionPolicy", "days")),
    ),
    Case("azure-vault-30-days", AZURE_TRAINING, edit(KEY_VAULT, put(30, "properties", "softDeleteRetentionInDays"))),
    Case(
        "gcp-soft-delete-14-days",
        GCP_TRAINING,
        edit(GCP_CHECKPOINTS, put("1209600", "softDeletePolicy", "retentionDurationSeconds")),
    ),
    Case(
        "gcp-key-destroyed-after-30-days",
        GCP_TRAINING,
        edit(("gcp-training-data", CRYPTO_KEY), put("2592000s", "destroyScheduledDuration")),
    ),
    Case("aws-object-lock-30-days", AWS_TRAINING, _object_lock(30)),
]

CAUGHT = WAF + CAPACITY + LOGGING + RETENTION
LEGITIMATE = WAF_LEGITIMATE + CAPACITY_LEGITIMATE + LOGGING_LEGITIMATE + RETENTION_LEGITIMATE


def _verdicts(case: Case) -> tuple[str, list[Verdict]]:
    result = previewed(case.stack)
    doc = copy.deepcopy(result.export)
    urn = case.apply(doc)
    assert doc != result.export, f"{case.id} changed nothing"
    return urn, policy_verdicts(doc, result.spec)


@pytest.mark.parametrize("case", CAUGHT, ids=lambda c: c.id)
def test_each_spelling_of_a_missing_rule_is_caught(case: Case) -> None:
    urn, verdicts = _verdicts(case)
    got = "\n    ".join(v.line() for v in verdicts) or "(no verdict)"
    assert any(v.mandatory and v.urn == urn and v.policy == case.policy for v in verdicts), (
        f"{case.id}: expected mandatory {case.policy} on {urn}; got\n    {got}"
    )


@pytest.mark.parametrize("case", LEGITIMATE, ids=lambda c: c.id)
def test_legitimate_edits_draw_no_verdict(case: Case) -> None:
    _, verdicts = _verdicts(case)
    assert [v.line() for v in verdicts] == []


def test_every_class_has_two_spellings_per_cloud_and_ids_are_unique() -> None:
    ids = [c.id for c in CAUGHT + LEGITIMATE]
    assert len(ids) == len(set(ids))
    for table in (WAF, CAPACITY, LOGGING, RETENTION):
        clouds = [c.stack.split("-")[0] for c in table]
        for cloud in ("aws", "azure", "gcp"):
            assert clouds.count(cloud) >= 2, (table[0].policy, cloud)
