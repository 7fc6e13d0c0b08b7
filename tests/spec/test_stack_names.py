"""Names derived from the stack name are valid on every cloud, or the stack name is refused at validate.

Each shipped stack is loaded under hostile stack names (uppercase, 80 characters, underscores, dots, a leading
digit, 'goog-', 'xn--', 'sthree-', 'internal-', runs of hyphens, unicode). Either `validate` refuses the name
with a problem at `stack` that names it, or the program is run with mocks and every physical name it registers
(an explicit name input, or the Pulumi auto-name: the logical name and a random suffix) satisfies its
service's rule. The rules below are written from the clouds' documentation, independently of
`accelstack.clouds.*.names`, so a wrong rule there cannot hide a wrong name here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from accelstack.clouds.naming import AUTONAME_SUFFIX, NameRule, fitted
from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.examples import example_files
from accelstack.spec import parse_spec
from accelstack.spec.landing import is_landing, parse_landing
from accelstack.spec.loader import read_stack_file
from accelstack.spec.problems import SpecError

ROOT = Path(__file__).resolve().parents[2]
STACK_FILES = example_files(ROOT / "stacks", landing=True)
HOSTILE = (
    "Prod-Training",  # uppercase
    "x" * 80,
    "team_a",
    "team.a",
    "ñandu",
    "9lab",  # a leading digit
    "goog-lab",
    "xn--lab",
    "sthree-lab",
    "internal-lab",
    "team--a-",  # consecutive hyphens, a trailing one
    "a" * 40,  # the longest the spec's pattern takes
)


@dataclass(frozen=True)
class Rule:
    pattern: str
    max_length: int
    min_length: int = 1
    not_prefixes: tuple[str, ...] = ()
    not_words: tuple[str, ...] = ()
    no_double_hyphen: bool = False

    def refuses(self, name: str) -> str | None:
        if not self.min_length <= len(name) <= self.max_length:
            return f"length {len(name)} not in {self.min_length}..{self.max_length}"
        if not re.fullmatch(self.pattern, name):
            return f"does not match {self.pattern}"
        if any(name.lower().startswith(p) for p in self.not_prefixes):
            return f"reserved prefix (one of {self.not_prefixes})"
        if any(w in name.lower() for w in self.not_words):
            return f"reserved word (one of {self.not_words})"
        if self.no_double_hyphen and "--" in name:
            return "consecutive hyphens"
        return None


# docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html
S3 = Rule(r"[a-z0-9][a-z0-9.-]*[a-z0-9]", 63, 3, ("xn--", "sthree-", "amzn-s3-demo-"))
# Elastic Load Balancing API: CreateLoadBalancer / CreateTargetGroup Name
ELB = Rule(r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?", 32)
# cloud.google.com/compute/docs/naming-resources (RFC 1035)
RFC1035 = Rule(r"[a-z]([-a-z0-9]*[a-z0-9])?", 63)
# learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules
AZURE_NETWORK = Rule(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9_]", 80)
AZURE = {
    "keyvault:Vault": ("vaultName", Rule(r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]", 24, 3, no_double_hyphen=True)),
    "storage:StorageAccount": ("accountName", Rule(r"[a-z0-9]+", 24, 3)),
    "servicebus:Namespace": ("namespaceName", Rule(r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]", 50, 6)),
    "network:VirtualNetwork": ("virtualNetworkName", Rule(AZURE_NETWORK.pattern, 64, 2)),
    "network:NetworkSecurityGroup": ("networkSecurityGroupName", AZURE_NETWORK),
    "network:ApplicationGateway": ("applicationGatewayName", AZURE_NETWORK),
    "compute:VirtualMachineScaleSet": ("vmScaleSetName", Rule(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9_]", 64)),
    "compute:VirtualMachine": ("vmName", Rule(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9_]", 64)),
    "storagecache:AmlFilesystem": ("amlFilesystemName", Rule(r"[0-9A-Za-z][-0-9A-Za-z_]{0,78}[0-9A-Za-z]", 80, 2)),
    "standbypool:StandbyVirtualMachinePool": ("standbyVirtualMachinePoolName", Rule(r"[A-Za-z0-9-]+", 24, 3)),
    "resources:ResourceGroup": ("resourceGroupName", Rule(r"[\w().-]*[\w()-]", 90)),
    "machinelearningservices:Workspace": ("workspaceName", Rule(r"[A-Za-z0-9][A-Za-z0-9_-]*", 33, 3)),
    "managedidentity:UserAssignedIdentity": ("resourceName", Rule(r"[A-Za-z0-9][A-Za-z0-9_-]*", 128, 3)),
}
AWS = {
    "s3/bucket:Bucket": ("bucket", S3),
    "lb/loadBalancer:LoadBalancer": ("name", Rule(ELB.pattern, 32, not_prefixes=("internal-",))),
    "lb/targetGroup:TargetGroup": ("name", ELB),
    "iam/role:Role": ("name", Rule(r"[\w+=,.@-]+", 64)),  # IAM CreateRole RoleName
    "sqs/queue:Queue": ("name", Rule(r"[A-Za-z0-9_-]+", 80)),  # SQS queue name
}
GCP = {
    "serviceaccount/account:Account": ("accountId", Rule(RFC1035.pattern, 30, 6)),  # IAM: 6-30, RFC 1035
    "pubsub/topic:Topic": ("name", Rule(r"[A-Za-z][A-Za-z0-9._~+%-]*", 255, 3, ("goog",))),  # Pub/Sub names
    "pubsub/subscription:Subscription": ("name", Rule(r"[A-Za-z][A-Za-z0-9._~+%-]*", 255, 3, ("goog",))),
    "lustre/instance:Instance": ("instanceId", RFC1035),
    "secretmanager/secret:Secret": ("secretId", Rule(r"[A-Za-z0-9_-]+", 255)),
    "kms/keyRing:KeyRing": ("name", Rule(r"[A-Za-z0-9_-]+", 63)),
    "storage/bucket:Bucket": ("name", Rule(r"[a-z0-9][a-z0-9._-]*[a-z0-9]", 63, 3, ("goog",), ("google",))),
}
GCP_NOT_NAMED = {"compute/instanceTemplate:InstanceTemplate"}  # named by namePrefix, checked below


def rules_for(type_token: str) -> tuple[str, Rule] | None:
    """(the name property, its rule) for a resource type whose name a stack's name reaches; None otherwise."""
    package, _, rest = type_token.partition(":")
    table = {"aws": AWS, "azure-native": AZURE, "gcp": GCP}.get(package, {})
    if rest in table:
        return table[rest]
    if package == "gcp" and rest.startswith("compute/") and rest not in GCP_NOT_NAMED:
        return "name", RFC1035
    return None


def physical_names(stack: str, stack_file: Path) -> list[tuple[str, str, Rule]]:
    """(type, name as the cloud receives it, rule) for every registered resource whose name is checked here."""
    captured = capture(ROOT / "__main__.py", config_for_pulumi(read_stack_file(stack_file)), stack=stack)
    found = []
    for resource in captured.resources:
        checked = rules_for(resource.type)
        if checked is not None:
            prop, rule = checked
            given = resource.inputs.get(prop)
            name = given if isinstance(given, str) else resource.name + AUTONAME_SUFFIX
            found.append((resource.type, name, rule))
        for prop in ("baseInstanceName",):  # the group appends "-" and 4 characters: 58 at most
            if isinstance(resource.inputs.get(prop), str):
                found.append((resource.type, resource.inputs[prop], Rule(RFC1035.pattern, 58)))
        if isinstance(resource.inputs.get("namePrefix"), str):  # google provider: at most 37, then a unique suffix
            found.append((resource.type, resource.inputs["namePrefix"] + "a" * 26, RFC1035))
        if isinstance(resource.inputs.get("computerName"), str):  # the Azure VM's hostname: 64 on Linux
            found.append(
                (resource.type, resource.inputs["computerName"], Rule(r"[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]", 64))
            )
    return found


def stack_id(path: Path) -> str:
    return path.name[len("Pulumi.") : -len(".yaml")]


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=stack_id)
def test_hostile_stack_names_are_refused_or_give_valid_names(stack_file: Path) -> None:
    raw = read_stack_file(stack_file)
    accepted = []
    for stack in HOSTILE:
        try:
            # A landing stack's names come from its stack name too (groups, folders, subscriptions' tags).
            (parse_landing if is_landing(raw) else parse_spec)(raw, stack)
        except SpecError as error:
            at_stack = [p for p in error.problems if p.path == "stack"]
            assert at_stack, f"{stack!r} refused, but not at `stack`: {error.problems}"
            assert all(stack[:40] in p.message for p in at_stack), at_stack  # long values are shown clipped
            continue
        accepted.append(stack)
    # Names the spec's grammar refuses never reach a cloud.
    assert not {"Prod-Training", "x" * 80, "team_a", "team.a", "ñandu"} & set(accepted)
    for stack in accepted:
        bad = [
            f"{type_token}: {name!r} {problem}"
            for type_token, name, rule in physical_names(stack, stack_file)
            if (problem := rule.refuses(name)) is not None
        ]
        assert not bad, f"stack {stack!r} validates, but deploys names its services refuse:\n" + "\n".join(bad)


def test_the_shipped_stacks_names_are_checked_at_all() -> None:
    """The walk above sees the names it claims to check (a type-table typo would let everything pass)."""
    seen = {
        type_token.split(":")[1]
        for stack_file in STACK_FILES
        if stack_id(stack_file) in ("aws-serving", "azure-serving", "azure-training", "gcp-serving")
        for type_token, _, _ in physical_names(stack_id(stack_file), stack_file)
    }
    assert {
        "s3/bucket",
        "lb/targetGroup",
        "keyvault",
        "servicebus",
        "storage",
        "compute/network",
        "pubsub/topic",
    } <= seen


@pytest.mark.parametrize("name", ["Team_A.B", "9lab--x-", "goog-x" * 10, "xn--a", "ab"])
@pytest.mark.parametrize(
    "rule",
    [
        NameRule("Key Vault", r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]", 24, 3, no_consecutive_hyphens=True),
        NameRule("storage account", r"[a-z0-9]+", 24, 3),
        NameRule("bucket", S3.pattern, 63, 3, forbidden_prefixes=("xn--", "goog"), forbidden_words=("google",)),
        NameRule("RFC 1035", RFC1035.pattern, 30, 6),
    ],
    ids=lambda rule: rule.service,
)
def test_fitted_names_satisfy_their_rule_and_keep_valid_ones(name: str, rule: NameRule) -> None:
    result = fitted(name, rule)
    assert rule.problem(result) is None, (name, result)
    assert fitted(result, rule) == result  # a valid name is kept: no replacement on upgrade
    assert fitted(name, rule) == result  # stable


def test_the_shipped_stacks_keep_their_names() -> None:
    """Names are derived in one place per cloud now; the shipped stacks' are those they always had (the golden
    exports pin the rest)."""
    from accelstack.clouds.azure import names as azure
    from accelstack.clouds.gcp import names as gcp

    assert azure.vault_name("azure-training", "3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c").endswith("-kv")
    assert gcp.resource_id("gcp-training", "head", 30) == "gcp-training-head"
    assert gcp.node_template_prefix("gcp-training") == "gcp-training-node-"
