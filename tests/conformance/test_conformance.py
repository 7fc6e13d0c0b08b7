"""What every cloud's example stacks must do, whatever the cloud: parametrized over the registry's
deployable clouds and their `stacks/Pulumi.<cloud>-*.yaml`, each checked on its offline preview (the
real program under mocks, as `accelstack preview` runs it; one preview per stack and override).

A check a cloud fails today is listed in KNOWN_GAPS (strict xfail: fixing it turns the entry red, so
the list only shrinks), never loosened.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from checks import (
    TAG_CARRIERS,
    custom_resources,
    output_problems,
    package_of,
    protect_problems,
    provider_problems,
    resource_counts,
    retain_problems,
    stateful_resources,
    tag_problems,
)
from cloud_stacks import (
    DEFAULTS_VARIANT,
    FIXED_SIZE_VARIANTS,
    PLAIN_NODES_VARIANT,
    STACKS,
    VARIANTS,
    Variant,
    cloud_stacks,
    example_stacks,
    path_of,
    preview,
    resized,
    stack_id,
    variant_cases,
)
from component_kinds import component_kinds
from stack_edits import HOLDS_NOTHING_STATEFUL

from accelstack import outputs
from accelstack.clouds import registry
from accelstack.components.base import CloudStack
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult
from accelstack.examples import example_files
from accelstack.policies import concepts
from accelstack.spec.handoff import artifact_handoff
from accelstack.spec.loader import stack_name_of
from accelstack.spec.models import ServingStack, StackSpec


def cloud_stack_class(cloud: str) -> type[CloudStack]:
    module = registry.get(cloud).components
    assert module is not None
    stack_class: type[CloudStack] = importlib.import_module(module).CLOUD_STACK
    return stack_class


# (cloud, check) -> why the cloud fails it today. Each entry is a strict xfail.
KNOWN_GAPS: dict[tuple[str, str], str] = {
    ("vultr", "flat-graph"): (
        "Vultr has no instance group (clouds/vultr): a fixed fleet is one vultr.Instance per replica, each with its "
        "weights key clock, so the graph grows with serving.replicas.max"
    ),
}
# Clouds whose resources mostly take no tags: the fewest taggable resources their example stacks have, and why.
FEW_TAGGABLE: dict[str, tuple[int, str]] = {
    "vultr": (
        2,
        "only Vultr instances take tags; its VPCs, load balancers and firewall groups have none (ediri-vultr)",
    ),
}

# Two sizes of the same stack: the resource graph must not grow with them (one group, not N nodes). Per
# workload, and for serving per fleet (an autoscaled group's bounds, a fixed fleet's one size), never per cloud.
SIZES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "training": (("training.nodes.count=2",), ("training.nodes.count=64",)),
    "serving": (
        ("serving.replicas.min=1", "serving.replicas.max=2"),
        ("serving.replicas.min=16", "serving.replicas.max=64"),
    ),
    "serving:fixed": (
        ("serving.replicas.min=1", "serving.replicas.max=1"),
        ("serving.replicas.min=48", "serving.replicas.max=48"),
    ),
}


def sizes_of(spec: StackSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if isinstance(spec, ServingStack) and spec.serving.replicas.scaling == "fixed":
        return SIZES["serving:fixed"]
    return SIZES[spec.workload]


CASES = cloud_stacks()
# The example stacks switched to their other schedulers, file systems and capacity (cloud_stacks.VARIANTS).
VARIANT_CASES = variant_cases()


def cases(check: str) -> list[object]:
    """Every (cloud, stack file or variant), marked xfail(strict) where the cloud has a known gap in `check`."""
    params = []
    all_cases: list[tuple[str, Path | Variant]] = [*CASES, *VARIANT_CASES]
    for cloud, path in all_cases:
        gap = KNOWN_GAPS.get((cloud, check))
        marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
        params.append(pytest.param(cloud, path, id=stack_id(path), marks=marks))
    return params


def output_conditions(result: PreviewResult) -> set[str]:
    """The contract's conditions that hold for the stack: from its spec, and for the placement (a cloud's
    choice, e.g. none inside an already-placed reservation) from what it deploys."""
    spec = result.spec
    if spec.workload == "serving":
        serving = spec.serving
        assert serving is not None
        return {
            *({outputs.ADMISSION_QUEUE} if serving.admission.kind == "queue" else ()),
            *({outputs.AUTOSCALED} if serving.replicas.scaling == "backlog" else ()),
            *({outputs.EGRESS_ADMITTED} if (handoff := artifact_handoff(spec)) and handoff.admitted_by_address else ()),
        }
    if spec.workload != "training":
        return set()
    training = spec.training
    assert training is not None
    holding = set()
    if training.storage.checkpoints is not None:
        holding.add(outputs.CHECKPOINTS)
    if training.storage.lustre is not None:
        holding.add(outputs.PARALLEL_FILE_SYSTEM)
    kind = training.scheduler.kind
    if kind in ("slurm", "managed"):
        holding.add(outputs.SCHEDULER)
    holding.add(outputs.SLURM if kind == "slurm" else outputs.MANAGED_SCHEDULER if kind == "managed" else "")
    if kind == "slurm" and training.scheduler.accounting == "database":
        holding.add(outputs.SLURM_ACCOUNTING)
    if kind != "managed":
        holding.add(outputs.NODE_GROUP)
    if any(concepts.is_a(r.type, "rdma-placement") for r in result.resources):
        holding.add(outputs.RDMA_PLACEMENT)
    return holding - {""}


# --- which stacks ----------------------------------------------------------------------------------


def clouds_without_example_stacks() -> list[str]:
    return [cloud for cloud in registry.deployable() if not example_stacks(cloud)]


# Deployable clouds whose example stack is in stacks/ but not shipped yet (accelstack/examples.py), and why: the
# checks here would fail on it. Exact, like KNOWN_GAPS: shipping the stack turns the entry red, so it only shrinks.
NOT_SHIPPED_YET: dict[str, str] = {}


def test_every_deployable_cloud_ships_an_example_stack() -> None:
    assert registry.deployable(), "no deployable cloud is registered"
    assert clouds_without_example_stacks() == sorted(NOT_SHIPPED_YET)
    for cloud in NOT_SHIPPED_YET:
        assert (STACKS / "not-shipped" / f"Pulumi.{cloud}-serving.yaml").exists(), (
            f"{cloud}: its stack file is where the entry says"
        )


def test_a_deployable_cloud_without_an_example_stack_fails() -> None:
    with registry.registered(replace(registry.get("aws"), name="nowhere")):
        assert clouds_without_example_stacks() == sorted(["nowhere", *NOT_SHIPPED_YET])


def built(result: PreviewResult) -> set[tuple[str, str, str]]:
    """What a preview builds: each resource's kind, name and inputs (JSON)."""
    return {(r.type, r.name, json.dumps(r.inputs, sort_keys=True, default=str)) for r in result.resources}


def test_every_variant_names_an_example_stack_and_builds_something_else() -> None:
    """A variant of a stack that does not exist would never be checked; one that builds the same resources with
    the same settings as its stack adds nothing. Other kinds (a scheduler, no file system) or other settings
    the packs judge (a market type, a reservation, a tier) are something else."""
    names = {stack_id(path) for _, path in CASES}
    assert set(VARIANTS) <= names
    for _, variant in VARIANT_CASES:
        if variant.name == DEFAULTS_VARIANT:
            continue  # the same resources by design: it checks values (below)
        assert built(preview(variant)) != built(preview(variant.path)), stack_id(variant)


def test_every_example_stack_belongs_to_a_deployable_cloud() -> None:
    """A stack file named after a cloud that is not deployable would never be checked here."""
    checked = {path for _, path in CASES}
    assert sorted(p.name for p in example_files(STACKS) if p not in checked) == []


@pytest.mark.parametrize("cloud", registry.deployable())
def test_every_package_the_cloud_deploys_with_has_a_tag_carrier(cloud: str) -> None:
    packages = registry.get(cloud).pulumi_packages - concepts.LOCAL_PACKAGES
    assert sorted(packages - set(TAG_CARRIERS)) == []


# --- the checks ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("cloud", "stack_file"), cases("preview"))
def test_previews_offline_for_its_own_cloud(cloud: str, stack_file: Path) -> None:
    result = preview(stack_file)
    assert result.spec.cloud == cloud
    assert result.stack == stack_name_of(path_of(stack_file))
    assert custom_resources(result.resources), "the preview registered no cloud resource"
    # Providers (`pulumi:providers:<package>`) count as their package.
    allowed = registry.get(cloud).pulumi_packages
    strays = sorted({r.type for r in custom_resources(result.resources) if package_of(r.type) not in allowed})
    assert strays == [], f"resources of packages {cloud} does not declare in its Cloud's pulumi_packages"


@pytest.mark.parametrize(("cloud", "stack_file"), cases("policy"))
def test_both_policy_packs_pass_with_no_violation(cloud: str, stack_file: Path) -> None:
    result = preview(stack_file)
    assert [v.line() for v in policy_verdicts(result.export, result.spec)] == []


@pytest.mark.parametrize(("cloud", "stack_file"), cases("explicit-provider"))
def test_every_resource_uses_the_stacks_explicit_provider(cloud: str, stack_file: Path) -> None:
    assert provider_problems(preview(stack_file).resources) == []


@pytest.mark.parametrize(("cloud", "stack_file"), cases("tags"))
def test_every_taggable_resource_carries_the_workload_and_stack_tags(cloud: str, stack_file: Path) -> None:
    result = preview(stack_file)
    problems, checked = tag_problems(result.resources, result.spec.workload, result.spec.stack)
    assert problems == []
    # Guards the guard on the example stacks (a variant may leave few taggable resources: GCP direct serving).
    if not isinstance(stack_file, Variant):
        fewest = FEW_TAGGABLE.get(cloud, (5, ""))[0]
        assert checked >= fewest, f"only {checked} taggable resources: is the tag table reading the right property?"


@pytest.mark.parametrize(("cloud", "stack_file"), cases("outputs"))
def test_the_outputs_are_the_workloads_contract(cloud: str, stack_file: Path) -> None:
    result = preview(stack_file)
    legacy = cloud_stack_class(cloud).legacy_output_names
    assert set(legacy) <= set(outputs.LEGACY_NAMES), "a cloud may keep only names the contract once had"
    assert output_problems(result.stack_outputs, result.spec.workload, output_conditions(result), legacy) == []


@pytest.mark.parametrize(("cloud", "stack_file"), cases("flat-graph"))
def test_the_resource_graph_does_not_grow_with_the_node_count(cloud: str, stack_file: Path) -> None:
    if isinstance(stack_file, Variant) and (
        why := FIXED_SIZE_VARIANTS.get((stack_name_of(stack_file.path), stack_file.name))
    ):
        pytest.skip(f"one size only: {why}")
    small_overrides, large_overrides = sizes_of(preview(stack_file).spec)
    small, large = resized(stack_file, small_overrides), resized(stack_file, large_overrides)
    # Guards the guard: the size reached the program (a typo'd override would compare a stack with itself).
    assert [r.inputs for r in small.resources] != [r.inputs for r in large.resources]
    assert resource_counts(large.resources) == resource_counts(small.resources)


@pytest.mark.parametrize(("cloud", "stack_file"), cases("protect"))
def test_stateful_resources_are_protected(cloud: str, stack_file: Path) -> None:
    resources = preview(stack_file).resources
    # Guards the guard on the example stacks (a variant may keep nothing stateful: serving without access logs).
    if not isinstance(stack_file, Variant):
        if (why := HOLDS_NOTHING_STATEFUL.get(stack_name_of(stack_file))) is not None:
            assert stateful_resources(resources) == [], why
        else:
            assert stateful_resources(resources), "no stateful resource found: is the concept table missing this cloud?"
    assert protect_problems(resources) == []


@pytest.mark.parametrize(("cloud", "stack_file"), cases("retain-on-delete"))
def test_stateful_resources_are_retained_on_delete(cloud: str, stack_file: Path) -> None:
    assert retain_problems(preview(stack_file).resources) == []


# --- the derived-defaults table names what the resources receive ------------------------------------


def property_at(inputs: object, path: str) -> object:
    """`probes[0].interval` of a resource's inputs (camelCase, as the engine sends them)."""
    node = inputs
    for part in path.split("."):
        name, _, index = part.partition("[")
        node = node[name]  # type: ignore[index]
        if index:
            node = node[int(index.rstrip("]"))]  # type: ignore[index]
    return node


def seconds_or_number(value: object) -> float:
    """30, 30.0, "30" and ISO 8601 "PT30S" / "PT2M" as a number (Azure takes durations as strings)."""
    text = str(value)
    if text.startswith("PT") and text[-1] in "SM":
        return float(text[2:-1]) * (60 if text.endswith("M") else 1)
    return float(text)


DEFAULTS_CASES = [(cloud, case) for cloud, case in VARIANT_CASES if case.name == DEFAULTS_VARIANT]


def test_every_cloud_that_trains_has_an_omitted_defaults_variant() -> None:
    trains = {cloud for cloud in registry.deployable() if registry.get(cloud).deploys("training")}
    assert trains <= {cloud for cloud, _ in DEFAULTS_CASES}


@pytest.mark.parametrize(("cloud", "variant"), DEFAULTS_CASES, ids=[stack_id(v) for _, v in DEFAULTS_CASES])
def test_omitted_defaults_are_filled_from_the_cloud_and_the_plan(cloud: str, variant: Variant) -> None:
    """With tier, capacity, throughput, mount path, checkpoint path and head node left out, the stack previews,
    gets the cloud's catalog defaults, and the table prints the derived capacity where the resource takes it."""
    from accelstack.planner.defaults import derived_defaults
    from accelstack.planner.pricing import PriceBook

    result = preview(variant)
    description = registry.get(cloud)
    catalog = description.catalog
    training = result.spec.training
    lustre = training.storage.lustre
    assert lustre is not None and lustre.mount_path == catalog.default_mount_path
    assert lustre.tier == description.parallel_fs_tier(None).name
    if training.storage.checkpoints is not None:
        assert training.storage.checkpoints.path == f"{catalog.default_mount_path}/checkpoints"
    assert training.scheduler.head_node.instance_type == catalog.default_head_node
    rows = derived_defaults(result.spec, catalog=catalog, prices=PriceBook.from_prices(description.prices))
    (capacity,) = [row for row in rows if row.path == "training.storage.lustre.capacityGiB"]
    placed = catalog.parallel_fs[lustre.tier].capacity_property
    assert placed is not None, f"{cloud}: the tier's capacity property is not declared"
    (on_resource,) = [row for row in rows if row.kind == "resource" and row.path.endswith(f".{placed.prop}")]
    expected = placed.convert(float(capacity.value)) if placed.convert else float(capacity.value) * placed.scale
    assert float(on_resource.value) == pytest.approx(expected)


@pytest.mark.parametrize(("cloud", "stack_file"), cases("derived"))
def test_every_derived_default_placed_on_a_resource_is_what_the_resource_receives(cloud, stack_file):
    from accelstack.planner.defaults import derived_defaults
    from accelstack.planner.pricing import PriceBook

    result = preview(stack_file)
    description = registry.get(cloud)
    rows = derived_defaults(result.spec, catalog=description.catalog, prices=PriceBook.from_prices(description.prices))
    placed = [row for row in rows if row.kind == "resource"]
    if result.spec.workload == "serving":
        assert placed, "a serving stack places its plan on resources"
    for row in placed:
        name, _, prop = row.path.partition(".")
        (resource,) = [r for r in result.resources if r.name == name and r.type == row.resource_type] or [None]
        assert resource is not None, f"{row.target}: no {row.resource_type} named {name}"
        received = property_at(resource.inputs, prop)
        expected = row.value
        if row.resource_type == "azure-native:servicebus:Queue" and prop == "lockDuration":
            expected = min(float(row.value), 300)  # the note says so: Service Bus locks at most 5 minutes
        if row.resource_type == "gcp:pubsub/subscription:Subscription" and prop == "ackDeadlineSeconds":
            expected = max(10, min(float(row.value), 600))
        assert seconds_or_number(received) == pytest.approx(float(expected)), row.target


# --- the training recipe's plain nodes ---------------------------------------------------------------

PLAIN_CASES = [(cloud, case) for cloud, case in VARIANT_CASES if case.name == PLAIN_NODES_VARIANT]


def cloud_configs(value: object) -> list[str]:
    """Every `#cloud-config` document in a resource's inputs, plain or base64 (as each cloud takes user data)."""
    if isinstance(value, dict):
        return [text for item in value.values() for text in cloud_configs(item)]
    if isinstance(value, list):
        return [text for item in value for text in cloud_configs(item)]
    if not isinstance(value, str):
        return []
    if value.startswith("#cloud-config"):
        return [value]
    try:
        decoded = base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return []
    return [decoded] if decoded.startswith("#cloud-config") else []


def test_every_cloud_that_trains_has_a_plain_nodes_variant() -> None:
    trains = {cloud for cloud in registry.deployable() if registry.get(cloud).deploys("training")}
    assert trains <= {cloud for cloud, _ in PLAIN_CASES}


@pytest.mark.parametrize(("cloud", "variant"), PLAIN_CASES, ids=[stack_id(v) for _, v in PLAIN_CASES])
def test_plain_nodes_mount_the_file_system_the_stack_exports(cloud: str, variant: Variant) -> None:
    """Without a scheduler, the node group boots one cloud-config on every cloud: the file system the stack
    exports (lustreAddress, lustreMountName) in fstab at the spec's mount path, mounted by runcmd after the
    client is installed when missing, and the jobs' environment file."""
    result = preview(variant)
    lustre = result.spec.training.storage.lustre
    assert lustre is not None
    boots = [text for r in result.resources if r.custom for text in cloud_configs(r.inputs)]
    assert len(boots) == 1, f"{cloud}: {len(boots)} node boot documents"
    config = yaml.safe_load(boots[0])
    files = {entry["path"]: entry for entry in config["write_files"]}
    source, mount_path, fstype, options, *_ = files["/etc/fstab"]["content"].split()
    exported = result.stack_outputs
    assert source == f"{exported['lustreAddress']}@tcp:/{exported['lustreMountName']}"
    assert (mount_path, fstype) == (lustre.mount_path, "lustre")
    assert "_netdev" in options.split(",")
    install, mkdir, mount = config["runcmd"]
    assert install[:2] == ["bash", "-c"] and install[2].startswith("command -v mount.lustre >/dev/null ||")
    assert (mkdir, mount) == (["mkdir", "-p", lustre.mount_path], ["mount", lustre.mount_path])
    environment = files["/etc/accelstack/training.env"]["content"]
    assert f"ACCELSTACK_CHECKPOINT_INTERVAL_SECONDS={int(exported['checkpointIntervalSeconds'])}\n" in environment


# --- features follow from parts --------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", registry.deployable())
def test_the_clouds_workloads_and_features_follow_from_the_parts_it_implements(cloud: str) -> None:
    from accelstack.components.recipes.capabilities import implemented

    description = registry.get(cloud)
    built = implemented(description)
    assert built.workloads == description.workloads
    assert description.features == built.features, "a feature claimed without its part, or built and unclaimed"


def test_a_feature_claimed_without_its_part_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelstack.clouds.base import Feature
    from accelstack.components.aws.training import AwsTrainingParts
    from accelstack.components.recipes.capabilities import implemented

    monkeypatch.setattr(AwsTrainingParts, "slurm_cluster", None)
    aws = registry.get("aws")
    assert Feature.SLURM in aws.features and Feature.SLURM not in implemented(aws).features


def test_a_feature_whose_part_loses_its_mark_is_no_longer_the_clouds(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelstack.clouds.base import Feature
    from accelstack.components.azure.serving import AzureServingParts
    from accelstack.components.recipes.capabilities import implemented
    from accelstack.components.recipes.implements import implements

    azure = registry.get("azure")
    assert Feature.WARM_POOL in implemented(azure).features
    monkeypatch.setattr(AzureServingParts, "warm_capacity", lambda self, group: None)  # the standby pool, gone
    assert Feature.WARM_POOL not in implemented(azure).features
    with pytest.raises(TypeError, match="Feature members"):
        implements("warm-pool")  # type: ignore[arg-type]


# --- every kind the components can create is previewed somewhere --------------------------------------


def test_every_kind_the_components_can_create_is_previewed_by_a_stack_or_variant() -> None:
    """The packs judge what the conformance suite previews: a resource kind the components can create that no
    example stack or variant previews (a capacity, scheduler or tier nobody switched on) would reach a user's
    `up` unjudged, as the Capacity Block's scheduled actions once did. Add the variant that creates it."""
    made = component_kinds()
    previewed = {r.type for _, case in [*CASES, *VARIANT_CASES] for r in preview(case).resources}
    # The cross-cloud readers a serving stack declares in another cloud's training account: the six pairs of
    # tests/conformance/test_cross_cloud_handoff.py preview them.
    from tests.conformance.test_cross_cloud_handoff import PAIRS, pair_capture

    previewed |= {r.type for training, serving in PAIRS for r in pair_capture(training, serving).resources}
    # The organization kinds a landing stack makes: its shipped examples (docs/landing.md).
    from accelstack.engine.preview import preview_stack
    from accelstack.examples import LANDING_EXAMPLES

    repo = Path(__file__).resolve().parents[2]
    for name in LANDING_EXAMPLES:
        landing = preview_stack(repo / "stacks" / f"Pulumi.{name}.yaml", [], repo)
        previewed |= {r.type for r in landing.resources}
    assert {"aws:autoscaling/schedule:Schedule", "gcp:compute/resizeRequest:ResizeRequest"} <= set(made)
    missing = {token: where for token, where in sorted(made.items()) if token not in previewed}
    assert missing == {}, "kinds the components create that no example stack or variant (cloud_stacks) previews"


def test_the_component_scan_counts_what_is_created_not_what_is_named(tmp_path: Path) -> None:
    """Guards the guard: a class instantiated, or picked to be, counts; one named only in an annotation or to
    read an existing resource (`.get`) does not; a dynamic resource counts as the dynamic kind."""
    (tmp_path / "part.py").write_text(
        "import pulumi_aws as aws\n"
        "import pulumiverse_time as time\n"
        "from pulumi_gcp import compute\n"
        "from pulumi.dynamic import Resource\n"
        "class Import(Resource):\n    pass\n"
        "def build(vpc: aws.ec2.Vpc) -> aws.ec2.Subnet:\n"
        "    existing = aws.ec2.SecurityGroup.get('sg', 'sg-1')\n"
        "    kind = aws.autoscaling.Schedule if existing else aws.autoscaling.Policy\n"
        "    compute.Disk('d')\n"
        "    time.Sleep('wait', create_duration='1s')\n"
        "    return kind('s')\n"
    )
    kinds = component_kinds(tmp_path)
    assert set(kinds) == {
        "aws:autoscaling/schedule:Schedule",
        "aws:autoscaling/policy:Policy",
        "gcp:compute/disk:Disk",
        "time:index/sleep:Sleep",
        "pulumi-python:dynamic:Resource",
    }
