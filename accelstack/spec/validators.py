"""The spec's own rules, one small function per rule, each yielding `Problem(path, message, level)`.

ERRORs are what the cloud API would reject at create time (or what would lose data); WARNINGs are legal
but unwise. How rules register, which run for which stack and in what order: `accelstack.spec.rule_registry`
(`rule`, `run_validators` and the rest are importable from here too). What every cloud rejects alike, from
its catalog and limits, is in `accelstack.spec.catalog_rules`; what one cloud rejects, in its rule modules.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.clouds.base import DatasetImport, ParallelFsTier
from accelstack.spec.base import account_key, account_keys
from accelstack.spec.copies import copies_requested
from accelstack.spec.features import FEATURE_USES
from accelstack.spec.handoff import store_cloud
from accelstack.spec.handoff_rules import reference_problem
from accelstack.spec.models import LustreSpec, ServingStack, StackSpec, TrainingStack
from accelstack.spec.node_paths import node_path_problem, not_plain
from accelstack.spec.node_paths import path_within as path_within
from accelstack.spec.problems import Level, Problem, did_you_mean

# The registry and runner, and the Slurm syntax the partition rules check, re-exported: importers name this module.
from accelstack.spec.rule_registry import RULES as RULES
from accelstack.spec.rule_registry import Registered as Registered
from accelstack.spec.rule_registry import Rule as Rule
from accelstack.spec.rule_registry import all_rules as all_rules
from accelstack.spec.rule_registry import load_rule_plugins as load_rule_plugins
from accelstack.spec.rule_registry import rule as rule
from accelstack.spec.rule_registry import run_validators as run_validators
from accelstack.spec.slurm_syntax import SLURM_FEATURE, SLURM_RESERVED_PARTITION_NAMES, slurm_time_problem
from accelstack.spec.slurm_syntax import SLURM_MAX_TIME_SECONDS as SLURM_MAX_TIME_SECONDS
from accelstack.spec.slurm_syntax import slurm_time_seconds as slurm_time_seconds
from accelstack.spec.text_grammar import health_path_problem
from accelstack.spec.uris import object_uris, split_bucket_uri


def bucket_of(uri: str) -> str:
    """`s3://bucket/prefix` -> `bucket` (the models already require scheme://host[/path])."""
    return split_bucket_uri(uri)[0]


@rule
def cloud_is_deployable(spec: StackSpec) -> Iterator[Problem]:
    """A cloud described without components validates, sizes and prices, but cannot be previewed or
    deployed (`accelstack.spec.loader.parse_spec(deploy=True)` makes that an error)."""
    cloud = registry.get(spec.cloud)
    if not cloud.deployable:
        yield Problem(
            "cloud",
            f"{spec.cloud!r} is described (catalog, prices) but not deployable yet: preview and deploy refuse "
            f"this stack; deployable: {', '.join(registry.deployable()) or 'none'}",
            Level.WARNING,
        )
    elif not cloud.deploys(spec.workload):
        yield Problem(
            "workload",
            f"{spec.workload!r} stacks are not deployable on {spec.cloud} yet (its components build "
            f"{', '.join(sorted(cloud.workloads))}): preview and deploy refuse this stack",
            Level.WARNING,
        )


@rule
def object_uris_use_the_clouds_store(spec: StackSpec) -> Iterator[Problem]:
    """Datasets, checkpoints, weights and adapters live in the stack's cloud's object store: their URIs take
    its schemes (`Catalog.object_uri_schemes`: s3:// on AWS, gs:// on Google Cloud)."""
    catalog = registry.get(spec.cloud).catalog
    schemes = catalog.object_uri_schemes
    if not schemes:
        return
    allowed = ", ".join(f"{scheme}://" for scheme in schemes)
    for path, uri in object_uris(spec):
        if isinstance(spec, ServingStack) and store_cloud(uri, spec.cloud) not in (None, spec.cloud):
            continue  # another cloud's training artifacts: weights_on_another_cloud judges the pair
        if uri.partition("://")[0] not in schemes:
            yield Problem(
                path,
                f"{uri!r}: on {spec.cloud} object URIs start with {allowed} ({catalog.object_store_service}); "
                f"allowed scheme: {allowed}",
            )


@rule
def cloud_offers_what_the_stack_asks(spec: StackSpec) -> Iterator[Problem]:
    """A key that asks for a capability the cloud lacks (Slurm, spot, a managed Lustre, a warm pool, ...)
    is an error at that key, naming the clouds that have it (accelstack.spec.features.FEATURE_USES)."""
    clouds = registry.clouds()
    features = clouds[spec.cloud].features
    for use in FEATURE_USES:
        if use.feature in features or not use.asks(spec):
            continue
        others = [name for name, cloud in clouds.items() if use.feature in cloud.features]
        where = f"clouds that have it: {', '.join(others)}" if others else "no registered cloud has it"
        reason = clouds[spec.cloud].unsupported.get(use.feature)
        why = f" ({reason})" if reason else ""
        yield Problem(
            use.path,
            f"{use.what} needs the {use.feature.value} feature, which {spec.cloud} does not offer{why}; {where}"
            + (f"; or {use.instead}" if use.instead else ""),
        )


@rule
def separation_account_ids_format(spec: StackSpec) -> Iterator[Problem]:
    """Every account named in `separation` is an account id in the cloud's format (the key its account
    block names the account by: an AWS account id, an Azure subscription id, a GCP project id, ...)."""
    for key, accounts in (
        ("trainingAccounts", spec.separation.training_accounts),
        ("servingAccounts", spec.separation.serving_accounts),
    ):
        for index, item in enumerate(accounts):
            problem = reference_problem(item, spec.cloud, copying=copies_requested(spec))
            if problem:
                yield Problem(f"separation.{key}.{index}", problem)


@rule(workload="training")
def artifact_readers_are_serving_accounts(spec: TrainingStack) -> Iterator[Problem]:
    """Model artifacts are shared read-only with serving accounts only (the separation contract)."""
    account = type(spec.account)
    serving = spec.separation.serving_accounts
    for index, reader in enumerate(spec.training.artifact_readers):
        path = f"training.artifactReaders.{index}"
        problem = account.id_problem(reader)
        if problem:
            yield Problem(path, problem)
        elif account_key(reader) not in account_keys(serving):
            yield Problem(path, f"{reader} is not one of separation.servingAccounts ({', '.join(serving)})")


@rule(workload="serving")
def artifact_account_is_training(spec: ServingStack) -> Iterator[Problem]:
    """Serving reads artifacts from a training account, never from another serving account (the separation
    contract, on every cloud: an AWS account, an Azure subscription, a GCP project)."""
    training = spec.separation.training_accounts
    artifact_account = spec.serving.artifact_account
    if artifact_account is None:
        yield Problem(
            "serving.artifactAccount",
            "not set: the model is assumed to live in this account; set it to the training account "
            f"({', '.join(training)}) that owns the checkpoint bucket to scope the cross-account read",
            Level.WARNING,
        )
        return
    problem = reference_problem(artifact_account, spec.cloud, copying=copies_requested(spec))
    if problem:
        yield Problem("serving.artifactAccount", problem)
    elif account_key(artifact_account) not in account_keys(training):
        yield Problem(
            "serving.artifactAccount",
            f"{artifact_account} is not one of separation.trainingAccounts ({', '.join(training)})",
        )


@rule(workload="serving")
def health_path_is_a_plain_path(spec: ServingStack) -> Iterator[Problem]:
    """The health path is written into the replicas' boot scripts and unit files, and into every cloud's health
    check: a plain URL path, nothing a shell, systemd or YAML would read another way."""
    problem = health_path_problem(spec.serving.load_balancer.health_path)  # the model's own check, for built specs
    if problem is not None:
        yield Problem("serving.loadBalancer.healthPath", problem)


@rule(workload="serving")
def replica_admission_keeps_a_replica(spec: ServingStack) -> Iterator[Problem]:
    """Without a queue nothing holds a request while the first replica starts: the load balancer answers 503.
    Scaling from zero needs the queue (admission.kind queue), whose backlog starts the first replica."""
    serving = spec.serving
    if serving.admission.kind == "replica" and serving.replicas.min == 0:
        yield Problem(
            "serving.replicas.min",
            "0 with serving.admission.kind replica: without a queue no request waits while the first replica "
            "starts, and nothing measures a backlog to start it; set min to 1 or more, or admission.kind queue",
        )


@rule(workload="training")
def artifact_sharing_needs_a_checkpoint_store(spec: TrainingStack) -> Iterator[Problem]:
    """Published models are shared from the checkpoint store's artifactPrefix: without a checkpoint store,
    artifactReaders (and the subnets and addresses admitted for them) would share nothing, silently."""
    if spec.training.storage.checkpoints is not None:
        return
    for key, items in (
        ("artifactReaders", spec.training.artifact_readers),
        ("artifactReaderSubnets", spec.training.artifact_reader_subnets),
        ("artifactReaderAddresses", spec.training.artifact_reader_addresses),
    ):
        if items:
            yield Problem(
                f"training.{key}",
                f"serving reads published models from the checkpoint store's {spec.training.artifact_prefix!r} "
                "prefix, and this stack has none: set training.storage.checkpoints.uri, or remove " + key,
            )


@rule(workload="training")
def spot_needs_checkpoints(spec: TrainingStack) -> Iterator[Problem]:
    """Interruptible capacity loses work unless jobs can restart from a checkpoint."""
    if spec.training.nodes.capacity == "spot" and spec.training.storage.checkpoints is None:
        yield Problem(
            "training.storage.checkpoints",
            "spot capacity requires a checkpoint location (set training.storage.checkpoints.uri)",
        )


@rule(workload="training")
def flex_start_run_time(spec: TrainingStack) -> Iterator[Problem]:
    """Flex-start capacity is granted for a run time the request names (Dynamic Workload Scheduler:
    cloud.google.com/compute/docs/instances/flex-start-vms), and takes no reservation; the run time means
    nothing for any other capacity. Its VMs are deleted at the end, so work not checkpointed is lost."""
    nodes = spec.training.nodes
    if nodes.capacity == "flex-start":
        if nodes.max_run_hours is None:
            yield Problem(
                "training.nodes.maxRunHours",
                "capacity flex-start needs maxRunHours: how long the nodes run once granted (they are deleted after)",
            )
        if nodes.reservation_id is not None:
            yield Problem(
                "training.nodes.reservationId",
                "flex-start capacity takes no reservation; remove reservationId, or use capacity on-demand "
                "(a reservation) or capacity-block (a calendar reservation)",
            )
        if spec.training.storage.checkpoints is None:
            yield Problem(
                "training.storage.checkpoints",
                "flex-start nodes are deleted after maxRunHours: without training.storage.checkpoints a job "
                "longer than that starts over",
                Level.WARNING,
            )
    elif nodes.max_run_hours is not None:
        yield Problem(
            "training.nodes.maxRunHours",
            f"maxRunHours applies to capacity flex-start only, not {nodes.capacity}; remove it",
        )


NONCURRENT_DAYS_SHORT = 7  # the guardrails pack's minRetentionDays default


@rule(workload="training")
def checkpoint_versions_kept_long_enough(spec: TrainingStack) -> Iterator[Problem]:
    """A checkpoint overwritten or deleted by mistake is recoverable only while its old version lives."""
    checkpoints = spec.training.storage.checkpoints
    if checkpoints is None:
        return
    days = checkpoints.noncurrent_version_days
    if checkpoints.create and days < NONCURRENT_DAYS_SHORT:
        yield Problem(
            "training.storage.checkpoints.noncurrentVersionDays",
            f"{days} day(s): an overwritten or deleted checkpoint is unrecoverable after that; "
            f"keep old versions at least {NONCURRENT_DAYS_SHORT} days (default 30); the guardrails pack refuses a "
            f"shorter window unless its minRetentionDays is lowered",
            Level.WARNING,
        )


@rule
def stack_account_is_on_its_side(spec: StackSpec) -> Iterator[Problem]:
    """The stack's account must be one of its workload's accounts in `separation`."""
    side = spec.separation.training_accounts if spec.workload == "training" else spec.separation.serving_accounts
    account = spec.account
    if account_key(account.account_id) not in account_keys(side):
        yield Problem(
            f"account.{account.id_key()}",
            f"{account.account_id} is not one of separation.{spec.workload}Accounts ({', '.join(side)})",
        )


@rule
def region_allowed(spec: StackSpec) -> Iterator[Problem]:
    """The organisation's Region allowlist (separation.allowedRegions), e.g. for data residency."""
    allowed = spec.separation.allowed_regions
    if allowed and spec.account.region not in allowed:
        yield Problem(
            f"account.{spec.account.region_key()}",
            f"{spec.account.region!r} is not allowed; allowed: {', '.join(allowed)}",
        )


@rule(workload="training")
def dataset_and_checkpoint_buckets_differ(spec: TrainingStack) -> Iterator[Problem]:
    """Checkpoints get their own bucket: its lifecycle, versioning and cross-account readers differ
    from the dataset's, and FSx links a bucket to a file system only once."""
    storage = spec.training.storage
    checkpoints = storage.checkpoints
    if checkpoints is None:
        return
    if bucket_of(checkpoints.uri) == bucket_of(storage.datasets.uri):
        yield Problem(
            "training.storage.checkpoints.uri",
            f"uses the dataset bucket {bucket_of(storage.datasets.uri)!r}; checkpoints need their own bucket",
        )


def parallel_fs_tier(spec: TrainingStack) -> tuple[LustreSpec, ParallelFsTier] | None:
    """The stack's parallel file system and its tier in the cloud's catalog (None: no file system, or a
    tier the catalog lacks, which `parallel_fs_tier_known` reports)."""
    lustre = spec.training.storage.lustre
    if lustre is None:
        return None
    tier = registry.get(spec.cloud).parallel_fs_tier(lustre.tier)
    return (lustre, tier) if tier is not None else None


@rule(workload="training")
def parallel_fs_tier_known(spec: TrainingStack) -> Iterator[Problem]:
    """`lustre.tier` is one of the cloud's parallel file system tiers (Catalog.parallel_fs)."""
    if spec.training.storage.lustre is None:
        return
    tier = spec.training.storage.lustre.tier
    tiers = registry.get(spec.cloud).catalog.parallel_fs
    if tier is None and not tiers:
        return  # no parallel file system at all: cloud_offers_what_the_stack_asks reports it
    if tier is None or tier not in tiers:
        yield Problem(
            "training.storage.lustre.tier",
            f"{tier!r} is not a {spec.cloud} parallel file system tier{did_you_mean(tier, tiers)}; "
            f"allowed: {', '.join(tiers) or 'none'}",
        )


@rule(workload="training")
def parallel_fs_capacity_step(spec: TrainingStack) -> Iterator[Problem]:
    """The cloud sells the file system in fixed steps per tier (ParallelFsTier.capacity_allowed)."""
    found = parallel_fs_tier(spec)
    if found is None:
        return
    lustre, tier = found
    if lustre.capacity_gib is None:
        return  # the planner derives a valid step (accelstack.planner.training_plan.lustre_setting)
    if not tier.capacity_allowed(lustre.capacity_gib):
        yield Problem(
            "training.storage.lustre.capacityGiB",
            f"{lustre.capacity_gib} GiB is not a valid {tier.name} size; allowed: {tier.capacity_rule()}",
        )


@rule(workload="training")
def parallel_fs_throughput_tier(spec: TrainingStack) -> Iterator[Problem]:
    """Throughput per TiB is one the tier offers; a tier with fixed throughput takes none."""
    found = parallel_fs_tier(spec)
    if found is None:
        return
    lustre, tier = found
    path = "training.storage.lustre.throughputPerTiB"
    if not tier.throughput_per_tib:
        if lustre.throughput_per_tib is not None:
            yield Problem(path, f"{tier.name} has no throughput tiers (its throughput is fixed); remove it")
    elif lustre.throughput_per_tib is None:
        return  # the planner derives the tier (accelstack.planner.training_plan.lustre_setting)
    elif lustre.throughput_per_tib not in tier.throughput_per_tib:
        allowed = ", ".join(str(t) for t in tier.throughput_per_tib)
        offering = [
            other.name
            for other in registry.get(spec.cloud).catalog.parallel_fs.values()
            if lustre.throughput_per_tib in other.throughput_per_tib
        ]
        elsewhere = f" (tier {' or '.join(offering)} offers it)" if offering else f" (no {spec.cloud} tier offers it)"
        yield Problem(
            path, f"{lustre.throughput_per_tib} MB/s/TiB is not a {tier.name} tier; allowed: {allowed}{elsewhere}"
        )


@rule(workload="training")
def file_system_that_cannot_import_needs_a_head(spec: TrainingStack) -> Iterator[Problem]:
    """A file system tier without a link to object storage (NFS: GCP Filestore) gets the dataset from the
    scheduler's head node (or a managed Slurm's login node), which copies it in; without a scheduler nothing
    would, and jobs would find the import path empty."""
    lustre = spec.training.storage.lustre
    if lustre is None:
        return
    tier = registry.get(spec.cloud).parallel_fs_tier(lustre.tier)
    if tier is not None and not tier.imports_from_object_store and spec.training.scheduler.kind == "none":
        yield Problem(
            "training.storage.lustre.tier",
            f"{tier.name} cannot import the dataset from object storage and with scheduler kind none no node "
            "copies it in; use scheduler kind slurm (its head stages it) or a Lustre tier",
        )


@rule(workload="training")
def dataset_reaches_the_file_system(spec: TrainingStack) -> Iterator[Problem]:
    """A tier that imports only when asked (`DatasetImport.ON_REQUEST`) is asked at its creation: from a dataset
    bucket the same `up` creates, that import finds nothing and jobs find importPath empty until the stack asks
    again (`importTrigger`). Where the head node copies the dataset at its boots, the trigger asks nothing."""
    found = parallel_fs_tier(spec)
    if found is None:
        return
    lustre, tier = found
    storage = spec.training.storage
    service = tier.service or registry.get(spec.cloud).catalog.parallel_fs_service
    directory = posixpath.join(lustre.mount_path or "", lustre.import_path.lstrip("/"))
    if tier.dataset_import is DatasetImport.ON_REQUEST and storage.datasets.create and lustre.import_trigger is None:
        yield Problem(
            "training.storage.lustre.importTrigger",
            f"training.storage.datasets.create is true, so the first `up` creates the dataset bucket empty, and "
            f"{service} ({tier.name}) imports only when asked: at its creation, from that empty bucket, so jobs find "
            f"{directory} empty. Upload the dataset, then set importTrigger (any text, e.g. the dataset's version) "
            "and `up` again; change it whenever new data should be imported",
            Level.WARNING,
        )
    elif tier.dataset_import is DatasetImport.HEAD_COPIES and lustre.import_trigger is not None:
        yield Problem(
            "training.storage.lustre.importTrigger",
            f"{service} ({tier.name}) has no import: the head node copies new and changed objects into {directory} "
            "at each of its boots, so importTrigger changes nothing; restart the head to copy again",
            Level.WARNING,
        )


@rule(workload="training")
def checkpoints_on_lustre(spec: TrainingStack) -> Iterator[Problem]:
    """Checkpoint shards are written by every node, so the path must be on the shared file system."""
    storage = spec.training.storage
    if storage.checkpoints is None:
        return
    path = storage.checkpoints.path
    if storage.lustre is None:
        if spec.training.nodes.count == 1:
            return  # one node: its local disk is the only reader, and the bucket is the durable copy
        if spec.training.scheduler.kind == "managed" and registry.get(spec.cloud).managed_scheduler.mounts_checkpoints:
            return  # the managed scheduler mounts the checkpoint store on every node: shared, and durable
        yield Problem(
            "training.storage.checkpoints.path",
            f"{path} is node-local because there is no Lustre file system (training.storage.lustre); "
            "ranks cannot read each other's shards on restart (under Slurm each node copies its own to the bucket; "
            "otherwise jobs must upload them)",
            Level.WARNING,
        )
        return
    mount = storage.lustre.mount_path
    if not path_within(path, mount):
        yield Problem(
            "training.storage.checkpoints.path",
            f"{path} is not under the Lustre mount path {mount}; use e.g. {posixpath.join(mount, 'checkpoints')}",
        )
        return
    if posixpath.normpath(storage.lustre.import_path) == "/":
        return  # the whole file system is the dataset link; nothing to keep apart
    dataset_dir = posixpath.join(mount, storage.lustre.import_path.lstrip("/"))
    if path_within(path, dataset_dir):
        yield Problem(
            "training.storage.checkpoints.path",
            f"{path} is inside the dataset directory {dataset_dir} (lustre.importPath {storage.lustre.import_path}),"
            " which is linked to the dataset bucket; keep checkpoints beside it, not in it",
            Level.WARNING,
        )


@rule(workload="training")
def node_paths_safe(spec: TrainingStack) -> Iterator[Problem]:
    """The Lustre mount point and the checkpoint directory are created (and mounted) by root on every
    node at boot: a system directory there breaks the node, `..` makes the path mean something else."""
    storage = spec.training.storage
    paths = []
    if storage.lustre is not None:
        paths.append(("training.storage.lustre.mountPath", storage.lustre.mount_path))
    if storage.checkpoints is not None:
        paths.append(("training.storage.checkpoints.path", storage.checkpoints.path))
    for config_path, path in paths:
        problem = node_path_problem(path)
        if problem:
            yield Problem(config_path, problem)
    if storage.lustre is not None:
        import_path = storage.lustre.import_path
        if not_plain(import_path):
            yield Problem(
                "training.storage.lustre.importPath",
                f"{import_path!r} is not a plain path inside the file system; write it as "
                f"{posixpath.normpath(import_path)!r} (e.g. /datasets)",
            )


@rule(workload="training")
def partition_names_unique(spec: TrainingStack) -> Iterator[Problem]:
    """slurm.conf rejects two PartitionName lines with one name."""
    seen: set[str] = set()
    for index, partition in enumerate(spec.training.scheduler.partitions):
        if partition.name in seen:
            yield Problem(f"training.scheduler.partitions.{index}.name", f"duplicate partition name {partition.name!r}")
        seen.add(partition.name)


@rule(workload="training")
def accounting_needs_slurm(spec: TrainingStack) -> Iterator[Problem]:
    """slurmdbd serves a Slurm controller: the managed scheduler keeps its own records, and no scheduler has none."""
    scheduler = spec.training.scheduler
    if scheduler.accounting == "database" and scheduler.kind != "slurm":
        yield Problem(
            "training.scheduler.accounting",
            f"accounting: database needs scheduler kind slurm (kind is {scheduler.kind}); allowed here: none",
        )


@rule(workload="training")
def exactly_one_default_partition(spec: TrainingStack) -> Iterator[Problem]:
    """Slurm routes jobs without -p to the Default=YES partition; two defaults is ambiguous, none
    makes every `sbatch` without -p fail."""
    if spec.training.scheduler.kind != "slurm":
        return
    partitions = spec.training.scheduler.partitions
    defaults = [p.name for p in partitions if p.default]
    if not partitions:
        yield Problem("training.scheduler.partitions", "slurm needs at least one partition")
    elif len(defaults) != 1:
        found = f"{len(defaults)} ({', '.join(defaults)})" if defaults else "none"
        yield Problem(
            "training.scheduler.partitions",
            f"exactly one partition must have default: true; found {found}",
        )


@rule(workload="training")
def partition_names_not_reserved(spec: TrainingStack) -> Iterator[Problem]:
    """A partition named DEFAULT (any case) becomes slurm.conf's defaults line and vanishes."""
    if spec.training.scheduler.kind != "slurm":
        return
    for index, partition in enumerate(spec.training.scheduler.partitions):
        if partition.name.upper() in SLURM_RESERVED_PARTITION_NAMES:
            yield Problem(
                f"training.scheduler.partitions.{index}.name",
                f"{partition.name!r} is reserved by Slurm (PartitionName=DEFAULT sets defaults; no partition is "
                "created, so jobs sent to it fail); pick another name, e.g. gpu",
            )


@rule(workload="training")
def containers_need_slurm(spec: TrainingStack) -> Iterator[Problem]:
    """pyxis is a Slurm plugin: asked for by name with another scheduler, it would be ignored (the default is not)."""
    scheduler = spec.training.scheduler
    if "containers" in scheduler.model_fields_set and scheduler.containers == "pyxis" and scheduler.kind != "slurm":
        yield Problem(
            "training.scheduler.containers",
            f"pyxis needs kind slurm (kind is {scheduler.kind}, whose jobs run as the service runs them); "
            "set containers: none or kind: slurm",
        )


@rule(workload="training")
def partition_features_valid(spec: TrainingStack) -> Iterator[Problem]:
    """Features are written into `NodeSet ... Feature=` and matched by `sbatch -C`: letters, digits,
    '_', '-' and '.' only (&, |, !, *, [, ], (, ) and , are constraint operators or separators)."""
    if spec.training.scheduler.kind != "slurm":
        return
    for index, partition in enumerate(spec.training.scheduler.partitions):
        seen: set[str] = set()
        for position, feature in enumerate(partition.features):
            path = f"training.scheduler.partitions.{index}.features.{position}"
            if not SLURM_FEATURE.match(feature):
                yield Problem(
                    path,
                    f"{feature!r} is not a Slurm feature name: a letter or digit, then up to 62 letters, digits, "
                    "'_', '-' or '.' (e.g. h100, big-mem)",
                )
            elif feature.lower() in seen:
                yield Problem(path, f"duplicate feature {feature!r} in this partition")
            seen.add(feature.lower())


@rule(workload="training")
def partition_max_time_format(spec: TrainingStack) -> Iterator[Problem]:
    """MaxTime uses Slurm's time syntax (slurm.conf(5))."""
    for index, partition in enumerate(spec.training.scheduler.partitions):
        problem = slurm_time_problem(partition.max_time)
        if problem:
            yield Problem(f"training.scheduler.partitions.{index}.maxTime", problem)


SPOT_LARGE_COUNT = 64


@rule(workload="training")
def large_spot_fleet(spec: TrainingStack) -> Iterator[Problem]:
    """A synchronous job stops when any node is reclaimed; with many spot nodes that is frequent."""
    nodes = spec.training.nodes
    if nodes.capacity == "spot" and nodes.count > SPOT_LARGE_COUNT:
        yield Problem(
            "training.nodes.count",
            f"{nodes.count} spot nodes: one interruption stops the whole job, and with more than "
            f"{SPOT_LARGE_COUNT} nodes interruptions are frequent; checkpoint often or use capacity-block",
            Level.WARNING,
        )
