"""Unit-test your own stacks with Pulumi mocks: the answers a cloud gives to the components' invokes.

    import pulumi
    from accelstack import testing

    pulumi.runtime.set_mocks(testing.mocks("aws", account={"id": "111111111111", "region": "us-east-1"}))

Pulumi's plain recipe (a `Mocks` whose `call` returns `{}`) cannot build accelstack's components: they
look up availability zones, the caller's account, public AMI parameters and more while they build.
`mocks(cloud)` answers every one of those as the cloud would for the stack's account and Region, and
gives resources the computed attributes the components read (ids, ARNs, DNS names, queue URLs).

These are the same answers `accelstack preview` uses offline: each cloud keeps them in its own
components folder (`accelstack.components.<cloud>.mocks`, found through the cloud registry), so this
module names no cloud. See docs/testing-your-stacks.md for a complete example test.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import pulumi
from pydantic import BaseModel

from accelstack.clouds import registry

__all__ = ["NoCloudMocks", "mocks", "mocks_for_config", "mocks_module"]

MOCKS_MODULE = "mocks"  # the file name every cloud's components folder uses


def mocks_module(cloud: str) -> ModuleType:
    """`accelstack.components.<cloud>.mocks` (or wherever the cloud's registry entry puts its components)."""
    description = registry.get(cloud)  # ValueError naming the registered clouds
    if description.components is None:
        raise ValueError(
            f"cloud {cloud!r} has no components to test yet; clouds with components: {', '.join(registry.deployable())}"
        )
    name = f"{description.components}.{MOCKS_MODULE}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise  # the module exists but something it imports does not
        raise ValueError(f"cloud {cloud!r} ships no mocks: {name} does not exist") from None


def mocks(cloud: str = "aws", *, account: Mapping[str, Any] | BaseModel | None = None) -> pulumi.runtime.Mocks:
    """A `pulumi.runtime.Mocks` that answers as `cloud` would for `account`.

    `account` is the stack's account block, as a stack file writes it (`{"id": "111111111111", "region":
    "us-east-1"}` on AWS) or as the parsed spec holds it (`spec.account`); None answers for the cloud's
    default test account. Subclass the returned object's class to change one answer."""
    if isinstance(account, BaseModel):
        account = account.model_dump(mode="json", by_alias=True)
    made: pulumi.runtime.Mocks = mocks_module(cloud).mocks(dict(account or {}))
    return made


class NoCloudMocks(pulumi.runtime.Mocks):
    """For a stack naming no cloud with components: resources echo their inputs, invokes answer nothing.
    The program refuses such a spec before it looks anything up; this lets it say so in its own words."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, []


def mocks_for_config(config: Mapping[str, str], namespace: str = "accelstack") -> pulumi.runtime.Mocks:
    """The mocks for a stack's Pulumi config (`accelstack:cloud`, `accelstack:account` as JSON text), as
    `accelstack preview` answers: the cloud the stack names, in its own account and Region."""
    cloud = config.get(f"{namespace}:cloud", "")
    if cloud not in registry.deployable():
        return NoCloudMocks()
    try:
        account = json.loads(config.get(f"{namespace}:account", "{}"))
    except (TypeError, json.JSONDecodeError):
        account = {}  # an account block the spec will reject with its own message
    own = mocks(cloud, account=account if isinstance(account, dict) else None)
    training = _handoff_account(config, namespace, cloud)
    return HandoffMocks(own, *training) if training is not None else own


# The training account's block as each cloud's mocks read it, for a serving stack's reader on that cloud.
_TRAINING_BLOCKS = {
    "aws": lambda account, region: {"id": account, "region": region or "us-east-1"},
    "gcp": lambda account, region: {"projectId": account, "region": region or "us-central1"},
    "azure": lambda account, region: {
        "subscriptionId": account, "tenantId": "00000000-0000-0000-0000-000000000000", "location": region or "eastus"
    },
    # the training compartment, in the tenancy serving.artifactTenancy names
    "oci": lambda account, region: {"compartmentOcid": account, "region": region or "us-ashburn-1"},
}  # fmt: skip
_PACKAGES = {"aws": "aws:", "gcp": "gcp:", "azure": "azure-native:", "oci": "oci:"}


def _handoff_account(config: Mapping[str, str], namespace: str, cloud: str) -> tuple[pulumi.runtime.Mocks, str] | None:
    """The training cloud's mocks and its resources' type prefix, for weights on another cloud
    (accelstack.spec.handoff): the reader the serving stack declares there is answered as that cloud would."""
    from accelstack.spec.handoff import reference_cloud, store_cloud

    try:
        serving = json.loads(config.get(f"{namespace}:serving", "{}"))
        # A copy (serving.model.copyFrom) reads its source there: the PAR of an OCI source is that cloud's.
        weights = serving["model"].get("copyFrom") or serving["model"]["weightsUri"]
        other, account = reference_cloud(str(serving["artifactAccount"]), cloud)
    except (TypeError, KeyError, json.JSONDecodeError):
        return None
    if other == cloud or store_cloud(str(weights)) != other or other not in _TRAINING_BLOCKS:
        return None
    block = _TRAINING_BLOCKS[other](account, serving.get("artifactRegion"))
    if other == "oci":
        block["tenancyOcid"] = serving.get("artifactTenancy")
    return mocks(other, account=block), _PACKAGES[other]


CLOCK = "time:index/static:Static"
MOCK_CLOCK = "2026-12-05T12:00:00Z"


class HandoffMocks(pulumi.runtime.Mocks):
    """The stack's cloud's mocks, with another cloud's resources (the handoff's reader) answered by that cloud's."""

    def __init__(self, own: pulumi.runtime.Mocks, other: pulumi.runtime.Mocks, prefix: str):
        self.own, self.other, self.prefix = own, other, prefix

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        resource_id, outputs = (self.other if args.typ.startswith(self.prefix) else self.own).new_resource(args)
        if args.typ == CLOCK and "rfc3339" not in outputs:
            # A copy's clock (components/handoff/copies.py) on a cloud whose mocks keep no clock of their own: the
            # instant the Azure and Vultr mocks answer, so the PAR's expiry is deterministic.
            return MOCK_CLOCK, {**outputs, "id": MOCK_CLOCK, "rfc3339": MOCK_CLOCK}
        return resource_id or f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return self.own.call(args)
