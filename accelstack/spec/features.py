"""Which config keys ask for which cloud capability: one neutral table, checked against `Cloud.features`.

A stack that asks for something its cloud lacks (Slurm on a cloud with only a managed scheduler, spot
capacity, a managed Lustre, a warm pool, ...) fails validation at the key that asks, with the clouds
that have it (`accelstack.spec.validators.cloud_offers_what_the_stack_asks`). A new capability is a row
here and a `Feature`; a new cloud lists the features it has and adds no branch anywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from accelstack.clouds.base import Feature
from accelstack.spec.models import ServingStack, StackSpec, TrainingStack


@dataclass(frozen=True)
class FeatureUse:
    path: str  # the config key that asks for the feature, where the error is reported
    what: str  # the setting in words, as the user wrote it
    feature: Feature
    asks: Callable[[StackSpec], bool]
    instead: str = ""  # how to do without, when there is a way


def _training(test: Callable[[TrainingStack], bool]) -> Callable[[StackSpec], bool]:
    return lambda spec: isinstance(spec, TrainingStack) and test(spec)


def _cross_cloud_reader(spec: ServingStack) -> bool:
    """artifactAccount names another cloud's account this cloud reads through its own reader (accelstack.spec.handoff
    READERS: oci: from a vultr stack) or copies from (serving.model.copyFrom), not a cross-account grant of its own
    cloud."""
    from accelstack.spec.copies import copies_requested
    from accelstack.spec.handoff import READERS, split_account_reference

    cloud = split_account_reference(spec.serving.artifact_account or "")[0]
    return cloud not in (None, spec.cloud) and ((cloud, spec.cloud) in READERS or copies_requested(spec))


def _serving(test: Callable[[ServingStack], bool]) -> Callable[[StackSpec], bool]:
    return lambda spec: isinstance(spec, ServingStack) and test(spec)


FEATURE_USES: tuple[FeatureUse, ...] = (
    FeatureUse(
        "training.scheduler.kind",
        "scheduler kind slurm",
        Feature.SLURM,
        _training(lambda s: s.training.scheduler.kind == "slurm"),
        "scheduler kind managed or none",
    ),
    FeatureUse(
        "training.scheduler.kind",
        "scheduler kind managed",
        Feature.MANAGED_SCHEDULER,
        _training(lambda s: s.training.scheduler.kind == "managed"),
        "scheduler kind slurm or none",
    ),
    FeatureUse(
        "training.scheduler.accounting",
        "Slurm accounting in a managed database (accounting: database)",
        Feature.SLURM_ACCOUNTING,
        _training(lambda s: s.training.scheduler.kind == "slurm" and s.training.scheduler.accounting == "database"),
        "accounting: none",
    ),
    FeatureUse(
        "training.nodes.count",
        "more than one training node",
        Feature.RDMA_FABRIC,
        _training(lambda s: s.training.nodes.count > 1),
        "count: 1",
    ),
    FeatureUse(
        "training.nodes.capacity",
        "capacity spot",
        Feature.SPOT,
        _training(lambda s: s.training.nodes.capacity == "spot"),
        "capacity on-demand",
    ),
    FeatureUse(
        "training.nodes.capacity",
        "capacity capacity-block",
        Feature.TIME_BOXED_RESERVATION,
        _training(lambda s: s.training.nodes.capacity == "capacity-block"),
        "capacity on-demand",
    ),
    FeatureUse(
        "training.nodes.capacity",
        "capacity flex-start",
        Feature.FLEX_START,
        _training(lambda s: s.training.nodes.capacity == "flex-start"),
        "capacity spot or capacity-block",
    ),
    FeatureUse(
        "training.nodes.reservationId",
        "a reservationId with capacity on-demand",
        Feature.ON_DEMAND_RESERVATION,
        _training(lambda s: s.training.nodes.capacity == "on-demand" and s.training.nodes.reservation_id is not None),
        "remove reservationId",
    ),
    FeatureUse(
        "training.storage.lustre",
        "a parallel file system (training.storage.lustre)",
        Feature.MANAGED_LUSTRE,
        _training(lambda s: s.training.storage.lustre is not None),
        "lustre: null (nodes read from object storage)",
    ),
    FeatureUse(
        "training.storage.lustre.importPath",
        "linking the dataset bucket into the file system (importPath)",
        Feature.OBJECT_LINKED_FS,
        _training(lambda s: s.training.storage.lustre is not None),
    ),
    FeatureUse(
        "training.artifactReaders",
        "artifactReaders (serving accounts reading published models)",
        Feature.CROSS_ACCOUNT_ARTIFACTS,
        _training(lambda s: bool(s.training.artifact_readers)),
        "remove artifactReaders",
    ),
    FeatureUse(
        "training.artifactReaderSubnets",
        "artifactReaderSubnets (networks admitted to the checkpoint store)",
        Feature.OBJECT_STORE_NETWORK_RULES,
        _training(lambda s: bool(s.training.artifact_reader_subnets)),
        "remove artifactReaderSubnets (the bucket has no network rules; the readers' grants suffice)",
    ),
    FeatureUse(
        "training.artifactReaderAddresses",
        "artifactReaderAddresses (addresses admitted to the checkpoint store)",
        Feature.OBJECT_STORE_NETWORK_RULES,
        _training(lambda s: bool(s.training.artifact_reader_addresses)),
        "remove artifactReaderAddresses (the bucket has no network rules; the readers' grants suffice)",
    ),
    FeatureUse(
        "serving.replicas.capacity",
        "capacity spot",
        Feature.SPOT,
        _serving(lambda s: s.serving.replicas.capacity == "spot"),
        "capacity on-demand",
    ),
    FeatureUse(
        "serving.admission.kind",
        "the admission queue in front of the replicas (kind queue)",
        Feature.ADMISSION_QUEUE,
        _serving(lambda s: s.serving.admission.kind == "queue"),
        "kind replica",
    ),
    FeatureUse(
        "serving.admission.kind",
        "replicas admitting requests themselves (kind replica)",
        Feature.REPLICA_ADMISSION,
        _serving(lambda s: s.serving.admission.kind == "replica"),
        "kind queue",
    ),
    FeatureUse(
        "serving.admission.perClientRate",
        "a per-client rate limit at the load balancer",
        Feature.WAF_RATE_LIMIT,
        # With admission on the replicas every cloud's admission proxy enforces perClientRate itself
        # (components/replica/admission_proxy.py); only a queue in front needs the edge's WAF to hold it.
        _serving(lambda s: s.serving.admission.kind == "queue"),
        "kind replica (the replicas' admission proxy holds the per-client rate)",
    ),
    FeatureUse(
        "serving.replicas.scaling",
        "replicas scaling on the queue's backlog",
        Feature.QUEUE_DEPTH_SCALING,
        _serving(lambda s: s.serving.replicas.scaling == "backlog" and s.serving.admission.kind == "queue"),
        "scaling fixed",
    ),
    FeatureUse(
        "serving.replicas.scaling",
        "replicas scaling on the load balancer's requests per replica (admission.kind replica)",
        Feature.LOAD_BALANCER_SCALING,
        _serving(lambda s: s.serving.replicas.scaling == "backlog" and s.serving.admission.kind == "replica"),
        "scaling fixed",
    ),
    FeatureUse(
        "serving.replicas.warmPool",
        "a warm pool of stopped replicas",
        Feature.WARM_POOL,
        _serving(lambda s: s.serving.replicas.warm_pool != 0),
        "warmPool: 0",
    ),
    FeatureUse(
        "serving.artifactAccount",
        "artifactAccount (reading models from the training account)",
        Feature.CROSS_ACCOUNT_ARTIFACTS,
        _serving(lambda s: s.serving.artifact_account is not None and not _cross_cloud_reader(s)),
        "remove artifactAccount (weights in this account)",
    ),
)
