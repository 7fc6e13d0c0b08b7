"""Every registered cloud's description is well-formed, and the facts a training or serving stack is built
on (fabric per machine type, parallel-FS steps, what is priced) are the documented ones.

The generic checks run over `registry.names()`, so a cloud registered later is checked the same way.
"""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.clouds import registry
from accelstack.clouds.base import Cloud, Feature

CLOUDS = registry.names()
REPO = Path(__file__).resolve().parents[2]
FABRICS = {"efa", "infiniband", "gpudirect-tcpx", "gpudirect-tcpxo", "rdma", "roce"}
VENDORS = {"nvidia", "amd", "aws-trainium", "aws-inferentia", "google-tpu"}
# What AWS's description does not (yet) say, pinned exactly so that fixing it makes this fail and shrink:
# it prices its CPU head nodes without listing them (the catalog holds accelerated types only), and the
# planner has no FSx price for PERSISTENT_1 or SCRATCH_1 (`PriceBook.lustre` raises for them).
PRICED_OUTSIDE_CATALOG = {
    "aws": {"m7i.2xlarge", "m7i.xlarge"},
    # The Slurm head node sizes (general purpose, no accelerator: not in the accelerated catalog).
    "azure": {"Standard_D2s_v5", "Standard_D4s_v5", "Standard_D8s_v5", "Standard_D16s_v5"},
    "gcp": {"n2-standard-4", "n2-standard-8", "n2-standard-16", "n2-standard-32"},
    "oci": {"VM.Standard.E5.Flex"},
}
UNPRICED_FS_TIERS = {"aws": {"PERSISTENT_1", "SCRATCH_1"}}


def cloud(name: str) -> Cloud:
    return registry.get(name)


def test_registry_holds_the_three_clouds_and_each_names_its_components():
    assert {"aws", "azure", "gcp"} <= set(CLOUDS)
    assert {"aws", "azure", "gcp"} <= set(registry.deployable())
    for name in ("aws", "azure", "gcp"):
        assert registry.get(name).components == f"accelstack.components.{name}"


def test_a_workload_its_cloud_does_not_build_is_refused_at_workload():
    """A cloud's components can land one workload at a time: a stack of a workload they do not build is an
    error at `workload` when previewed or deployed, a warning when validated."""
    from accelstack.spec import SpecError
    from accelstack.spec.loader import load_stack, spec_warnings

    serving_stack = STACKS / "Pulumi.aws-serving.yaml"
    with registry.registered(dataclasses.replace(registry.get("aws"), workloads=frozenset({"training"}))):
        with pytest.raises(SpecError) as error:
            load_stack(serving_stack, deploy=True)
        [problem] = [p for p in error.value.problems if p.path == "workload"]
        assert "'serving' stacks are not deployable on aws yet (its components build training)" in problem.message
        warnings = spec_warnings(load_stack(serving_stack))
        assert any(w.path == "workload" for w in warnings)
    assert load_stack(serving_stack, deploy=True).workload == "serving"


def test_unknown_cloud_names_the_registered_ones():
    with pytest.raises(ValueError, match=r"unknown cloud 'nimbus'; registered: .*azure.*gcp"):
        registry.get("nimbus")


@pytest.mark.parametrize("name", CLOUDS)
def test_description_names_agree(name):
    c = cloud(name)
    assert c.name == name == c.catalog.cloud
    assert c.title and c.account_kind and c.pulumi_packages and c.features


@pytest.mark.parametrize("name", CLOUDS)
def test_catalog_is_dated_and_sourced(name):
    c = cloud(name)
    for checked in (c.catalog.checked, c.prices.checked):
        assert datetime.date.fromisoformat(checked) <= datetime.date(2026, 12, 31)
    assert c.catalog.sources and all(source.strip() for source in c.catalog.sources)
    assert c.prices.source.strip()


@pytest.mark.parametrize("name", CLOUDS)
def test_instance_rows_are_well_formed(name):
    catalog = cloud(name).catalog
    assert catalog.instances
    # Keys are the names, and no two differ only in case (Azure matches VM sizes case-insensitively).
    assert all(key == itype.name for key, itype in catalog.instances.items())
    assert len({n.lower() for n in catalog.instances}) == len(catalog.instances)
    for itype in catalog.instances.values():
        assert itype.accelerators > 0 and itype.accelerator_memory_gib > 0, itype
        assert itype.vcpus > 0 and itype.memory_gib > 0 and itype.network_cards >= 1, itype
        assert itype.vendor in VENDORS, itype
        # A fabric is named exactly when the node configures fabric interfaces, and its bandwidth
        # (0: unknown) only then.
        assert (itype.fabric is not None) == (itype.fabric_interfaces > 0), itype
        assert itype.fabric is None or itype.fabric in FABRICS, itype
        assert itype.fabric_gbps == 0 or itype.has_fabric, itype


@pytest.mark.parametrize("name", CLOUDS)
def test_features_match_the_catalog(name):
    c = cloud(name)
    fabric_types = [i for i in c.catalog.instances.values() if i.has_fabric]
    time_boxed = [i for i in c.catalog.instances.values() if i.time_boxed_reservation]
    assert (Feature.RDMA_FABRIC in c.features) == bool(fabric_types)
    assert (Feature.TIME_BOXED_RESERVATION in c.features) == bool(time_boxed)
    assert (Feature.MANAGED_LUSTRE in c.features) == bool(c.catalog.parallel_fs)


@pytest.mark.parametrize("name", CLOUDS)
def test_every_feature_a_deployable_cloud_lacks_says_why_in_its_own_terms(name):
    """SkyPilot's habit: an unsupported feature carries the cloud's reason, and the spec error says it."""
    c = cloud(name)
    assert not set(c.unsupported) & c.features, f"{name}: a reason for a feature it has"
    if c.deployable:
        missing = set(Feature) - c.features
        assert missing == set(c.unsupported), f"{name}: no reason for {sorted(missing - set(c.unsupported))}"
        assert all(len(reason) > 40 for reason in c.unsupported.values())


def _with_nodes(**update):
    def change(spec):
        training = spec.training
        nodes = training.nodes.model_copy(update=update)
        return spec.model_copy(update={"training": training.model_copy(update={"nodes": nodes})})

    return change


# How a training stack asks for each feature a cloud may lack (a feature missing here fails the test below).
ASKING = {
    Feature.FLEX_START: _with_nodes(capacity="flex-start", max_run_hours=24),
    Feature.TIME_BOXED_RESERVATION: _with_nodes(capacity="capacity-block", reservation_id="reservation-1"),
    Feature.OBJECT_STORE_NETWORK_RULES: lambda spec: spec.model_copy(
        update={"training": spec.training.model_copy(update={"artifact_reader_subnets": ["subnet-1"]})}
    ),
    Feature.SPOT: _with_nodes(capacity="spot"),
    Feature.MANAGED_SCHEDULER: lambda spec: spec.model_copy(
        update={
            "training": spec.training.model_copy(
                update={"scheduler": spec.training.scheduler.model_copy(update={"kind": "managed"})}
            )
        }
    ),
    Feature.SLURM_ACCOUNTING: lambda spec: spec.model_copy(
        update={
            "training": spec.training.model_copy(
                update={"scheduler": spec.training.scheduler.model_copy(update={"accounting": "database"})}
            )
        }
    ),
    Feature.CROSS_ACCOUNT_ARTIFACTS: lambda spec: spec.model_copy(
        update={"training": spec.training.model_copy(update={"artifact_readers": ["reader-account"]})}
    ),
}
# What only a serving stack asks for: a cloud that builds no serving stack is refused at `workload` before these.
SERVING_FEATURES = {
    Feature.ADMISSION_QUEUE,
    Feature.REPLICA_ADMISSION,
    Feature.WAF_RATE_LIMIT,
    Feature.WARM_POOL,
    Feature.QUEUE_DEPTH_SCALING,
    Feature.LOAD_BALANCER_SCALING,
}


@pytest.mark.parametrize("name", CLOUDS)
def test_the_spec_error_for_a_missing_feature_gives_the_clouds_reason(name):
    from accelstack.spec.loader import load_stack
    from accelstack.spec.validators import cloud_offers_what_the_stack_asks

    c = cloud(name)
    if not c.deploys("training"):
        pytest.skip(f"{name} builds no training stack to ask from")
    base = load_stack(REPO / "stacks" / f"Pulumi.{name}-training.yaml")
    for feature, reason in c.unsupported.items():
        if feature in SERVING_FEATURES and not c.deploys("serving"):
            continue
        assert feature in ASKING, f"{feature.value}: add how a stack asks for it"
        spec = ASKING[feature](base)
        problems = [p for p in cloud_offers_what_the_stack_asks(spec) if feature.value in p.message]
        assert problems, f"{name}: asking for {feature.value} raised nothing"
        assert all(reason in p.message for p in problems), problems


@pytest.mark.parametrize("name", CLOUDS)
def test_regions_are_listed_once_and_hold_the_price_region(name):
    c = cloud(name)
    assert c.catalog.regions and len(set(c.catalog.regions)) == len(c.catalog.regions)
    assert c.prices.region in c.catalog.regions


@pytest.mark.parametrize("name", CLOUDS)
def test_every_priced_instance_is_in_the_catalog(name):
    c = cloud(name)
    assert all(price > 0 for price in c.prices.on_demand_hourly.values())
    outside = set(c.prices.on_demand_hourly) - set(c.catalog.instances)
    assert outside == PRICED_OUTSIDE_CATALOG.get(name, set())


@pytest.mark.parametrize("name", CLOUDS)
def test_every_parallel_fs_tier_is_priced_or_said_not_priced(name):
    c = cloud(name)
    priced = {key.split("/", 1)[0] for key in c.prices.parallel_fs_gb_month}
    assert priced <= set(c.catalog.parallel_fs), "a price for a tier the catalog does not have"
    unpriced = {
        tier for tier in c.catalog.parallel_fs if tier not in priced and not any(tier in n for n in c.prices.not_priced)
    }
    assert unpriced == UNPRICED_FS_TIERS.get(name, set())


@pytest.mark.parametrize("name", CLOUDS)
def test_parallel_fs_steps_accept_their_bounds_and_reject_between_steps(name):
    for tier in cloud(name).catalog.parallel_fs.values():
        assert tier.capacity_allowed(tier.min_gib), tier
        assert not tier.capacity_allowed(tier.min_gib - 1), tier
        if tier.min_gib + 1 not in tier.first_steps_gib:
            assert not tier.capacity_allowed(tier.min_gib + 1), tier
        if tier.max_gib is not None:
            assert tier.capacity_allowed(tier.max_gib) and not tier.capacity_allowed(tier.max_gib + tier.increment_gib)
        assert str(tier.increment_gib) in tier.capacity_rule()


@pytest.mark.parametrize("name", CLOUDS)
def test_prices_are_positive_and_share_aws_keys(name):
    prices = cloud(name).prices
    # A cloud that sells no interruptible capacity prices none (Vultr): zero, never a guessed discount.
    assert 0 < prices.spot_discount < 1 if Feature.SPOT in cloud(name).features else prices.spot_discount == 0
    assert prices.object_gb_month > 0 and prices.block_gb_month > 0
    assert all(value > 0 for value in prices.extra.values())
    # The same concept carries the same key on every cloud (the planner reads them by key).
    assert set(prices.extra) <= set(registry.get("aws").prices.extra)


@pytest.mark.parametrize("name", CLOUDS)
def test_limits_are_positive_counts(name):
    assert all(isinstance(v, int) and v > 0 for v in cloud(name).limits.values())


# --- Azure --------------------------------------------------------------------------------------


def test_azure_nd_h100_v5_has_eight_ndr_ports_at_3200_gbps():
    nd = cloud("azure").catalog.instance("Standard_ND96isr_H100_v5")
    assert (nd.accelerator, nd.accelerators, nd.accelerator_memory_gib) == ("H100", 8, 80)
    assert (nd.fabric, nd.fabric_interfaces, nd.fabric_gbps) == ("infiniband", 8, 3200)
    assert (nd.vcpus, nd.memory_gib) == (96, 1900)


def test_azure_ib_generations_and_vendors():
    instances = cloud("azure").catalog.instances
    assert instances["Standard_ND96isr_H200_v5"].accelerator_memory_gib == 141
    assert instances["Standard_ND96isr_MI300X_v5"].vendor == "amd"
    assert instances["Standard_ND96isr_MI300X_v5"].fabric_gbps == 3200
    # A100 v4 sizes are HDR: 8 x 200 Gb/s.
    assert instances["Standard_ND96amsr_A100_v4"].fabric_gbps == 1600
    assert instances["Standard_ND96asr_v4"].fabric_gbps == 1600
    assert instances["Standard_ND96asr_v4"].accelerator_memory_gib == 40


def test_azure_nc_sizes_have_no_infiniband():
    nc = [i for n, i in cloud("azure").catalog.instances.items() if n.startswith("Standard_NC")]
    assert len(nc) == 5 and not any(i.has_fabric for i in nc)


def test_azure_unknown_size_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown azure instance type 'Standard_ND96_H100'; allowed: .*_v5"):
        cloud("azure").catalog.instance("Standard_ND96_H100")


def test_amlfs_skus_take_their_own_throughput_and_steps():
    fs = cloud("azure").catalog.parallel_fs
    assert {name: tier.throughput_per_tib for name, tier in fs.items()} == {
        "AMLFS-Durable-Premium-40": (40,),
        "AMLFS-Durable-Premium-125": (125,),
        "AMLFS-Durable-Premium-250": (250,),
        "AMLFS-Durable-Premium-500": (500,),
    }
    tib = 1024
    p125 = fs["AMLFS-Durable-Premium-125"]
    assert [t for t in (8, 16, 24, 32, 128, 144) if p125.capacity_allowed(t * tib)] == [16, 32, 128]
    p40 = fs["AMLFS-Durable-Premium-40"]
    assert [t for t in (16, 48, 96, 100, 768, 816) if p40.capacity_allowed(t * tib)] == [48, 96, 768]
    p500 = fs["AMLFS-Durable-Premium-500"]
    assert p500.capacity_allowed(4 * tib) and not p500.capacity_allowed(6 * tib)


def test_azure_infiniband_cluster_is_one_single_placement_group():
    azure = cloud("azure")
    assert azure.limits["infiniband_cluster_max_vms"] == 100
    assert Feature.TIME_BOXED_RESERVATION not in azure.features
    assert azure.pulumi_packages >= {"azure-native"} and azure.account_kind == "subscription"


# --- Google Cloud -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("machine", "fabric", "fabric_nics", "nics"),
    [
        ("a3-highgpu-8g", "gpudirect-tcpx", 4, 5),
        ("a3-megagpu-8g", "gpudirect-tcpxo", 8, 9),
        ("a3-ultragpu-8g", "rdma", 8, 10),
        ("a4-highgpu-8g", "rdma", 8, 10),
    ],
)
def test_gcp_gpudirect_fabric_per_machine_type(machine, fabric, fabric_nics, nics):
    itype = cloud("gcp").catalog.instance(machine)
    assert (itype.fabric, itype.fabric_interfaces, itype.network_cards) == (fabric, fabric_nics, nics)
    assert itype.accelerators == 8


def test_gcp_a2_and_g2_have_no_gpudirect_fabric():
    instances = cloud("gcp").catalog.instances
    plain = [i for n, i in instances.items() if n.startswith(("a2-", "g2-"))]
    assert len(plain) == 17 and not any(i.has_fabric for i in plain)
    assert instances["g2-standard-48"].accelerators == 4 and instances["g2-standard-48"].accelerator == "L4"


def test_gcp_a4_is_calendar_mode_only():
    gcp = cloud("gcp")
    a4 = gcp.catalog.instance("a4-highgpu-8g")
    assert a4.time_boxed_reservation and (a4.accelerator, a4.vcpus, a4.memory_gib) == ("B200", 224, 3968)
    assert "a4-highgpu-8g" not in gcp.prices.on_demand_hourly
    assert any(entry.startswith("a4-highgpu-8g") for entry in gcp.prices.not_priced)
    assert gcp.limits["calendar_mode_max_days"] == 90


def test_gcp_managed_lustre_tiers_and_steps():
    fs = cloud("gcp").catalog.parallel_fs
    lustre = [t for t in fs.values() if t.protocol == "lustre"]
    assert sorted(t.throughput_per_tib[0] for t in lustre) == [125, 250, 500, 1000]
    fastest = fs["managed-lustre-1000"]
    assert [g for g in (4_500, 9_000, 13_500, 18_000) if fastest.capacity_allowed(g)] == [9_000, 18_000]
    # Up to the step threshold only: above it the step is 72,000 GiB and the instance can never grow there.
    assert fastest.capacity_allowed(1_530_000) and not fastest.capacity_allowed(1_539_000)
    slowest = fs["managed-lustre-125"]
    assert slowest.min_gib == 72_000 and not slowest.capacity_allowed(36_000)


def test_gcp_prices_are_us_central1_with_spot_forty_percent_off():
    prices = cloud("gcp").prices
    assert prices.region == "us-central1"
    assert prices.on_demand_hourly["a3-megagpu-8g"] == pytest.approx(93.400712807)
    assert prices.spot_discount == pytest.approx(0.40)
    assert cloud("gcp").limits["compact_placement_max_vms_a3"] == 96


# --- The CLI with a described-only cloud ----------------------------------------------------------

STACKS = Path(__file__).resolve().parents[2] / "stacks"


HEAD_NODES = {"azure": "Standard_D8s_v5", "gcp": "n2-standard-8"}
ZONES = {"gcp": {"availabilityZone": "us-central1-b"}}  # GCP training names its zone
ACCOUNTS = {
    "azure": {
        "account": {
            "subscriptionId": "11111111-1111-4111-8111-111111111111",
            "tenantId": "22222222-2222-4222-8222-222222222222",
            "location": "eastus",
        },
        "other": "33333333-3333-4333-8333-333333333333",
        "region": "eastus",
    },
    "gcp": {
        "account": {"projectId": "acme-train-prod", "region": "us-central1"},
        "other": "acme-serve-prod",
        "region": "us-central1",
    },
}


def _described_cloud_stack(tmp_path: Path, name: str) -> None:
    """The AWS training example moved to `name`: its account block and ids in that cloud's forms."""
    (tmp_path / "Pulumi.yaml").write_text((STACKS.parent / "Pulumi.yaml").read_text())
    document = yaml.safe_load((STACKS / "Pulumi.aws-training.yaml").read_text())
    config = document["config"]
    facts = ACCOUNTS[name]
    own = facts["account"].get("subscriptionId") or facts["account"]["projectId"]
    config.pop("aws:region")
    config["accelstack:cloud"] = name
    config["accelstack:account"] = facts["account"]
    config["accelstack:separation"] = {
        "trainingAccounts": [own],
        "servingAccounts": [facts["other"]],
        "allowedRegions": [facts["region"]],
    }
    training = config["accelstack:training"]
    training["artifactReaders"] = [facts["other"]]
    training["storage"].pop("lustre")  # the cloud's default file system, mounted at its default path
    training["storage"]["checkpoints"].pop("path")  # so checkpoints default under it (AWS's is /fsx)
    for scheme in cloud(name).catalog.object_uri_schemes[:1]:  # the cloud's own object store, where it says
        for block in ("datasets", "checkpoints"):
            uri = training["storage"][block]["uri"]
            training["storage"][block]["uri"] = f"{scheme}://{uri.partition('://')[2]}"
    training["nodes"] = {"instanceType": next(iter(cloud(name).catalog.instances)), "count": 1, "capacity": "on-demand"}
    training["scheduler"] = {"kind": "slurm", "headNode": {"instanceType": HEAD_NODES[name]}}
    training["network"] = {"vpcCidr": "10.20.0.0/16", **ZONES.get(name, {})}
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / f"Pulumi.{name}-training.yaml").write_text(yaml.safe_dump(document))


@pytest.mark.parametrize("name", ["azure", "gcp"])
def test_a_described_cloud_previews_nothing_and_says_so_at_cloud(tmp_path, name):
    """A stack on a cloud without components: preview refuses at `cloud` (exit 2, no traceback, no worker)
    naming the deployable clouds; validate says the same as a warning at `cloud`. (The cloud is registered
    here without its components, as a described-only cloud such as OCI was before its components.)"""
    _described_cloud_stack(tmp_path, name)
    stack = f"{name}-training"
    # Without its rules too: a described-only cloud has none (the AWS-shaped values would fail Azure's).
    with registry.registered(dataclasses.replace(registry.get(name), components=None, rules=())):
        preview = CliRunner().invoke(app, ["preview", "--project-dir", str(tmp_path), stack])
        validate = CliRunner().invoke(app, ["validate", "--project-dir", str(tmp_path), stack])
    assert preview.exit_code == 2, preview.output
    assert preview.exception is None or isinstance(preview.exception, SystemExit)
    assert f"{stack}: cloud: '{name}' is described (catalog, prices) but not deployable yet" in preview.output
    assert "deployable: aws" in preview.output
    assert "Traceback" not in preview.output
    assert f"{stack}: cloud: warning: '{name}' is described" in validate.output, validate.output


@pytest.mark.parametrize("uri", ["s3://acme-train-datasets", "gs://acme-train-datasets"])
def test_object_uris_must_use_the_clouds_own_store(tmp_path, uri):
    """A stack moved between clouds keeps its structure; a URI left pointing at another cloud's store fails at
    its path, naming the scheme this cloud takes; the cloud's own scheme passes."""
    _described_cloud_stack(tmp_path, "gcp")
    stack_file = tmp_path / "stacks" / "Pulumi.gcp-training.yaml"
    document = yaml.safe_load(stack_file.read_text())
    document["config"]["accelstack:training"]["storage"]["datasets"]["uri"] = uri
    stack_file.write_text(yaml.safe_dump(document))
    result = CliRunner().invoke(app, ["validate", "--project-dir", str(tmp_path), "gcp-training"])
    if uri.startswith("s3://"):
        assert result.exit_code == 2, result.output
        assert (
            "gcp-training: training.storage.datasets.uri: 's3://acme-train-datasets': on gcp object URIs start "
            "with gs:// (Cloud Storage); allowed scheme: gs://"
        ) in result.output
        assert "training.storage.checkpoints.uri" not in result.output  # already gs://
    else:
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize("name", CLOUDS)
def test_admission_limits_are_ordered_and_inside_the_neutral_bounds(name):
    from accelstack.spec.models import AdmissionPolicy

    limits = cloud(name).catalog.admission
    if limits is None:
        pytest.skip(f"{name} has no admission queue")
    fields = AdmissionPolicy.model_fields
    for key in ("ttl_seconds", "max_receive_count", "per_client_rate"):
        least, most = getattr(limits, key)
        bounds = {type(m).__name__: m for m in fields[key].metadata}
        assert bounds["Ge"].ge <= least <= most <= bounds["Le"].le, key
    assert limits.rate_windows and all(0 < w <= 86_400 for w in limits.rate_windows)
    assert fields["rate_window_seconds"].default in limits.rate_windows  # the default deploys everywhere
    least, most = limits.max_receive_count
    assert least <= limits.default_max_receive_count <= most  # the cloud's own default deploys on it


def test_azure_maps_every_window_its_catalog_allows_to_a_waf_duration():
    from accelstack.clouds.azure.serving_rules import RATE_LIMIT_DURATIONS

    assert set(cloud("azure").catalog.admission.rate_windows) == set(RATE_LIMIT_DURATIONS)
