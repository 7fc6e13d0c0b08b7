"""GCP's regional front door and separate Cloud Armor rules, property by property (policies/schema.py): judged by
the named pack rules (as traced by `python -m accelstack.engine.schema_report --trace`), inert with the reason, or
unjudged with why it matters. The WAF reader (policies/gcp/waf.py) reads a separate rule's action, priority, match,
preview and rateLimitOptions when its policy guards an external backend; no example stack has such a rule, so no
trace confirms those reads yet and they stay unjudged here."""

from __future__ import annotations

from .properties_resources import DATA_LOSS, EXPOSURE, FRONT_DOOR, LOGGING, NAMING, NODES, TRANSPORT, TUNING

WAF_RULE = "front door: what a Cloud Armor rule does (read by waf-rate-limit once its policy guards an external backend; untraced)"
WHICH_POLICY = "front door: which security policy the rule joins (a rule moved to another policy)"

PROPERTIES: dict[str, dict[str, str]] = {
    "gcp:compute/regionBackendService:RegionBackendService": {
        "affinityCookieTtlSec": TUNING,
        "circuitBreakers": TUNING,
        "connectionDrainingTimeoutSec": TUNING,
        "consistentHash": TUNING,
        "description": NAMING,
        "dynamicForwarding": TUNING,
        "failoverPolicy": TUNING,
        "haPolicy": TUNING,
        "loadBalancingScheme": "service-logs, waf-rate-limit",
        "localityLbPolicy": TUNING,
        "name": NAMING,
        "networkPassThroughLbTrafficPolicy": TUNING,
        "outlierDetection": TUNING,
        "portName": TUNING,
        "project": "pinned-project",
        "region": "allowed-regions",
        "serviceLbPolicy": TUNING,
        "sessionAffinity": TUNING,
        "strongSessionAffinityCookie": TUNING,
        "subsetting": TUNING,
        "timeoutSec": TUNING,
    },
    "gcp:compute/securityPolicyRule:SecurityPolicyRule": {
        "description": NAMING,
        "project": "pinned-project",
    },
    "gcp:compute/regionSecurityPolicy:RegionSecurityPolicy": {
        "description": NAMING,
        "name": NAMING,
        "project": "pinned-project",
        "region": "allowed-regions",
    },
    "gcp:compute/regionSecurityPolicyRule:RegionSecurityPolicyRule": {
        "description": NAMING,
        "project": "pinned-project",
        "region": "allowed-regions",
    },
}

UNJUDGED: dict[str, dict[str, str]] = {
    "gcp:compute/regionBackendService:RegionBackendService": {
        "backends": "network exposure: the instance groups and NEGs the front door forwards to (what the internet reaches)",
        "cdnPolicy": FRONT_DOOR,
        "connectionTrackingPolicy": EXPOSURE,
        "customMetrics": LOGGING,
        "deletionPolicy": DATA_LOSS,
        "enableCdn": "front door: Cloud CDN caches responses at the edge (served without reaching the backend or its policy)",
        "healthChecks": NODES,
        "iap": FRONT_DOOR,
        "ipAddressSelectionPolicy": EXPOSURE,
        "logConfig": "logging: the regional front door's request logs (service-logs reads the global BackendService's only)",
        "network": EXPOSURE,
        "params": NODES,
        "protocol": EXPOSURE,
        "securityPolicy": "front door: the Cloud Armor policy of a regional backend (read by waf-rate-limit when external; untraced)",
        "tlsSettings": TRANSPORT,
    },
    "gcp:compute/securityPolicyRule:SecurityPolicyRule": {
        "action": WAF_RULE,
        "deletionPolicy": DATA_LOSS,
        "headerAction": FRONT_DOOR,
        "match": WAF_RULE,
        "preconfiguredWafConfig": FRONT_DOOR,
        "preview": WAF_RULE,
        "priority": WAF_RULE,
        "rateLimitOptions": WAF_RULE,
        "redirectOptions": FRONT_DOOR,
        "securityPolicy": WHICH_POLICY,
    },
    "gcp:compute/regionSecurityPolicy:RegionSecurityPolicy": {
        "advancedOptionsConfig": FRONT_DOOR,
        "ddosProtectionConfig": FRONT_DOOR,
        "deletionPolicy": DATA_LOSS,
        "rules": "front door: the regional policy's inline rules (read by waf-rate-limit when it guards an external backend; untraced)",
        "type": FRONT_DOOR,
        "userDefinedFields": FRONT_DOOR,
    },
    "gcp:compute/regionSecurityPolicyRule:RegionSecurityPolicyRule": {
        "action": WAF_RULE,
        "deletionPolicy": DATA_LOSS,
        "match": WAF_RULE,
        "networkMatch": FRONT_DOOR,
        "preconfiguredWafConfig": FRONT_DOOR,
        "preview": WAF_RULE,
        "priority": WAF_RULE,
        "rateLimitOptions": WAF_RULE,
        "securityPolicy": WHICH_POLICY,
    },
}
