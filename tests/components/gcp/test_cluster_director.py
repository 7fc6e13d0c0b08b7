"""The managed alternative on Google Cloud (`training.scheduler.kind: managed`): Cluster Director's managed Slurm,
previewed from the shipped GCP training example with the scheduler switched.

What an operator relies on: the cluster runs on the stack's network, Lustre and buckets (never its own copies,
which a cluster replacement could take with it), the GPUs are bought as the spec says in the form the API takes,
nothing gets a public address, checkpoints still reach their bucket without deletes, the packs judge the new
kind (and catch the careless edits), and a day-2 change replaces nothing stateful.
"""

from __future__ import annotations

import copy
import os
import shlex
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack import outputs
from accelstack.components.gcp.cluster_director import cluster_id, reservation_path
from accelstack.components.node_environment import environment_script
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.engine.replacement import DELETE, DELETE_FIRST, REPLACE, known_type, plan_changes
from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file, spec_warnings

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "stacks" / "Pulumi.gcp-training.yaml"
# The example's partitions carry MaxTime, which Cluster Director cannot express: one plain partition.
MANAGED = ("training.scheduler.kind=managed", 'training.scheduler.partitions=[{"name": "gpu", "default": true}]')
CLUSTER = "gcp:hypercomputecluster/cluster:Cluster"
GRANT = "gcp:storage/bucketIAMMember:BucketIAMMember"
DEFAULT_COMPUTE_SA = "serviceAccount:123456789012-compute@developer.gserviceaccount.com"


@cache
def managed(*extra: str) -> PreviewResult:
    return preview_stack(EXAMPLE, [*MANAGED, *extra], REPO)


def cluster(*extra: str) -> dict[str, Any]:
    (found,) = [r for r in managed(*extra).resources if r.type == CLUSTER]
    return found.inputs


def slurm(*extra: str) -> dict[str, Any]:
    return cluster(*extra)["orchestrator"]["slurm"]


def test_the_cluster_runs_on_the_stacks_network_and_imports_its_lustre_never_a_copy_of_its_own():
    result = managed()
    inputs = cluster()
    (network,) = inputs["networkResources"]
    assert network["config"]["existingNetwork"] == {
        "network": result.stack_outputs["networkId"],
        "subnetwork": result.stack_outputs["subnetId"],
    }
    (lustre,) = [r for r in result.resources if r.type == "gcp:lustre/instance:Instance"]
    (storage,) = inputs["storageResources"]
    assert storage["config"] == {"existingLustre": {"lustre": lustre.outputs["id"]}}
    assert lustre.outputs["id"].startswith("projects/acme-train/locations/us-central1-a/instances/")
    assert inputs["location"] == "us-central1"
    assert not any("new" in key for r in inputs["storageResources"] for key in r["config"])  # nothing it would own


def test_no_fabric_vpcs_node_group_or_node_account_are_built_for_it():
    types = {r.type for r in managed().resources}
    assert "gcp:compute/instanceGroupManager:InstanceGroupManager" not in types
    assert "gcp:compute/instanceTemplate:InstanceTemplate" not in types
    assert "gcp:serviceaccount/account:Account" not in types
    networks = [r for r in managed().resources if r.type == "gcp:compute/network:Network"]
    assert [n.name for n in networks] == ["gcp-training-net"]


def test_the_login_node_is_private_os_login_n2_and_every_node_mounts_lustre_at_the_mount_path():
    login = slurm()["loginNodes"]
    assert login["enablePublicIps"] is False and login["enableOsLogin"] is True
    assert login["machineType"] == "n2-standard-8" and login["zone"] == "us-central1-a"
    assert login["storageConfigs"] == [{"id": "lustre", "localMount": "/lustre"}]
    (node_set,) = slurm()["nodeSets"]
    assert node_set["storageConfigs"] == [{"id": "lustre", "localMount": "/lustre"}]
    assert node_set["computeInstance"]["labels"]["accelstack-stack"] == "gcp-training"
    assert node_set["computeInstance"]["bootDisk"]["type"].endswith("/zones/us-central1-a/diskTypes/pd-ssd")
    assert slurm()["partitions"] == [{"id": "gpu", "nodeSetIds": ["gpu"]}]
    assert "defaultPartition" not in slurm()  # the API takes it only with several partitions


def test_spot_and_flex_start_nodes_come_with_jobs_and_reserved_nodes_stay_up():
    (spot,) = cluster()["computeResources"]
    assert spot["config"] == {
        "newSpotInstances": {"machineType": "a3-megagpu-8g", "zone": "us-central1-a", "terminationAction": "DELETE"}
    }
    assert slurm()["nodeSets"][0]["maxDynamicNodeCount"] == "4"
    assert "staticNodeCount" not in slurm()["nodeSets"][0]

    flex = ("training.nodes.capacity=flex-start", "training.nodes.maxRunHours=48")
    (resource,) = cluster(*flex)["computeResources"]
    assert resource["config"]["newFlexStartInstances"]["maxDuration"] == "172800s"

    reserved = ("training.nodes.capacity=on-demand", "training.nodes.reservationId=a3mega-block-1")
    (resource,) = cluster(*reserved)["computeResources"]
    assert resource["config"] == {
        "newReservedInstances": {"reservation": "projects/acme-train/zones/us-central1-a/reservations/a3mega-block-1"}
    }
    assert slurm(*reserved)["nodeSets"][0]["staticNodeCount"] == "4"


def test_a_shared_reservation_keeps_its_owner_project():
    assert (
        reservation_path("projects/acme-capacity/reservations/block-7", "acme-train", "us-central1-a")
        == "projects/acme-capacity/zones/us-central1-a/reservations/block-7"
    )


def test_cluster_ids_fit_the_api_and_two_stacks_sharing_a_prefix_do_not_collide():
    ids = {cluster_id(s) for s in ("gcp-training", "gcp-training-2", "9lives", "A-B_c")}
    assert len(ids) == 4
    for value in ids:
        assert len(value) <= 10 and value[0].isalpha() and value.isalnum() and value == value.lower()


def test_nodes_get_exactly_the_slurm_paths_grants_on_the_default_compute_account_and_wait_for_them():
    result = managed()
    grants = [r.inputs for r in result.resources if r.type == GRANT and r.inputs["member"] == DEFAULT_COMPUTE_SA]
    roles = sorted((g["bucket"], g["role"]) for g in grants)
    assert roles == [
        ("acme-train-checkpoints", "roles/storage.objectCreator"),
        ("acme-train-checkpoints", "roles/storage.objectViewer"),
        ("acme-train-datasets", "roles/storage.objectViewer"),
    ]  # no objectAdmin: nothing that could delete a checkpoint
    (found,) = [r for r in result.resources if r.type == CLUSTER]
    urns = {r.urn: r for r in result.resources}
    waits_for = {urns[u].type for u in found.dependencies}
    assert GRANT in waits_for and "pulumi-python:dynamic:Resource" in waits_for  # the Lustre import


def test_the_login_node_copies_checkpoints_to_the_bucket_without_deletes_and_its_script_parses():
    login = slurm()["loginNodes"]["startupScript"]
    # The unit runs the export script (completed checkpoints only, never overwriting), written here too.
    assert "ExecStart=/usr/bin/env /usr/local/sbin/accelstack-checkpoint-export" in login
    assert "source_dir=/lustre/checkpoints" in login and "destination=gs://acme-train-checkpoints/" in login
    assert "gcloud storage rsync --recursive --no-clobber" in login
    assert "chmod 0755 /usr/local/sbin/accelstack-checkpoint-export" in login
    assert "delete" not in login.split("ExecStart=")[1].splitlines()[0]
    assert "systemctl enable --now accelstack-checkpoint-export.timer" in login
    # gcloud is made sure of before any unit that calls it starts, not assumed of the login image
    assert login.index("\nensure_gcloud\n") < login.index("systemctl enable --now accelstack-checkpoint-export")
    subprocess.run(["bash", "-n"], input=login, text=True, check=True)


def test_the_environment_script_writes_what_jobs_read(tmp_path):
    env_file, profile = tmp_path / "etc" / "training.env", tmp_path / "profile.d" / "accelstack.sh"
    environment = {"ACCELSTACK_CHECKPOINT_DIR": "/lustre/ckpt-1", "ACCELSTACK_STACK": "gcp-training"}
    script = environment_script(environment, str(env_file), str(profile))
    subprocess.run(["bash", "-c", script], check=True)
    subprocess.run(["bash", "-c", script], check=True)  # every boot: idempotent
    printed = subprocess.run(
        ["bash", "-c", f'. {shlex.quote(str(profile))}; printf %s "$ACCELSTACK_CHECKPOINT_DIR"'],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"]},
    ).stdout
    assert printed == "/lustre/ckpt-1"
    # A path that would need quoting there never gets this far: the spec refuses it at its config path.
    for hostile in ("/lustre/it's", "/lustre/a b", "/lustre/$(reboot)", "/lustre/x;reboot"):
        problems = _errors(*MANAGED, f"training.storage.checkpoints.path={hostile}")
        assert "allowed" in problems.get("training.storage.checkpoints.path", ""), (hostile, problems)


def test_without_lustre_the_buckets_are_mounted_instead():
    no_lustre = ("training.storage.lustre=null", "training.storage.checkpoints.path=/checkpoints")
    mounts = slurm(*no_lustre)["nodeSets"][0]["storageConfigs"]
    assert mounts == [
        {"id": "datasets", "localMount": "/datasets"},
        {"id": "checkpoints", "localMount": "/checkpoints"},
    ]
    buckets = {r["id"]: r["config"]["existingBucket"]["bucket"] for r in cluster(*no_lustre)["storageResources"]}
    assert buckets == {"datasets": "acme-train-datasets", "checkpoints": "acme-train-checkpoints"}


def test_the_outputs_are_the_managed_contract():
    result = managed()
    holding = {outputs.CHECKPOINTS, outputs.SCHEDULER, outputs.MANAGED_SCHEDULER, outputs.PARALLEL_FILE_SYSTEM}
    assert set(result.stack_outputs) == set(outputs.expected_keys("training", holding))
    assert result.stack_outputs["scheduler"] == "cluster-director"
    assert result.stack_outputs["managedJobQueue"].endswith("/partitions/gpu")


def test_both_packs_pass_and_every_kind_is_known_and_tabled():
    result = managed()
    assert [v.line() for v in policy_verdicts(result.export, result.spec)] == []
    assert sorted({r.type for r in result.resources if r.custom and not known_type(r.type)}) == []


def _cluster_entry(doc: dict[str, Any]) -> dict[str, Any]:
    (found,) = [r for r in doc["deployment"]["resources"] if r["type"] == CLUSTER]
    return found


@pytest.mark.parametrize(
    ("mutation", "policy"),
    [
        ("login-public-ip", "no-public-ip-on-nodes"),
        ("login-public-ip-string", "no-public-ip-on-nodes"),
        ("startup-secret", "no-secrets-in-user-data"),
        ("node-startup-secret", "no-secrets-in-user-data"),
        ("login-os-login-off", "os-login-not-disabled"),
    ],
)
def test_a_careless_edit_of_the_cluster_is_caught(mutation, policy):
    result = managed()
    doc = copy.deepcopy(result.export)
    resource = _cluster_entry(doc)
    for side in (resource[k] for k in ("inputs", "outputs") if k in resource):
        login = side["orchestrator"]["slurm"]["loginNodes"]
        if mutation == "login-public-ip":
            login["enablePublicIps"] = True
        elif mutation == "login-public-ip-string":
            login["enablePublicIps"] = "true"
        elif mutation == "startup-secret":
            login["startupScript"] += "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
        elif mutation == "login-os-login-off":
            login["enableOsLogin"] = False
        elif mutation == "node-startup-secret":
            node = side["orchestrator"]["slurm"]["nodeSets"][0]["computeInstance"]
            node["startupScript"] += (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
            )
    verdicts = policy_verdicts(doc, result.spec)
    assert any(v.mandatory and v.urn == resource["urn"] and v.policy == policy for v in verdicts), [
        v.line() for v in verdicts
    ]


def test_spot_without_a_checkpoint_bucket_is_caught_in_either_spelling_of_the_compute_resources():
    result = managed()
    doc = copy.deepcopy(result.export)
    doc["deployment"]["resources"] = [
        r
        for r in doc["deployment"]["resources"]
        if not (r["type"] == "gcp:storage/bucket:Bucket" and "checkpoint" in r["urn"])
    ]
    resource = _cluster_entry(doc)
    for side in (resource[k] for k in ("inputs", "outputs") if k in resource):
        # The API's own map form (id -> config), as a hand-written program could pass it.
        side["computeResources"] = {c["id"]: {"config": c["config"]} for c in side["computeResources"]}
    verdicts = policy_verdicts(doc, result.spec)
    assert any(v.urn == resource["urn"] and "Spot" in v.line() for v in verdicts), [v.line() for v in verdicts]


def _errors(*overrides: str) -> dict[str, str]:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    with pytest.raises(SpecError) as caught:
        parse_spec(raw, "gcp-training")
    return {p.path: p.message for p in caught.value.problems}


def test_what_cluster_director_cannot_do_is_refused_at_its_path_and_the_managed_example_is_valid():
    problems = _errors(*MANAGED, "training.nodes.capacity=on-demand")
    assert "no on-demand GPU nodes" in problems["training.nodes.capacity"]
    problems = _errors(*MANAGED, "training.nodes.instanceType=a3-highgpu-8g")
    assert "a3-megagpu-8g" in problems["training.nodes.instanceType"]
    parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(MANAGED)), "gcp-training")


def test_day_2_growing_or_rebuying_the_nodes_updates_the_cluster_and_a_new_zone_replaces_only_it():
    base = managed()
    stateful = {
        "gcp:lustre/instance:Instance",
        "gcp:storage/bucket:Bucket",
        "gcp:kms/cryptoKey:CryptoKey",
    }
    for edit in (("training.nodes.count=16",), ("training.nodes.capacity=flex-start", "training.nodes.maxRunHours=24")):
        changes = plan_changes(base.resources, managed(*edit).resources)
        (change,) = [c for c in changes if c.type == CLUSTER]
        assert change.action != REPLACE, (edit, change.replacing)
        assert [c.name for c in changes if c.type in stateful and c.action in (REPLACE, DELETE)] == []
    # The login node's zone is immutable: a new one replaces the cluster, deleting first (its id is fixed).
    moved = managed("training.network.availabilityZone=us-central1-b")
    (change,) = [c for c in plan_changes(base.resources, moved.resources) if c.type == CLUSTER]
    assert change.action == REPLACE and change.order == DELETE_FIRST
    assert "orchestrator.slurm.loginNodes.zone" in change.replacing


def test_a_managed_scheduler_that_mounts_the_checkpoint_store_draws_no_node_local_warning():
    """Cluster Director and Azure ML mount the checkpoint store on every node themselves; AWS Batch does not, and
    neither does a Slurm cluster without Lustre (each node keeps its own shards)."""

    def warnings(stack: str, *overrides: str) -> list[str]:
        raw = apply_overrides(read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml"), list(overrides))
        return [p.path for p in spec_warnings(parse_spec(raw, stack))]

    path = "training.storage.checkpoints.path"
    no_lustre = ("training.storage.lustre=null", "training.storage.checkpoints.path=/checkpoints")
    assert path not in warnings("gcp-training", *MANAGED, *no_lustre)
    assert path not in warnings("azure-training", "training.scheduler.kind=managed", "training.storage.lustre=null")
    assert path in warnings("gcp-training", *no_lustre)


def test_validate_warns_that_cluster_director_nodes_run_as_the_default_compute_account():
    def warnings(*overrides: str) -> list[str]:
        raw = apply_overrides(read_stack_file(REPO / "stacks" / "Pulumi.gcp-training.yaml"), list(overrides))
        return [
            p.message for p in spec_warnings(parse_spec(raw, "gcp-training")) if p.path == "training.scheduler.kind"
        ]

    (message,) = warnings(*MANAGED)
    assert "default service account" in message and "Editor" in message
    assert warnings() == []  # the Slurm path's nodes run as the stack's own account
