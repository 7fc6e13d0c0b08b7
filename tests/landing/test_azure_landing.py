"""The Azure landing stack: its spec, its resources under mocks (groups, aliases, assignments, budgets), the manual
quota step, and a workload stack wired to it through a stack reference."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pulumi
import pytest

from accelstack.components.azure.mocks import STACK_REFERENCE, AzureMocks
from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.examples import example_file
from accelstack.program import main
from accelstack.spec import SpecError
from accelstack.spec.landing import parse_landing
from accelstack.spec.loader import read_stack_file

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
LANDING_FILE = STACKS / "Pulumi.azure-landing.yaml"
GROUPS = "/providers/Microsoft.Management/managementGroups/"


def landing_raw() -> dict[str, Any]:
    return read_stack_file(LANDING_FILE)


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
    return capture(main, config_for_pulumi(landing_raw()), stack="azure-landing")


def test_groups_subscriptions_and_their_assignments(landing: Capture) -> None:
    groups = {g.inputs["groupId"]: g for g in of_type(landing, "azure-native:management:ManagementGroup")}
    assert set(groups) == {"azure-landing-training", "azure-landing-serving"}
    assert {g.inputs["details"]["parent"]["id"] for g in groups.values()} == {GROUPS + "acme-root"}
    aliases = {a.inputs["aliasName"]: a for a in of_type(landing, "azure-native:subscription:Alias")}
    assert set(aliases) == {"acme-train", "acme-serve"}
    for name, group in (("acme-train", "azure-landing-training"), ("acme-serve", "azure-landing-serving")):
        properties = aliases[name].inputs["properties"]
        assert properties["workload"] == "Production"
        assert properties["billingScope"].startswith("/providers/Microsoft.Billing/billingAccounts/")
        assert properties["additionalProperties"]["managementGroupId"] == GROUPS + group
    assignments = {
        (a.inputs["scope"].rsplit("/", 1)[1], a.inputs["policyDefinitionId"].rsplit("/", 1)[1]): a
        for a in of_type(landing, "azure-native:authorization:PolicyAssignment")
    }
    locations = "e56962a6-4747-49cd-b67b-bf8b01975c4c"
    skus = "cccc23c7-8427-4f53-ad12-b6a63eb452b3"
    for group in groups:
        listed = assignments[(group, locations)].inputs["parameters"]["listOfAllowedLocations"]["value"]
        assert listed == ["eastus"]
        assert assignments[(group, locations)].inputs["enforcementMode"] == "Default"
    assert ("azure-landing-serving", skus) in assignments and ("azure-landing-training", skus) not in assignments


def test_each_group_denies_role_assignments_to_the_other_sides_principals(landing: Capture) -> None:
    """Issue 32: a custom definition at the parent group denies role assignments (ARM PUT) whose principalId is in
    its parameter; each side's group assigns it with the principals the other side lists."""
    (definition,) = of_type(landing, "azure-native:authorization:PolicyDefinitionAtManagementGroup")
    rule = definition.inputs["policyRule"]
    assert definition.inputs["mode"] == "All" and definition.inputs["managementGroupId"] == "acme-root"
    assert rule["then"] == {"effect": "deny"}
    fields = {term["field"]: term for term in rule["if"]["allOf"]}
    assert fields["type"]["equals"] == "Microsoft.Authorization/roleAssignments"
    assert fields["Microsoft.Authorization/roleAssignments/principalId"]["in"] == "[parameters('deniedPrincipalIds')]"
    denials = {
        a.inputs["scope"].rsplit("/", 1)[1]: a.inputs["parameters"]["deniedPrincipalIds"]["value"]
        for a in of_type(landing, "azure-native:authorization:PolicyAssignment")
        if "deniedPrincipalIds" in a.inputs["parameters"]
    }
    raw = landing_raw()["organization"]
    assert denials == {
        "azure-landing-serving": raw["training"]["principals"],
        "azure-landing-training": raw["serving"]["principals"],
    }


def test_a_landing_of_another_cloud_takes_no_principals() -> None:
    from accelstack.spec.landing import parse_landing as parse

    raw = copy.deepcopy(landing_raw())
    raw["cloud"] = "gcp"
    with pytest.raises(SpecError) as error:
        parse(raw, "gcp-landing")
    assert "principals is azure's" in str(error.value) or "parentId" in str(error.value)


def test_budgets_watch_each_new_subscription(landing: Capture) -> None:
    budgets = {b.inputs["budgetName"]: b for b in of_type(landing, "azure-native:consumption:Budget")}
    assert set(budgets) == {"accelstack-training", "accelstack-serving"}
    assert budgets["accelstack-training"].inputs["amount"] == 300000
    aliases = of_type(landing, "azure-native:subscription:Alias")
    made = {f"/subscriptions/{a.outputs['properties']['subscriptionId']}" for a in aliases}
    assert {b.inputs["scope"] for b in budgets.values()} == made
    notifications = budgets["accelstack-serving"].inputs["notifications"]
    assert sorted((n["threshold"], n["thresholdType"]) for n in notifications.values()) == [
        (80.0, "Actual"),
        (100.0, "Forecasted"),
    ]


class ClockMocks(AzureMocks):
    """Azure as the mocks answer it, with the budget clocks created at another instant."""

    def __init__(self, instant: str) -> None:
        super().__init__()
        self.instant = instant

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == "time:index/static:Static":
            return self.instant, {**dict(args.inputs), "id": self.instant, "rfc3339": self.instant}
        return super().new_resource(args)


@pytest.mark.parametrize("instant", ["2027-03-17T08:15:00Z", "2031-11-30T23:59:59Z"])
def test_budgets_start_on_the_first_of_the_month_they_are_created_in(instant: str) -> None:
    """Azure refuses a past start outside the current time grain (Budgets - Create Or Update): a fixed start date
    fails from its second month on. The start is the first of the month of each budget's clock, and the clock is
    replaced with its budget (its triggers are the budget's scope and name)."""
    landing = capture(main, config_for_pulumi(landing_raw()), stack="azure-landing", mocks=ClockMocks(instant))
    budgets = of_type(landing, "azure-native:consumption:Budget")
    assert {b.inputs["timePeriod"]["startDate"] for b in budgets} == {instant[:7] + "-01T00:00:00Z"}
    clocks = {c.name: c for c in of_type(landing, "time:index/static:Static")}
    for budget in budgets:
        side = budget.inputs["budgetName"].removeprefix("accelstack-")
        clock = clocks[f"azure-landing-{side}-budget-clock"]
        assert clock.inputs["triggers"] == {"scope": budget.inputs["scope"], "budgetName": budget.inputs["budgetName"]}


def test_quota_is_a_manual_step_with_the_commands() -> None:
    from accelstack.commands.plan import manual_quota_lines, quota_rows

    spec = parse_landing(landing_raw(), "azure-landing")
    lines = manual_quota_lines(spec, quota_rows(spec, STACKS))
    assert "manual step" in lines[0]
    commands = [line.strip() for line in lines[1:]]
    assert len(commands) == 2
    assert all(c.startswith("az quota create --resource-name ") for c in commands)
    assert any("standardNDSH100v5Family" in c and "<trainingAccountId>" in c for c in commands)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("parentId",), "organizations/42", "is not a management group id"),
        (("parentId",), "bad/group", "is not a management group id"),
        (("billingScope",), None, "billingScope"),
        (("billingScope",), "/subscriptions/x", "organization.billingScope"),
        (("training", "account", "email"), "t@acme.example", "no root email"),
        (("serving", "principals"), ["not-a-guid"], "organization.serving.principals.0"),
        (("serving", "principals"), ["1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f"], "must be disjoint"),
    ],
)
def test_bad_azure_organization_config_names_the_path(path: tuple[str, ...], value: Any, message: str) -> None:
    raw = copy.deepcopy(landing_raw())
    target = raw["organization"]
    for key in path[:-1]:
        target = target[key]
    if value is None:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    with pytest.raises(SpecError) as error:
        parse_landing(raw, "azure-landing")
    assert message in str(error.value)


class LandingReferenceMocks(AzureMocks):
    """Azure's mocks, with a landing stack whose serving output is `landed`."""

    def __init__(self, landed: str) -> None:
        super().__init__()
        self.landed = landed
        self.referenced: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        resource_id, outputs = super().new_resource(args)
        if args.typ == STACK_REFERENCE:
            self.referenced.append(str(args.inputs.get("name")))
            outputs["outputs"]["servingAccountId"] = self.landed
        return resource_id, outputs


def wired_serving() -> dict[str, Any]:
    raw = copy.deepcopy(read_stack_file(example_file("azure-serving", STACKS)))
    raw["landing"] = {"stack": "acme/accelstack/azure-landing"}
    return raw


def test_a_wired_workload_stack_deploys_into_the_landing_subscription() -> None:
    raw = wired_serving()
    configured = raw["account"]["subscriptionId"]
    mocks = LandingReferenceMocks(configured)
    result = capture(main, config_for_pulumi(raw), stack="azure-serving", mocks=mocks)
    assert mocks.referenced == ["acme/accelstack/azure-landing"]
    provider = next(r for r in result.resources if r.type == "pulumi:providers:azure-native")
    assert provider.inputs["subscriptionId"] == configured


def test_a_wired_workload_stack_refuses_another_subscription() -> None:
    mocks = LandingReferenceMocks("11111111-2222-4333-8444-555555555555")
    with pytest.raises(Exception, match="11111111-2222-4333-8444-555555555555"):
        capture(main, config_for_pulumi(wired_serving()), stack="azure-serving", mocks=mocks)
