"""The neutral rules (`accelstack.spec.catalog_rules`) on every registered cloud: each cloud's example stacks
broken the same way fail at the same config path, in that cloud's words, with what its catalog and its declared
limits say (a made-up cloud with no rule module of its own: tests/planner/test_made_up_cloud.py)."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest

from accelstack.clouds import registry
from accelstack.spec import SpecError, parse_spec, spec_warnings
from accelstack.spec.catalog_rules import RENDERERS
from accelstack.spec.loader import apply_overrides, load_stack, read_stack_file
from accelstack.spec.models import ServingStack, TrainingStack
from accelstack.spec.problems import Level, Problem
from accelstack.spec.rule_registry import in_run_order

STACKS = Path(__file__).resolve().parents[2] / "stacks"
# A cloud's components may build one workload before the other (Cloud.workloads): its stacks are those it deploys.
CLOUDS = [name for name in registry.names() if registry.get(name).deploys("training")]
SERVING_CLOUDS = [name for name in registry.names() if registry.get(name).deploys("serving")]
CLOUD_WORKLOADS = [
    (cloud, workload) for cloud in registry.names() for workload in sorted(registry.get(cloud).workloads)
]


def stack_file(cloud: str, workload: str) -> Path:
    return STACKS / f"Pulumi.{cloud}-{workload}.yaml"


def problems(cloud: str, workload: str, *overrides: str) -> list[Problem]:
    """Errors if the example stack with `overrides` is rejected, else its warnings (named as load_stack names it)."""
    raw = apply_overrides(read_stack_file(stack_file(cloud, workload)), list(overrides))
    try:
        return spec_warnings(parse_spec(raw, f"{cloud}-{workload}"))
    except SpecError as exc:
        return exc.problems


def at(found: list[Problem], path: str) -> list[str]:
    return [p.message for p in found if p.path == path]


def test_every_registered_cloud_ships_the_stacks_checked_here():
    assert sorted({*CLOUDS, *SERVING_CLOUDS}) == sorted(registry.names())
    missing = [
        stack_file(cloud, workload).name
        for cloud, workload in CLOUD_WORKLOADS
        if not stack_file(cloud, workload).exists()
    ]
    assert missing == []


@pytest.mark.parametrize(("cloud", "workload"), CLOUD_WORKLOADS)
def test_a_machine_type_the_catalog_lacks_is_refused_listing_the_catalog(cloud, workload):
    described = registry.get(cloud)
    path = f"{workload}.{'nodes' if workload == 'training' else 'replicas'}.instanceType"
    [message] = at(problems(cloud, workload, f"{path}=no-such-machine.8x"), path)
    assert f"is not a supported {described.terms.machine_type}" in message
    assert message.endswith(f"allowed: {', '.join(described.catalog.instances)}")
    assert not at(problems(cloud, workload), path)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_several_nodes_on_a_machine_type_without_a_fabric_are_refused(cloud):
    described = registry.get(cloud)
    instances = described.catalog.instances
    lacking = next((name for name, known in instances.items() if not known.has_fabric), None)
    if lacking is None:
        pytest.skip(f"every {cloud} machine type has a fabric")
    with_fabric = ", ".join(name for name, known in instances.items() if known.has_fabric)
    path = "training.nodes.instanceType"
    several = problems(cloud, "training", f"{path}={lacking}", "training.nodes.count=2")
    terms = described.terms
    assert f"{lacking} has no {terms.fabric}, so 2 nodes would train over {terms.without_fabric}" in " ".join(
        at(several, path)
    )
    assert any(m.endswith(f"use count: 1 or {terms.fabric_machine_type}: {with_fabric}") for m in at(several, path))
    one = problems(cloud, "training", f"{path}={lacking}", "training.nodes.count=1")
    assert not [m for m in at(one, path) if "has no" in m]


@pytest.mark.parametrize("capacity", ["spot", "capacity-block"])
@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_serving_replicas_are_on_demand(cloud, capacity):
    # A cloud that sells no such capacity also says so (its feature rule); the neutral rule speaks once.
    found = at(problems(cloud, "serving", f"serving.replicas.capacity={capacity}"), "serving.replicas.capacity")
    [message] = [m for m in found if "is not allowed for serving" in m]
    assert message.startswith(f"{capacity!r} is not allowed for serving (interruptible or time-boxed capacity")
    assert registry.get(cloud).terms.spot_serving_breaks in message
    assert message.endswith("allowed: on-demand")


@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_tensor_parallelism_beyond_the_machines_gpus_is_refused(cloud):
    spec = load_stack(stack_file(cloud, "serving"))
    assert isinstance(spec, ServingStack)
    machine = registry.get(cloud).catalog.instances[spec.serving.replicas.instance_type]
    path = "serving.replicas.tensorParallel"
    [message] = at(problems(cloud, "serving", f"{path}={machine.accelerators * 2}"), path)
    assert message == (
        f"{machine.accelerators * 2} exceeds the {machine.accelerators} {machine.accelerator} GPU(s) of {machine.name}"
    )
    assert not at(problems(cloud, "serving", f"{path}={machine.accelerators}"), path)


def rendered_workloads(cloud: str) -> list[str]:
    """The workloads whose boot data `cloud`'s rule modules render (for the limit its description declares)."""
    return sorted({str(render.workload) for render in in_run_order(RENDERERS, cloud)})


def test_a_declared_boot_data_limit_has_boot_data_to_check_and_rendered_boot_data_a_limit():
    for cloud in registry.names():
        declared = registry.get(cloud).boot_data_limit is not None
        assert declared == bool(rendered_workloads(cloud)), cloud


@pytest.mark.parametrize(
    ("cloud", "workload"), [(cloud, workload) for cloud in CLOUDS for workload in rendered_workloads(cloud)]
)
def test_boot_data_over_the_clouds_declared_limit_is_refused(cloud, workload):
    """The number is the description's: the example stack fits the shipped limit and fails a lowered one."""
    described = registry.get(cloud)
    limit = described.boot_data_limit
    assert limit is not None
    spec = load_stack(stack_file(cloud, workload))
    assert isinstance(spec, TrainingStack if workload == "training" else ServingStack)
    renders = [render for render in in_run_order(RENDERERS, cloud) if render.workload == workload]
    # One machine's boot data per entry (several may answer at one key: the head and the nodes at the scheduler).
    texts = [(data.path, data.machines, data.text) for render in renders for data in render(spec)]
    assert texts and max(limit.size(text) for _, _, text in texts) <= limit.max_bytes
    assert not [p for p in problems(cloud, workload) if "could not launch" in p.message]
    # Raw bytes against the lowered limit (gzip where the raw text is over it: tests/components/test_aws_boot_data.py),
    # so the sizes the messages name are raw even where the shipped limit counts a gzipped text.
    raw_limit = dataclasses.replace(limit, gzipped_when_over=False)
    sizes = [(path, machines, raw_limit.size(text)) for path, machines, text in texts]
    smallest = min(size for _, _, size in sizes)
    lowered_limit = dataclasses.replace(raw_limit, max_bytes=smallest - 1)
    lowered = dataclasses.replace(described, boot_data_limit=lowered_limit)
    with registry.registered(lowered):
        refused = [p for p in problems(cloud, workload) if "could not launch" in p.message]
    assert len(refused) == len(sizes)
    for path, machines, size in sizes:
        [problem] = [p for p in refused if p.path == path and machines in p.message and f" {size:,} bytes" in p.message]
        assert limit.name in problem.message
        assert f"{limit.refused_by} accepts at most {smallest - 1:,}, so " in problem.message


@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_the_replica_image_is_the_clouds_default_and_a_stated_one_is_taken_only_where_it_is_booted(cloud):
    """Omitted, imageId is the cloud's catalog default (None where its components boot their own image); stated,
    it is taken where the replica group boots it and refused where it would be ignored."""
    default = registry.get(cloud).catalog.default_replica_image
    spec = load_stack(stack_file(cloud, "serving"), ["serving.replicas.imageId=null"])
    assert isinstance(spec, ServingStack)
    assert spec.serving.replicas.image_id == default
    stated = at(
        problems(cloud, "serving", "serving.replicas.imageId=ami-0123456789abcdef0"), "serving.replicas.imageId"
    )
    if default is None:
        assert stated and "remove imageId" in stated[0], stated
    else:
        assert stated == []


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_throughput_without_a_tier_chooses_the_tier_that_offers_it(cloud):
    """`throughputPerTiB` alone picks the catalog tier selling it (Azure's and GCP's tiers each sell one), never the
    default tier refusing what the user wrote."""
    described = registry.get(cloud)
    for tier in described.catalog.parallel_fs.values():
        for throughput in tier.throughput_per_tib:
            spec = load_stack(
                stack_file(cloud, "training"),
                [
                    "training.storage.lustre.tier=null",
                    "training.storage.lustre.capacityGiB=null",
                    f"training.storage.lustre.throughputPerTiB={throughput}",
                ],
            )
            assert isinstance(spec, TrainingStack) and spec.training.storage.lustre is not None
            chosen = described.catalog.parallel_fs[spec.training.storage.lustre.tier or ""]
            assert throughput in chosen.throughput_per_tib, (tier.name, throughput)


def _neutral_bound(key: str, kind: str) -> int:
    from accelstack.spec.models import AdmissionPolicy

    field = next(f for f in AdmissionPolicy.model_fields.values() if f.alias == key)
    return next(getattr(m, kind) for m in field.metadata if hasattr(m, kind))


def neutral_least(key: str) -> int:
    return _neutral_bound(key, "ge")


def neutral_most(key: str) -> int:
    return _neutral_bound(key, "le")


# Clouds with a managed queue and WAF to bound admission (Vultr admits on the replicas: no service limits).
ADMISSION_CLOUDS = [cloud for cloud in SERVING_CLOUDS if registry.get(cloud).catalog.admission is not None]


def test_a_cloud_without_admission_limits_has_no_queue():
    assert ADMISSION_CLOUDS
    for cloud in set(SERVING_CLOUDS) - set(ADMISSION_CLOUDS):
        spec = load_stack(stack_file(cloud, "serving"))
        assert isinstance(spec, ServingStack) and spec.serving.admission.kind != "queue", cloud


@pytest.mark.parametrize("cloud", ADMISSION_CLOUDS)
def test_admission_values_outside_the_clouds_queue_and_waf_are_refused_naming_the_service(cloud):
    """One rule, each cloud's bounds: just past each end of every range fails at its key, naming the cloud's
    service and its range; the bounds themselves pass."""
    limits = registry.get(cloud).catalog.admission
    assert limits is not None
    ranges = {
        "ttlSeconds": (limits.ttl_seconds, limits.queue_service),
        "maxReceiveCount": (limits.max_receive_count, limits.queue_service),
        "perClientRate": (limits.per_client_rate, limits.rate_service),
    }
    for key, ((least, most), service) in ranges.items():
        for value in (least, most):
            assert not at(problems(cloud, "serving", f"serving.admission.{key}={value}"), f"serving.admission.{key}")
        for value in (least - 1, most + 1):
            found = at(problems(cloud, "serving", f"serving.admission.{key}={value}"), f"serving.admission.{key}")
            if not neutral_least(key) <= value <= neutral_most(key):
                continue  # the neutral model's own bound answers first
            assert found and service in found[0] and f"{least}..{most}" in found[0], (key, value, found)
    allowed = set(limits.rate_windows)
    for window in (30, 60, 120, 300, 600, 900):
        found = at(
            problems(cloud, "serving", f"serving.admission.rateWindowSeconds={window}"),
            "serving.admission.rateWindowSeconds",
        )
        assert bool(found) == (window not in allowed), (window, found)
        if found:
            assert limits.rate_service in found[0]


@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_replicas_on_gpus_other_than_nvidias_are_refused_on_every_cloud(cloud):
    """Every replica boot runs the server with NVIDIA's container runtime: a catalog machine of another vendor
    (Azure's MI300X) is refused at the key; each cloud's NVIDIA machines pass."""
    catalog = registry.get(cloud).catalog.instances
    path = "serving.replicas.instanceType"
    for machine in catalog.values():
        if not machine.accelerators:
            continue
        found = at(problems(cloud, "serving", f"{path}={machine.name}"), path)
        if machine.vendor == "nvidia":
            assert not [m for m in found if "container runtime" in m]
        else:
            assert any("NVIDIA's container runtime" in m and machine.name in m for m in found), found


@pytest.mark.parametrize(("cloud", "workload"), CLOUD_WORKLOADS)
def test_a_region_the_cloud_lacks_is_refused_the_same_way_on_every_cloud(cloud, workload):
    """One rule for every cloud: the account's region (Azure's location) and each allowed region must be in the
    cloud's dated table, an error at the key that names it; the example's own region passes."""
    described = registry.get(cloud)
    spec = load_stack(stack_file(cloud, workload))
    key = f"account.{type(spec.account).region_key()}"
    # Well formed for the cloud's account model, and no region it has (Vultr's ids are three letters).
    unknown = "zzz" if cloud == "vultr" else f"{spec.account.region}9"
    found = at(problems(cloud, workload, f"{key}={unknown}", "separation.allowedRegions=null"), key)
    assert any(described.terms.region in m and described.catalog.checked in m for m in found), found
    allowed = at(problems(cloud, workload, f"separation.allowedRegions=[{spec.account.region}, {unknown}]"),
                 "separation.allowedRegions.1")  # fmt: skip
    assert any(described.terms.region in m for m in allowed), allowed
    assert not at(problems(cloud, workload), key)


def test_a_machines_metadata_over_the_clouds_total_is_refused_once_per_machine():
    """Compute Engine bounds each metadata value (256 KB) and all of an instance's together (512 KB): the Slurm head
    carries its cloud-config and its Slurm configuration, so the two are judged together, once."""
    described = registry.get("gcp")
    limit = described.boot_data_limit
    assert limit is not None and limit.total_max_bytes == 512 * 1024
    assert not [p for p in problems("gcp", "training") if "could not launch" in p.message]
    spec = load_stack(stack_file("gcp", "training"))
    head = [
        data
        for render in in_run_order(RENDERERS, "gcp")
        for data in render(spec)
        if data.machines == "the head node" and data.beside
    ]
    [user_data] = head
    together = limit.size(user_data.text) + user_data.beside
    lowered = dataclasses.replace(described, boot_data_limit=dataclasses.replace(limit, total_max_bytes=together - 1))
    with registry.registered(lowered):
        refused = [p for p in problems("gcp", "training") if "together" in p.message]
    [problem] = [p for p in refused if "the head node" in p.message]
    assert problem.path == "training.scheduler"
    assert f"take {together:,} bytes together; Compute Engine accepts at most {together - 1:,} per machine" in (
        problem.message
    )


@pytest.mark.parametrize("kind", ["queue", "replica"])
@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_a_latency_target_beyond_the_request_ttl_is_refused_on_every_cloud(cloud, kind):
    """One rule on every cloud: the SLO fits the TTL the cloud's queue (or the replicas' wait) enforces."""
    admission = f"serving.admission.kind={kind}"
    found = problems(cloud, "serving", admission, "serving.admission.ttlSeconds=60", "serving.slo.targetSeconds=120")
    [message] = [m for m in at(found, "serving.slo.targetSeconds") if "TTL" in m]
    assert message.startswith("120 s exceeds the request TTL admission.ttlSeconds=60")
    assert message.endswith("allowed: at most 60 s, or raise admission.ttlSeconds")
    queue = registry.get(cloud).catalog.admission
    if kind == "queue" and queue is not None:
        assert f"the {queue.queue_service} queue drops it" in message
    below = problems(cloud, "serving", admission, "serving.slo.serviceSeconds=5", "serving.slo.targetSeconds=4")
    assert any("below the per-request service time 5 s" in m for m in at(below, "serving.slo.targetSeconds"))
    assert not [m for m in at(problems(cloud, "serving", admission), "serving.slo.targetSeconds") if "TTL" in m]


@pytest.mark.parametrize("cloud", SERVING_CLOUDS)
def test_a_queue_that_cannot_drain_within_the_ttl_is_warned_on_every_cloud(cloud):
    found = problems(
        cloud,
        "serving",
        "serving.admission.maxDepth=100000",
        "serving.admission.ttlSeconds=300",
        "serving.slo.serviceSeconds=1",
    )
    [message] = at(found, "serving.admission.maxDepth")
    assert "the tail expires unserved; lower maxDepth to <=" in message


def offered_clouds() -> list[str]:
    return [cloud for cloud in CLOUDS if registry.get(cloud).catalog.offers is not None]


def test_every_cloud_with_a_deployable_gpu_catalog_has_an_offers_table():
    # The parametrizations below run on each: a cloud losing its table would drop out of them silently.
    assert {"aws", "azure", "gcp"} <= set(offered_clouds())


@pytest.mark.parametrize("cloud", offered_clouds())
def test_the_offers_table_names_the_catalog_and_its_regions(cloud):
    """Every machine type has a row or is named as left out (the source had none), and the table's regions and
    the regions its source lists are the catalog's."""
    described = registry.get(cloud)
    offers = described.catalog.offers
    assert offers is not None
    left_out = set(importlib.import_module(f"accelstack.clouds.{cloud}.offers").LEFT_OUT)
    assert not left_out & set(offers.zones)
    assert set(offers.zones) | left_out == set(described.catalog.instances)
    regions = {region for where in offers.zones.values() for region in where}
    assert regions <= set(described.catalog.regions)
    assert set(offers.regions_read) <= set(described.catalog.regions)
    assert not offers.regions_read or regions <= set(offers.regions_read)


def _region_without(cloud: str) -> tuple[str, dict[str, tuple[str, ...]], str]:
    """A machine type of the table and a region its source lists that does not offer it."""
    offers = registry.get(cloud).catalog.offers
    assert offers is not None
    for machine, where in offers.zones.items():
        for region in registry.get(cloud).catalog.regions:
            if region not in where and offers.covers(region):
                return machine, dict(where), region
    raise AssertionError(f"{cloud}'s table offers every type in every region it lists")


@pytest.mark.parametrize("workload", ["training", "serving"])
@pytest.mark.parametrize("cloud", offered_clouds())
def test_a_region_that_does_not_offer_the_machine_type_is_refused_naming_those_that_do(cloud, workload):
    """The table is the cloud's (Catalog.offers); the shipped stacks' regions offer their machine types."""
    offers = registry.get(cloud).catalog.offers
    assert offers is not None
    path = f"{workload}.{'nodes' if workload == 'training' else 'replicas'}.instanceType"
    assert not [m for m in at(problems(cloud, workload), path) if "is not offered" in m]
    machine, where, elsewhere = _region_without(cloud)
    region_key = f"account.{'location' if cloud == 'azure' else 'region'}"
    found = problems(
        cloud, workload, f"{path}={machine}", f"{region_key}={elsewhere}", f"separation.allowedRegions=[{elsewhere}]"
    )
    [message] = [m for m in at(found, path) if "is not offered" in m]
    assert message.startswith(f"{machine} is not offered in {elsewhere} ({region_key}; ")
    assert f"checked {offers.checked}" in message
    assert message.endswith(f": {', '.join(sorted(where))}")
    assert "regions that offer it" in message
    # A partial source says how many regions it lists, so a short list is not read as the cloud's whole reach.
    assert (f" among the {len(offers.regions_read)} the table lists:" in message) == bool(offers.regions_read)
    ok = problems(
        cloud,
        workload,
        f"{path}={machine}",
        f"{region_key}={sorted(where)[0]}",
        f"separation.allowedRegions=[{sorted(where)[0]}]",
    )
    assert not [m for m in at(ok, path) if "is not offered" in m]


def test_gcp_serving_on_an_l4_type_is_refused_where_compute_engine_has_no_g2():
    """The G2 rows (SkyPilot's catalog @8427bbf): europe-north1 has A3 and A4 but no G2, europe-west4 has both."""
    path = "serving.replicas.instanceType"
    edits = (f"{path}=g2-standard-8", "account.region=europe-north1", "separation.allowedRegions=[europe-north1]")
    [message] = [m for m in at(problems("gcp", "serving", *edits), path) if "is not offered" in m]
    assert message.startswith("g2-standard-8 is not offered in europe-north1 (account.region; ")
    assert "europe-west4" in message and "us-central1" in message and "africa-south1" not in message
    edits = (f"{path}=g2-standard-8", "account.region=europe-west4", "separation.allowedRegions=[europe-west4]")
    assert not [m for m in at(problems("gcp", "serving", *edits), path) if "is not offered" in m]


@pytest.mark.parametrize("cloud", ["aws"])
def test_a_region_the_source_does_not_list_is_not_checked(cloud):
    # AWS's source lists 24 Regions (not the opt-in ones): a missing row there says nothing about the cloud.
    described = registry.get(cloud)
    offers = described.catalog.offers
    assert offers is not None and offers.regions_read
    unlisted = next(region for region in described.catalog.regions if region not in offers.regions_read)
    machine = next(iter(offers.zones))
    region_key = f"account.{'location' if cloud == 'azure' else 'region'}"
    found = problems(
        cloud,
        "training",
        f"training.nodes.instanceType={machine}",
        f"{region_key}={unlisted}",
        f"separation.allowedRegions=[{unlisted}]",
    )
    assert not [p for p in found if "is not offered" in p.message]


def test_azure_nd_h200_is_accepted_in_a_priced_region_outside_the_us_and_refused_where_azure_has_no_meter():
    """Real rows of the Retail Prices table (regional_prices.py): Sweden Central prices the ND H200 v5, France South
    prices no ND size; East US has no H200 meter (East US 2 has), so the shipped stack's region refuses it."""
    path = "training.nodes.instanceType"
    machine = f"{path}=Standard_ND96isr_H200_v5"
    found = problems(
        "azure", "training", machine, "account.location=swedencentral", "separation.allowedRegions=[swedencentral]"
    )
    assert not [m for m in at(found, path) if "is not offered" in m]
    for region in ("francesouth", "eastus"):
        found = problems(
            "azure", "training", machine, f"account.location={region}", f"separation.allowedRegions=[{region}]"
        )
        [message] = [m for m in at(found, path) if "is not offered" in m]
        assert message.startswith(f"Standard_ND96isr_H200_v5 is not offered in {region} (account.location; ")
        offered = message.split("regions that offer it: ")[1].split(", ")
        assert {"swedencentral", "eastus2", "japaneast", "uksouth"} <= set(offered) and region not in offered
        assert " among the " not in message  # the source covers every region of the catalog


def test_aws_p5e_is_refused_in_us_east_1_where_the_source_has_no_row():
    # A real row, not a made-up one: the H200 p5e is sold in fewer Regions than p5 and p5en, not us-east-1.
    found = problems("aws", "training", "training.nodes.instanceType=p5e.48xlarge")
    [message] = [m for m in at(found, "training.nodes.instanceType") if "is not offered" in m]
    assert message.startswith("p5e.48xlarge is not offered in us-east-1 (account.region; ")
    assert "us-east-2" in message.split("regions that offer it")[1]


@pytest.mark.parametrize(
    ("cloud", "zone"),
    [("aws", "training.network.availabilityZone=us-east-1f"), ("azure", "training.network.availabilityZone=3")],
)
def test_a_table_without_zones_checks_the_region_only(cloud, zone):
    # AWS's source names AZ IDs (use1-az2), not the per-account names a stack pins; Azure's has no zones.
    offers = registry.get(cloud).catalog.offers
    assert offers is not None and not any(z for where in offers.zones.values() for z in where.values())
    found = problems(cloud, "training", zone)
    assert not [m for m in at(found, "training.network.availabilityZone") if "is not offered" in m]


def test_a_zone_that_does_not_offer_the_machine_type_is_warned_naming_those_that_do():
    found = problems("gcp", "training", "training.nodes.instanceType=a4-highgpu-8g")  # the stack pins us-central1-a
    [warned] = [p for p in found if p.path == "training.network.availabilityZone" and "is not offered" in p.message]
    assert warned.level == Level.WARNING  # an error once the shipped stack pins a zone offering A3 Ultra and A4
    message = warned.message
    assert message.startswith("a4-highgpu-8g is not offered in zone us-central1-a")
    assert message.endswith("zones of us-central1 that offer it: us-central1-b")
    ok = problems(
        "gcp",
        "training",
        "training.nodes.instanceType=a4-highgpu-8g",
        "training.network.availabilityZone=us-central1-b",
    )
    assert not [m for m in at(ok, "training.network.availabilityZone") if "is not offered" in m]
