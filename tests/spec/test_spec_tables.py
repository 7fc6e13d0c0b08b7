"""The AWS constraint tables: facts other layers size and wire against (EFA counts, Lustre steps)."""

from __future__ import annotations

import pytest

from accelstack.clouds.aws import catalog as tables

# EFA interfaces = network cards on multi-card instances (EFA user guide); the launch templates
# attach exactly this many, so a wrong number here is a wrong cluster.
EFA_INTERFACES = {
    "p5.48xlarge": 32,
    "p5e.48xlarge": 32,
    "p5en.48xlarge": 16,
    "p4d.24xlarge": 4,
    "p4de.24xlarge": 4,
    "trn1.32xlarge": 8,
    "trn1n.32xlarge": 16,
    "g5.48xlarge": 1,
    "g6e.48xlarge": 1,
    "g5.xlarge": 0,
    "inf2.48xlarge": 0,
}


@pytest.mark.parametrize(("name", "efa"), EFA_INTERFACES.items())
def test_efa_interfaces(name, efa):
    assert tables.ACCELERATED_INSTANCES[name].fabric_interfaces == efa


def test_serving_instance_families_are_complete():
    sizes = ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")
    for family in ("g5", "g6", "g6e"):
        for size in sizes:
            assert f"{family}.{size}" in tables.ACCELERATED_INSTANCES
    for name in ("inf2.xlarge", "inf2.8xlarge", "inf2.24xlarge", "inf2.48xlarge", "p6-b200.48xlarge"):
        assert name in tables.ACCELERATED_INSTANCES


def test_instance_rows_are_consistent():
    for name, itype in tables.ACCELERATED_INSTANCES.items():
        assert itype.name == name
        assert itype.fabric_interfaces <= itype.network_cards, name
        assert itype.accelerators >= 1 and itype.vcpus >= 4 and itype.memory_gib >= 16, name
        # Capacity Blocks are sold for cluster-scale training, which needs EFA.
        assert not itype.time_boxed_reservation or itype.has_fabric, name


def test_gpu_memory_per_accelerator():
    gpus = tables.ACCELERATED_INSTANCES
    assert gpus["p5.48xlarge"].accelerator_memory_total_gib == 640
    assert gpus["p5en.48xlarge"].accelerator_memory_total_gib == 1128
    assert gpus["g6e.12xlarge"].accelerator_memory_total_gib == 192
    assert gpus["g5.48xlarge"].memory_gib == 768 and gpus["g6e.48xlarge"].memory_gib == 1536


@pytest.mark.parametrize(
    ("kind", "allowed", "rejected"),
    [
        ("SCRATCH_1", [1200, 2400, 3600, 7200, 10800], [4800, 6000, 600]),
        ("SCRATCH_2", [1200, 2400, 4800, 9600], [3600, 1000, 0]),
        ("PERSISTENT_1", [1200, 2400, 4800], [3600, 6000]),
        ("PERSISTENT_2", [1200, 2400, 4800, 100_800], [600, 3000, 3600]),
    ],
)
def test_lustre_capacity_steps(kind, allowed, rejected):
    rules = tables.LUSTRE_DEPLOYMENT_TYPES[kind]
    assert [gib for gib in allowed if not rules.capacity_allowed(gib)] == []
    assert [gib for gib in rejected if rules.capacity_allowed(gib)] == []


def test_lustre_s3_linking_by_type():
    kinds = tables.LUSTRE_DEPLOYMENT_TYPES
    assert [k for k, v in kinds.items() if v.data_repository_associations] == [
        "SCRATCH_2",
        "PERSISTENT_1",
        "PERSISTENT_2",
    ]
    assert not kinds["PERSISTENT_2"].legacy_import_path


def test_id_and_arn_patterns():
    assert tables.CAPACITY_RESERVATION_ID.match("cr-0123456789abcdef0")
    assert not tables.CAPACITY_RESERVATION_ID.match("cr-0123456789abcdef")
    assert tables.IAM_ROLE_ARN.match("arn:aws:iam::123456789012:role/service-role/x+y=z,a.b@c-d_e")
    assert not tables.IAM_ROLE_ARN.match("arn:aws:iam::123456789012:role/")
    assert not tables.IAM_ROLE_ARN.match("arn:aws:sts::123456789012:assumed-role/x/y")
    assert all(tables.REGION_NAME.match(region) for region in tables.REGIONS)


def test_every_rule_is_documented():
    from accelstack.clouds.aws import rules as aws_rules
    from accelstack.spec import validators

    own = [r for r in validators.RULES if r.module in (validators.__name__, aws_rules.__name__)]
    assert len(own) >= 25
    assert [r.name for r in own if not r.doc.strip()] == []
