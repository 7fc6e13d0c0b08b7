"""The OCI landing stack: its spec, its resources under mocks (compartments, deploy groups and their grants, quota
policies, budgets), and a workload stack wired to it through a stack reference."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from accelstack.clouds import registry
from accelstack.components.oci.landing import OciLandingParts
from accelstack.components.oci.mocks import STACK_REFERENCE, OciMocks
from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.examples import example_file
from accelstack.planner.landing_plan import plan_landing
from accelstack.program import main
from accelstack.spec import SpecError
from accelstack.spec.landing import parse_landing, workload_specs
from accelstack.spec.loader import read_stack_file

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
LANDING_FILE = STACKS / "Pulumi.oci-landing.yaml"
TENANCY = "ocid1.tenancy.oc1..aaaaaaaaacmetenancy"


def landing_raw() -> dict[str, Any]:
    return read_stack_file(LANDING_FILE)


def of_type(result: Capture, token: str) -> list[Any]:
    return [r for r in result.resources if r.type == token]


def by_side(result: Capture, token: str) -> dict[str, Any]:
    return {r.inputs["freeformTags"]["accelstack-side"]: r for r in of_type(result, token)}


@pytest.fixture(scope="module", autouse=True)
def in_project() -> Any:
    patch = pytest.MonkeyPatch()
    patch.chdir(ROOT)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def landing() -> Capture:
    return capture(main, config_for_pulumi(landing_raw()), stack="oci-landing")


def test_a_kept_compartment_per_side_under_the_parent(landing: Capture) -> None:
    compartments = by_side(landing, "oci:Identity/compartment:Compartment")
    assert {s: c.inputs["name"] for s, c in compartments.items()} == {"training": "acme-train", "serving": "acme-serve"}
    for compartment in compartments.values():
        assert compartment.inputs["compartmentId"] == TENANCY
        assert compartment.inputs["enableDelete"] is False


def test_quota_policies_hold_regions_training_shapes_and_the_planners_caps(landing: Capture) -> None:
    quotas = by_side(landing, "oci:Limits/quota:Quota")
    assert {q.inputs["compartmentId"] for q in quotas.values()} == {TENANCY}
    training, serving = (quotas[s].inputs["statements"] for s in ("training", "serving"))
    outside = "zero compute-core quotas /*/ in compartment {} where request.region = 'eu-frankfurt-1'"
    assert outside.format("acme-train") in training and outside.format("acme-serve") in serving
    assert not any("us-ashburn-1" in s for s in serving)  # the allowed region is never zeroed
    assert (
        "zero compute-core quotas gpu-b200-count, gpu-h100-count, gpu-h200-count, gpu-mi300x-count in compartment acme-serve"
        in serving
    )
    # oci-training: 2 x BM.GPU.H100.8 = 16 GPUs in its cluster network's domain (AD 1), capped at exactly that
    # there and zeroed in the region's other two: a cap without request.ad would allow 16 in each, 48 in all.
    per_domain = [s for s in training if "gpu-h100-count" in s]
    assert per_domain == [
        "set compute-core quota gpu-h100-count to 16 in compartment acme-train where request.ad = 'Uocm:US-ASHBURN-AD-1'",
        "zero compute-core quotas gpu-h100-count in compartment acme-train where request.ad = 'Uocm:US-ASHBURN-AD-2'",
        "zero compute-core quotas gpu-h100-count in compartment acme-train where request.ad = 'Uocm:US-ASHBURN-AD-3'",
    ]
    assert not any(s.startswith("set ") for s in serving)


def test_a_cluster_network_pinned_to_another_domain_is_capped_there(tmp_path: Path) -> None:
    """The landing stack reads the training stack's availabilityZone (a domain number) and maps it to the
    tenancy's domain name, as the training stack does for its cluster network."""
    training = read_stack_file(example_file("oci-training", STACKS))
    training["training"]["network"]["availabilityZone"] = "2"
    (tmp_path / "Pulumi.oci-training.yaml").write_text(
        yaml.safe_dump({"config": {f"accelstack:{k}": v for k, v in training.items()} | {"oci:region": "us-ashburn-1"}})
    )
    spec = parse_landing(landing_raw(), "oci-landing")
    needs = plan_landing(spec, workload_specs(spec, tmp_path), registry.get("oci").catalog).needs
    assert [(n.quota, n.region, n.zone, n.amount) for n in needs] == [("gpu-h100-count", "us-ashburn-1", "2", 16)]
    parts = OciLandingParts.__new__(OciLandingParts)
    parts.spec, parts.plan = spec, plan_landing(spec, workload_specs(spec, tmp_path), registry.get("oci").catalog)
    domains = {"us-ashburn-1": [f"Uocm:US-ASHBURN-AD-{n}" for n in (1, 2, 3)]}
    statements = [s for s in parts.quota_statements("training", domains) if "gpu-h100-count" in s]
    assert statements[0].endswith("to 16 in compartment acme-train where request.ad = 'Uocm:US-ASHBURN-AD-2'")
    assert {s.rsplit("'", 2)[1] for s in statements[1:]} == {"Uocm:US-ASHBURN-AD-1", "Uocm:US-ASHBURN-AD-3"}
    assert all(s.startswith("zero ") for s in statements[1:])
    # A tenancy listing other domains than the catalog's: the landing stack says so rather than write zeros the
    # packs cannot count (they count them against the catalog's domains of the region).
    with pytest.raises(ValueError, match=r"lists availability domains Uocm:US-ASHBURN-AD-1; .* update the catalog"):
        parts.quota_statements("training", {"us-ashburn-1": ["Uocm:US-ASHBURN-AD-1"]})


def test_the_catalog_counts_the_domains_of_every_region_it_lists() -> None:
    """Every catalog region has a domain count (the packs fail closed on a region without one), spelled as the
    tenancy's names end there."""
    from accelstack.clouds.oci.catalog import AVAILABILITY_DOMAINS, REGIONS, domain_labels

    assert set(AVAILABILITY_DOMAINS) == set(REGIONS)
    assert domain_labels("us-ashburn-1") == ["US-ASHBURN-AD-1", "US-ASHBURN-AD-2", "US-ASHBURN-AD-3"]
    assert domain_labels("us-phoenix-1")[2] == "PHX-AD-3"
    assert domain_labels("eu-frankfurt-1")[2] == "EU-FRANKFURT-1-AD-3"
    assert domain_labels("ca-toronto-1") == ["CA-TORONTO-1-AD-1"]


def test_deploy_groups_are_granted_their_own_compartment_only(landing: Capture) -> None:
    compartments = by_side(landing, "oci:Identity/compartment:Compartment")
    groups = by_side(landing, "oci:Identity/group:Group")
    policies = by_side(landing, "oci:Identity/policy:Policy")
    for side, policy in policies.items():
        group_id, compartment_id = groups[side].outputs["id"], compartments[side].outputs["id"]
        for statement in policy.outputs["statements"]:
            assert statement.startswith(f"allow group id {group_id} to manage ")
            assert statement.endswith(f" in compartment id {compartment_id}")
    serving = " ".join(policies["serving"].outputs["statements"])
    for kind in ("all-resources", "compute-management-family", "cluster-networks", "file-family", "lustre-file-family"):
        assert f"manage {kind} " not in serving
    assert "manage lustre-file-family " in " ".join(policies["training"].outputs["statements"])


def test_each_side_gets_a_nodes_dynamic_group_matching_its_compartment_alone(landing: Capture) -> None:
    compartments = by_side(landing, "oci:Identity/compartment:Compartment")
    groups = by_side(landing, "oci:Identity/dynamicGroup:DynamicGroup")
    assert {s: g.inputs["name"] for s, g in groups.items()} == {
        "training": "acme-train-nodes",
        "serving": "acme-serve-nodes",
    }
    for side, group in groups.items():
        assert group.inputs["compartmentId"] == TENANCY  # dynamic groups live in the tenancy
        assert (
            group.outputs["matchingRule"] == f"ALL {{instance.compartment.id = '{compartments[side].outputs['id']}'}}"
        )
        assert group.protect
        assert compartments[side].urn in group.dependencies
        # The workload stacks read its name and OCID from the landing outputs.
        assert landing.stack_outputs[f"{side}NodesGroupName"] == group.inputs["name"]
        assert landing.stack_outputs[f"{side}NodesGroupId"] == group.outputs["id"]
    # No deploy group may write dynamic groups (or any tenancy identity): the landing stack made the nodes' group.
    for policy in of_type(landing, "oci:Identity/policy:Policy"):
        for statement in policy.outputs["statements"]:
            assert not re.search(r" (dynamic-groups|groups|users|domains) in ", statement), statement


def test_budgets_count_each_compartment_and_alert_at_80_actual_100_forecast(landing: Capture) -> None:
    budgets = by_side(landing, "oci:Budget/budget:Budget")
    compartments = by_side(landing, "oci:Identity/compartment:Compartment")
    assert budgets["training"].inputs["amount"] == 300000
    for side, budget in budgets.items():
        assert budget.inputs["targetType"] == "COMPARTMENT"
        assert budget.inputs["targets"] == [compartments[side].outputs["id"]]
        assert budget.inputs["resetPeriod"] == "MONTHLY"
    rules = of_type(landing, "oci:Budget/rule:Rule")
    assert sorted((r.inputs["threshold"], r.inputs["type"]) for r in rules) == [
        (80.0, "ACTUAL"),
        (80.0, "ACTUAL"),
        (100.0, "FORECAST"),
        (100.0, "FORECAST"),
    ]
    assert {r.inputs["recipients"] for r in rules} == {"finops@acme.example"}


def test_a_compartment_parent_needs_its_path_and_quotas_name_it() -> None:
    raw = copy.deepcopy(landing_raw())
    raw["organization"]["parentId"] = "ocid1.compartment.oc1..aaaaaaaaplatform"
    with pytest.raises(SpecError) as error:
        parse_landing(raw, "oci-landing")
    assert "organization.parentPath" in str(error.value)
    raw["organization"]["parentPath"] = "Platform"
    from accelstack.spec.landing_oci import compartment_path

    assert compartment_path(parse_landing(raw, "oci-landing"), "serving") == "Platform:acme-serve"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r["organization"].update(parentId="organizations/42"), "is not an OCI parent"),
        (lambda r: r["organization"].update(parentId="ocid1.tenancy.oc1..aaaaaaaaother"), "another tenancy"),
        (lambda r: r["organization"].update(parentPath="Platform"), "the parent is the root compartment"),
        (lambda r: r["organization"].update(parentPath="bad path"), "is not a compartment path"),
        (lambda r: r["account"].update(compartmentOcid="ocid1.compartment.oc1..aaaaaaaax"), "account.compartmentOcid"),
        (lambda r: r["organization"]["training"]["account"].update(email="t@acme.example"), "no root email"),
        (
            lambda r: r["organization"]["serving"]["account"].update(name="acme serve"),
            "organization.serving.account.name",
        ),
        (
            lambda r: r["organization"].update(billingScope="/providers/Microsoft.Billing/billingAccounts/1/x/2"),
            "azure's",
        ),
    ],
)
def test_bad_oci_organization_config_names_the_path(edit: Any, message: str) -> None:
    raw = copy.deepcopy(landing_raw())
    edit(raw)
    with pytest.raises(SpecError) as error:
        parse_landing(raw, "oci-landing")
    assert message in str(error.value)


def test_parent_path_is_ocis_alone() -> None:
    raw = copy.deepcopy(read_stack_file(STACKS / "Pulumi.aws-landing.yaml"))
    raw["organization"]["parentPath"] = "Platform"
    with pytest.raises(SpecError, match="parentPath: is oci's"):
        parse_landing(raw, "aws-landing")


class LandingReferenceMocks(OciMocks):
    """OCI's mocks, with a landing stack whose training output is `landed`."""

    def __init__(self, landed: str) -> None:
        super().__init__(tenancy="ocid1.tenancy.oc1..aaaaaaaaacmetenancy")
        self.landed = landed
        self.referenced: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        resource_id, outputs = super().new_resource(args)
        if args.typ == STACK_REFERENCE:
            self.referenced.append(str(args.inputs.get("name")))
            outputs["outputs"]["trainingAccountId"] = self.landed
            outputs["outputs"]["trainingNodesGroupName"] = "acme-train-nodes"
            outputs["outputs"]["servingNodesGroupName"] = "acme-serve-nodes"
        return resource_id, outputs


def wired_training() -> dict[str, Any]:
    raw = copy.deepcopy(read_stack_file(example_file("oci-training", STACKS)))
    raw["landing"] = {"stack": "acme/accelstack/oci-landing"}
    return raw


def test_a_wired_workload_stack_deploys_into_the_landing_compartment() -> None:
    raw = wired_training()
    mocks = LandingReferenceMocks(raw["account"]["compartmentOcid"])
    result = capture(main, config_for_pulumi(raw), stack="oci-training", mocks=mocks)
    # Read twice (the provider's check, the nodes' group): both the landing stack the file names.
    assert set(mocks.referenced) == {"acme/accelstack/oci-landing"}
    provider = next(r for r in result.resources if r.type == "pulumi:providers:oci")
    assert provider.inputs["tenancyOcid"] == raw["account"]["tenancyOcid"]


def test_a_wired_training_stack_uses_its_sides_landed_dynamic_group_and_makes_none() -> None:
    raw = wired_training()
    result = capture(
        main,
        config_for_pulumi(raw),
        stack="oci-training",
        mocks=LandingReferenceMocks(raw["account"]["compartmentOcid"]),
    )
    assert of_type(result, "oci:Identity/dynamicGroup:DynamicGroup") == []
    granted = [s for p in of_type(result, "oci:Identity/policy:Policy") for s in p.outputs["statements"]]
    groups = {m for s in granted for m in re.findall(r"dynamic-group (\S+)", s)}
    assert groups == {"acme-train-nodes"}  # the training side's, never the serving side's
    # Unwired, the stack makes its own (its deployer then needs `manage dynamic-groups` in the tenancy).
    unwired = copy.deepcopy(raw)
    del unwired["landing"]
    own = capture(main, config_for_pulumi(unwired), stack="oci-training")
    assert [g.inputs["name"] for g in of_type(own, "oci:Identity/dynamicGroup:DynamicGroup")] == ["oci-training-nodes"]


def test_a_wired_workload_stack_refuses_another_compartment() -> None:
    mocks = LandingReferenceMocks("ocid1.compartment.oc1..aaaaaaaaacmeserve")
    with pytest.raises(Exception, match=re.escape("ocid1.compartment.oc1..aaaaaaaaacmeserve")):
        capture(main, config_for_pulumi(wired_training()), stack="oci-training", mocks=mocks)


def run(*args: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    from accelstack.cli import app

    # As a user piping the output sees it: pytest-xdist workers set COLUMNS=80.
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": None})
    return result.exit_code, result.stdout, result.stderr


def test_plan_quotas_shows_the_cap_and_says_limits_are_raised_apart() -> None:
    code, out, _ = run("plan", "quotas", str(LANDING_FILE))
    assert code == 0
    row = next(line for line in out.splitlines() if "gpu-h100-count" in line)
    assert re.search(r"us-ashburn-1 AD-1.*16 GPUs.*16 GPUs.*oci-training", row)
    assert "never raise the tenancy's service limits" in out
    assert "a row with an AD (a training cluster network, placed in one) is capped exactly" in " ".join(out.split())


def test_a_bad_oci_landing_file_exits_2_naming_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "Pulumi.oci-bad.yaml"
    bad.write_text(LANDING_FILE.read_text().replace("acme-serve}", "acme serve}"))
    code, _, err = run("validate", str(bad))
    assert code == 2
    assert "organization.serving.account.name" in err and "Traceback" not in err


def test_a_need_in_another_region_reads_that_regions_domains_through_its_own_provider() -> None:
    """The landing stack's provider is pinned to the home region, whose domains are not the need's: the domain
    names of a need elsewhere come through a provider of the need's region (the mocks answer their one region's
    names, so this checks the wiring, not the names)."""
    from accelstack.components.oci.landing import build_landing
    from accelstack.planner.landing_plan import LandingPlan, QuotaNeed

    raw = copy.deepcopy(landing_raw())
    raw["organization"]["allowedRegions"] = ["us-ashburn-1", "us-phoenix-1"]
    spec = parse_landing(raw, "oci-landing")
    need = QuotaNeed("training", "us-phoenix-1", "gpu-h100-count", "GPUs", 16, "", ("oci-training",), "1")
    result = capture(lambda: build_landing(spec, LandingPlan((need,), ())), config_for_pulumi(raw), stack="oci-landing")
    providers = {r.name: r.inputs.get("region") for r in of_type(result, "pulumi:providers:oci")}
    assert providers == {"oci-landing-oci": "us-ashburn-1", "oci-landing-oci-us-phoenix-1": "us-phoenix-1"}
    training = by_side(result, "oci:Limits/quota:Quota")["training"].inputs["statements"]
    assert (
        sum(s.startswith("set compute-core quota gpu-h100-count to 16 ") and "request.ad = " in s for s in training)
        == 1
    )
    assert sum(s.startswith("zero compute-core quotas gpu-h100-count ") for s in training) == 2
