"""Day-2 edits of the shipped stacks, captured in-process as `pulumi up` would see them.

Shared by the conformance suite (every cloud's stacks: nothing stateful is replaced) and by the AWS
component tests (what an edit does to the Slurm head, the serving fleet, the subnets). Captures are
cached per process, so both use the same ones.

`DAY_2_CHANGES` holds, per shipped stack, the changes an operator makes on day 2 (more nodes, a newer
GPU, spot, Slurm partitions, serving replicas, adapters, ...): a cloud's example stack needs a row.
The mock cloud answers as the engine would for a stack that already exists: a resource keeps its old
values for properties it lists in `ignoreChanges`, and a resource whose replace-forcing input changed
gets a new id, so a replacement upstream (a VPC, a subnet) shows up downstream (Lustre's subnet).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pulumi

from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.engine.replacement import DELETE, REPLACE, Change, plan_changes
from accelstack.engine.replacement import ExistingStackCloud as _ExistingStackCloud
from accelstack.engine.replacement import replacing_changes as _replacing_changes
from accelstack.policies import concepts
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[1]
MAIN = REPO / "__main__.py"
STACKS = REPO / "stacks"

# What holds state a replacement would lose: the packs' stateful concepts (data, keys) plus what holds a
# bucket's or a file system's settings, secrets and their values, and queues (their messages).
STATEFUL_CONCEPTS = (
    *concepts.STATEFUL,
    "bucket-versioning",
    "bucket-encryption",
    "file-system-link",
    "secret",
    "secret-version",
    "queue",
)
# Generated once and kept in state (the munge key): a replacement draws a new one. No cloud package.
STATEFUL_LOCAL_TYPES = frozenset({"random:index/randomBytes:RandomBytes"})

# GPU types are offered in only some AZs of a region, and a newer type in fewer than an older one. This table
# makes the newer types miss the region's first AZ: the case where "pick the first AZ that offers the type"
# would pick a different AZ on day 2 than on day 1.
OFFERED_ZONES = {
    "p5en.48xlarge": ["us-east-1b", "us-east-1c"],
    "g6e.48xlarge": ["us-east-1b", "us-east-1c"],
    "g6e.2xlarge": ["us-east-1b", "us-east-1c"],
}


class ExistingStackCloud(_ExistingStackCloud):
    """The package's existing-stack mock cloud, with newer GPU types missing the region's first AZ."""

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list | None]:
        if args.token == "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings":
            wanted = [
                v for f in args.args.get("filters") or [] if f.get("name") == "instance-type" for v in f["values"]
            ]
            if wanted and wanted[0] in OFFERED_ZONES:
                zones = OFFERED_ZONES[wanted[0]]
                return {"locations": zones, "locationTypes": ["availability-zone"] * len(zones)}, []
        return super().call(args)


def stack_file(stack: str) -> Path:
    return STACKS / f"Pulumi.{stack}.yaml"


def _config(stack: str, overrides: tuple[str, ...]) -> dict[str, str]:
    return config_for_pulumi(apply_overrides(read_stack_file(stack_file(stack)), list(overrides)))


@cache
def deployed(stack: str) -> tuple[Capture, ExistingStackCloud]:
    """The stack as its first `pulumi up` created it (the stack's cloud's mocks, found through the registry)."""
    config = _config(stack, ())
    cloud = ExistingStackCloud.for_config(config)
    return capture(MAIN, config, stack=stack, mocks=cloud), cloud


@cache
def updated(stack: str, overrides: tuple[str, ...]) -> Capture:
    """The same stack after the change: the mock cloud remembers what the first deployment created."""
    base, base_cloud = deployed(stack)
    config = _config(stack, overrides)
    return capture(
        MAIN, config, stack=stack, mocks=ExistingStackCloud.for_config(config, base_cloud.previous_for_edit(base))
    )


def is_stateful(resource_type: str) -> bool:
    return resource_type in STATEFUL_LOCAL_TYPES or concepts.is_a(resource_type, *STATEFUL_CONCEPTS)


def stateful(cap: Capture) -> dict[str, Registration]:
    return {r.urn: r for r in cap.resources if r.custom and is_stateful(r.type)}


def losses(stack: str, overrides: tuple[str, ...]) -> list[str]:
    """Every way the change would lose (or try to replace) a stateful resource, as readable lines."""
    before = deployed(stack)[0]
    after = updated(stack, overrides)
    return stateful_losses(plan_changes(before.resources, after.resources), after.resources)


def stateful_losses(changes: list[Change], edited: list[Registration]) -> list[str]:
    """What `accelstack diff` plans for each stateful resource that loses it: deleted, replaced (a changed
    replace-forcing input, or its provider replaced), protection dropped, or a stateful type whose
    replace-forcing inputs nobody tabled (the check would be blind to its replacement)."""
    protected_after = {r.urn: r.protect for r in edited}
    problems = []
    for change in changes:
        if not is_stateful(change.type):
            continue
        if change.action == DELETE:
            problems.append(f"{change.type} {change.name}: no longer registered (pulumi up deletes it)")
        elif change.action == REPLACE:
            for prop in change.replacing:
                if prop == "provider":
                    problems.append(f"{change.type} {change.name}: its provider is replaced")
                    continue
                old, new = change.before.get(prop), change.after.get(prop)
                problems.append(f"{change.type} {change.name}: replace-forcing `{prop}` changed {old!r} -> {new!r}")
        if not change.known:
            problems.append(f"{change.type} {change.name}: its replace-forcing inputs are not tabled")
        if change.protect and protected_after.get(change.urn) is False:
            problems.append(f"{change.type} {change.name}: protect dropped")
    return problems


def replacements(stack: str, overrides: tuple[str, ...]) -> list[str]:
    """Every resource (any type with known replace-forcing inputs) the change would replace."""
    before = {r.urn: r for r in deployed(stack)[0].resources}
    found = []
    for new in updated(stack, overrides).resources:
        old = before.get(new.urn)
        if old is None:
            continue
        for prop in _replacing_changes(old.type, old.inputs, new.inputs, new.ignore_changes):
            found.append(f"{old.type} {old.name}: `{prop}` changed")
    return found


TRAINING_CHANGES = {
    "nodes 4 -> 64": ("training.nodes.count=64",),
    "p5 -> p5en": ("training.nodes.instanceType=p5en.48xlarge",),
    "on-demand -> spot": ("training.nodes.capacity=spot",),
    "partitions edited": (
        "training.scheduler.partitions=[{name: gpu, maxTime: '7-00:00:00', default: true}, "
        "{name: long, maxTime: '14-00:00:00'}, {name: debug, maxTime: '02:00:00'}]",
    ),
    "head node type": ("training.scheduler.headNode.instanceType=m7i.4xlarge",),
    "Slurm maxTime": ("training.scheduler.partitions.0.maxTime=14-00:00:00",),
    "artifact reader added": (
        "separation.servingAccounts=['222222222222', '333333333333']",
        "training.artifactReaders=['222222222222', '333333333333']",
    ),
    "Lustre grows": ("training.storage.lustre.capacityGiB=9600",),
    "Lustre throughput tier": ("training.storage.lustre.throughputPerTiB=500",),
    "on-demand -> Capacity Block": (
        "training.nodes.capacity=capacity-block",
        "training.nodes.reservationId=cr-0123456789abcdef0",
        "training.network.availabilityZone=us-east-1a",  # where the deployed cluster subnet is
    ),
}
FINETUNE_CHANGES = {
    "nodes 1 -> 4": ("training.nodes.count=4",),
    "bigger GPU box": ("training.nodes.instanceType=g6e.48xlarge",),
    "spot -> on-demand": ("training.nodes.capacity=on-demand",),
    "head node type": ("training.scheduler.headNode.instanceType=m7i.2xlarge",),
    "Slurm maxTime": ("training.scheduler.partitions.0.maxTime=5-00:00:00",),
    "partitions edited": (
        "training.scheduler.partitions=[{name: gpu, maxTime: '3-00:00:00', default: true}, "
        "{name: debug, maxTime: '01:00:00'}]",
    ),
}
# What changes the served model: weights size and so the planner's cold start, the precision, a
# measured cold start. They must roll the fleet (a new template version), never replace the group.
SERVING_MODEL_CHANGES = {
    "another model": (
        "serving.model.name=meta-llama/Llama-3.1-70B-Instruct",
        "serving.model.weightsUri=s3://acme-train-checkpoints/models/llama-3.1-70b-instruct/",
        "serving.model.preset=llama-3.1-70b",
        "serving.replicas.instanceType=p5.48xlarge",
        "serving.model.adapters=[]",
    ),
    "precision bf16 -> fp8": ("serving.model.precision=fp8",),
    "measured cold start": ("serving.replicas.coldStartSeconds=1800",),
    "context length": ("serving.model.contextLength=32768",),
}
SERVING_CHANGES = {
    "replicas min/max": ("serving.replicas.min=2", "serving.replicas.max=32"),
    "serving instance type": ("serving.replicas.instanceType=g6e.2xlarge",),
    "new weights": ("serving.model.weightsUri=s3://acme-train-checkpoints/models/llama-3.1-8b-instruct-v2/",),
    "adapter added": (
        "serving.model.adapters=[{name: acme-support, uri: 's3://acme-train-checkpoints/models/adapters/acme-support/', rank: 16}, "
        "{name: globex-legal, uri: 's3://acme-train-checkpoints/models/adapters/globex-legal/', rank: 32}, "
        "{name: initech-sales, uri: 's3://acme-train-checkpoints/models/adapters/initech-sales/', rank: 16}]",
    ),
    "admission TTL": ("serving.admission.ttlSeconds=600",),
    "SLO numbers": ("serving.slo.targetSeconds=5", "serving.slo.serviceSeconds=0.5"),
    **SERVING_MODEL_CHANGES,
}

AZURE_TRAINING_CHANGES = {
    "nodes 4 -> 64": ("training.nodes.count=64",),
    # Another ND size East US offers (its Retail Prices meters have no ND H200 v5 or ND MI300X v5).
    "H100 -> A100 80GB": ("training.nodes.instanceType=Standard_ND96amsr_A100_v4",),
    "on-demand -> spot": ("training.nodes.capacity=spot",),
    "partitions edited": (
        "training.scheduler.partitions=[{name: gpu, maxTime: '7-00:00:00', default: true}, "
        "{name: long, maxTime: '14-00:00:00'}, {name: debug, maxTime: '02:00:00'}]",
    ),
    "head node size": ("training.scheduler.headNode.instanceType=Standard_D16s_v5",),
    "Slurm maxTime": ("training.scheduler.partitions.0.maxTime=14-00:00:00",),
    "checkpoint versions kept longer": ("training.storage.checkpoints.noncurrentVersionDays=60",),
    # Blobs uploaded after creation: an import job, never a new file system.
    "dataset imported again": ("training.storage.lustre.importTrigger=corpus-v2",),
    # A second serving stack's replicas admitted by the checkpoint account's firewall: an update in place.
    "second artifact reader subnet": (
        "training.artifactReaderSubnets=["
        "/subscriptions/7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098/resourceGroups/azure-serving-rg/providers/"
        "Microsoft.Network/virtualNetworks/azure-serving-net-vnet/subnets/azure-serving-net-replicas, "
        "/subscriptions/7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098/resourceGroups/azure-serving-2-rg/providers/"
        "Microsoft.Network/virtualNetworks/azure-serving-2-net-vnet/subnets/azure-serving-2-net-replicas]",
    ),
}

GCP_SERVING_CHANGES = {
    "replicas min/max": ("serving.replicas.min=2", "serving.replicas.max=32"),
    "serving machine type": ("serving.replicas.instanceType=a2-highgpu-1g",),
    "new weights": ("serving.model.weightsUri=gs://acme-train-checkpoints/models/llama-3.1-8b-instruct-v2/",),
    "admission TTL": ("serving.admission.ttlSeconds=1200",),
    "per-client rate": ("serving.admission.perClientRate=1200", "serving.admission.rateWindowSeconds=120"),
    "delivery attempts": ("serving.admission.maxReceiveCount=10",),
    "SLO numbers": ("serving.slo.targetSeconds=5", "serving.slo.serviceSeconds=0.5"),
    "context length": ("serving.model.contextLength=16384",),
}

GCP_TRAINING_CHANGES = {
    "nodes 4 -> 32": ("training.nodes.count=32",),
    "A3 Mega -> A3 High": ("training.nodes.instanceType=a3-highgpu-8g",),
    "A3 Mega -> A4 (RoCE)": ("training.nodes.instanceType=a4-highgpu-8g",),
    "spot -> reservation": ("training.nodes.capacity=on-demand", "training.nodes.reservationId=a3mega-block-1"),
    "partitions edited": (
        "training.scheduler.partitions=[{name: gpu, maxTime: '7-00:00:00', default: true}, "
        "{name: long, maxTime: '14-00:00:00'}, {name: debug, maxTime: '02:00:00'}]",
    ),
    "head node size": ("training.scheduler.headNode.instanceType=n2-standard-16",),
    "Slurm maxTime": ("training.scheduler.partitions.0.maxTime=14-00:00:00",),
    "checkpoint versions kept longer": ("training.storage.checkpoints.noncurrentVersionDays=60",),
    # Objects uploaded after creation: importData again, never a new instance.
    "dataset imported again": ("training.storage.lustre.importTrigger=corpus-v2",),
}

OCI_TRAINING_CHANGES = {
    "nodes 2 -> 8": ("training.nodes.count=8",),
    "H100 -> H200": ("training.nodes.instanceType=BM.GPU.H200.8",),
    "capacity reservation": ("training.nodes.reservationId=ocid1.capacityreservation.oc1.iad.aaaaaaaaacmegpu",),
    "partitions edited": (
        "training.scheduler.partitions=[{name: gpu, maxTime: '7-00:00:00', default: true}, "
        "{name: long, maxTime: '14-00:00:00'}, {name: debug, maxTime: '02:00:00'}]",
    ),
    "Slurm maxTime": ("training.scheduler.partitions.0.maxTime=14-00:00:00",),
    # Lustre grows by 10,400 GB steps above its 31,200 GB floor (accelstack.clouds.oci.catalog), never shrinks.
    "Lustre grown one step": ("training.storage.lustre.capacityGiB=38743",),
    # Objects uploaded after creation: the link imports again, never a new file system.
    "dataset imported again": ("training.storage.lustre.importTrigger=corpus-v2",),
}

AZURE_SERVING_CHANGES = {
    "replicas min/max": ("serving.replicas.min=2", "serving.replicas.max=32"),
    "serving VM size": ("serving.replicas.instanceType=Standard_NC40ads_H100_v5",),
    "new weights": (
        "serving.model.weightsUri=https://acmetrainckpts.blob.core.windows.net/checkpoints/models/llama-3.1-8b-v2",
    ),
    "admission TTL": ("serving.admission.ttlSeconds=1200",),
    "per-client rate": ("serving.admission.perClientRate=1200", "serving.admission.rateWindowSeconds=300"),
    "delivery attempts": ("serving.admission.maxReceiveCount=10",),
    "SLO numbers": ("serving.slo.targetSeconds=5", "serving.slo.serviceSeconds=0.5"),
    "context length": ("serving.model.contextLength=16384",),
    "standby pool size": ("serving.replicas.warmPool=1",),
}

# The fleet switched to a fixed size on a deployed stack, the same keys on every cloud: it drops the scaling part,
# never a stateful resource. (Switching to admission on the replicas deletes the admission queues, by design:
# tests/conformance/test_serving_topologies.py holds that loss to the queues alone.)
TOPOLOGY_CHANGES = {
    "autoscaled -> fixed fleet": ("serving.replicas.scaling=fixed", "serving.replicas.min=3", "serving.replicas.max=3"),
}
for _serving_changes in (SERVING_CHANGES, GCP_SERVING_CHANGES, AZURE_SERVING_CHANGES):
    _serving_changes.update(TOPOLOGY_CHANGES)

# Per shipped Slurm stack: the day-2 edits that change Slurm's configuration files (MaxNodeCount follows the node
# count; partitions and NodeSets follow the partitions). On every cloud they must update the configuration object
# in place and replace nothing of the Slurm cluster, the head above all (tests/conformance/test_slurm_config.py).
SLURM_CONFIG_CHANGES: dict[str, dict[str, tuple[str, ...]]] = {
    "aws-training": {
        "node count": TRAINING_CHANGES["nodes 4 -> 64"],
        "partitions": TRAINING_CHANGES["partitions edited"],
    },
    "aws-finetune": {
        "node count": FINETUNE_CHANGES["nodes 1 -> 4"],
        "partitions": FINETUNE_CHANGES["partitions edited"],
    },
    "azure-training": {
        "node count": AZURE_TRAINING_CHANGES["nodes 4 -> 64"],
        "partitions": AZURE_TRAINING_CHANGES["partitions edited"],
    },
    "gcp-training": {
        "node count": GCP_TRAINING_CHANGES["nodes 4 -> 32"],
        "partitions": GCP_TRAINING_CHANGES["partitions edited"],
    },
    "oci-training": {
        "node count": OCI_TRAINING_CHANGES["nodes 2 -> 8"],
        "partitions": OCI_TRAINING_CHANGES["partitions edited"],
    },
}

# Per shipped stack (by name): the day-2 changes the conformance suite applies to it.
VULTR_SERVING_CHANGES = {
    "fleet 2 -> 4": ("serving.replicas.min=4", "serving.replicas.max=4"),
    "A100 plan": ("serving.replicas.instanceType=vcg-a100-12c-120g-80vram",),
    "new weights": ("serving.model.weightsUri=s3://acme-models/models/llama-3.1-8b-instruct-v2/",),
    "admission TTL": ("serving.admission.ttlSeconds=30",),
    "per-client rate": ("serving.admission.perClientRate=1200", "serving.admission.rateWindowSeconds=120"),
    "weights key URL lifetime": ("account.weightsKey.urlLifetimeMinutes=60",),
}

# Example stacks that create nothing stateful, and why: the guards that look for stateful resources assert these
# stay without any (exact: a stateful resource added to one turns its entry red).
HOLDS_NOTHING_STATEFUL: dict[str, str] = {
    "vultr-serving": (
        "the weights live in Vultr Object Storage, which the stack reads and never creates; its parts are a VPC, a "
        "firewall group, instances, their weights key clocks and a load balancer, each re-creatable"
    ),
}

DAY_2_CHANGES: dict[str, dict[str, tuple[str, ...]]] = {
    "aws-training": TRAINING_CHANGES,
    "aws-finetune": FINETUNE_CHANGES,
    "aws-serving": SERVING_CHANGES,
    "azure-training": AZURE_TRAINING_CHANGES,
    "azure-serving": AZURE_SERVING_CHANGES,
    "gcp-serving": GCP_SERVING_CHANGES,
    "gcp-training": GCP_TRAINING_CHANGES,
    "oci-training": OCI_TRAINING_CHANGES,
    "vultr-serving": VULTR_SERVING_CHANGES,
}
