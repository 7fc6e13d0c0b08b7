"""Which example stacks the conformance suite checks (every deployable cloud's `stacks/Pulumi.<cloud>-*.yaml`)
and their offline previews: one `accelstack preview` per stack per process (a subprocess each, as the
CLI runs it), and in-process captures of the same program and config for the resized variants."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from accelstack.clouds import registry
from accelstack.engine.capture import Capture, capture
from accelstack.engine.preview import PROGRAM, PreviewResult, preview_stack, stack_config
from accelstack.examples import example_files
from accelstack.spec.loader import stack_name_of

REPO = Path(__file__).resolve().parents[2]
STACKS = REPO / "stacks"


def example_stacks(cloud: str) -> list[Path]:
    return example_files(STACKS, prefix=f"{cloud}-")


def cloud_stacks() -> list[tuple[str, Path]]:
    """(cloud, stack file) for every deployable cloud's example stacks."""
    return [(cloud, path) for cloud in registry.deployable() for path in example_stacks(cloud)]


@dataclass(frozen=True)
class Variant:
    """An example stack with the settings that switch it to another way of building the same workload (a
    managed scheduler, another file system, another capacity): checked like the stack itself."""

    path: Path
    name: str
    overrides: tuple[str, ...]


# Per example stack: every other way the components build the same workload (each capacity the cloud sells,
# each scheduler, each file system tier, with and without a file system, an existing network): the resources
# differ in kind or in the settings the packs judge (a market type, a reservation, a tier), not only in number.
# Reservation ids name nothing real: the offline preview resolves them through the mocks.
AWS_RESERVATION = "training.nodes.reservationId=cr-0123456789abcdef0"
AWS_ZONE = "training.network.availabilityZone=us-east-1a"
AZURE_RESERVATION_GROUP = (
    "training.nodes.reservationId=/subscriptions/3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c/resourceGroups/capacity-rg"
    "/providers/Microsoft.Compute/capacityReservationGroups/nd-h100-eastus-1"
)
CLUSTER_DIRECTOR = (
    "training.scheduler.kind=managed",
    'training.scheduler.partitions=[{"name": "gpu", "default": true}]',
)
GCP_FILESTORE = (
    "training.storage.lustre.tier=filestore-zonal",
    "training.storage.lustre.capacityGiB=4608",
    "training.storage.lustre.throughputPerTiB=null",
)
GCP_FLEX_START = ("training.nodes.capacity=flex-start", "training.nodes.maxRunHours=72")
GCP_RESERVATION = ("training.nodes.capacity=on-demand", "training.nodes.reservationId=a3-mega-us-central1-a")
GCP_CALENDAR = ("training.nodes.capacity=capacity-block", "training.nodes.reservationId=a3-mega-calendar-block")


# Slurm accounting: slurmdbd and the cloud's managed MySQL (components/<cloud>/slurm_accounting.py).
SLURM_ACCOUNTING = ("training.scheduler.accounting=database",)


def lustre_tier(tier: str, capacity_gib: int, throughput: int | None) -> tuple[str, ...]:
    return (
        f"training.storage.lustre.tier={tier}",
        f"training.storage.lustre.capacityGiB={capacity_gib}",
        f"training.storage.lustre.throughputPerTiB={'null' if throughput is None else throughput}",
    )


VARIANTS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "aws-training": (
        ("aws-batch", ("training.scheduler.kind=managed",)),
        ("aws-batch-reservation", ("training.scheduler.kind=managed", AWS_RESERVATION, AWS_ZONE)),
        ("capacity-block", ("training.nodes.capacity=capacity-block", AWS_RESERVATION, AWS_ZONE)),
        ("reservation", (AWS_RESERVATION, AWS_ZONE)),
        ("spot", ("training.nodes.capacity=spot",)),
        ("slurm-accounting", SLURM_ACCOUNTING),
        ("persistent-1", lustre_tier("PERSISTENT_1", 4800, 200)),
        ("scratch-2", lustre_tier("SCRATCH_2", 4800, None)),
        # SCRATCH_1 links the bucket at the file system's root only (no data repository associations).
        ("scratch-1", (*lustre_tier("SCRATCH_1", 7200, None), "training.storage.lustre.importPath=/")),
        # The dataset bucket exists already (not created, not protected by the stack; the grants name it).
        ("datasets-existing", ("training.storage.datasets.create=false",)),
        (
            "existing-vpc",
            (
                "training.network.vpcId=vpc-0123456789abcdef0",
                "training.network.subnetId=subnet-0123456789abcdef0",
                AWS_ZONE,
            ),
        ),
    ),
    "aws-finetune": (
        # One node in a Capacity Block: no placement group, the block's start and end as scheduled actions.
        (
            "capacity-block",
            (
                "training.nodes.instanceType=p5.48xlarge",
                "training.nodes.capacity=capacity-block",
                AWS_RESERVATION,
                AWS_ZONE,
            ),
        ),
    ),
    "aws-serving": (
        (
            "existing-vpc",
            (
                "serving.network.vpcId=vpc-0123456789abcdef0",
                'serving.network.subnetIds=["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]',
                'serving.network.publicSubnetIds=["subnet-0123456789abcdef2", "subnet-0123456789abcdef3"]',
            ),
        ),
    ),
    "azure-training": (
        ("azure-ml", ("training.scheduler.kind=managed", "training.storage.lustre=null")),
        (
            "azure-ml-spot",
            ("training.scheduler.kind=managed", "training.storage.lustre=null", "training.nodes.capacity=spot"),
        ),
        ("spot", ("training.nodes.capacity=spot",)),
        # A capacity reservation group takes one node (a Uniform scale set joins one only without a single
        # placement group, which InfiniBand between several nodes needs).
        ("reservation", ("training.nodes.count=1", AZURE_RESERVATION_GROUP)),
        ("no-lustre", ("training.storage.lustre=null",)),
        ("slurm-accounting", SLURM_ACCOUNTING),
        # After the corpus is uploaded: the import job that stages it into Managed Lustre.
        ("import-trigger", ("training.storage.lustre.importTrigger=corpus-v1",)),
        ("amlfs-40", lustre_tier("AMLFS-Durable-Premium-40", 49152, 40)),
        ("amlfs-125", lustre_tier("AMLFS-Durable-Premium-125", 16384, 125)),
        ("amlfs-250", lustre_tier("AMLFS-Durable-Premium-250", 8192, 250)),
    ),
    "azure-serving": (("no-standby-pool", ("serving.replicas.warmPool=0",)),),
    "gcp-training": (
        ("cluster-director", CLUSTER_DIRECTOR),
        ("cluster-director-flex-start", (*CLUSTER_DIRECTOR, *GCP_FLEX_START)),
        ("cluster-director-reservation", (*CLUSTER_DIRECTOR, *GCP_RESERVATION)),
        ("cluster-director-calendar", (*CLUSTER_DIRECTOR, *GCP_CALENDAR)),
        ("cluster-director-filestore", (*CLUSTER_DIRECTOR, *GCP_FILESTORE)),
        # Without Lustre no resource carries the project's number, which Compute's default account (Cluster
        # Director's VMs) is named by: the stack states it (the mocks' project number).
        (
            "cluster-director-no-lustre",
            (*CLUSTER_DIRECTOR, "training.storage.lustre=null", "account.projectNumber='123456789012'"),
        ),
        ("filestore", GCP_FILESTORE),
        ("flex-start", GCP_FLEX_START),
        ("flex-start-no-scheduler", ("training.scheduler.kind=none", *GCP_FLEX_START)),
        ("reservation", GCP_RESERVATION),
        ("calendar", GCP_CALENDAR),
        ("on-demand", ("training.nodes.capacity=on-demand",)),
        ("no-lustre", ("training.storage.lustre=null",)),
        ("lustre-500", lustre_tier("managed-lustre-500", 18000, 500)),
        ("lustre-250", lustre_tier("managed-lustre-250", 36000, 250)),
        ("lustre-125", lustre_tier("managed-lustre-125", 72000, 125)),
        ("datasets-existing", ("training.storage.datasets.create=false",)),
        ("slurm-accounting", SLURM_ACCOUNTING),
        # Without a file system the database makes the private services access peering itself.
        ("slurm-accounting-no-lustre", (*SLURM_ACCOUNTING, "training.storage.lustre=null")),
    ),
}

# Variants that cannot change their node count (the flat-graph check resizes the stack): why.
FIXED_SIZE_VARIANTS = {
    ("azure-training", "reservation"): "a capacity reservation group takes one InfiniBand node (azure rules)",
}


# Every training example stack, on every cloud, with each value the cloud's catalog or the planner fills left out:
# it previews, and what the derived-defaults table prints is what the resources receive.
OMITTED_DEFAULTS = (
    "training.storage.lustre.tier=null",
    "training.storage.lustre.capacityGiB=null",
    "training.storage.lustre.throughputPerTiB=null",
    "training.storage.lustre.mountPath=null",
    "training.storage.checkpoints.path=null",
    "training.scheduler.headNode.instanceType=null",
)
DEFAULTS_VARIANT = "defaults-omitted"

# Every training example stack with a file system, without a scheduler: the recipe's plain nodes boot the jobs'
# environment and mount the file system, the same on every cloud.
PLAIN_NODES = ("training.scheduler.kind=none",)
PLAIN_NODES_VARIANT = "no-scheduler"


# Every serving example stack in the other topology (the load balancer straight to replicas that admit requests
# themselves, scaling on requests per replica) and as a fixed fleet of each: what the spec says, not the cloud.
DIRECT = ("serving.admission.kind=replica", "serving.replicas.min=1")
DIRECT_VARIANT = "direct"
FIXED_FLEET = ("serving.replicas.scaling=fixed", "serving.replicas.min=2", "serving.replicas.max=2")
FIXED_VARIANT = "fixed-fleet"
DIRECT_FIXED_VARIANT = "direct-fixed"
# The front door without access logs: the service-logs guardrail reads it from the spec on every cloud (the
# pack's frontDoorAccessLogs), so the stack the spec allows must pass it.
NO_ACCESS_LOGS = ("no-access-logs", ("serving.loadBalancer.accessLogs=false",))
SERVING_TOPOLOGIES = (
    (DIRECT_VARIANT, DIRECT),
    (FIXED_VARIANT, FIXED_FLEET),
    (DIRECT_FIXED_VARIANT, ("serving.admission.kind=replica", *FIXED_FLEET)),
)


def topology_applies(cloud: str, name: str) -> bool:
    """The autoscaled direct topology scales on the load balancer's requests: a cloud without that scaling (Vultr,
    which has no autoscaler) cannot build it, and `validate` refuses it there; its example is a fixed fleet."""
    from accelstack.clouds import registry
    from accelstack.clouds.base import Feature

    if (
        name in (FIXED_VARIANT, DIRECT_FIXED_VARIANT)
        and Feature.LOAD_BALANCER_SCALING not in registry.get(cloud).features
    ):
        return False  # its example is that fixed fleet (admitting on the replicas) already: nothing else to build
    return name != DIRECT_VARIANT or Feature.LOAD_BALANCER_SCALING in registry.get(cloud).features


def variant_cases() -> list[tuple[str, Variant]]:
    cases = [
        (cloud, Variant(path, name, overrides))
        for cloud, path in cloud_stacks()
        for name, overrides in VARIANTS.get(stack_name_of(path), ())
    ]
    return (
        cases
        + [
            (cloud, Variant(path, DEFAULTS_VARIANT, omitted))
            for cloud, path in cloud_stacks()
            if (omitted := omitted_defaults(path))
        ]
        + [
            (cloud, Variant(path, PLAIN_NODES_VARIANT, PLAIN_NODES))
            for cloud, path in cloud_stacks()
            if omitted_defaults(path)
        ]
        + [
            (cloud, Variant(path, name, overrides))
            for cloud, path in cloud_stacks()
            if is_serving(path)
            for name, overrides in (*SERVING_TOPOLOGIES, NO_ACCESS_LOGS)
            if topology_applies(cloud, name) and (name != NO_ACCESS_LOGS[0] or access_logs_on(path))
        ]
    )


def access_logs_on(path: Path) -> bool:
    """Whether the example's front door writes access logs (Vultr's example has them off: its load balancer keeps
    none), so that the no-access-logs variant builds something else."""
    from accelstack.spec.loader import load_stack

    return bool(load_stack(path).serving.load_balancer.access_logs)


def is_serving(path: Path) -> bool:
    from accelstack.spec.loader import load_stack

    return load_stack(path).workload == "serving"


def omitted_defaults(path: Path) -> tuple[str, ...]:
    """OMITTED_DEFAULTS that apply to the example stack at `path` (those of blocks it has); () for a serving stack
    or one without a file system."""
    from accelstack.spec.loader import load_stack
    from accelstack.spec.models import TrainingStack

    spec = load_stack(path)
    if not isinstance(spec, TrainingStack) or spec.training.storage.lustre is None:
        return ()
    has_checkpoints = spec.training.storage.checkpoints is not None
    return tuple(o for o in OMITTED_DEFAULTS if has_checkpoints or not o.startswith("training.storage.checkpoints."))


def stack_id(path: Path | Variant) -> str:
    if isinstance(path, Variant):
        return f"{stack_name_of(path.path)}[{path.name}]"
    return stack_name_of(path)


def path_of(case: Path | Variant) -> Path:
    return case.path if isinstance(case, Variant) else case


def overrides_of(case: Path | Variant) -> tuple[str, ...]:
    return case.overrides if isinstance(case, Variant) else ()


@cache
def preview(stack_file: Path | Variant) -> PreviewResult:
    return preview_stack(path_of(stack_file), list(overrides_of(stack_file)), REPO)


@cache
def resized(stack_file: Path | Variant, overrides: tuple[str, ...]) -> Capture:
    """The program's registrations for the stack with `--set` overrides, in this process (the config
    map `preview` passes its worker; the overrides are validated by the program's own spec check)."""
    _, config = stack_config(path_of(stack_file), [*overrides_of(stack_file), *overrides])
    return capture(REPO / PROGRAM, config, stack=stack_name_of(path_of(stack_file)))
