"""A cloud's engine and simulator tables plug in with the cloud: a made-up cloud ("acme") registered here
contributes its replace-forcing rows, its Terraform types and its autoscaler to `accelstack diff`, the
Terraform plan view and `simulate serving`, with no edit to the engine or the simulator; and a type token
two clouds table differently is refused, not merged.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.clouds.base import (
    Catalog,
    Cloud,
    Feature,
    InstanceType,
    Prices,
    ReplaceRules,
    TerraformProvider,
)
from accelstack.engine.capture import Registration
from accelstack.engine.cloud_tables import TableConflictError, replace_rules, terraform_tables
from accelstack.engine.replacement import (
    CREATE,
    DELETE_FIRST,
    REPLACE,
    UPDATE,
    known_type,
    plan_changes,
    replacing_changes,
)
from accelstack.engine.terraform_plan import terraform_plan
from accelstack.simulate.autoscalers import AUTOSCALERS

REPO = Path(__file__).resolve().parents[2]
VM = "acme:compute/vm:Vm"
FILESYSTEM = "acme:storage/fileSystem:FileSystem"
BUCKET = "acme:storage/bucket:Bucket"

ACME_RULES = ReplaceRules(
    forcing={VM: ("zone", "image"), FILESYSTEM: ("zone",), BUCKET: ("bucketName",), "pulumi:providers:acme": ("region",)},
    shrink={FILESYSTEM: ("capacityGib",)},
    forcing_when={VM: ("recreateOnBoot", ("bootScript",))},
    auto_name={BUCKET: "bucketName"},
    tag_properties=frozenset({"acmeLabels"}),
)  # fmt: skip
ACME_TERRAFORM = TerraformProvider(
    package="acme",
    address="registry.terraform.io/acme/acme",
    types={VM: "acme_vm"},
    block_renames={"acme_vm": {"network_cards": "network_card", "labels": "label"}},
    map_attributes={"acme_vm": frozenset({"boot_metadata", "labels"})},
    # Its `label` blocks, passed as a map, are the `labels` map attribute.
    map_forms={"acme_vm": {"label": "labels"}},
)
ACME = Cloud(
    name="acme",
    title="Acme Cloud",
    account_kind="project",
    pulumi_packages=frozenset({"acme"}),
    features=frozenset(Feature),
    catalog=Catalog(
        cloud="acme",
        checked="2026-01-01",
        sources=("made up for this test",),
        instances={"acme.gpu1": InstanceType("acme.gpu1", "L40S", 1, 48, 8, 64)},
        regions=("us-central1",),
    ),
    prices=Prices(
        checked="2026-01-01",
        region="us-central1",
        source="made up for this test",
        on_demand_hourly={"acme.gpu1": 1.0},
        spot_discount=0.5,
        parallel_fs_gb_month={},
        object_gb_month=0.01,
        block_gb_month=0.02,
    ),
    # The account block of the Google Cloud example stack, reused as is.
    account_model="accelstack.spec.accounts:GcpAccount",
    replace_rules=ACME_RULES,
    terraform=(ACME_TERRAFORM,),
    default_autoscaler="request-rate",
)


def registration(type_token: str, name: str, inputs: dict[str, Any], **options: Any) -> Registration:
    urn = f"urn:pulumi:dev::accelstack::{type_token}::{name}"
    return Registration(
        urn=urn, type=type_token, name=name, custom=True, parent="", provider="urn:provider::id",
        dependencies=[], property_dependencies={}, protect=options.get("protect", False), retain_on_delete=False,
        delete_before_replace=False, ignore_changes=[], additional_secret_outputs=[], inputs=inputs,
    )  # fmt: skip


def test_the_clouds_replace_rows_reach_the_diff_and_leave_with_it() -> None:
    vm = registration(VM, "vm", {"zone": "a", "image": "i-1", "size": "small"})
    assert not known_type(VM)
    with registry.registered(ACME):
        assert known_type(VM) and known_type("pulumi:providers:acme")
        assert replacing_changes(VM, vm.inputs, {**vm.inputs, "zone": "b"}, []) == ["zone"]
        assert replacing_changes(VM, vm.inputs, {**vm.inputs, "zone": "b"}, ["zone"]) == []
        assert replacing_changes(VM, vm.inputs, {**vm.inputs, "size": "large"}, []) == []
        # Its conditional, shrink and auto-name rows too.
        booted = {**vm.inputs, "bootScript": "a"}
        assert replacing_changes(VM, booted, {**booted, "bootScript": "b"}, []) == []
        assert replacing_changes(VM, booted, {**booted, "bootScript": "b", "recreateOnBoot": True}, []) == [
            "bootScript"
        ]
        fs = {"zone": "a", "capacityGib": 2000}
        assert replacing_changes(FILESYSTEM, fs, {**fs, "capacityGib": 4000}, []) == []
        assert replacing_changes(FILESYSTEM, fs, {**fs, "capacityGib": 1000}, []) == ["capacityGib"]
        bucket = registration(BUCKET, "data", {"bucketName": "old"})
        moved = registration(VM, "vm", {**vm.inputs, "image": "i-2"})
        renamed = registration(BUCKET, "data", {"bucketName": "new"})
        relabelled = registration(VM, "vm", {**vm.inputs, "acmeLabels": {"team": "ml"}})
        [vm_change, bucket_change] = plan_changes([vm, bucket], [moved, renamed])
        assert (vm_change.action, vm_change.replacing, vm_change.known) == (REPLACE, ["image"], True)
        # The program names the bucket itself (acme's auto-name property): the old one goes first.
        assert (bucket_change.action, bucket_change.order) == (REPLACE, DELETE_FIRST)
        [label_change] = plan_changes([vm], [relabelled])
        assert (label_change.action, label_change.tags_only) == (UPDATE, True)
    # Unregistered, its types are not known again: a change to one is reported as such, never as an update.
    [created] = plan_changes([], [vm])
    assert (created.action, created.known) == (CREATE, False)
    assert created.to_json()["replaceForcingKnown"] is False
    assert "acmeLabels" not in replace_rules().tag_properties


def v3(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"version": 3, "deployment": {"resources": list(entries)}}


def test_the_clouds_terraform_types_reach_the_plan_view() -> None:
    provider = {"urn": "urn:pulumi:dev::accelstack::pulumi:providers:acme::default", "type": "pulumi:providers:acme",
                "custom": True, "id": "p", "inputs": {"region": "us-central1"}}  # fmt: skip
    vm = {"urn": "urn:pulumi:dev::accelstack::acme:compute/vm:Vm::head", "type": VM, "custom": True, "id": "vm-1",
          "inputs": {"zone": "a", "networkCards": [{"subnet": "s"}], "bootMetadata": {"Start-Up": "x"},
                     "labels": [{"key": "team", "value": "ml"}]}}  # fmt: skip
    mapped_labels = {**vm, "urn": vm["urn"].replace("::head", "::worker"), "inputs": {"labels": {"Team": "ml"}}}
    document = v3(provider, vm, mapped_labels)
    assert terraform_plan(document).unmapped == [vm["urn"], mapped_labels["urn"]]
    with registry.registered(ACME):
        plan = terraform_plan(document)
    assert plan.unmapped == [] and plan.addresses == {vm["urn"]: "acme_vm.head", mapped_labels["urn"]: "acme_vm.worker"}
    [head, worker] = plan.document["planned_values"]["root_module"]["resources"]
    assert head["provider_name"] == "registry.terraform.io/acme/acme"
    # Its block renames (list blocks, singular in Terraform), its map attributes (keys untouched) and the map
    # form of a block list.
    assert head["values"] == {
        "zone": "a",
        "network_card": [{"subnet": "s"}],
        "boot_metadata": {"Start-Up": "x"},
        "label": [{"key": "team", "value": "ml"}],
    }
    assert worker["values"] == {"labels": {"Team": "ml"}}
    assert plan.document["configuration"]["provider_config"]["acme"] == {
        "name": "acme",
        "full_name": "registry.terraform.io/acme/acme",
        "expressions": {"region": {"constant_value": "us-central1"}},
    }


@pytest.fixture
def acme_serving_stack(tmp_path: Path) -> Path:
    """The Google Cloud serving example moved to acme: acme's machine type, no gcp provider setting."""
    text = (REPO / "stacks" / "Pulumi.gcp-serving.yaml").read_text()
    for old, new in (
        ("accelstack:cloud: gcp", "accelstack:cloud: acme"),
        ("  gcp:region: us-central1\n", ""),
        ("instanceType: g2-standard-8", "instanceType: acme.gpu1"),
    ):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "Pulumi.acme-serving.yaml"
    path.write_text(text)
    return path


def simulate(stack: Path, cloud: Cloud, *args: str):
    with registry.registered(cloud):
        return CliRunner().invoke(
            app, ["simulate", "serving", str(stack), "--hours", "1", "--pattern", "steady", "--rate", "2", *args]
        )


def test_simulate_serving_runs_the_autoscaler_the_cloud_declares(acme_serving_stack: Path) -> None:
    result = simulate(acme_serving_stack, ACME, "--json")
    assert result.exit_code == 0, result.output
    assert [d["autoscaler"] for d in json.loads(result.output)["designs"]] == ["request-rate"]


def test_a_cloud_without_an_autoscaler_needs_the_option_instead_of_borrowing_one(acme_serving_stack: Path) -> None:
    bare = dataclasses.replace(ACME, default_autoscaler=None)
    refused = simulate(acme_serving_stack, bare)
    assert refused.exit_code == 2, refused.output
    assert (
        "acme-serving: Acme Cloud (acme) declares no autoscaler of its own to simulate: give --autoscaler, one of "
        + ", ".join(AUTOSCALERS)
    ) in refused.output
    chosen = simulate(acme_serving_stack, bare, "--autoscaler", "fixed", "--json")
    assert chosen.exit_code == 0, chosen.output
    assert json.loads(chosen.output)["designs"][0]["autoscaler"] == "fixed"
    # A plug-in naming an autoscaler the simulator does not have is told so, not the user's --autoscaler.
    wrong = simulate(acme_serving_stack, dataclasses.replace(ACME, default_autoscaler="keda"))
    assert wrong.exit_code == 2, wrong.output
    assert "acme's default autoscaler (Cloud.default_autoscaler) 'keda': allowed:" in wrong.output


def rival(**changes: Any) -> Cloud:
    """A second made-up cloud that also tables one of acme's keys."""
    return dataclasses.replace(ACME, name="zenith", title="Zenith", **changes)


@pytest.mark.parametrize(
    ("other", "message"),
    [
        (
            rival(replace_rules=ReplaceRules(forcing={VM: ("zone",)})),
            r"replace-forcing 'acme:compute/vm:Vm': clouds 'acme' and 'zenith' declare different rows "
            r"\(\('zone', 'image'\) and \('zone',\)\)",
        ),
        (
            rival(replace_rules=ReplaceRules(auto_name={BUCKET: "name"})),
            r"auto-name 'acme:storage/bucket:Bucket': clouds 'acme' and 'zenith'",
        ),
        (
            rival(terraform=(dataclasses.replace(ACME_TERRAFORM, types={VM: "zenith_vm"}),)),
            r"Terraform type 'acme:compute/vm:Vm': clouds 'acme' and 'zenith'",
        ),
        (
            rival(terraform=(dataclasses.replace(ACME_TERRAFORM, address="registry.terraform.io/zenith/acme"),)),
            r"Terraform provider 'acme': clouds 'acme' and 'zenith'",
        ),
    ],
    ids=["replace-forcing", "auto-name", "terraform-type", "terraform-provider"],
)
def test_two_clouds_tabling_one_key_differently_are_refused(other: Cloud, message: str) -> None:
    with registry.registered(ACME), registry.registered(other):
        # The tables are merged as a whole: any question of the engine meets the conflict, whichever it asks.
        for ask in (lambda: known_type(BUCKET), lambda: terraform_plan(v3())):
            with pytest.raises(TableConflictError, match=message):
                ask()
    assert known_type(VM) is False  # and nothing of either stays behind


def test_two_clouds_declaring_the_same_rows_share_them() -> None:
    """Every cloud that pins pulumi-random declares its rows: identical rows merge."""
    with registry.registered(ACME), registry.registered(rival()):
        assert replace_rules().forcing[VM] == ("zone", "image")
        assert terraform_tables().types[VM] == "acme_vm"


# --- the registered clouds' own tables -----------------------------------------------------------------


@pytest.mark.parametrize("name", registry.names())
def test_a_clouds_tables_name_only_the_packages_it_pins(name: str) -> None:
    """A row for another package's type token would be that package's cloud's to declare (and could
    conflict with it); the Pulumi dynamic provider runs the program's own code, no package's."""
    cloud = registry.get(name)
    packages = cloud.pulumi_packages
    stray = [
        token
        for token in cloud.replace_rules.forcing
        if token.split(":", 1)[0] not in {*packages, "pulumi-python"}
        and token.removeprefix("pulumi:providers:") not in packages
    ]
    assert stray == []
    for provider in cloud.terraform:
        assert provider.package in packages
        assert [t for t in provider.types if not t.startswith(f"{provider.package}:")] == []


@pytest.mark.parametrize("name", registry.deployable())
def test_a_cloud_serving_stacks_names_an_autoscaler_the_simulator_has(name: str) -> None:
    cloud = registry.get(name)
    if cloud.deploys("serving"):
        assert cloud.default_autoscaler in AUTOSCALERS
