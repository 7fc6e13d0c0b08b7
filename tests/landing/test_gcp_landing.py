"""The GCP landing stack: its spec, the quota preferences the planner sizes, the resources under mocks, and a
workload stack wired to it through a stack reference."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pulumi
import pytest

from accelstack.clouds import registry
from accelstack.components.gcp.mocks import STACK_REFERENCE, GcpMocks
from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.examples import example_file
from accelstack.planner.landing_plan import plan_landing
from accelstack.program import main
from accelstack.spec import SpecError, parse_spec
from accelstack.spec.landing import parse_landing, workload_specs
from accelstack.spec.loader import read_stack_file
from accelstack.spec.models import ServingStack

CATALOG = registry.get("gcp").catalog
ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
LANDING_FILE = STACKS / "Pulumi.gcp-landing.yaml"


def landing_raw() -> dict[str, Any]:
    return read_stack_file(LANDING_FILE)


def landed(raw: dict[str, Any] | None = None) -> Capture:
    raw = raw or landing_raw()
    return capture(main, {**config_for_pulumi(raw), "gcp:region": "us-central1"}, stack="gcp-landing")


def of_type(result: Capture, token: str) -> list[Any]:
    return [r for r in result.resources if r.type == token]


@pytest.fixture(scope="module", autouse=True)
def in_project() -> Any:
    patch = pytest.MonkeyPatch()
    patch.chdir(ROOT)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def landing() -> Capture:
    return landed()


def test_sizes_each_projects_gpu_quota_from_the_listed_stacks() -> None:
    spec = parse_landing(landing_raw(), "gcp-landing")
    plan = plan_landing(spec, workload_specs(spec, STACKS), CATALOG)
    needs = {(n.side, n.quota, n.code): n.amount for n in plan.needs}
    # gcp-training: 4 spot a3-megagpu-8g (8 GPUs each); gcp-serving: replicas.max g2-standard-8 (1 L4 each).
    serving = parse_spec(read_stack_file(example_file("gcp-serving", STACKS)), "gcp-serving")
    assert isinstance(serving, ServingStack)
    assert (
        needs[("training", "PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS", "PREEMPTIBLE-GPUS-PER-GPU-FAMILY-per-project-region")]
        == 32
    )
    assert (
        needs[("serving", "NVIDIA_L4_GPUS", "GPUS-PER-GPU-FAMILY-per-project-region")] == serving.serving.replicas.max
    )


def test_folders_projects_and_their_guardrails(landing: Capture) -> None:
    folders = {f.name: f for f in of_type(landing, "gcp:organizations/folder:Folder")}
    assert {f.inputs["parent"] for f in folders.values()} == {"organizations/123456789012"}
    projects = {p.inputs["projectId"]: p for p in of_type(landing, "gcp:organizations/project:Project")}
    assert set(projects) == {"acme-train", "acme-serve"}
    for project in projects.values():
        assert project.inputs["autoCreateNetwork"] is False
        assert project.inputs["deletionPolicy"] == "PREVENT"
        assert project.inputs["billingAccount"] == "012345-6789AB-CDEF01"
    services = {(s.inputs["project"], s.inputs["service"]) for s in of_type(landing, "gcp:projects/service:Service")}
    assert ("acme-train", "compute.googleapis.com") in services and (
        "acme-serve",
        "cloudquotas.googleapis.com",
    ) in services
    policies = {
        (p.inputs["parent"], p.inputs["name"].rsplit("/", 1)[1]): p
        for p in of_type(landing, "gcp:orgpolicy/policy:Policy")
    }
    training, serving = (folders[f"gcp-landing-{side}"].outputs["name"] for side in ("training", "serving"))
    for folder in (training, serving):
        locations = policies[(folder, "gcp.resourceLocations")].inputs["spec"]["rules"][0]["values"]["allowedValues"]
        assert locations == ["in:us-central1-locations"]
        domains = policies[(folder, "iam.allowedPolicyMemberDomains")].inputs["spec"]["rules"][0]["values"]
        assert domains["allowedValues"] == ["C0abc1234"]
    assert (serving, "custom.accelstackServingNoTrainingMachines") in policies
    assert (training, "custom.accelstackServingNoTrainingMachines") not in policies
    constraints = {c.inputs["name"]: c for c in of_type(landing, "gcp:orgpolicy/customConstraint:CustomConstraint")}
    constraint = constraints["custom.accelstackServingNoTrainingMachines"]
    assert constraint.inputs["resourceTypes"] == ["compute.googleapis.com/Instance"]
    assert "resource.machineType.endsWith('/machineTypes/a3-megagpu-8g')" in constraint.inputs["condition"]
    assert "g2-standard-8" not in constraint.inputs["condition"]  # serving's own machine type stays allowed


def test_each_folder_refuses_grants_to_the_other_sides_principals(landing: Capture) -> None:
    """Issue 32: at the IAM API, an allow policy under a side's folder may not grant the other project's principals
    (service accounts by id and number, workload identity); training's leaves out only the artifact read role."""
    constraints = {c.inputs["name"]: c for c in of_type(landing, "gcp:orgpolicy/customConstraint:CustomConstraint")}
    policies = {p.inputs["name"].rsplit("/", 1)[1]: p for p in of_type(landing, "gcp:orgpolicy/policy:Policy")}
    for side, other, name in (
        ("training", "acme-serve", "custom.accelstackTrainingNoServingMembers"),
        ("serving", "acme-train", "custom.accelstackServingNoTrainingMembers"),
    ):
        constraint = constraints[name].inputs
        assert constraint["actionType"] == "DENY" and constraint["resourceTypes"] == ["iam.googleapis.com/AllowPolicy"]
        assert constraint["methodTypes"] == ["CREATE", "UPDATE"]
        condition = constraint["condition"]
        assert (
            f"'@{other}.iam.gserviceaccount.com'" in condition and f"'serviceAccount:{other}.svc.id.goog['" in condition
        )
        assert "-compute@" in condition and "workloadIdentityPools" not in condition  # the pools by project number
        assert len(condition) <= 1000  # the API's limit on a custom constraint's condition
        assert ("RoleNameMatches" in condition) == (side == "training")
        assert policies[name].inputs["spec"] == {"rules": [{"enforce": "TRUE"}]}


def test_quota_preferences_and_budgets(landing: Capture) -> None:
    preferences = of_type(landing, "gcp:cloudquota/sQuotaPreference:SQuotaPreference")
    by_parent = {p.inputs["parent"]: p for p in preferences}
    training = by_parent["projects/acme-train"]
    assert training.inputs["service"] == "compute.googleapis.com"
    assert training.inputs["quotaId"] == "PREEMPTIBLE-GPUS-PER-GPU-FAMILY-per-project-region"
    assert training.inputs["dimensions"] == {"region": "us-central1", "gpu_family": "NVIDIA_H100_MEGA"}
    assert training.inputs["quotaConfig"]["preferredValue"] == "32"
    budgets = {b.inputs["displayName"]: b for b in of_type(landing, "gcp:billing/budget:Budget")}
    assert budgets["accelstack-training"].inputs["amount"]["specifiedAmount"]["units"] == "300000"
    assert [r["thresholdPercent"] for r in budgets["accelstack-serving"].inputs["thresholdRules"]] == [0.8, 1.0]
    assert budgets["accelstack-serving"].inputs["budgetFilter"]["projects"][0].startswith("projects/")


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("parentId",), "r-a1b2", "gcp takes organizations/<number> or folders/<number>"),
        (("billingAccount",), None, "billingAccount"),
        (("allowedCustomerIds",), ["example.com"], "not a Workspace customer id"),
        (("training", "account", "name"), "Acme_Train", "a gcp project id"),
        (("parentId",), "folders/42", "organizationId"),
    ],
)
def test_bad_gcp_organization_config_names_the_path(path: tuple[str, ...], value: Any, message: str) -> None:
    raw = copy.deepcopy(landing_raw())
    target = raw["organization"]
    for key in path[:-1]:
        target = target[key]
    if value is None:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    with pytest.raises(SpecError) as error:
        parse_landing(raw, "gcp-landing")
    assert message in str(error.value)


class LandingReferenceMocks(GcpMocks):
    """GCP's mocks, with a landing stack whose output names a project no stack file names."""

    def __init__(self) -> None:
        super().__init__(project_id="acme-serve")
        self.referenced: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        resource_id, outputs = super().new_resource(args)
        if args.typ == STACK_REFERENCE:
            self.referenced.append(str(args.inputs.get("name")))
            assert outputs["outputs"]["servingAccountId"] == "acme-serve"  # the shared mocks answer it too
            outputs["outputs"]["servingAccountId"] = "from-landing"
        return resource_id, outputs


def test_a_wired_workload_stack_takes_its_project_from_the_landing_outputs() -> None:
    raw = copy.deepcopy(read_stack_file(example_file("gcp-serving", STACKS)))
    raw["landing"] = {"stack": "acme/accelstack/gcp-landing"}
    mocks = LandingReferenceMocks()
    result = capture(main, {**config_for_pulumi(raw), "gcp:region": "us-central1"}, stack="gcp-serving", mocks=mocks)
    assert mocks.referenced == ["acme/accelstack/gcp-landing"]
    provider = next(r for r in result.resources if r.type == "pulumi:providers:gcp" and r.name == "gcp-serving-gcp")
    assert provider.inputs["project"] == "from-landing"


def test_a_listed_stack_in_another_project_is_a_problem() -> None:
    from accelstack.planner.landing_plan import landing_problems

    raw = copy.deepcopy(landing_raw())
    raw["organization"]["serving"]["account"]["name"] = "acme-serve-two"
    spec = parse_landing(raw, "gcp-landing")
    problems = landing_problems(spec, workload_specs(spec, STACKS))
    assert [(p.path, "acme-serve-two" in p.message) for p in problems] == [("organization.serving.stacks.0", True)]


@pytest.mark.parametrize(("usd", "money"), [(300000, {"units": "300000"}), (0.5, {"units": "0", "nanos": 500000000}),
                                            (1234.56, {"units": "1234", "nanos": 560000000})])  # fmt: skip
def test_a_budgets_cents_reach_the_budget(usd: float, money: dict[str, Any]) -> None:
    """google.type.Money: whole units and nanos; a budget of 0.5 USD was sent as 0 (units alone)."""
    from accelstack.components.gcp.landing import budget_money

    assert budget_money(usd) == money


def test_a_fractional_budget_is_sent_with_its_cents() -> None:
    raw = landing_raw()
    organization = next(value for key, value in raw.items() if key.endswith("organization"))
    organization["serving"]["monthlyBudgetUsd"] = 1234.56
    budgets = {b.inputs["displayName"]: b for b in of_type(landed(raw), "gcp:billing/budget:Budget")}
    money = budgets["accelstack-serving"].inputs["amount"]["specifiedAmount"]
    assert (money["units"], money["nanos"]) == ("1234", 560000000)
