"""Run a Pulumi program in-process under mocks and record every registration, as the engine would.

The mock monitor records each `RegisterResourceRequest` (inputs, parent, provider reference,
dependencies, protect, retainOnDelete, ...), so what we capture is exactly what the Pulumi
CLI would send to the engine. Nothing here talks to a cloud or to the Pulumi CLI.
"""

from __future__ import annotations

import runpy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import empty_pb2, json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import run_in_stack
from pulumi.runtime.sync_await import _sync_await

from accelstack.engine.program_config import config_for_pulumi as config_for_pulumi  # where callers import it
from accelstack.testing import mocks_for_config

# Pulumi's wire sentinels (sdk/go/common/resource/plugin/rpc.go).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


@dataclass
class Registration:
    """One resource as registered by the program (request) and as the mock answered (response)."""

    urn: str
    type: str
    name: str
    custom: bool
    parent: str
    provider: str  # "urn::id" provider reference, "" for components
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    protect: bool
    retain_on_delete: bool
    delete_before_replace: bool
    ignore_changes: list[str]
    additional_secret_outputs: list[str]
    inputs: dict[str, Any]  # JSON form of the wire struct: secrets and unknowns keep their sentinels
    outputs: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    request: Any = None  # the RegisterResourceRequest itself, for analyzers that want protobufs
    # The resource's replaceOnChanges option (Pulumi property paths): a change there replaces it.
    replace_on_changes: list[str] = field(default_factory=list)
    # Read, not managed (a stack reference, Resource.get): Pulumi's state marks it `external`.
    external: bool = False

    @property
    def is_provider(self) -> bool:
        return self.type.startswith("pulumi:providers:")


@dataclass
class Capture:
    project: str
    stack: str
    preview: bool
    resources: list[Registration]
    stack_outputs: dict[str, Any]

    def by_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.resources if r.type == type_token]

    def one(self, type_token: str) -> Registration:
        found = self.by_type(type_token)
        if len(found) != 1:
            raise AssertionError(f"expected one {type_token}, found {len(found)}")
        return found[0]


def _struct_to_json(struct: Any) -> dict[str, Any]:
    return json_format.MessageToDict(struct, preserving_proto_field_name=True) if struct is not None else {}


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """MockMonitor that keeps every registration request and the stack's outputs."""

    def __init__(self, mocks: pulumi.runtime.Mocks):
        super().__init__(mocks)
        self.registrations: list[Registration] = []
        self.outputs_by_urn: dict[str, dict[str, Any]] = {}

    # pulumi's MockMonitor is unannotated: its calls are the untyped ones below.
    def RegisterResource(  # noqa: N802 (gRPC method name)
        self, request: resource_pb2.RegisterResourceRequest
    ) -> resource_pb2.RegisterResourceResponse:
        response: resource_pb2.RegisterResourceResponse = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        self.registrations.append(
            Registration(
                urn=response.urn,
                type=request.type,
                name=request.name,
                custom=bool(request.custom),
                parent=request.parent,
                provider=request.provider,
                dependencies=list(request.dependencies),
                property_dependencies={k: list(v.urns) for k, v in request.propertyDependencies.items()},
                protect=request.protect if request.HasField("protect") else False,
                retain_on_delete=request.retainOnDelete if request.HasField("retainOnDelete") else False,
                delete_before_replace=bool(request.deleteBeforeReplace),
                ignore_changes=list(request.ignoreChanges),
                additional_secret_outputs=list(request.additionalSecretOutputs),
                inputs=_struct_to_json(request.object),
                outputs=_struct_to_json(response.object) if response.HasField("object") else {},
                id=response.id,
                request=request,
                replace_on_changes=list(request.replaceOnChanges),
            )
        )
        return response

    def ReadResource(self, request: resource_pb2.ReadResourceRequest) -> resource_pb2.ReadResourceResponse:  # noqa: N802
        """A read resource (a stack reference to a landing stack) is in the state as the engine's policy packs see
        it, with the outputs it read: kept like a registration, marked external."""
        response: resource_pb2.ReadResourceResponse = super().ReadResource(request)  # type: ignore[no-untyped-call]
        self.registrations.append(
            Registration(
                urn=response.urn,
                type=request.type,
                name=request.name,
                custom=True,
                parent=request.parent,
                provider=request.provider,
                dependencies=list(request.dependencies),
                property_dependencies={},
                protect=False,
                retain_on_delete=False,
                delete_before_replace=False,
                ignore_changes=[],
                additional_secret_outputs=list(request.additionalSecretOutputs),
                inputs=_struct_to_json(request.properties),
                outputs=_struct_to_json(response.properties),
                id=request.id,
                request=request,
                external=True,
            )
        )
        return response

    def RegisterResourceOutputs(self, request: resource_pb2.RegisterResourceOutputsRequest) -> empty_pb2.Empty:  # noqa: N802
        self.outputs_by_urn[request.urn] = _struct_to_json(request.outputs)
        result: empty_pb2.Empty = super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]
        return result


def capture(
    program: Callable[[], None] | Path,
    config: dict[str, str],
    *,
    project: str = "accelstack",
    stack: str = "dev",
    preview: bool = True,
    mocks: pulumi.runtime.Mocks | None = None,
    transformations: Sequence[pulumi.ResourceTransformation] = (),
) -> Capture:
    """Run `program` (a callable, or the path of a Pulumi `__main__.py`) and return what it registered.

    `mocks` answers the program's invokes and gives resources their computed attributes; by default the
    stack's cloud answers for its account and Region (`accelstack.testing.mocks_for_config`), exactly as
    it answers a user's own unit tests.

    `transformations` run on every resource before it registers, as stack transformations do under `pulumi up`.

    Global Pulumi runtime state is reset before and after, so captures in one process are
    independent; the CLI still runs one subprocess per stack for full isolation.
    """
    monitor = RecordingMonitor(mocks or mocks_for_config(config))
    pulumi.runtime.set_all_config(config)
    # set_mocks would register a root Stack of its own; run_in_stack creates the one the CLI would.
    pulumi_settings.ROOT.set("urn:accelstack:placeholder-root")  # type: ignore[arg-type]  # any non-None root
    pulumi_mocks.set_mocks(monitor.mocks, project=project, stack=stack, preview=preview, monitor=monitor)
    pulumi_settings.ROOT.set(None)

    def run() -> None:
        for transformation in transformations:  # the root Stack exists only now
            pulumi.runtime.register_stack_transformation(transformation)
        if isinstance(program, Path):
            runpy.run_path(str(program), run_name="__main__")
        else:
            program()

    try:
        _sync_await(run_in_stack(run))
    finally:
        pulumi_settings.ROOT.set(None)
        pulumi.runtime.set_all_config({})
    stack_urn = f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"
    resources = list(monitor.registrations)
    for registration in resources:
        registration.outputs = monitor.outputs_by_urn.get(registration.urn, registration.outputs)
    return Capture(
        project=project,
        stack=stack,
        preview=preview,
        resources=resources,
        stack_outputs=monitor.outputs_by_urn.get(stack_urn, {}),
    )
