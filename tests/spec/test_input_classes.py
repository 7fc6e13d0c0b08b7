"""Each class of input that validated and then broke (or silently meant something else), with its
siblings: subnets for training, duplicate ids, node paths, the checkpoint export, reservations."""

from __future__ import annotations

import pytest

from accelstack.clouds.aws import catalog as tables
from accelstack.spec.problems import Level, SpecError
from tests.spec.spec_helpers import DELETE, TRAINING_STACK, all_problems, edited, training_raw
from tests.spec.test_serving_rules import serving_raw

E, W = Level.ERROR, Level.WARNING
CB = "cr-0123456789abcdef0"
S1, S2, S3 = "subnet-0000000a", "subnet-0000000b", "subnet-0000000c"


def at(problems, path):
    return [(p.level, p.message) for p in problems if p.path == path]


# --- training subnets ----------------------------------------------------------------------------


@pytest.mark.parametrize("subnets", [[S1], [S1, S2], [S1, S1]])
def test_training_refuses_a_subnet_list_naming_subnet_id(subnets):
    raw = edited(training_raw(), {"training.network": {"vpcId": "vpc-00000001", "subnetIds": subnets}})
    [(level, message)] = at(all_problems(raw), "training.network.subnetIds")
    assert level is E and "cannot span Availability Zones" in message and f"subnetId: {S1}" in message


def test_training_refuses_both_subnet_id_and_a_list():
    raw = edited(training_raw(), {"training.network": {"vpcId": "vpc-00000001", "subnetId": S1, "subnetIds": [S2]}})
    assert at(all_problems(raw), "training.network.subnetIds")


def test_training_refuses_public_subnets():
    raw = edited(
        training_raw(), {"training.network": {"vpcId": "vpc-00000001", "subnetId": S1, "publicSubnetIds": [S2]}}
    )
    assert [lvl for lvl, _ in at(all_problems(raw), "training.network.publicSubnetIds")] == [E]


def test_training_in_one_existing_subnet_is_fine():
    raw = edited(training_raw(), {"training.network": {"vpcId": "vpc-00000001", "subnetId": S1}})
    assert all_problems(raw) == []


# --- ids: format and duplicates ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edits", "path", "fragment"),
    [
        ({"serving.network": {"vpcId": "vpc-00000001", "subnetIds": [S1, S1, S2], "publicSubnetIds": [S3, "subnet-0000000d"]}},
         "serving.network.subnetIds.1", "duplicate of item 0"),
        ({"serving.network": {"vpcId": "vpc-00000001", "subnetIds": [S1, S2], "publicSubnetIds": [S3, S3]}},
         "serving.network.publicSubnetIds.1", "duplicate of item 0"),
        ({"serving.network": {"vpcId": "vpc-00000001", "subnetIds": [S1, S2], "publicSubnetIds": [S2, S3]}},
         "serving.network.publicSubnetIds.0", "also in subnetIds"),
        ({"serving.network": {"vpcId": "vpc-1", "subnetIds": [S1, S2], "publicSubnetIds": [S3, "subnet-0000000d"]}},
         "serving.network.vpcId", "not a VPC id (e.g. vpc-0123456789abcdef0)"),
        ({"serving.network": {"vpcId": "vpc-00000001", "subnetIds": [S1, "subnet-xyz"], "publicSubnetIds": [S3, "subnet-0000000d"]}},
         "serving.network.subnetIds.1", "not a subnet id"),
    ],
)  # fmt: skip
def test_serving_subnet_lists(edits, path, fragment):
    problems = at(all_problems(edited(serving_raw(), edits)), path)
    assert problems and all(level is E for level, _ in problems) and any(fragment in m for _, m in problems)


def test_serving_needs_two_distinct_subnets_even_when_listed_three_times():
    raw = edited(serving_raw(), {"serving.network": {"vpcId": "vpc-00000001", "subnetIds": [S1, S1, S1],
                                                     "publicSubnetIds": [S2, S3]}})  # fmt: skip
    paths = {p.path for p in all_problems(raw)}
    assert {"serving.network.subnetIds", "serving.network.subnetIds.1", "serving.network.subnetIds.2"} <= paths


@pytest.mark.parametrize(
    ("edits", "path"),
    [
        ({"separation.trainingAccounts": ["111111111111", "111111111111"]}, "separation.trainingAccounts.1"),
        (
            {"separation.servingAccounts": ["222222222222", "333333333333", "222222222222"]},
            "separation.servingAccounts.2",
        ),
        ({"separation.allowedRegions": ["us-east-1", "us-east-1"]}, "separation.allowedRegions.1"),
        ({"training.artifactReaders": ["222222222222", "222222222222"]}, "training.artifactReaders.1"),
        ({"training.network": {"vpcId": "vpc-00000001", "subnetId": "subnet-1"}}, "training.network.subnetId"),
    ],
)
def test_every_id_list_refuses_duplicates_and_malformed_ids(edits, path):
    assert [lvl for lvl, _ in at(all_problems(edited(training_raw(), edits)), path)] == [E]


# --- node paths ----------------------------------------------------------------------------------

BAD_PATHS = [
    "/", "/etc", "/etc/", "/etc/fsx", "/home", "/usr", "/usr/local/fsx", "/var", "/var/log/fsx", "/var/spool/slurmd",
    "/var/lib/fsx", "/proc/x", "/sys", "/dev/shm", "/run/fsx", "/boot", "/root", "/tmp", "/bin", "/lib64",
    "/fsx/../etc", "/./fsx", "//fsx", "/fsx/./x",
]  # fmt: skip


@pytest.mark.parametrize("mount", BAD_PATHS)
def test_lustre_mount_paths_over_system_directories_are_refused(mount):
    raw = edited(training_raw(), {"training.storage.lustre.mountPath": mount, "training.storage.checkpoints": DELETE,
                                  "training.model": DELETE})  # fmt: skip
    assert [lvl for lvl, _ in at(all_problems(raw), "training.storage.lustre.mountPath")] == [E]


@pytest.mark.parametrize("path", BAD_PATHS)
def test_node_local_checkpoint_paths_over_system_directories_are_refused(path):
    raw = edited(training_raw(), {"training.storage.lustre": None, "training.storage.checkpoints.path": path})
    assert E in [lvl for lvl, _ in at(all_problems(raw), "training.storage.checkpoints.path")]


@pytest.mark.parametrize("mount", ["/fsx", "/lustre", "/mnt/fsx", "/data/fsx", "/var/fsx", "/opt/fsx", "/scratch"])
def test_ordinary_mount_paths_pass(mount):
    raw = edited(training_raw(), {"training.storage.lustre.mountPath": mount,
                                  "training.storage.checkpoints.path": f"{mount}/checkpoints"})  # fmt: skip
    assert all_problems(raw) == []


@pytest.mark.parametrize("import_path", ["/datasets/../checkpoints", "/./datasets", "//datasets"])
def test_import_paths_with_dots_are_refused(import_path):
    raw = edited(training_raw(), {"training.storage.lustre.importPath": import_path})
    assert E in [lvl for lvl, _ in at(all_problems(raw), "training.storage.lustre.importPath")]


# --- checkpoint export ---------------------------------------------------------------------------


def scratch(capacity: str, **extra) -> dict:
    return {
        "training.model": DELETE,
        "training.storage.datasets.sizeGiB": DELETE,
        "training.storage.lustre": {"tier": "SCRATCH_2", "capacityGiB": 1200, "importPath": "/datasets"},
        "training.nodes": {"instanceType": "p4d.24xlarge", "count": 4, "capacity": capacity},
        **extra,
    }


@pytest.mark.parametrize("kind", ["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1"])
def test_spot_with_checkpoints_on_lustre_that_never_reach_the_bucket_is_refused(kind):
    lustre = {"tier": kind, "capacityGiB": 2400 if kind != "SCRATCH_1" else 3600, "importPath": "/"}
    raw = edited(training_raw(), {**scratch("spot"), "training.storage.lustre": lustre})
    [(level, message)] = at(all_problems(raw), "training.storage.lustre.tier")
    assert level is E and "never copied to s3://acme-train-checkpoints" in message and "use PERSISTENT_2" in message


def test_on_demand_with_unexported_checkpoints_is_warned():
    problems = all_problems(edited(training_raw(), scratch("on-demand")))
    assert [lvl for lvl, _ in at(problems, "training.storage.lustre.tier")] == [W]


def test_the_export_table_matches_what_the_component_links():
    from accelstack.components.aws.storage import DRA_DEPLOYMENT_TYPES

    assert set(tables.CHECKPOINT_EXPORT_DEPLOYMENT_TYPES) == set(DRA_DEPLOYMENT_TYPES)


@pytest.mark.parametrize(
    ("edits", "fragment"),
    [
        ({"training.storage.checkpoints.path": "/fsx"}, "is the Lustre root"),
        ({"training.storage.checkpoints.path": "/fsx/"}, "is the Lustre root"),
        ({"training.storage.lustre.importPath": "/"}, "overlaps the dataset link"),
        ({"training.storage.lustre.importPath": "/checkpoints/data"}, "overlaps the dataset link"),
        ({"training.storage.checkpoints.path": "/fsx/datasets"}, "overlaps the dataset link"),
    ],
)
def test_checkpoint_links_fsx_would_refuse_are_refused_at_validate(edits, fragment):
    problems = at(all_problems(edited(training_raw(), edits)), "training.storage.checkpoints.path")
    assert any(level is E and fragment in message for level, message in problems), problems


# --- capacity ------------------------------------------------------------------------------------


def test_spot_at_scale_on_scarce_gpus_warns_like_on_demand():
    for capacity in ("on-demand", "spot"):
        raw = edited(
            training_raw(), {"training.nodes": {"instanceType": "p5.48xlarge", "count": 16, "capacity": capacity}}
        )
        [(level, message)] = at(all_problems(raw), "training.nodes.count")
        assert level is W and f"16 {capacity} p5.48xlarge without a capacity reservation" in message


def test_an_on_demand_capacity_reservation_is_accepted_and_silences_the_scarcity_warning():
    raw = edited(training_raw(), {
        "training.nodes": {"instanceType": "p5.48xlarge", "count": 16, "capacity": "on-demand", "reservationId": CB},
        "training.network.availabilityZone": "us-east-1b",
    })  # fmt: skip
    assert all_problems(raw) == []


def test_aws_batch_on_a_capacity_block_is_an_error():
    raw = edited(training_raw(), {
        "training.nodes": {"instanceType": "p5.48xlarge", "count": 4, "capacity": "capacity-block", "reservationId": CB},
        "training.network.availabilityZone": "us-east-1b",
        "training.scheduler": {"kind": "managed"},
    })  # fmt: skip
    [(level, message)] = at(all_problems(raw), "training.scheduler.kind")
    assert level is E and "ignores the launch template's market options" in message


# --- regions and suggestions ---------------------------------------------------------------------


def test_provider_region_must_match_account_region(tmp_path):
    from accelstack.spec.loader import load_stack

    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(TRAINING_STACK.read_text().replace("aws:region: us-east-1", "aws:region: us-west-2"))
    with pytest.raises(SpecError) as raised:
        load_stack(path)
    [problem] = raised.value.problems
    assert problem.path == "account.region" and "aws:region: 'us-west-2'" in problem.message
    load_stack(path, ["account.region=us-west-2"])  # agreeing is fine


@pytest.mark.parametrize(
    ("edits", "path", "suggestion"),
    [
        ({"training.nodes.instanceType": "p5.48xlarg"}, "training.nodes.instanceType", "'p5.48xlarge'"),
        ({"training.nodes.instanceType": "P5.48XLARGE"}, "training.nodes.instanceType", "'p5.48xlarge'"),
        ({"training.storage.lustre.tier": "persistent_2"}, "training.storage.lustre.tier", "'PERSISTENT_2'"),
        ({"account.region": "us-east1", "separation.allowedRegions": DELETE, "training.storage.lustre.tier": "PERSISTENT_2"},
         "account.region", "'us-east-1'"),
        ({"training.nodes.capacity": "Spot"}, "training.nodes.capacity", "'spot'"),
        ({"training.scheduler.kind": "slrum"}, "training.scheduler.kind", "'slurm'"),
        ({"training.nodes.instanceTpye": "p5.48xlarge"}, "training.nodes.instanceTpye", "'instanceType'"),
        ({"training.storage.lustre.capacityGib": 4800}, "training.storage.lustre.capacityGib", "'capacityGiB'"),
    ],
)  # fmt: skip
def test_mistakes_get_a_did_you_mean(edits, path, suggestion):
    problems = all_problems(edited(training_raw(), edits))
    assert any(f"did you mean {suggestion}?" in message for _, message in at(problems, path)), [
        str(p) for p in problems
    ]


def test_a_misspelt_key_is_one_problem_not_also_a_missing_one():
    raw = edited(training_raw(), {"training.nodes": {"instanceTpye": "p5.48xlarge", "count": 4}})
    assert [str(p) for p in all_problems(raw)] == [
        "training.nodes.instanceTpye: unknown key (did you mean 'instanceType'?)"
    ]


# --- models the planner cannot size --------------------------------------------------------------


def test_an_unknown_serving_model_validates_with_a_warning_not_a_bare_ok():
    raw = edited(serving_raw(), {"serving.model.name": "Qwen/Qwen2.5-7B-Instruct"})
    [(level, message)] = at(all_problems(raw), "serving.model.preset")
    assert level is W and "'Qwen/Qwen2.5-7B-Instruct' is not a known architecture" in message


@pytest.mark.parametrize(
    ("raw", "path"),
    [(lambda: edited(serving_raw(), {"serving.model.preset": "llama-3.1-8"}), "serving.model.preset"),
     (lambda: edited(training_raw(), {"training.model.preset": "llama-3.1-7ob"}), "training.model.preset")],
)  # fmt: skip
def test_an_unknown_preset_is_an_error_with_a_suggestion(raw, path):
    [(level, message)] = at(all_problems(raw()), path)
    assert level is E and "did you mean 'llama-3.1-" in message
