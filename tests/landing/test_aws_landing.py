"""The AWS landing stack: its spec, the planner's quota sizing, the resources under mocks, and a workload stack
wired to it through a stack reference."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest

from accelstack.clouds import registry
from accelstack.components.aws.mocks import STACK_REFERENCE, AwsMocks
from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.examples import example_file
from accelstack.planner.landing_plan import landing_problems, plan_landing, shortfalls
from accelstack.program import main
from accelstack.spec import SpecError, parse_spec
from accelstack.spec.landing import parse_landing, workload_specs
from accelstack.spec.loader import read_stack_file

CATALOG = registry.get("aws").catalog
ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
LANDING_FILE = STACKS / "Pulumi.aws-landing.yaml"


def landing_raw() -> dict[str, Any]:
    return read_stack_file(LANDING_FILE)


def landed(raw: dict[str, Any] | None = None) -> Capture:
    raw = raw or landing_raw()
    config = {**config_for_pulumi(raw), "aws:region": "us-east-1"}
    return capture(main, config, stack="aws-landing")


def of_type(result: Capture, token: str) -> list[Any]:
    return [r for r in result.resources if r.type == token]


@pytest.fixture(scope="module", autouse=True)
def in_project(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The program reads the listed workload stacks from stacks/ relative to the project dir, as under Pulumi."""
    patch = pytest.MonkeyPatch()
    patch.chdir(ROOT)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def landing() -> Capture:
    return landed()


def test_sizes_each_sides_quota_from_the_listed_stacks_node_counts() -> None:
    spec = parse_landing(landing_raw(), "aws-landing")
    plan = plan_landing(spec, workload_specs(spec, STACKS), CATALOG)
    needs = {(n.side, n.quota): n.amount for n in plan.needs}
    # 4 x p5.48xlarge (192 vCPUs) on demand; the serving stack at replicas.max of its instance's vCPUs.
    serving = parse_spec(read_stack_file(example_file("aws-serving", STACKS)), "aws-serving")
    from accelstack.clouds.aws.catalog import ACCELERATED_INSTANCES

    replicas = serving.serving.replicas  # type: ignore[union-attr]
    assert needs[("training", "Running On-Demand P instances")] == 4 * 192
    assert needs[("serving", "Running On-Demand G and VT instances")] == (
        replicas.max * ACCELERATED_INSTANCES[replicas.instance_type].vcpus
    )
    assert all(n.side == "training" for n in plan.needs if "P instances" in n.quota)
    # Serving runs g6e: the guardrail never denies a family a listed serving stack runs; p5 (training's) it does.
    assert "p5" in plan.training_families
    assert replicas.instance_type.split(".")[0] not in plan.training_families


def test_creates_ous_accounts_and_attaches_every_guardrail_where_it_must(landing: Capture) -> None:
    ous = {r.name: r for r in of_type(landing, "aws:organizations/organizationalUnit:OrganizationalUnit")}
    assert {r.inputs["parentId"] for r in ous.values()} == {"r-a1b2"}
    accounts = of_type(landing, "aws:organizations/account:Account")
    assert len(accounts) == 2
    for account in accounts:
        assert account.inputs["roleName"] == "accelstack-deploy"
        assert account.inputs["closeOnDeletion"] is False
        assert account.protect
    policies = {r.name: r for r in of_type(landing, "aws:organizations/policy:Policy")}
    attachments = of_type(landing, "aws:organizations/policyAttachment:PolicyAttachment")
    attached = {(a.name.rsplit("-", 1)[0], a.name.rsplit("-", 1)[1]) for a in attachments}
    assert {("aws-landing-region", "training"), ("aws-landing-region", "serving")} <= attached
    assert ("aws-landing-serving-guardrails", "serving") in attached
    assert ("aws-landing-training-guardrails", "training") in attached
    region = json.loads(policies["aws-landing-region"].inputs["content"])["Statement"][0]
    assert region["Condition"]["StringNotEquals"]["aws:RequestedRegion"] == ["us-east-1", "us-west-2"]
    assert "iam:*" in region["NotAction"] and "ec2:RunInstances" not in region["NotAction"]
    assert all(p.inputs["type"] == "SERVICE_CONTROL_POLICY" for p in policies.values())
    assert all(len(p.inputs["content"]) <= 5120 for p in policies.values() if isinstance(p.inputs["content"], str))


def test_serving_guardrail_denies_training_families_fsx_and_placement_groups(landing: Capture) -> None:
    policy = next(
        r for r in of_type(landing, "aws:organizations/policy:Policy") if r.name.endswith("serving-guardrails")
    )
    statements = {s["Sid"]: s for s in json.loads(policy.inputs["content"])["Statement"]}
    assert "p5.*" in statements["DenyTrainingInstanceFamilies"]["Condition"]["StringLike"]["ec2:InstanceType"]
    assert {"fsx:CreateFileSystem", "ec2:CreatePlacementGroup"} <= set(
        statements["DenyTrainingStorageAndPlacement"]["Action"]
    )
    assert "cloudtrail:StopLogging" in statements["DenyAuditAndOrganizationEscape"]["Action"]
    assert "organizations:LeaveOrganization" in statements["DenyAuditAndOrganizationEscape"]["Action"]


def test_training_guardrail_denies_internet_facing_load_balancers(landing: Capture) -> None:
    policy = next(
        r for r in of_type(landing, "aws:organizations/policy:Policy") if r.name.endswith("training-guardrails")
    )
    statements = {s["Sid"]: s for s in json.loads(policy.inputs["content"])["Statement"]}
    scheme = statements["DenyInternetFacingLoadBalancers"]["Condition"]["StringEquals"]
    assert scheme == {"elasticloadbalancing:Scheme": "internet-facing"}


def test_each_side_is_kept_off_the_other_sides_account(landing: Capture) -> None:
    ids = {r.name.split("-")[2]: r.id for r in of_type(landing, "aws:organizations/account:Account")}
    apart = {r.name: r for r in of_type(landing, "aws:organizations/policy:Policy") if r.name.endswith("-apart")}
    for side, other in (("training", "serving"), ("serving", "training")):
        statements = {
            s["Sid"]: s for s in json.loads(apart[f"aws-landing-{side}-apart"].inputs["content"])["Statement"]
        }
        assert statements["DenyOtherSideResources"]["Condition"]["StringEquals"]["aws:ResourceAccount"] == ids[other]
        assert statements["DenyAssumingOtherSideRoles"]["Resource"] == f"arn:aws:iam::{ids[other]}:role/*"
    attachments = {r.name for r in of_type(landing, "aws:organizations/policyAttachment:PolicyAttachment")}
    assert {"aws-landing-training-apart-training", "aws-landing-serving-apart-serving"} <= attachments


def test_quota_requests_and_budgets_are_made_inside_each_member_account(landing: Capture) -> None:
    providers = {r.urn: r for r in landing.resources if r.type == "pulumi:providers:aws"}
    management = next(p for p in providers.values() if p.name == "aws-landing-aws")
    quotas = of_type(landing, "aws:servicequotas/serviceQuota:ServiceQuota")
    assert {(q.inputs["quotaCode"], q.inputs["value"]) for q in quotas} >= {("L-417A185B", 768.0)}
    for resource in [*quotas, *of_type(landing, "aws:budgets/budget:Budget")]:
        side = resource.name.split("-")[2]
        assert resource.provider.startswith(
            f"urn:pulumi:aws-landing::accelstack::accelstack:landing:Landing$pulumi:providers:aws::aws-landing-{side}-aws::"
        ), resource.name
    members = [r for r in landing.resources if r.type == "pulumi:providers:aws" and r.urn != management.urn]
    for member in members:
        assume = json.loads(member.inputs["assumeRoles"])[0]["roleArn"]
        assert assume.startswith("arn:aws:iam::") and assume.endswith(":role/accelstack-deploy")
    budgets = of_type(landing, "aws:budgets/budget:Budget")
    assert {b.inputs["limitAmount"] for b in budgets} == {"450000.00", "120000.00"}
    assert all(b.inputs["notifications"][0]["subscriberEmailAddresses"] == ["finops@acme.example"] for b in budgets)


def test_exports_what_the_workload_stacks_read(landing: Capture) -> None:
    for side in ("training", "serving"):
        assert {f"{side}AccountId", f"{side}DeployRoleArn", f"{side}GroupId"} <= set(landing.stack_outputs)
    assert landing.stack_outputs["quotaRequests"]


def test_a_stack_listed_on_the_wrong_side_is_refused_naming_the_list_item() -> None:
    raw = copy.deepcopy(landing_raw())
    raw["organization"]["serving"]["stacks"] = ["aws-training"]
    raw["organization"]["training"]["stacks"] = ["aws-serving"]
    spec = parse_landing(raw, "aws-landing")
    problems = landing_problems(spec, workload_specs(spec, STACKS))
    assert {p.path for p in problems} == {"organization.training.stacks.0", "organization.serving.stacks.0"}


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda r: r["organization"].update(parentId="root"), "organization.parentId"),
        (lambda r: r["organization"]["serving"]["account"].update(email="aws+training@acme.example"), "organization"),
        (lambda r: r["organization"].update(allowedRegions=["eu-west-1"]), "account.region"),
        (lambda r: r.update(cloud="vultr"), "cloud"),
        (lambda r: r["organization"]["training"].update(stacks=["no-such-stack"]), "organization.training.stacks.0"),
    ],
)
def test_bad_landing_config_names_its_path(edit: Any, path: str) -> None:
    raw = copy.deepcopy(landing_raw())
    edit(raw)
    with pytest.raises(SpecError) as caught:
        spec = parse_landing(raw, "aws-landing")
        workload_specs(spec, STACKS)
    assert path in {p.path for p in caught.value.problems}


def test_workload_parse_refuses_a_landing_stack_with_a_clear_message() -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(landing_raw(), "aws-landing")
    assert caught.value.problems[0].path == "workload"


def wired_training_raw() -> dict[str, Any]:
    raw = copy.deepcopy(read_stack_file(example_file("aws-training", STACKS)))
    raw["account"].pop("deployRole")
    raw["landing"] = {"stack": "acme/accelstack/aws-landing"}
    return raw


class LandingReferenceMocks(AwsMocks):
    """AWS's mocks, with a landing stack whose outputs differ from anything in the workload's stack file."""

    def __init__(self) -> None:
        super().__init__(account_id="111111111111")
        self.referenced: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        resource_id, outputs = super().new_resource(args)
        if args.typ == STACK_REFERENCE:
            self.referenced.append(str(args.inputs.get("name")))
            assert outputs["outputs"]["trainingAccountId"] == "111111111111"  # the shared mocks answer it too
            outputs["outputs"]["trainingDeployRoleArn"] = "arn:aws:iam::111111111111:role/from-landing"
        return resource_id, outputs


def test_a_wired_workload_stack_takes_its_account_and_role_from_the_landing_stack() -> None:
    raw = wired_training_raw()
    mocks = LandingReferenceMocks()
    result = capture(main, {**config_for_pulumi(raw), "aws:region": "us-east-1"}, stack="aws-training", mocks=mocks)
    assert mocks.referenced == ["acme/accelstack/aws-landing"]
    provider = next(r for r in result.resources if r.type == "pulumi:providers:aws" and r.name == "aws-training-aws")
    assert json.loads(provider.inputs["assumeRoles"])[0]["roleArn"] == "arn:aws:iam::111111111111:role/from-landing"
    assert json.loads(provider.inputs["allowedAccountIds"]) == ["111111111111"]


def test_a_wired_stack_may_not_also_name_a_deploy_role() -> None:
    raw = wired_training_raw()
    raw["account"]["deployRole"] = "arn:aws:iam::111111111111:role/by-hand"
    with pytest.raises(SpecError) as caught:
        parse_spec(raw, "aws-training")
    assert "deployRole" in str(caught.value)


def test_shortfalls_name_the_quota_a_stack_needs_beyond_the_request() -> None:
    spec = parse_landing(landing_raw(), "aws-landing")
    workloads = workload_specs(spec, STACKS)
    requested = plan_landing(spec, workloads, CATALOG).needs
    bigger = copy.deepcopy(read_stack_file(example_file("aws-training", STACKS)))
    bigger["training"]["nodes"]["count"] = 8
    more = {**workloads, "aws-training": parse_spec(bigger, "aws-training")}
    short = shortfalls(requested, plan_landing(spec, more, CATALOG).needs)
    assert [(need.quota, need.amount, asked) for need, asked in short] == [("Running On-Demand P instances", 1536, 768)]
