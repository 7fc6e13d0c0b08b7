"""Rule validators, ParallelCluster style: one small function per rule, each yielding Problems.

A validator receives the parsed StackSpec and yields `Problem(path, message, level)`. ERRORs are
what the cloud API would reject at create time (or what would lose data); WARNINGs are legal but
unwise. Add a rule by decorating it with `@rule`; `run_validators` runs them all.

Rule plug-ins. Some rules need the planner's sizing (GPU-memory fit, Lustre capacity and checkpoint
write time, model presets), but the planner sits above this layer and imports it, so the spec may not
import the planner back. Those rules live in `accelstack.planner_rules`, which names itself in the
`accelstack.rules` entry-point group (pyproject.toml). `run_validators` loads that group once per
process, so the spec asks only "which modules extend me?" and never names one, and any caller (the
CLI, the Pulumi program, a test importing just `accelstack.spec`) gets the same rules. An explicit
registration call would need one place every caller passes through, and a test or script importing
only the spec would silently validate less. Entry points need the package installed (`make` installs
it editable); with none found, validation fails loudly instead.

Cloud rules. What a cloud's API would reject (its id formats, instance tables, storage steps) lives
with the cloud: its `Cloud` registration (`accelstack.clouds.registry`) names its rule modules
(`Cloud.rules`), which `run_validators` imports and runs for that cloud's stacks only. So the spec
imports no cloud module, and no rule asks `if spec.cloud == ...`.

Rules run in a fixed order, whatever was imported first: this module's, then the stack's cloud's rule
modules in the order its registration lists them, then each plug-in module (by entry-point name), each
in source order.
"""

from __future__ import annotations

import functools
import importlib
import posixpath
import re
from collections.abc import Callable, Iterator

from accelstack.clouds import registry
from accelstack.clouds.base import ParallelFsTier
from accelstack.spec.base import account_key, account_keys
from accelstack.spec.features import FEATURE_USES
from accelstack.spec.models import LustreSpec, ServingStack, StackSpec, TrainingStack
from accelstack.spec.problems import Level, Problem, did_you_mean
from accelstack.spec.uris import object_uris, split_bucket_uri

Validator = Callable[[StackSpec], Iterator[Problem]]
RULES: list[Validator] = []
RULE_PLUGIN_GROUP = "accelstack.rules"
CLOUD_PACKAGES = ("accelstack.clouds.", "accelstack.components.")  # where accelstack's own clouds keep rule modules


def rule(func: Validator) -> Validator:
    RULES.append(func)
    return func


@functools.cache
def load_rule_plugins() -> tuple[str, ...]:
    """Import every module in the `accelstack.rules` entry-point group (their `@rule`s register on
    import) and return their names in load order. Cached: entry points are read once per process."""
    rule_plugins = registry.plugins(RULE_PLUGIN_GROUP)
    if not rule_plugins:
        raise RuntimeError(
            f"no {RULE_PLUGIN_GROUP!r} entry points: accelstack is not installed, so the planner's rules "
            "(GPU fit, Lustre capacity, model presets) would not run; install it with `make` or "
            "`pip install -e .`"
        )
    for plugin in rule_plugins:
        plugin.load()
    return tuple(plugin.module for plugin in rule_plugins)


def cloud_rule_modules(cloud: str) -> tuple[str, ...]:
    """Import `cloud`'s rule modules (their `@rule`s register on import) and return their names."""
    modules = registry.get(cloud).rules
    for module in modules:
        importlib.import_module(module)
    return modules


def all_rules(cloud: str | None = None) -> list[Validator]:
    """Every rule that runs for a stack of `cloud` (None: of every registered cloud, each cloud's
    after the one before it by name), built-in, cloud and plug-in, in a fixed order independent of
    import order. Another cloud's rules are left out."""
    clouds = registry.names() if cloud is None else (cloud,)
    cloud_modules = tuple(module for name in clouds for module in cloud_rule_modules(name))
    modules = (__name__, *cloud_modules, *load_rule_plugins())
    rank = {module: index for index, module in enumerate(modules)}
    # Another cloud's rules: those its registration names, and any rule module of accelstack's own cloud packages
    # (imported for its tables by a component, or owned by a cloud whose registration a test replaced).
    named = {module for name in registry.names() for module in registry.get(name).rules}
    owned = {func.__module__ for func in RULES if func.__module__.startswith(CLOUD_PACKAGES)}
    foreign = (named | owned) - set(cloud_modules)

    def position(func: Validator) -> tuple[int, int]:
        index = rank.get(func.__module__)
        # Rules registered from elsewhere (none today) run last, in registration order (sorted is stable).
        return (len(rank), 0) if index is None else (index, func.__code__.co_firstlineno)

    return sorted((func for func in RULES if func.__module__ not in foreign), key=position)


def run_validators(spec: StackSpec) -> list[Problem]:
    return [problem for validator in all_rules(spec.cloud) for problem in validator(spec)]


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
        yield Problem(
            use.path,
            f"{use.what} needs the {use.feature.value} feature, which {spec.cloud} does not offer; {where}"
            + (f"; or {use.instead}" if use.instead else ""),
        )


@rule
def separation_account_ids_format(spec: StackSpec) -> Iterator[Problem]:
    """Every account named in `separation` is an account id in the cloud's format (the key its account
    block names the account by: an AWS account id, an Azure subscription id, a GCP project id, ...)."""
    account = type(spec.account)
    for key, accounts in (
        ("trainingAccounts", spec.separation.training_accounts),
        ("servingAccounts", spec.separation.serving_accounts),
    ):
        for index, item in enumerate(accounts):
            problem = account.id_problem(item)
            if problem:
                yield Problem(f"separation.{key}.{index}", problem)


@rule
def artifact_readers_are_serving_accounts(spec: StackSpec) -> Iterator[Problem]:
    """Model artifacts are shared read-only with serving accounts only (the separation contract)."""
    if not isinstance(spec, TrainingStack):
        return
    account = type(spec.account)
    serving = spec.separation.serving_accounts
    for index, reader in enumerate(spec.training.artifact_readers):
        path = f"training.artifactReaders.{index}"
        problem = account.id_problem(reader)
        if problem:
            yield Problem(path, problem)
        elif account_key(reader) not in account_keys(serving):
            yield Problem(path, f"{reader} is not one of separation.servingAccounts ({', '.join(serving)})")


@rule
def artifact_account_is_training(spec: StackSpec) -> Iterator[Problem]:
    """Serving reads artifacts from a training account, never from another serving account (the separation
    contract, on every cloud: an AWS account, an Azure subscription, a GCP project)."""
    if not isinstance(spec, ServingStack):
        return
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
    problem = type(spec.account).id_problem(artifact_account)
    if problem:
        yield Problem("serving.artifactAccount", problem)
    elif account_key(artifact_account) not in account_keys(training):
        yield Problem(
            "serving.artifactAccount",
            f"{artifact_account} is not one of separation.trainingAccounts ({', '.join(training)})",
        )


@rule
def artifact_sharing_needs_a_checkpoint_store(spec: StackSpec) -> Iterator[Problem]:
    """Published models are shared from the checkpoint store's artifactPrefix: without a checkpoint store,
    artifactReaders (and the subnets admitted for them) would share nothing, silently."""
    if not isinstance(spec, TrainingStack) or spec.training.storage.checkpoints is not None:
        return
    for key, items in (
        ("artifactReaders", spec.training.artifact_readers),
        ("artifactReaderSubnets", spec.training.artifact_reader_subnets),
    ):
        if items:
            yield Problem(
                f"training.{key}",
                f"serving reads published models from the checkpoint store's {spec.training.artifact_prefix!r} "
                "prefix, and this stack has none: set training.storage.checkpoints.uri, or remove " + key,
            )


@rule
def spot_needs_checkpoints(spec: StackSpec) -> Iterator[Problem]:
    """Interruptible capacity loses work unless jobs can restart from a checkpoint."""
    if not isinstance(spec, TrainingStack):
        return
    if spec.training.nodes.capacity == "spot" and spec.training.storage.checkpoints is None:
        yield Problem(
            "training.storage.checkpoints",
            "spot capacity requires a checkpoint location (set training.storage.checkpoints.uri)",
        )


@rule
def flex_start_run_time(spec: StackSpec) -> Iterator[Problem]:
    """Flex-start capacity is granted for a run time the request names (Dynamic Workload Scheduler:
    cloud.google.com/compute/docs/instances/flex-start-vms), and takes no reservation; the run time means
    nothing for any other capacity. Its VMs are deleted at the end, so work not checkpointed is lost."""
    if not isinstance(spec, TrainingStack):
        return
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


NONCURRENT_DAYS_SHORT = 7


@rule
def checkpoint_versions_kept_long_enough(spec: StackSpec) -> Iterator[Problem]:
    """A checkpoint overwritten or deleted by mistake is recoverable only while its old version lives."""
    checkpoints = spec.training.storage.checkpoints if isinstance(spec, TrainingStack) else None
    if checkpoints is None:
        return
    days = checkpoints.noncurrent_version_days
    if checkpoints.create and days < NONCURRENT_DAYS_SHORT:
        yield Problem(
            "training.storage.checkpoints.noncurrentVersionDays",
            f"{days} day(s): an overwritten or deleted checkpoint is unrecoverable after that; "
            f"keep old versions at least {NONCURRENT_DAYS_SHORT} days (default 30)",
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


def bucket_of(uri: str) -> str:
    """`s3://bucket/prefix` -> `bucket` (the models already require scheme://host[/path])."""
    return split_bucket_uri(uri)[0]


def path_within(path: str, root: str) -> bool:
    """True if POSIX `path` is `root` or below it (`/fsx/ckpt` is within `/fsx`, `/fsx2` is not)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return root == "/" or path == root or path.startswith(root + "/")


@rule
def dataset_and_checkpoint_buckets_differ(spec: StackSpec) -> Iterator[Problem]:
    """Checkpoints get their own bucket: its lifecycle, versioning and cross-account readers differ
    from the dataset's, and FSx links a bucket to a file system only once."""
    if not isinstance(spec, TrainingStack) or spec.training.storage.checkpoints is None:
        return
    storage = spec.training.storage
    checkpoints = spec.training.storage.checkpoints
    if bucket_of(checkpoints.uri) == bucket_of(storage.datasets.uri):
        yield Problem(
            "training.storage.checkpoints.uri",
            f"uses the dataset bucket {bucket_of(storage.datasets.uri)!r}; checkpoints need their own bucket",
        )


def parallel_fs_tier(spec: StackSpec) -> tuple[LustreSpec, ParallelFsTier] | None:
    """The stack's parallel file system and its tier in the cloud's catalog (None: no file system, or a
    tier the catalog lacks, which `parallel_fs_tier_known` reports)."""
    if not isinstance(spec, TrainingStack) or spec.training.storage.lustre is None:
        return None
    lustre = spec.training.storage.lustre
    tier = registry.get(spec.cloud).parallel_fs_tier(lustre.tier)
    return (lustre, tier) if tier is not None else None


@rule
def parallel_fs_tier_known(spec: StackSpec) -> Iterator[Problem]:
    """`lustre.tier` is one of the cloud's parallel file system tiers (Catalog.parallel_fs)."""
    if not isinstance(spec, TrainingStack) or spec.training.storage.lustre is None:
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


@rule
def parallel_fs_capacity_step(spec: StackSpec) -> Iterator[Problem]:
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


@rule
def parallel_fs_throughput_tier(spec: StackSpec) -> Iterator[Problem]:
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
        yield Problem(path, f"{lustre.throughput_per_tib} MB/s/TiB is not a {tier.name} tier; allowed: {allowed}")


@rule
def file_system_that_cannot_import_needs_a_head(spec: StackSpec) -> Iterator[Problem]:
    """A file system tier without a link to object storage (NFS: GCP Filestore) gets the dataset from the
    scheduler's head node (or a managed Slurm's login node), which copies it in; without a scheduler nothing
    would, and jobs would find the import path empty."""
    if not isinstance(spec, TrainingStack) or spec.training.storage.lustre is None:
        return
    lustre = spec.training.storage.lustre
    tier = registry.get(spec.cloud).parallel_fs_tier(lustre.tier)
    if tier is not None and not tier.imports_from_object_store and spec.training.scheduler.kind == "none":
        yield Problem(
            "training.storage.lustre.tier",
            f"{tier.name} cannot import the dataset from object storage and with scheduler kind none no node "
            "copies it in; use scheduler kind slurm (its head stages it) or a Lustre tier",
        )


@rule
def checkpoints_on_lustre(spec: StackSpec) -> Iterator[Problem]:
    """Checkpoint shards are written by every node, so the path must be on the shared file system."""
    if not isinstance(spec, TrainingStack) or spec.training.storage.checkpoints is None:
        return
    storage = spec.training.storage
    path = spec.training.storage.checkpoints.path
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


# Node paths a mount or checkpoint directory must not be, contain or sit in: the OS's own trees (Filesystem
# Hierarchy Standard), the home directories, and what the Slurm nodes use (accelstack.components.slurm: spool, logs,
# /run). A Lustre mount over /etc or /usr hides the system; over /home, every user's files.
SYSTEM_PATHS = (
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/root", "/run",
    "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr", "/var",
)  # fmt: skip
# Paths below which nothing may be mounted or written by us either (the rest of /var, /opt, /srv and
# /mnt-like places may hold a mount point).
SYSTEM_TREES = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/root", "/run", "/sbin", "/sys",
    "/usr", "/var/lib", "/var/log", "/var/spool", "/var/run",
)  # fmt: skip


_PLAIN_PATH_CHARS = re.compile(r"[A-Za-z0-9._@+/-]+")


def _not_plain(path: str) -> bool:
    """`..`, `.` or `//` make a path mean something else than it reads (`/fsx/../etc` is /etc)."""
    parts = path.split("/")
    return ".." in parts or "." in parts or "//" in path


def node_path_problem(path: str) -> str | None:
    """None if `path` may hold a mount point or accelstack's own directory on a node, else why not."""
    if "\0" in path or any(ord(c) < 32 for c in path):
        return f"{path!r} contains control characters"
    if not _PLAIN_PATH_CHARS.fullmatch(path):
        # The path lands in the jobs' environment file (sourced by login shells, read by systemd), in mount
        # units and in boot scripts: a space, quote, `$` or `;` there would split it or run as a command.
        return (
            f"{path!r} has characters node scripts would have to quote (space, quotes, $, ;, ...); allowed: "
            "letters, digits, '.', '_', '-', '+', '@' and '/'"
        )
    if _not_plain(path):
        return f"{path!r} is not a plain absolute path; write it as {posixpath.normpath(path)!r} (no '.', '..' or '//')"
    path = posixpath.normpath(path)  # a trailing '/' is harmless
    if path == "/" or path in SYSTEM_PATHS:
        return f"{path} is a system directory; mounting or writing there hides or breaks it (e.g. use /fsx)"
    for tree in SYSTEM_TREES:
        if path_within(path, tree):
            return f"{path} is inside the system directory {tree}; use a directory of its own (e.g. /fsx)"
    return None


@rule
def node_paths_safe(spec: StackSpec) -> Iterator[Problem]:
    """The Lustre mount point and the checkpoint directory are created (and mounted) by root on every
    node at boot: a system directory there breaks the node, `..` makes the path mean something else."""
    if not isinstance(spec, TrainingStack):
        return
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
        if _not_plain(import_path):
            yield Problem(
                "training.storage.lustre.importPath",
                f"{import_path!r} is not a plain path inside the file system; write it as "
                f"{posixpath.normpath(import_path)!r} (e.g. /datasets)",
            )


# Slurm accepts these for a partition's MaxTime (slurm.conf(5), "MaxTime"; sbatch(1), "--time").
SLURM_UNLIMITED = ("UNLIMITED", "INFINITE")
_SLURM_TIME = re.compile(
    r"^(?:(?P<minutes>\d+)"  # minutes
    r"|(?P<m>\d+):(?P<s>\d{1,2})"  # minutes:seconds
    r"|(?P<h>\d+):(?P<hm>\d{1,2}):(?P<hs>\d{1,2})"  # hours:minutes:seconds
    r"|(?P<d>\d+)-(?P<dh>\d{1,2})(?::(?P<dm>\d{1,2})(?::(?P<ds>\d{1,2}))?)?"  # days-hours[:minutes[:seconds]]
    r")$"
)
SLURM_TIME_FORMATS = "UNLIMITED, MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS"


# Slurm's time_str2secs (src/common/parse_time.c) adds days*86400 + hours*3600 + minutes*60 + seconds
# in a C int and time_str2mins rounds up with +59; read_config.c refuses a negative result ("Bad value
# ... for MaxTime") and slurmctld does not start. So a limit must stay below 2^31 - 60 seconds (~68 years).
SLURM_MAX_TIME_SECONDS = 2**31 - 1 - 59


def slurm_time_seconds(text: str) -> int | None:
    """Seconds of a Slurm time limit in one of SLURM_TIME_FORMATS (None: UNLIMITED or not a limit)."""
    match = _SLURM_TIME.match(text)
    if match is None:
        return None
    parts = {key: int(value) for key, value in match.groupdict().items() if value is not None}
    if "minutes" in parts:
        return parts["minutes"] * 60
    if "m" in parts:
        return parts["m"] * 60 + parts["s"]
    if "h" in parts:
        return parts["h"] * 3600 + parts["hm"] * 60 + parts["hs"]
    return parts["d"] * 86400 + parts["dh"] * 3600 + parts.get("dm", 0) * 60 + parts.get("ds", 0)


def slurm_time_problem(text: str) -> str | None:
    """None if `text` is a valid Slurm time limit, else why not."""
    if text.upper() in SLURM_UNLIMITED:
        return None
    match = _SLURM_TIME.match(text)
    if match is None:
        return f'{text!r} is not a Slurm time limit; allowed formats: {SLURM_TIME_FORMATS} (e.g. "7-00:00:00")'
    parts = match.groupdict()
    for key in ("s", "hm", "hs", "dm", "ds"):
        if parts[key] is not None and int(parts[key]) > 59:
            return f"{text!r}: minutes and seconds must be 0-59"
    if parts["dh"] is not None and int(parts["dh"]) > 23:
        return f"{text!r}: hours after the day count must be 0-23"
    seconds = slurm_time_seconds(text)
    assert seconds is not None
    if seconds > SLURM_MAX_TIME_SECONDS:
        return (
            f"{text!r} is longer than Slurm can count ({SLURM_MAX_TIME_SECONDS // 86400} days): slurmctld rejects "
            "the partition and does not start; use UNLIMITED for no limit"
        )
    if seconds == 0:
        return f"{text!r} is a zero time limit: no job could run in this partition; use UNLIMITED for no limit"
    return None


# slurm.conf(5): "PartitionName=DEFAULT" sets defaults for the following lines (compared without case,
# src/common/read_config.c), so a partition so named is never created and `sbatch` without -p fails.
SLURM_RESERVED_PARTITION_NAMES = ("DEFAULT",)
# Constraint expressions (sbatch -C) combine features with these; a feature containing one cannot be
# selected, and "," separates features in Feature=.
_SLURM_FEATURE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


@rule
def partition_names_unique(spec: StackSpec) -> Iterator[Problem]:
    """slurm.conf rejects two PartitionName lines with one name."""
    if not isinstance(spec, TrainingStack):
        return
    seen: set[str] = set()
    for index, partition in enumerate(spec.training.scheduler.partitions):
        if partition.name in seen:
            yield Problem(f"training.scheduler.partitions.{index}.name", f"duplicate partition name {partition.name!r}")
        seen.add(partition.name)


@rule
def exactly_one_default_partition(spec: StackSpec) -> Iterator[Problem]:
    """Slurm routes jobs without -p to the Default=YES partition; two defaults is ambiguous, none
    makes every `sbatch` without -p fail."""
    if not isinstance(spec, TrainingStack) or spec.training.scheduler.kind != "slurm":
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


@rule
def partition_names_not_reserved(spec: StackSpec) -> Iterator[Problem]:
    """A partition named DEFAULT (any case) becomes slurm.conf's defaults line and vanishes."""
    if not isinstance(spec, TrainingStack) or spec.training.scheduler.kind != "slurm":
        return
    for index, partition in enumerate(spec.training.scheduler.partitions):
        if partition.name.upper() in SLURM_RESERVED_PARTITION_NAMES:
            yield Problem(
                f"training.scheduler.partitions.{index}.name",
                f"{partition.name!r} is reserved by Slurm (PartitionName=DEFAULT sets defaults; no partition is "
                "created, so jobs sent to it fail); pick another name, e.g. gpu",
            )


@rule
def partition_features_valid(spec: StackSpec) -> Iterator[Problem]:
    """Features are written into `NodeSet ... Feature=` and matched by `sbatch -C`: letters, digits,
    '_', '-' and '.' only (&, |, !, *, [, ], (, ) and , are constraint operators or separators)."""
    if not isinstance(spec, TrainingStack) or spec.training.scheduler.kind != "slurm":
        return
    for index, partition in enumerate(spec.training.scheduler.partitions):
        seen: set[str] = set()
        for position, feature in enumerate(partition.features):
            path = f"training.scheduler.partitions.{index}.features.{position}"
            if not _SLURM_FEATURE.match(feature):
                yield Problem(
                    path,
                    f"{feature!r} is not a Slurm feature name: a letter or digit, then up to 62 letters, digits, "
                    "'_', '-' or '.' (e.g. h100, big-mem)",
                )
            elif feature.lower() in seen:
                yield Problem(path, f"duplicate feature {feature!r} in this partition")
            seen.add(feature.lower())


@rule
def partition_max_time_format(spec: StackSpec) -> Iterator[Problem]:
    """MaxTime uses Slurm's time syntax (slurm.conf(5))."""
    if not isinstance(spec, TrainingStack):
        return
    for index, partition in enumerate(spec.training.scheduler.partitions):
        problem = slurm_time_problem(partition.max_time)
        if problem:
            yield Problem(f"training.scheduler.partitions.{index}.maxTime", problem)


SPOT_LARGE_COUNT = 64


@rule
def large_spot_fleet(spec: StackSpec) -> Iterator[Problem]:
    """A synchronous job stops when any node is reclaimed; with many spot nodes that is frequent."""
    if not isinstance(spec, TrainingStack):
        return
    nodes = spec.training.nodes
    if nodes.capacity == "spot" and nodes.count > SPOT_LARGE_COUNT:
        yield Problem(
            "training.nodes.count",
            f"{nodes.count} spot nodes: one interruption stops the whole job, and with more than "
            f"{SPOT_LARGE_COUNT} nodes interruptions are frequent; checkpoint often or use capacity-block",
            Level.WARNING,
        )
