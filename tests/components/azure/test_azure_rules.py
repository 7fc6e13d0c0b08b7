"""`accelstack validate` refuses, at the config path and saying why, what Azure would refuse at create time
(or what the Azure components cannot build), starting from the shipped Azure training example."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file, spec_warnings
from accelstack.spec.problems import Problem

EXAMPLE = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.azure-training.yaml"
SUBNET_FIELDS = (
    "training.storage.lustre.capacityGiB",
    "training.storage.lustre.tier",
    "training.storage.lustre.throughputPerTiB",
)


def errors(*overrides: str) -> list[Problem]:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    with pytest.raises(SpecError) as caught:
        parse_spec(raw, "azure-training")
    return caught.value.problems


def at(path: str, *overrides: str) -> list[str]:
    return [p.message for p in errors(*overrides) if p.path == path]


def test_the_example_is_valid_warning_only_that_its_new_bucket_imports_nothing():
    """The example creates its dataset bucket, and Azure Managed Lustre imports only at its creation or when
    asked (importTrigger): the one warning says so; nothing else is flagged."""
    spec = parse_spec(read_stack_file(EXAMPLE), "azure-training")
    assert [w.path for w in spec_warnings(spec)] == ["training.storage.lustre.importTrigger"]


def test_more_than_a_single_placement_group_of_nodes_is_refused_with_the_reason():
    (message,) = at("training.nodes.count", "training.nodes.count=101")
    assert "InfiniBand" in message and "single placement group" in message and "100" in message


def test_a_hundred_nodes_is_the_largest_infiniband_cluster():
    spec = parse_spec(apply_overrides(read_stack_file(EXAMPLE), ["training.nodes.count=100"]), "azure-training")
    assert spec.training.nodes.count == 100


def test_capacity_block_is_refused_through_the_feature_table():
    (message,) = at("training.nodes.capacity", "training.nodes.capacity=capacity-block")
    assert "azure" in message and "aws" in message  # says where it exists


def test_spot_without_checkpoints_is_refused():
    assert at("training.storage.checkpoints", "training.nodes.capacity=spot", "training.storage.checkpoints=null")


GROUP = "/subscriptions/3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c/resourceGroups/capacity/providers/Microsoft.Compute/capacityReservationGroups/nd-h100"


def test_a_capacity_reservation_cannot_hold_a_multi_node_infiniband_scale_set():
    (message,) = at("training.nodes.reservationId", f"training.nodes.reservationId={GROUP}")
    assert "singlePlacementGroup=false" in message


def test_a_capacity_reservation_serves_one_on_demand_node():
    raw = apply_overrides(read_stack_file(EXAMPLE), [f"training.nodes.reservationId={GROUP}", "training.nodes.count=1"])
    assert parse_spec(raw, "azure-training").training.nodes.reservation_id == GROUP


def test_a_reservation_id_must_be_a_capacity_reservation_group():
    messages = at("training.nodes.reservationId", "training.nodes.reservationId=cr-0123", "training.nodes.count=1")
    assert any("capacityReservationGroups" in m for m in messages)


def test_spot_cannot_use_a_capacity_reservation():
    messages = at(
        "training.nodes.reservationId",
        f"training.nodes.reservationId={GROUP}",
        "training.nodes.capacity=spot",
        "training.nodes.count=1",
    )
    assert any("Spot" in m for m in messages)


def test_ethernet_only_sizes_cannot_form_a_multi_node_cluster():
    (message,) = at("training.nodes.instanceType", "training.nodes.instanceType=Standard_NC96ads_A100_v4")
    assert "InfiniBand" in message and "Standard_ND96isr_H100_v5" in message


def test_an_ec2_head_node_type_is_refused_on_azure():
    (message,) = at("training.scheduler.headNode.instanceType", "training.scheduler.headNode.instanceType=m7i.2xlarge")
    assert "Standard_D8s_v5" in message


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("s3://acme-train-datasets", "https://"),
        ("https://acmetraindatasets.example.com/datasets/corpus", "blob.core.windows.net"),
        ("https://Acme-Data.blob.core.windows.net/datasets/corpus", "3 to 24 lowercase"),
        ("https://acmetraindatasets.blob.core.windows.net/Data--Sets/corpus", "3 to 63 lowercase"),
    ],
)
def test_object_uris_are_blob_urls(uri, expected):
    messages = at("training.storage.datasets.uri", f"training.storage.datasets.uri={uri}")
    assert any(expected in m for m in messages), messages


def test_the_dataset_directory_is_the_blob_prefix():
    (message,) = at("training.storage.lustre.importPath", "training.storage.lustre.importPath=/datasets")
    assert "importPath: /corpus" in message


@pytest.mark.parametrize(
    ("capacity", "tier", "message"),
    [(8000, "AMLFS-Durable-Premium-500", "4096"), (4096, "AMLFS-Durable-Premium-40", "49152")],
)
def test_lustre_capacity_follows_the_skus_steps(capacity, tier, message):
    throughput = tier.rsplit("-", 1)[1]
    problems = errors(
        f"training.storage.lustre.capacityGiB={capacity}",
        f"training.storage.lustre.tier={tier}",
        f"training.storage.lustre.throughputPerTiB={throughput}",
    )
    assert any(p.path == "training.storage.lustre.capacityGiB" and message in p.message for p in problems)


def test_the_sku_fixes_the_throughput():
    assert at("training.storage.lustre.throughputPerTiB", "training.storage.lustre.throughputPerTiB=250")


def test_a_vnet_too_small_for_the_lustre_subnet_is_refused():
    (message,) = at(
        "training.network.vpcCidr",
        "training.network.vpcCidr=10.40.0.0/27",
    )
    assert "/27" in message and "/26" in message


def test_lustre_needs_the_hpc_cache_resource_provider_principal():
    (message,) = at("account.hpcCachePrincipalId", "account.hpcCachePrincipalId=null")
    assert "4392ab71-2ce2-4b0d-8770-b352745c73f5" in message


def test_zones_are_azures():
    assert at("training.network.availabilityZone", "training.network.availabilityZone=eastus-1a")


@pytest.mark.parametrize("block", ["datasets", "checkpoints"])
def test_existing_storage_accounts_are_refused_until_supported(block):
    assert at(f"training.storage.{block}.create", f"training.storage.{block}.create=false")


# --- training.artifactReaderSubnets: whose networks the checkpoint account admits ---------------------

SERVING_SUB = "7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098"
TRAINING_SUB = "3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c"


def subnet(subscription: str = SERVING_SUB, name: str = "replicas", group: str = "serving-rg") -> str:
    return (
        f"/subscriptions/{subscription}/resourceGroups/{group}/providers/Microsoft.Network/virtualNetworks/"
        f"serving-vnet/subnets/{name}"
    )


def subnets_override(*ids: str) -> str:
    return "training.artifactReaderSubnets=[" + ", ".join(ids) + "]"


@pytest.mark.parametrize(
    "bad",
    [
        "replicas",  # a name, not an id
        subnet().replace("/subnets/replicas", ""),  # the virtual network, not a subnet
        subnet().replace("Microsoft.Network", "Microsoft.Compute"),
        subnet(subscription="not-a-guid"),
        subnet() + "/",  # trailing slash
        subnet(name="-bad"),  # a subnet name starts with a letter, digit or underscore
        subnet(group="x" * 91),  # a resource group name has at most 90 characters
    ],
)
def test_a_reader_subnet_must_be_a_subnet_resource_id(bad: str):
    (message,) = at("training.artifactReaderSubnets.0", subnets_override(bad))
    assert "not a subnet resource id" in message and "replicaSubnets" in message


def test_a_reader_subnet_id_is_read_as_arm_reads_it_whatever_the_case():
    upper = subnet().replace("resourceGroups", "RESOURCEGROUPS").replace(SERVING_SUB, SERVING_SUB.upper())
    spec = parse_spec(apply_overrides(read_stack_file(EXAMPLE), [subnets_override(upper)]), "azure-training")
    assert [w for w in spec_warnings(spec) if w.path.startswith("training.artifactReader")] == []


@pytest.mark.parametrize("subscription", [TRAINING_SUB, "11111111-2222-4333-8444-555555555555"])
def test_a_subnet_of_a_subscription_that_does_not_read_the_models_is_refused(subscription: str):
    """The training subscription's own network, or a stranger's, would be let past the separation."""
    (message,) = at("training.artifactReaderSubnets.0", subnets_override(subnet(subscription)))
    assert subscription in message and "artifactReaders" in message


def test_the_same_subnet_twice_is_refused_even_in_another_case():
    (message,) = at("training.artifactReaderSubnets.1", subnets_override(subnet(), subnet().lower().upper()))
    assert "training.artifactReaderSubnets.0" in message


def test_no_more_subnets_than_the_storage_firewall_holds():
    many = [subnet(name=f"s{i}") for i in range(400)]
    (message,) = at("training.artifactReaderSubnets", subnets_override(*many))
    assert "400" in message and "399" in message
    spec = parse_spec(apply_overrides(read_stack_file(EXAMPLE), [subnets_override(*many[:399])]), "azure-training")
    assert spec.training.artifact_reader_subnets == many[:399]


def test_a_reader_without_a_subnet_is_warned_its_reads_would_be_refused():
    spec = parse_spec(
        apply_overrides(read_stack_file(EXAMPLE), ["training.artifactReaderSubnets=[]"]), "azure-training"
    )
    (warning,) = [w for w in spec_warnings(spec) if w.path.startswith("training.artifactReader")]
    assert warning.path == "training.artifactReaders.0" and "replicaSubnets" in warning.message


# --- training.artifactReaderAddresses: the public addresses readers on other clouds fetch from ---------------------

CROSS_CLOUD_SERVING = f'separation.servingAccounts=["{SERVING_SUB}", "aws:222222222222", "gcp:acme-serve"]'


def addresses_override(*values: str) -> str:
    return "training.artifactReaderAddresses=[" + ", ".join(f'"{v}"' for v in values) + "]"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("replicas", "not an IPv4 address or CIDR range"),
        ("2001:db8::1", "IPv6"),
        ("20.51.8.0/31", "/31 or /32"),
        ("20.51.8.14/32", "/31 or /32"),
        ("20.50.0.0/15", "wider than a /16"),
        ("0.0.0.0/0", "wider than a /16"),
        ("20.51.8.14/24", "write the range as 20.51.8.0/24"),
        ("10.1.2.3", "RFC 1918"),
        ("172.16.0.0/16", "RFC 1918"),
        ("192.168.4.0/24", "RFC 1918"),
        ("100.64.1.1", "RFC 6598"),
        ("127.0.0.1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("192.0.2.1", "not a public internet address"),  # documentation (TEST-NET-1)
    ],
)
def test_a_reader_address_must_be_a_public_ipv4_address_or_a_30_to_16_range(value: str, said: str):
    (message,) = at("training.artifactReaderAddresses.0", addresses_override(value))
    assert said in message and value in message
    if said != "/31 or /32":  # that one says what to write instead (the bare address)
        assert "a public IPv4 address" in message or "write the range" in message


@pytest.mark.parametrize("value", ["20.51.8.14", "20.51.8.12/30", "52.0.0.0/16", "34.118.4.0/24"])
def test_a_public_address_or_range_within_the_limits_is_admitted(value: str):
    spec = parse_spec(
        apply_overrides(read_stack_file(EXAMPLE), [CROSS_CLOUD_SERVING, addresses_override(value)]), "azure-training"
    )
    assert spec.training.artifact_reader_addresses == [value]
    assert [w for w in spec_warnings(spec) if w.path.startswith("separation.servingAccounts")] == []


def test_the_same_address_twice_is_refused():
    (message,) = at(
        "training.artifactReaderAddresses.1", addresses_override("20.51.8.0/24", "20.51.8.0/24", "20.51.9.1")
    )
    assert "training.artifactReaderAddresses.0" in message


def test_no_more_addresses_than_the_storage_firewall_holds():
    many = [f"20.{51 + i // 250}.{i % 250}.1" for i in range(401)]
    (message,) = at("training.artifactReaderAddresses", addresses_override(*many))
    assert "401" in message and "400" in message
    spec = parse_spec(apply_overrides(read_stack_file(EXAMPLE), [addresses_override(*many[:400])]), "azure-training")
    assert len(spec.training.artifact_reader_addresses) == 400


def test_the_widest_range_is_the_guardrails_packs_internet_audience():
    """validate refuses what the pack would flag as an internet audience, and no narrower range: one bound, two places."""
    from accelstack.clouds.azure import catalog
    from accelstack.policies.azure.readers import NARROWEST_WIDE_PREFIX

    assert catalog.STORAGE_IP_RULE_WIDEST_RANGE == NARROWEST_WIDE_PREFIX


def test_a_reader_on_another_cloud_without_addresses_is_warned_to_list_its_egress_addresses():
    """Its replicas read from the internet through NAT: a subnet cannot cover them, the egress addresses can."""
    spec = parse_spec(apply_overrides(read_stack_file(EXAMPLE), [CROSS_CLOUD_SERVING]), "azure-training")
    warnings = {w.path: w.message for w in spec_warnings(spec) if w.path.startswith("separation.servingAccounts")}
    assert set(warnings) == {"separation.servingAccounts.1", "separation.servingAccounts.2"}
    for message in warnings.values():
        assert "egressAddresses" in message and "training.artifactReaderAddresses" in message
        assert "replicaSubnets" not in message
    # The Azure reader keeps its subnet (the example's): no warning for it.
    assert not [w for w in spec_warnings(spec) if w.path.startswith("training.artifactReaders")]
    covered = parse_spec(
        apply_overrides(read_stack_file(EXAMPLE), [CROSS_CLOUD_SERVING, addresses_override("20.51.8.14")]),
        "azure-training",
    )
    assert [w for w in spec_warnings(covered) if w.path.startswith("separation.servingAccounts")] == []
