"""One preview in its own process: `python -m accelstack.engine.worker < request.json > result.json`.

Pulumi's runtime keeps global state (settings, config, the root resource) and the program imports
`components.*` from the project dir, so each stack gets a fresh interpreter: stacks never leak into
each other. Request: {"main", "project_dir", "config", "stack", "project", "preview"}, plus
"edited_config" for a diff (the stack is captured as deployed from "config", then again as `pulumi up`
would see "edited_config": accelstack.engine.replacement). Result: {"ok", "seconds", "peak_rss_kib",
"resources", "stack_outputs", "error": {"kind", "message", "traceback"} | null}, plus "edited_resources"
for a diff; kind "config" for pulumi.RunError (the program refused its input), "program" for anything
else. The program's own prints go to stderr so stdout carries only the result.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import json
import os
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # at run time pulumi is imported inside the functions, after main() turns the collector off
    import pulumi


def _registration_json(registration: Any) -> dict[str, Any]:
    # Not dataclasses.asdict: it would deep-copy every value (and the protobuf request) only to dump it.
    # The request is left out: everything in it is in the other fields.
    return {f.name: getattr(registration, f.name) for f in dataclasses.fields(registration) if f.name != "request"}


def run_request(request: dict[str, Any]) -> dict[str, Any]:
    import pulumi

    from accelstack.engine.capture import capture

    project_dir = Path(request["project_dir"]).resolve()
    # As the Pulumi CLI runs a Python program: cwd = project dir, project dir importable.
    os.chdir(project_dir)
    sys.path.insert(0, str(project_dir))
    started = time.perf_counter()
    result: dict[str, Any] = {"ok": False, "resources": [], "stack_outputs": {}, "error": None}
    edited = None
    try:
        if "edited_config" in request:
            from accelstack.engine.replacement import capture_edit

            captured, edited = capture_edit(
                Path(request["main"]),
                request["config"],
                request["edited_config"],
                stack=request["stack"],
                project=request.get("project", "accelstack"),
            )
        else:
            captured = capture(
                Path(request["main"]),
                request["config"],
                project=request.get("project", "accelstack"),
                stack=request["stack"],
                preview=request.get("preview", True),
                transformations=(without_type_aliases,),
            )
    except pulumi.RunError as error:
        result["error"] = {"kind": "config", "message": str(error), "traceback": ""}
    except Exception as error:  # noqa: BLE001 - reported to the user, with the traceback kept for --debug
        message = f"{type(error).__name__}: {error}"
        result["error"] = {"kind": "program", "message": message, "traceback": traceback.format_exc()}
    else:
        result["ok"] = True
        result["resources"] = [_registration_json(r) for r in captured.resources]
        result["stack_outputs"] = captured.stack_outputs
        if edited is not None:
            result["edited_resources"] = [_registration_json(r) for r in edited.resources]
    result["seconds"] = time.perf_counter() - started
    result["peak_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return result


def skip_source_positions() -> None:
    """Register resources without the call stack Pulumi attaches to each for the engine's diagnostics.

    The SDK walks the whole Python stack (reading source lines) on every registration to report where a
    resource was declared; an offline preview records inputs, not source positions, and that walk was ~60 ms of
    a 90-resource preview. Only this short-lived process is changed: `pulumi up` and users' tests keep it."""
    from pulumi.runtime import resource as pulumi_resource
    from pulumi.runtime.proto import source_pb2

    pulumi_resource._get_stack_trace = source_pb2.StackTrace  # an empty trace, as the SDK sends when it finds none


def is_type_alias(alias: object) -> bool:
    """`Alias(type_=...)` and nothing else: what provider SDKs attach for a resource's earlier type tokens."""
    import pulumi

    return (
        isinstance(alias, pulumi.Alias)
        and isinstance(alias.type_, str)
        # Unset fields hold `...` (the SDK's "not given"), which its annotations leave out.
        and all(value is ... for value in (alias.name, alias.parent, alias.stack, alias.project))  # type: ignore[comparison-overlap]
    )


def without_type_aliases(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
    """A stack transformation that drops the type-only aliases provider SDKs attach to their resources.

    pulumi-azure-native gives each resource ~30 (one per earlier API version), and the SDK turns each into an
    Output chain at construction and registration (`make bench`: azure-training went from 1.45x to 1.19x its
    floor without them). An alias only tells the engine which state an existing resource had under another
    token; an offline preview has no state, and records neither aliases nor anything they change. Other aliases (a name, a parent) are kept: a wrong one must still fail.
    Only this short-lived process is changed: `pulumi up` and users' tests keep every alias."""
    import pulumi

    opts = args.opts
    if not opts.aliases or not any(is_type_alias(alias) for alias in opts.aliases):
        return None
    kept = copy.copy(opts)
    kept.aliases = [alias for alias in opts.aliases if not is_type_alias(alias)] or None
    return pulumi.ResourceTransformationResult(args.props, kept)


def main() -> int:
    # A preview is a short-lived process that creates a few hundred thousand long-lived objects (the SDK classes
    # and their type hints) and little cyclic garbage, so the cyclic collector's repeated passes over them cost
    # about a fifth of the preview and free nothing that matters: reference counting still frees the rest, and
    # peak RSS grows by 1-5 MB (~3%) with it off (measured on the shipped stacks; `make bench` times both).
    gc.disable()
    skip_source_positions()
    # What every preview imports, before the request is read: `accelstack preview` starts its first worker before
    # it knows the request (accelstack.engine.spare_worker), and these imports overlap the CLI's own start. The
    # program of every accelstack project is `from accelstack.program import main; main()` (the repository's and
    # the one `accelstack init` writes); for any other program this is only imported ahead of use or not used.
    import accelstack.engine.capture
    import accelstack.program  # noqa: F401

    request = json.load(sys.stdin)
    result_stream = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        result = run_request(request)
    json.dump(result, result_stream)
    result_stream.flush()
    return 0


def exit_now(code: int) -> None:
    """Leave without the interpreter's teardown: the result is written and flushed, and nothing else is left to do.
    With the collector off since the start, the teardown's final collection walks every object the preview made
    (the SDK classes, their type hints): about a third of a training stack's worker on the clock that `accelstack
    preview` waits on, since the CLI reads the result until the worker's stdout closes (`make bench`)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
