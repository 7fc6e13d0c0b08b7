"""The cloud's defaults, filled into a stack's raw config before its models are validated.

A default that names something of one cloud (a head-node machine type, a mount path, a file system tier) is
the cloud's `Catalog` fact, not the neutral spec's: the models leave those keys None ("the cloud's default"),
and `with_cloud_defaults` fills them from the stack's cloud before validation, so every layer after the spec
(rules, planner, components, the digest) reads the value deployed. Numbers the planner derives (Lustre capacity,
throughput) are not filled here; the plan fills them (accelstack.planner.training_plan.planned_training).

Filled, when omitted:
- `training.storage.lustre.tier`: the tier offering the stated `throughputPerTiB` (the cloud's default tier when
  it does, else the first catalog tier that does), else the cloud's default tier;
- `training.storage.lustre.mountPath`: `Catalog.default_mount_path`;
- `training.storage.checkpoints.path`: `<the file system's mount path>/checkpoints` (with no file system, under
  the cloud's default mount path: a node-local directory then);
- `training.scheduler.headNode.instanceType`: `Catalog.default_head_node`;
- `serving.replicas.imageId`: `Catalog.default_replica_image` (None on a cloud whose components pick the image);
- `serving.admission.maxReceiveCount`: `AdmissionLimits.default_max_receive_count` (SQS 3, Service Bus 10, Pub/Sub
  5: one neutral default would be outside Pub/Sub's 5..100 or not Service Bus's own); on a cloud with no admission
  queue (`Catalog.admission` None), `NO_QUEUE_MAX_RECEIVE_COUNT`, which nothing deploys.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from accelstack.clouds import registry
from accelstack.clouds.base import Cloud, ParallelFsTier

CHECKPOINT_DIRECTORY = "checkpoints"
# A cloud without an admission queue (Vultr: the replicas admit requests) deploys no delivery count, and the
# simulator's replica design delivers each request once; the key still holds a number, as the type says.
NO_QUEUE_MAX_RECEIVE_COUNT = 3


def filled_by_the_cloud(value: object) -> object:
    """A field's `before` validator: the key is the cloud's default when omitted, which a stack fills in
    (`with_cloud_defaults`); a block validated on its own, outside a stack, must state it."""
    if value is None:
        raise ValueError(
            "omitted: the stack's cloud has no default for it (a block validated outside a stack has no cloud); "
            "state it"
        )
    return value


def tier_offering(cloud: Cloud, throughput_per_tib: object) -> ParallelFsTier | None:
    """The tier a spec without `lustre.tier` gets: the cloud's default, unless the stated throughput is one only
    another tier offers (Azure and GCP sell one throughput per tier, so the throughput names the tier)."""
    default = cloud.parallel_fs_tier(None)
    if (
        default is None
        or isinstance(throughput_per_tib, bool)
        or not isinstance(throughput_per_tib, int)
        or throughput_per_tib in default.throughput_per_tib
    ):
        return default
    offering = [tier for tier in cloud.catalog.parallel_fs.values() if throughput_per_tib in tier.throughput_per_tib]
    return offering[0] if offering else default  # none offers it: the rule names what the default tier takes


def _key(block: Mapping[str, Any], alias: str, name: str) -> str | None:
    """The key `block` spells a field with (camelCase alias or snake_case name), None when absent."""
    return alias if alias in block else name if name in block else None


def _value(block: Mapping[str, Any], alias: str, name: str) -> Any:
    key = _key(block, alias, name)
    return block[key] if key is not None else None


def _filled(block: object, alias: str, name: str, default: Callable[[Any], Any]) -> object:
    """`block` (a mapping or model) with field `name` set to `default(block)` when it is omitted or None."""
    if isinstance(block, BaseModel):
        if getattr(block, name, None) is not None:
            return block
        value = default(block)
        return block if value is None else block.model_copy(update={name: value})
    if not isinstance(block, Mapping):
        return block  # not a block: the models report it
    if _value(block, alias, name) is not None:
        return block
    value = default(block)
    if value is None:
        return block
    return {**{k: v for k, v in block.items() if k not in (alias, name)}, alias: value}


def _field(block: object, alias: str, name: str) -> Any:
    if isinstance(block, BaseModel):
        return getattr(block, name, None)
    return _value(block, alias, name) if isinstance(block, Mapping) else None


def _with_storage_defaults(storage: Mapping[str, Any], cloud: Cloud) -> dict[str, Any]:
    filled = dict(storage)
    # Absent: the default file system (LustreSpec()); null: none.
    lustre = storage.get("lustre", {})
    if lustre is not None:
        if not (isinstance(lustre, Mapping) and "deploymentType" in lustre):  # the old key: the loader renames it

            def tier_of(block: object) -> str | None:
                tier = tier_offering(cloud, _field(block, "throughputPerTiB", "throughput_per_tib"))
                return tier.name if tier is not None else None

            lustre = _filled(lustre, "tier", "tier", tier_of)
        lustre = _filled(lustre, "mountPath", "mount_path", lambda _: cloud.catalog.default_mount_path)
        filled["lustre"] = lustre
    mount = _field(lustre, "mountPath", "mount_path") if lustre is not None else None
    if not isinstance(mount, str):
        mount = cloud.catalog.default_mount_path
    checkpoints = storage.get("checkpoints")
    if checkpoints is not None:
        filled["checkpoints"] = _filled(
            checkpoints, "path", "path", lambda _: posixpath.join(mount, CHECKPOINT_DIRECTORY)
        )
    return filled


def with_cloud_defaults(data: Any) -> Any:
    """`data` (a training stack's raw config, namespace stripped) with the cloud's defaults filled in where a
    key is omitted; anything not shaped as expected is returned as it is, for the models to report."""
    if not isinstance(data, Mapping) or data.get("cloud") not in registry.names():
        return data
    cloud = registry.get(data["cloud"])
    serving = data.get("serving")
    if isinstance(serving, Mapping) and isinstance(serving.get("replicas"), Mapping):
        image = cloud.catalog.default_replica_image
        replicas = _filled(serving["replicas"], "imageId", "image_id", lambda _: image)
        data = {**data, "serving": {**serving, "replicas": replicas}}
    serving = data.get("serving")
    if isinstance(serving, Mapping):
        limits = cloud.catalog.admission
        count = limits.default_max_receive_count if limits is not None else NO_QUEUE_MAX_RECEIVE_COUNT
        admission = _filled(serving.get("admission", {}), "maxReceiveCount", "max_receive_count", lambda _: count)
        data = {**data, "serving": {**serving, "admission": admission}}
    training = data.get("training")
    if not isinstance(training, Mapping):
        return data
    training = dict(training)
    storage = training.get("storage")
    if isinstance(storage, Mapping):
        training["storage"] = _with_storage_defaults(storage, cloud)
    head_node_type = cloud.catalog.default_head_node
    if head_node_type is not None:
        scheduler = training.get("scheduler", {})
        if isinstance(scheduler, Mapping):
            key = _key(scheduler, "headNode", "head_node") or "headNode"
            head = _filled(scheduler.get(key, {}), "instanceType", "instance_type", lambda _: head_node_type)
            training["scheduler"] = {**scheduler, key: head}
        elif isinstance(scheduler, BaseModel):
            head = _filled(scheduler.head_node, "instanceType", "instance_type", lambda _: head_node_type)  # type: ignore[attr-defined]
            training["scheduler"] = scheduler.model_copy(update={"head_node": head})
    return {**data, "training": training}
