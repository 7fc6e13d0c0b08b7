"""The edge: an Application Gateway WAF_v2 answering HTTPS only (TLS 1.2+ policy, the certificate read from Key
Vault by the gateway's own identity), its health probe on the model server's health path, and a WAF policy in
Prevention mode with OWASP CRS 3.2 and a rate-limit rule per client address.

- Rate limiting: custom rules of type RateLimitRule exist only on WAF_v2 with CRS 3.2 or later, count per
  OneMin or FiveMins, and group by ClientAddr (learn.microsoft.com/azure/web-application-firewall/ag/
  rate-limiting-overview). A rate-limit rule still needs a match condition: "not from 255.255.255.255/32"
  matches every request (the documented way to rate-limit all traffic).
- Request bodies: prompts are free text (code, SQL, markup) that CRS's SQLi/XSS rules misread, so the CRS does
  not inspect bodies (requestBodyCheck false) while the body size limit is still enforced
  (requestBodyEnforcement, learn.microsoft.com/azure/web-application-firewall/ag/application-gateway-waf-request-size-limits).
- Sub-resources of a gateway reference each other by id, so the gateway's name is fixed (`<stack>-gateway`)
  and the ids are built from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure import names
from accelstack.clouds.azure.serving_rules import rate_limit_duration
from accelstack.components.azure.serving.identity import ServingIdentities, certificate_secret_uri
from accelstack.components.azure.serving.network import ServingNetwork
from accelstack.components.azure.serving.placement import Placement
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import AdmissionPolicy, LoadBalancerSpec, ServingSpec

TLS_POLICY = "AppGwSslPolicy20220101S"  # TLS 1.2 minimum, strong suites (application-gateway-ssl-policy-overview)
RATE_RULE_PRIORITY = 10
MAX_REQUEST_BODY_KB = 2000  # CRS 3.2+: 8..2000 KB
WAF_V2_MAX_INSTANCES = 125
POOL, SETTINGS, PROBE, LISTENER, FRONTEND, PORT, CERTIFICATE = (
    "replicas", "replicas", "health", "https", "public", "https", "listener",
)  # fmt: skip


def gateway_name(stack: str) -> str:
    return f"{stack}-gateway"


def gateway_id(subscription_id: str, resource_group: str, name: str) -> str:
    return (
        f"/subscriptions/{subscription_id}/resourceGroups/{resource_group}/providers/Microsoft.Network/"
        f"applicationGateways/{name}"
    )


def sub_resource(gateway: str, kind: str, name: str) -> dict[str, str]:
    return {"id": f"{gateway}/{kind}/{name}"}


def rate_limit_rule(per_client_rate: int, window_seconds: int) -> dict[str, Any]:
    duration = rate_limit_duration(window_seconds)
    if duration is None:  # the spec rules refuse it first
        raise ValueError(f"serving.admission.rateWindowSeconds: {window_seconds} is not a WAF rate-limit duration")
    return {
        "name": "perClientRate",
        "priority": RATE_RULE_PRIORITY,
        "rule_type": "RateLimitRule",
        "state": "Enabled",
        "action": "Block",
        "rate_limit_duration": duration,
        "rate_limit_threshold": per_client_rate,
        "group_by_user_session": [{"group_by_variables": [{"variable_name": "ClientAddr"}]}],
        "match_conditions": [
            {
                "match_variables": [{"variable_name": "RemoteAddr"}],
                "operator": "IPMatch",
                "negation_conditon": True,  # (sic: the API's spelling) every request matches
                "match_values": ["255.255.255.255/32"],
            }
        ],
    }


def waf_policy(
    name: str, admission: AdmissionPolicy, placement: Placement
) -> azure_native.network.WebApplicationFirewallPolicy:
    return azure_native.network.WebApplicationFirewallPolicy(
        f"{name}-waf",
        resource_group_name=placement.resource_group.name,
        policy_settings={
            "state": "Enabled",
            "mode": "Prevention",
            "request_body_check": False,
            "request_body_enforcement": True,
            "max_request_body_size_in_kb": MAX_REQUEST_BODY_KB,
        },
        managed_rules={"managed_rule_sets": [{"rule_set_type": "OWASP", "rule_set_version": "3.2"}]},
        custom_rules=[rate_limit_rule(admission.per_client_rate, admission.rate_window_seconds)],
        tags=placement.tags,
        opts=placement.opts,
    )


@dataclass(frozen=True)
class Gateway:
    gateway: azure_native.network.ApplicationGateway
    endpoint: pulumi.Output[str]  # https://<the gateway's public address>


def application_gateway(
    name: str,
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    network: ServingNetwork,
    identities: ServingIdentities,
    waf: azure_native.network.WebApplicationFirewallPolicy,
    placement: Placement,
) -> Gateway:
    """The gateway and its public address (the endpoint); it waits for its identity's certificate grant to
    propagate."""
    lb = serving.load_balancer
    gw = gateway_id(placement.subscription_id, placement.resource_group_name, gateway_name(name))
    address = azure_native.network.PublicIPAddress(
        f"{name}-gateway-ip",
        resource_group_name=placement.resource_group.name,
        sku={"name": "Standard", "tier": "Regional"},  # v2 gateways take Standard static addresses only
        public_ip_allocation_method="Static",
        public_ip_address_version="IPv4",
        tags=placement.tags,
        opts=placement.opts,
    )
    interval = plan.health_check_interval_seconds
    gateway = azure_native.network.ApplicationGateway(
        f"{name}-gateway",
        application_gateway_name=gateway_name(name),
        resource_group_name=placement.resource_group.name,
        sku={"name": "WAF_v2", "tier": "WAF_v2"},
        autoscale_configuration={
            "min_capacity": 1,
            "max_capacity": min(WAF_V2_MAX_INSTANCES, max(2, serving.replicas.max)),
        },
        identity={"type": "UserAssigned", "user_assigned_identities": [identities.gateway.id]},
        gateway_ip_configurations=[{"name": "gateway", "subnet": {"id": network.gateway_subnet.id}}],
        frontend_ip_configurations=[{"name": FRONTEND, "public_ip_address": {"id": address.id}}],
        frontend_ports=[{"name": PORT, "port": 443}],
        ssl_certificates=[{"name": CERTIFICATE, "key_vault_secret_id": certificate_secret_uri(lb.certificate)}],
        ssl_policy={"policy_type": "Predefined", "policy_name": TLS_POLICY},
        backend_address_pools=[{"name": POOL}],
        probes=[
            {
                "name": PROBE,
                "protocol": "Http",
                "host": "127.0.0.1",
                "path": lb.health_path,
                "port": lb.port,
                "interval": interval,
                "timeout": min(plan.health_check_timeout_seconds, interval),
                "unhealthy_threshold": 3,
                "match": {"status_codes": ["200-399"]},
            }
        ],
        backend_http_settings_collection=[
            {
                "name": SETTINGS,
                "port": lb.port,
                "protocol": "Http",
                "cookie_based_affinity": "Disabled",
                "request_timeout": plan.idle_timeout_seconds,
                "probe": sub_resource(gw, "probes", PROBE),
                # In-flight requests finish on a replica leaving the pool (scale-in, standby return).
                "connection_draining": {
                    "enabled": True,
                    "drain_timeout_in_sec": max(1, min(plan.deregistration_delay_seconds, 3600)),
                },
            }
        ],
        http_listeners=[
            {
                "name": LISTENER,
                "protocol": "Https",
                "frontend_ip_configuration": sub_resource(gw, "frontendIPConfigurations", FRONTEND),
                "frontend_port": sub_resource(gw, "frontendPorts", PORT),
                "ssl_certificate": sub_resource(gw, "sslCertificates", CERTIFICATE),
            }
        ],
        request_routing_rules=[
            {
                "name": "replicas",
                "rule_type": "Basic",
                "priority": 100,
                "http_listener": sub_resource(gw, "httpListeners", LISTENER),
                "backend_address_pool": sub_resource(gw, "backendAddressPools", POOL),
                "backend_http_settings": sub_resource(gw, "backendHttpSettingsCollection", SETTINGS),
            }
        ],
        firewall_policy={"id": waf.id},
        enable_http2=True,
        tags=placement.tags,
        # The gateway reads the certificate at creation: its identity's grant comes first, propagated.
        opts=pulumi.ResourceOptions.merge(placement.opts, pulumi.ResourceOptions(depends_on=identities.gateway_ready)),
    )
    return Gateway(gateway, address.ip_address.apply(lambda ip: f"https://{ip}"))


def backend_pool_id(name: str, placement: Placement) -> str:
    gw = gateway_id(placement.subscription_id, placement.resource_group_name, gateway_name(name))
    return sub_resource(gw, "backendAddressPools", POOL)["id"]


# Access and firewall logs kept this long, then deleted by the account's lifecycle policy (AWS's logs bucket
# keeps its access logs the same way); diagnostic settings' own retention is deprecated (azure-monitor docs).
ACCESS_LOG_DAYS = 90
GATEWAY_LOG_CATEGORIES = ("ApplicationGatewayAccessLog", "ApplicationGatewayFirewallLog")


def logs_account_name(stack: str, subscription_id: str) -> str:
    return names.logs_account_name(stack, subscription_id)


def access_logs(
    name: str,
    lb: LoadBalancerSpec,
    gateway: azure_native.network.ApplicationGateway,
    placement: Placement,
) -> azure_native.storage.StorageAccount | None:
    """serving.loadBalancer.accessLogs: the gateway's access and WAF logs in a storage account of the stack that
    is closed to the internet (Azure Monitor writes as a trusted service), no shared keys, TLS 1.2; protected
    and retained like the other stores of logs."""
    if not lb.access_logs:
        return None
    keep = pulumi.ResourceOptions.merge(placement.opts, pulumi.ResourceOptions(protect=True, retain_on_delete=True))
    account = azure_native.storage.StorageAccount(
        f"{name}-logs",
        account_name=logs_account_name(name, placement.subscription_id),
        resource_group_name=placement.resource_group.name,
        kind="StorageV2",
        sku={"name": "Standard_LRS"},
        access_tier="Hot",
        allow_blob_public_access=False,
        allow_shared_key_access=False,
        default_to_o_auth_authentication=True,
        enable_https_traffic_only=True,
        minimum_tls_version="TLS1_2",
        public_network_access="Enabled",
        network_rule_set={"default_action": "Deny", "bypass": "AzureServices"},
        tags=placement.tags,
        opts=keep,
    )
    azure_native.storage.ManagementPolicy(
        f"{name}-logs",
        resource_group_name=placement.resource_group.name,
        account_name=account.name,
        management_policy_name="default",
        policy={
            "rules": [
                {
                    "name": "expire-access-logs",
                    "type": "Lifecycle",
                    "enabled": True,
                    "definition": {
                        "filters": {"blob_types": ["appendBlob", "blockBlob"]},
                        "actions": {"base_blob": {"delete": {"days_after_modification_greater_than": ACCESS_LOG_DAYS}}},
                    },
                }
            ]
        },
        opts=keep,
    )
    azure_native.monitor.DiagnosticSetting(
        f"{name}-gateway-logs",
        name="accelstack-access-logs",
        resource_uri=gateway.id,
        storage_account_id=account.id,
        logs=[{"category": category, "enabled": True} for category in GATEWAY_LOG_CATEGORIES],
        opts=placement.opts,
    )
    return account
