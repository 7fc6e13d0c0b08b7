"""The real program on the azure-serving example stack, captured under mocks: what an operator relies on is
scaling on the request queue's active messages per instance (never CPU, out and in), an HTTPS-only gateway with
a WAF rate limit per client address, dead-lettering, a standby pool sized by the planner, the replicas' least
roles, and no public IPs on replicas."""

from __future__ import annotations

import base64
import re
from functools import cache
from pathlib import Path

import pytest
import yaml
from propagation_waits import granted, wait_seconds, waits_of

from accelstack.clouds import registry
from accelstack.clouds.azure import catalog
from accelstack.components.azure.serving.identity import (
    SERVICE_BUS_DATA_RECEIVER,
    SERVICE_BUS_DATA_SENDER,
    STANDBY_POOL_ROLES,
    STORAGE_BLOB_DATA_READER,
    models_read_condition,
)
from accelstack.components.azure.serving.network import serving_subnets
from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file

REPO = Path(__file__).resolve().parents[3]
MAIN = REPO / "__main__.py"
EXAMPLE = REPO / "stacks" / "Pulumi.azure-serving.yaml"
STACK = "azure-serving"
SUBSCRIPTION = "7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098"
TRAINING_SUBSCRIPTION = "3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c"


@cache
def run(*overrides: str) -> Capture:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    return capture(MAIN, config_for_pulumi(raw), stack=STACK)


def spec(*overrides: str):
    return parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), STACK)


def plan(*overrides: str):
    return plan_serving(spec(*overrides).serving, registry.get("azure").catalog)


def one(cap: Capture, type_token: str, suffix: str = "") -> Registration:
    found = [r for r in cap.by_type(type_token) if r.name.endswith(suffix)]
    assert len(found) == 1, [r.name for r in cap.by_type(type_token)]
    return found[0]


def problems(*overrides: str) -> list[str]:
    """`path: message` of every error parsing the example with `overrides` (none: [])."""
    try:
        parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), STACK)
    except SpecError as error:
        return [f"{p.path}: {p.message}" for p in error.problems]
    return []


def test_autoscale_holds_the_planners_backlog_per_instance_out_and_in_never_cpu():
    cap = run()
    setting = one(cap, "azure-native:monitor:AutoscaleSetting")
    group = one(cap, "azure-native:compute:VirtualMachineScaleSet")
    namespace = one(cap, "azure-native:servicebus:Namespace")
    assert setting.inputs["targetResourceUri"] == group.outputs["id"] and setting.inputs["enabled"] is True
    (profile,) = setting.inputs["profiles"]
    assert profile["capacity"] == {"minimum": "1", "maximum": "8", "default": "1"}
    directions = {r["scaleAction"]["direction"]: r for r in profile["rules"]}
    assert set(directions) == {"Increase", "Decrease"}
    target = plan().backlog_per_instance_target
    for rule in profile["rules"]:
        trigger = rule["metricTrigger"]
        assert trigger["metricName"] == "ActiveMessages" and trigger["dividePerInstance"] is True
        assert trigger["metricResourceUri"] == namespace.outputs["id"]
        assert trigger["dimensions"] == [{"dimensionName": "EntityName", "operator": "Equals", "values": ["requests"]}]
    assert directions["Increase"]["metricTrigger"]["threshold"] == target
    assert directions["Decrease"]["metricTrigger"]["threshold"] == target / 2
    # Scale-out waits one cold start before acting again.
    minutes = -(-plan().cold_start_seconds // 60)
    assert directions["Increase"]["scaleAction"]["cooldown"] == f"PT{minutes}M"


def test_gateway_is_https_only_with_tls_1_2_and_the_key_vault_certificate():
    gateway = one(run(), "azure-native:network:ApplicationGateway")
    inputs = gateway.inputs
    assert inputs["sku"] == {"name": "WAF_v2", "tier": "WAF_v2"}
    assert [listener["protocol"] for listener in inputs["httpListeners"]] == ["Https"]
    assert [port["port"] for port in inputs["frontendPorts"]] == [443]
    assert inputs["sslPolicy"] == {"policyType": "Predefined", "policyName": "AppGwSslPolicy20220101S"}
    (certificate,) = inputs["sslCertificates"]
    assert certificate["keyVaultSecretId"] == "https://acme-serve-certs.vault.azure.net/secrets/inference-acme-example"
    (probe,) = inputs["probes"]
    assert (probe["path"], probe["port"], probe["protocol"]) == ("/health", 8000, "Http")


def test_the_gateway_reads_its_certificate_only_after_its_identity_is_granted():
    """Not just after the grant exists: after Key Vault may have applied it, or the listener starts disabled."""
    cap = run()
    gateway = one(cap, "azure-native:network:ApplicationGateway")
    grant = one(cap, "azure-native:authorization:RoleAssignment", "-gateway-certificate")
    assert [g.urn for g in granted(cap, gateway)] == [grant.urn]
    assert grant.urn not in gateway.dependencies  # the bare grant would only order the calls
    assert [wait_seconds(w) for w in waits_of(cap, gateway)] == [catalog.KEY_VAULT_RBAC_PROPAGATION_SECONDS]
    assert grant.inputs["scope"].endswith("/vaults/acme-serve-certs/secrets/inference-acme-example")


@pytest.mark.parametrize(("window", "duration"), [(60, "OneMin"), (300, "FiveMins")])
def test_waf_blocks_each_client_address_over_the_admission_rate(window, duration):
    cap = run("serving.admission.perClientRate=1200", f"serving.admission.rateWindowSeconds={window}")
    waf = one(cap, "azure-native:network:WebApplicationFirewallPolicy")
    assert waf.inputs["policySettings"]["mode"] == "Prevention"
    (rule,) = waf.inputs["customRules"]
    assert (rule["ruleType"], rule["action"], rule["rateLimitThreshold"]) == ("RateLimitRule", "Block", 1200)
    assert rule["rateLimitDuration"] == duration
    assert rule["groupByUserSession"] == [{"groupByVariables": [{"variableName": "ClientAddr"}]}]
    gateway = one(cap, "azure-native:network:ApplicationGateway")
    assert gateway.inputs["firewallPolicy"] == {"id": waf.outputs["id"]}


def test_a_rate_window_azure_cannot_count_is_a_spec_error_at_its_path():
    assert any(p.startswith("serving.admission.rateWindowSeconds: 120 s") for p in problems(
        "serving.admission.rateWindowSeconds=120"))  # fmt: skip


def test_queue_dead_letters_after_max_receive_count_and_on_expiry():
    cap = run("serving.admission.maxReceiveCount=7", "serving.admission.ttlSeconds=900")
    requests = one(cap, "azure-native:servicebus:Queue", "-requests")
    assert requests.inputs["maxDeliveryCount"] == 7
    assert requests.inputs["deadLetteringOnMessageExpiration"] is True
    assert requests.inputs["defaultMessageTimeToLive"] == "PT900S"
    lock = requests.inputs["lockDuration"]
    assert lock.startswith("PT") and 5 <= int(lock[2:-1]) <= 300
    namespace = one(cap, "azure-native:servicebus:Namespace")
    assert namespace.inputs["disableLocalAuth"] is True and namespace.inputs["minimumTlsVersion"] == "1.2"
    assert cap.stack_outputs["deadLetterQueue"].endswith("/queues/requests/$DeadLetterQueue")


def test_replicas_have_no_public_ip_sit_in_the_gateway_pool_and_keep_their_scaled_capacity():
    cap = run()
    group = one(cap, "azure-native:compute:VirtualMachineScaleSet")
    assert group.inputs["orchestrationMode"] == "Flexible"
    assert group.inputs["virtualMachineProfile"]["priority"] == "Regular"
    (nic,) = group.inputs["virtualMachineProfile"]["networkProfile"]["networkInterfaceConfigurations"]
    (ip,) = nic["ipConfigurations"]
    assert "publicIPAddressConfiguration" not in ip
    assert ip["applicationGatewayBackendAddressPools"][0]["id"].endswith(
        "/applicationGateways/azure-serving-gateway/backendAddressPools/replicas"
    )
    assert "sku.capacity" in group.ignore_changes


def test_standby_pool_is_the_planners_warm_pool_after_its_provider_is_granted():
    cap = run()
    pool = one(cap, "azure-native:standbypool:StandbyVirtualMachinePool")
    size = plan().warm_pool_size
    assert size > 0
    assert pool.inputs["elasticityProfile"] == {"maxReadyCapacity": size, "minReadyCapacity": size}
    assert pool.inputs["virtualMachineState"] == "Deallocated"
    grants = [r for r in cap.by_type("azure-native:authorization:RoleAssignment") if "-standby-" in r.name]
    assert {g.inputs["roleDefinitionId"].rsplit("/", 1)[1] for g in grants} == set(STANDBY_POOL_ROLES.values())
    assert {g.urn for g in granted(cap, pool)} == {g.urn for g in grants}
    assert [wait_seconds(w) for w in waits_of(cap, pool)] == [catalog.RBAC_PROPAGATION_SECONDS]
    assert cap.stack_outputs["warmPoolSize"] == size


@pytest.mark.parametrize("overrides", [(), ("serving.replicas.coldStartSeconds=2400",)])
def test_a_pooled_replica_counts_as_provisioned_only_once_it_has_prepared(overrides: tuple[str, ...]):
    """A standby pool deallocates a VM once it is provisioned, and azure-native's pool API has no post-provisioning
    delay (azure review M3): an extension holds provisioning until cloud-init is done and the server unit, whose
    start pulls the weights and the image, is active; its time budget covers the planned cold start."""
    group = one(run(*overrides), "azure-native:compute:VirtualMachineScaleSet")
    profile = group.inputs["virtualMachineProfile"]
    [extension] = profile["extensionProfile"]["extensions"]
    assert (extension["publisher"], extension["type"]) == ("Microsoft.Azure.Extensions", "CustomScript")
    command = extension["settings"]["commandToExecute"]
    assert "cloud-init status --wait" in command
    [unit] = re.findall(r"systemctl is-active --quiet (\S+?)'", command)
    cloud_config = yaml.safe_load(base64.b64decode(profile["osProfile"]["customData"]))
    started = [c for c in cloud_config["runcmd"] if isinstance(c, list) and c[:3] == ["systemctl", "enable", "--now"]]
    assert any(unit in c for c in started), "the unit the extension waits for is the one runcmd starts"
    budget = re.fullmatch(r"PT(\d+)M", profile["extensionProfile"]["extensionsTimeBudget"])
    assert budget is not None and 15 <= int(budget.group(1)) <= 120
    assert int(budget.group(1)) * 60 >= plan(*overrides).cold_start_seconds


def test_no_standby_pool_when_the_warm_pool_is_zero():
    assert not run("serving.replicas.warmPool=0").by_type("azure-native:standbypool:StandbyVirtualMachinePool")


def test_replicas_receive_and_reply_on_their_queues_and_read_only_the_models_prefix_in_training():
    cap = run()
    grants = {r.name: r.inputs for r in cap.by_type("azure-native:authorization:RoleAssignment")}
    receive, reply = grants["azure-serving-id-replicas-receive"], grants["azure-serving-id-replicas-reply"]
    assert receive["roleDefinitionId"].endswith(SERVICE_BUS_DATA_RECEIVER)
    assert receive["scope"].endswith("/queues/requests")
    assert reply["roleDefinitionId"].endswith(SERVICE_BUS_DATA_SENDER) and reply["scope"].endswith("/queues/responses")
    models = grants["azure-serving-id-replicas-models"]
    assert models["scope"] == f"/subscriptions/{TRAINING_SUBSCRIPTION}"
    assert models["roleDefinitionId"].endswith(STORAGE_BLOB_DATA_READER)
    assert models["conditionVersion"] == "2.0"
    assert "StringEquals 'checkpoints'" in models["condition"]
    assert "storageAccounts:name] StringEquals 'acmetrainckpts'" in models["condition"]
    assert "StringStartsWith 'models/llama-3.1-8b-instruct/'" in models["condition"]


def test_the_models_condition_limits_reads_to_the_prefix_and_lists_to_the_container():
    condition = models_read_condition("https://acct.blob.core.windows.net/ckpt/models/m")
    assert condition is not None
    reads, listing = condition.split(") AND ((")
    assert "NOT SubOperationMatches{'Blob.List'}" in reads and "StringStartsWith 'models/m/'" in reads
    assert "SubOperationMatches{'Blob.List'}" in listing and "StringStartsWith" not in listing
    # The grant's scope is the training subscription: a container of the same name in another of its accounts
    # stays closed only because both clauses name the weights' account (azure review R5).
    account = "@Resource[Microsoft.Storage/storageAccounts:name] StringEquals 'acct'"
    assert account in reads and account in listing
    assert models_read_condition("gs://bucket/x") is None


def test_subnets_keep_a_dedicated_gateway_slash_24_and_fit_the_replicas():
    subnets = serving_subnets("10.50.0.0/16")
    assert (subnets.gateway, subnets.replicas) == ("10.50.0.0/24", "10.50.128.0/17")
    small = serving_subnets("10.50.0.0/23")
    assert (small.gateway, small.replicas) == ("10.50.0.0/24", "10.50.1.0/24")
    assert any(p.startswith("serving.network.vpcCidr") for p in problems("serving.network.vpcCidr=10.50.0.0/24"))


@pytest.mark.parametrize(
    ("override", "path"),
    [
        ("serving.loadBalancer.certificate=https://acme-serve-certs.vault.azure.net/secrets/x", "serving.loadBalancer.certificate"),
        (
            "serving.loadBalancer.certificate=/subscriptions/3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c/resourceGroups/rg/"
            "providers/Microsoft.KeyVault/vaults/other-vault/secrets/cert",
            "serving.loadBalancer.certificate",
        ),
        ("serving.replicas.capacity=spot", "serving.replicas.capacity"),
        ("serving.replicas.instanceType=Standard_NC24ads_A100", "serving.replicas.instanceType"),
        ("serving.replicas.min=0", "serving.replicas.min"),
        ("serving.replicas.imageId=ami-0123456789abcdef0", "serving.replicas.imageId"),
        ("serving.network={vpcId: vnet-1, subnetIds: [a], publicSubnetIds: [b]}", "serving.network.vpcId"),
        ("account.standbyPoolPrincipalId=null", "account.standbyPoolPrincipalId"),
    ],
)  # fmt: skip
def test_what_azure_would_reject_is_a_spec_error_at_its_path(override, path):
    found = problems(override)
    assert any(p.startswith(f"{path}:") for p in found), found


def test_without_a_standby_pool_the_principal_is_not_needed():
    assert problems("serving.replicas.warmPool=0", "account.standbyPoolPrincipalId=null") == []


def test_access_logs_go_to_a_protected_account_closed_to_the_internet():
    cap = run()
    account = one(cap, "azure-native:storage:StorageAccount")
    assert account.protect and account.retain_on_delete
    assert account.inputs["networkRuleSet"]["defaultAction"] == "Deny"
    assert account.inputs["allowSharedKeyAccess"] is False
    setting = one(cap, "azure-native:monitor:DiagnosticSetting")
    assert setting.inputs["storageAccountId"] == account.outputs["id"]
    assert not run("serving.loadBalancer.accessLogs=false").by_type("azure-native:storage:StorageAccount")


def adapters(count: int) -> str:
    uri = "https://acmetrainckpts.blob.core.windows.net/checkpoints/models/adapters"
    return "serving.model.adapters=[" + ", ".join(f"{{name: a{n}, uri: {uri}/a{n}}}" for n in range(count)) + "]"


def test_too_many_adapters_for_azures_custom_data_is_a_spec_error_and_a_few_are_fine():
    assert not [p for p in problems(adapters(10)) if p.startswith("serving.model.adapters")]
    (problem,) = [p for p in problems(adapters(200)) if p.startswith("serving.model.adapters")]
    assert "Azure accepts at most 65,535" in problem
