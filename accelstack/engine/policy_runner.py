"""Run accelstack's policy packs offline, through pulumi-policy's own analyzer servicer.

The Pulumi CLI starts each pack (`policies/<pack>/__main__.py`), calls `GetAnalyzerInfo`, then
`Configure` with every policy's resolved enforcement level and config, `Analyze` once per resource
(its inputs, options and provider) and `AnalyzeStack` once (every resource's outputs, parents and
dependencies). We do the same in-process: the pack's `__main__.py` runs with `PolicyPack` swapped for
a recorder (so no gRPC server starts), its arguments build pulumi-policy's `_PolicyAnalyzerServicer` (a
subclass that builds each request's resources once for all policies: accelstack.engine.shared_servicer),
and the requests are built from a `pulumi stack export` (v3) document. Unknown values (preview) keep
Pulumi's sentinels, so a policy touching one gets pulumi-policy's advisory "can't run during
preview" diagnostic, exactly as under the CLI.
"""

from __future__ import annotations

import contextlib
import gc
import re
import runpy
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pulumi_policy
import pulumi_policy.policy as analyzer_module
import yaml
from google.protobuf import json_format
from pulumi.runtime import proto
from pulumi_policy import EnforcementLevel
from pulumi_policy import proxy as pulumi_proxy
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.policy import _PolicyAnalyzerServicer
from pulumi_policy.proxy import unknown_checking_proxy

import accelstack.policies
from accelstack.engine import struct_decode
from accelstack.engine.analyzer_requests import analyze_requests, analyze_stack_request, decoded_properties
from accelstack.engine.capture import UNKNOWN as UNKNOWN  # re-exported: tests plant it
from accelstack.engine.export import PROVIDER_PREFIX, STACK_TYPE
from accelstack.engine.export_shape import misshapen_field
from accelstack.engine.pack_context import context_from_spec
from accelstack.engine.shared_servicer import SharedServicer
from accelstack.spec.json_input import JsonInputError, load_json

PACKS_DIR = Path(accelstack.policies.__file__).resolve().parent
PACKS = ("separation", "guardrails")
_POLICY_PACK_NAME = re.compile(r"^[a-zA-Z0-9-_.]{1,100}$")

LEVELS = {
    "advisory": EnforcementLevel.ADVISORY,
    "mandatory": EnforcementLevel.MANDATORY,
    "remediate": EnforcementLevel.REMEDIATE,
    "disabled": EnforcementLevel.DISABLED,
}
_TO_PROTO = {
    EnforcementLevel.ADVISORY: proto.ADVISORY,
    EnforcementLevel.MANDATORY: proto.MANDATORY,
    EnforcementLevel.REMEDIATE: proto.REMEDIATE,
    EnforcementLevel.DISABLED: proto.DISABLED,
}
_FROM_PROTO = {
    proto.ADVISORY: "advisory",
    proto.MANDATORY: "mandatory",
    proto.REMEDIATE: "remediate",
    proto.DISABLED: "disabled",
}


class PolicyInputError(ValueError):
    """Bad input for the runner (not an export document, invalid policy config): exit 2."""


@dataclass(frozen=True)
class Verdict:
    """One violation, as `pulumi preview` prints it: pack, policy, level, resource URN, message."""

    pack: str
    policy: str
    level: str  # "mandatory" | "advisory"
    urn: str
    message: str

    @property
    def mandatory(self) -> bool:
        return self.level == "mandatory"

    def line(self) -> str:
        return f"{self.pack}/{self.policy} [{self.level}] {self.urn or '(stack)'}: {self.message}"

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class LoadedPack:
    """What a pack's `__main__.py` passed to `PolicyPack(...)`, plus its PulumiPolicy.yaml version."""

    directory: Path
    name: str
    version: str
    policies: list[Any]
    enforcement_level: EnforcementLevel
    initial_config: dict[str, Any] | None
    description: str | None

    def servicer(self, *, stock: bool = False) -> _PolicyAnalyzerServicer:
        """pulumi-policy's servicer; unless `stock`, the one that builds each request's resources once for every
        policy (accelstack.engine.shared_servicer: same responses)."""
        kind = _PolicyAnalyzerServicer if stock else SharedServicer
        return kind(
            self.name, self.version, self.policies, self.enforcement_level, self.initial_config, self.description
        )


_load_lock = threading.Lock()
_loaded: dict[Path, LoadedPack] = {}


def load_pack(directory: Path | str, *, on_path: bool = False) -> LoadedPack:
    """Execute the pack's `__main__.py` as the CLI would, recording its `PolicyPack(...)` call. `on_path`: with its
    folder first on the import path while it runs, as the Pulumi CLI runs a pack (a company pack's own modules)."""
    directory = Path(directory).resolve()
    with _load_lock:
        if directory in _loaded:
            return _loaded[directory]
        recorded: dict[str, Any] = {}

        class RecordingPolicyPack:
            def __init__(
                self,
                name: str,
                policies: list[Any],
                enforcement_level: EnforcementLevel | None = None,
                initial_config: dict[str, Any] | None = None,
                description: str | None = None,
                **_: Any,
            ) -> None:
                recorded.update(
                    name=name,
                    policies=policies,
                    enforcement_level=enforcement_level,
                    initial_config=initial_config,
                    description=description,
                )

        real = pulumi_policy.PolicyPack
        pulumi_policy.PolicyPack = RecordingPolicyPack  # type: ignore[misc,assignment]
        if on_path:
            sys.path.insert(0, str(directory))
        try:
            runpy.run_path(str(directory / "__main__.py"), run_name="__main__")
        except (
            Exception,
            SystemExit,
        ) as error:  # a pack's own code (or a vendor plug-in it loads): named, no traceback
            raise PolicyInputError(f"{directory}/__main__.py failed: {type(error).__name__}: {error}") from error
        finally:
            pulumi_policy.PolicyPack = real  # type: ignore[misc]
            if on_path:
                with contextlib.suppress(ValueError):
                    sys.path.remove(str(directory))
        if not recorded:
            raise PolicyInputError(f"{directory}/__main__.py never calls PolicyPack(...)")
        _check_pack(recorded)
        meta = _pack_metadata(directory)
        pack = LoadedPack(
            directory=directory,
            name=recorded["name"],
            version=str(meta.get("version") or "0.0.1"),
            policies=list(recorded["policies"]),
            enforcement_level=recorded["enforcement_level"] or EnforcementLevel.ADVISORY,
            initial_config=recorded["initial_config"],
            description=recorded["description"] or meta.get("description"),
        )
        _loaded[directory] = pack
        return pack


def _pack_metadata(directory: Path) -> dict[str, Any]:
    """PulumiPolicy.yaml; only a Python pack runs here (the CLI runs a Node.js one with node)."""
    try:
        meta = yaml.safe_load((directory / "PulumiPolicy.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise PolicyInputError(f"{directory}/PulumiPolicy.yaml: {error}") from None
    if not isinstance(meta, dict):
        raise PolicyInputError(f"{directory}/PulumiPolicy.yaml: expected a mapping (description, runtime, version)")
    runtime = meta.get("runtime")
    runtime = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime not in (None, "python"):
        raise PolicyInputError(f"{directory}/PulumiPolicy.yaml: runtime {runtime!r}; allowed: python")
    return meta


def load_company_pack(path: Path | str) -> LoadedPack:
    """A policy pack of one's own (`--pack PATH`): a directory `pulumi preview --policy-pack PATH` takes, run as the
    shipped packs are (`load_pack`)."""
    directory = Path(path).resolve()
    missing = [name for name in ("PulumiPolicy.yaml", "__main__.py") if not (directory / name).is_file()]
    if missing:
        raise PolicyInputError(
            f"not a policy pack directory (no {' or '.join(missing)}; one holds PulumiPolicy.yaml and a __main__.py "
            "calling PolicyPack(...))"
        )
    _pack_metadata(directory)  # a Node.js pack is refused before its __main__.py is looked at
    return load_pack(directory, on_path=True)


def _check_pack(recorded: Mapping[str, Any]) -> None:
    """The checks PolicyPack.__init__ makes before serving, and the CLI's unique-name check."""
    name, policy_list = recorded["name"], recorded["policies"]
    if not isinstance(name, str) or not _POLICY_PACK_NAME.match(name):
        raise PolicyInputError(f"invalid policy pack name {name!r}")
    if not policy_list or not all(isinstance(p, pulumi_policy.policy.Policy) for p in policy_list):
        raise PolicyInputError(f"pack {name}: policies must be a non-empty list of Policy")
    names = [p.name for p in policy_list]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise PolicyInputError(f"pack {name}: duplicate policy names {', '.join(duplicates)}")


def default_packs() -> list[LoadedPack]:
    return [load_pack(PACKS_DIR / name) for name in PACKS]


# --- config: the CLI's resolution (schema defaults < pack initial config < user config) ---------


def _json_type_ok(value: Any, schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    checks = {
        "string": lambda v: isinstance(v, str),
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
        "boolean": lambda v: isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    }
    if kind in checks and not checks[kind](value):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if kind == "array" and "items" in schema:
        return all(_json_type_ok(item, schema["items"]) for item in value)
    return True


def _declared(policy: Any) -> Mapping[str, Any]:
    """The config properties a policy's schema declares (none without a schema)."""
    return policy.config_schema.properties if policy.config_schema is not None else {}


def _validate_config(pack: str, policy: Any, properties: Mapping[str, Any]) -> None:
    schema = policy.config_schema
    declared = _declared(policy)
    for key, value in properties.items():
        if key not in declared:
            raise PolicyInputError(
                f"{pack}/{policy.name}: unknown config property {key!r}; allowed: {', '.join(declared) or 'none'}"
            )
        if not _json_type_ok(value, declared[key]):
            allowed = declared[key].get("enum") or declared[key].get("type")
            raise PolicyInputError(f"{pack}/{policy.name}: config {key}={value!r} is invalid; expected {allowed}")
    for key in (schema.required or []) if schema is not None else []:
        if key not in properties:
            raise PolicyInputError(f"{pack}/{policy.name}: config property {key!r} is required")


def _split(entry: Any) -> tuple[EnforcementLevel | None, dict[str, Any]]:
    """A config entry is a level ("mandatory") or {"enforcementLevel": ..., other properties}."""
    if entry is None:
        return None, {}
    if isinstance(entry, EnforcementLevel):
        return entry, {}
    if isinstance(entry, str):
        if entry not in LEVELS:
            raise PolicyInputError(f"enforcement level {entry!r}; allowed: {', '.join(LEVELS)}")
        return LEVELS[entry], {}
    if isinstance(entry, Mapping):
        props = {k: v for k, v in entry.items() if k != "enforcementLevel"}
        level, _ = _split(entry.get("enforcementLevel"))
        return level, props
    raise PolicyInputError(f"policy config entry {entry!r} is neither a level nor an object")


def configure_request(
    pack: LoadedPack, user_config: Mapping[str, Any] | None = None, context: Mapping[str, Any] | None = None
) -> Any:
    """The ConfigureAnalyzerRequest the CLI would send: every policy with its resolved level and config.

    `user_config` is the `--policy-pack-config` document ({"all": level, policy: level | {...}});
    `context` (accounts, regions, workload) goes to every policy whose schema declares those keys,
    below anything the user set explicitly.
    """
    user_config = dict(user_config or {})
    all_level, _ = _split(user_config.get("all"))
    request = proto.ConfigureAnalyzerRequest()
    for policy in pack.policies:
        declared = _declared(policy)
        properties = {k: s["default"] for k, s in declared.items() if isinstance(s, Mapping) and "default" in s}
        properties.update({k: v for k, v in (context or {}).items() if k in declared and v is not None})
        initial_level, initial_props = _split((pack.initial_config or {}).get(policy.name))
        user_level, user_props = _split(user_config.get(policy.name))
        properties.update(initial_props)
        properties.update(user_props)
        _validate_config(pack.name, policy, properties)
        level = user_level or all_level or initial_level or policy.enforcement_level or pack.enforcement_level
        entry = proto.PolicyConfig(enforcementLevel=_TO_PROTO[level])
        entry.properties.update(properties)
        request.policyConfig[policy.name].CopyFrom(entry)
    return request


# --- requests from a stack export ---------------------------------------------------------------


def export_resources(document: Any) -> list[dict[str, Any]]:
    """The resources of a `pulumi stack export` v3 document (or of its bare `deployment`)."""
    if not isinstance(document, Mapping):
        raise PolicyInputError("not a stack export: expected a JSON object")
    deployment = document.get("deployment", document)
    resources = deployment.get("resources") if isinstance(deployment, Mapping) else None
    if not isinstance(resources, list):
        raise PolicyInputError("not a stack export: no deployment.resources list")
    for index, entry in enumerate(resources):
        if (
            not isinstance(entry, Mapping)
            or not isinstance(entry.get("urn"), str)
            or not isinstance(entry.get("type"), str)
        ):
            raise PolicyInputError(f"deployment.resources[{index}]: each resource needs a urn and a type")
        wrong = misshapen_field(entry)
        if wrong is not None:
            raise PolicyInputError(f"deployment.resources[{index}] ({entry['urn']}): {wrong}")
    return [dict(entry) for entry in resources]


def _verdicts(pack: LoadedPack, response: Any, urn: str = "") -> list[Verdict]:
    found = []
    for diagnostic in response.diagnostics:
        message = diagnostic.message
        # pulumi-policy prefixes the policy's description; the CLI prints both, we keep the specific part.
        if diagnostic.description and message.startswith(diagnostic.description + "\n"):
            message = message[len(diagnostic.description) + 1 :]
        found.append(
            Verdict(
                pack=diagnostic.policyPackName or pack.name,
                policy=diagnostic.policyName,
                level=_FROM_PROTO.get(diagnostic.enforcementLevel, "advisory"),
                urn=diagnostic.urn or urn,
                message=message,
            )
        )
    return found


class _Once:
    """One function's results by the identity of its argument, the argument held so that its id stays its own."""

    def __init__(self, function: Any) -> None:
        self.function = function
        self.results: dict[int, tuple[Any, Any]] = {}

    def __call__(self, value: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return self.function(value, *args, **kwargs)
        held = self.results.get(id(value))
        if held is None or held[0] is not value:
            held = self.results[id(value)] = (value, self.function(value))
        return held[1]


class _DecodedOnce:
    """pulumi-policy's servicer decodes a request's properties (protobuf Struct -> JSON -> its property values ->
    an unknown-checking view) again for every policy, and every resource again for every stack policy: O(resources
    x policies), the bulk of a large export's time. While the runner holds its requests (so their ids stay theirs),
    each step runs once per message and its result is shared: the policies only read what they are given (the view
    is read-only). The shared servicer (accelstack.engine.shared_servicer) then asks once per request, not once per
    policy; pulumi-policy's own servicer (`stock`) asks once per policy and gets the shared result."""

    def __init__(self) -> None:
        self.MessageToDict = _Once(json_format.MessageToDict)  # json_format's name
        self.deserialize_properties = _Once(deserialize_properties)
        # pulumi-policy's view, built without a path copy per leaf; a view someone put in its place here (the schema
        # report's read trace patches this module's name) stays theirs.
        view = unknown_checking_proxy
        self.unknown_checking_proxy = _Once(
            struct_decode.checking_proxy if view is pulumi_proxy.unknown_checking_proxy else view
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(json_format, name)


_decode_lock = threading.Lock()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a while (as it was after). A 20,000-resource export is millions of
    objects, and each full collection walks every one of them: about a quarter of `policy --file`'s CPU, for nothing
    (what a run makes is freed by reference counting; its few cycles are collected once the collector is back on).
    The preview worker switches it off for the same reason (accelstack.engine.worker)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def _crash_is_input_error(pack: LoadedPack, subject: str) -> Iterator[None]:
    """A policy that raises on a resource's values (an export of any shape reaches it: `policy --file`) is reported
    as bad input naming the pack and the resource, not as a traceback; the policy's own error is kept in the text."""
    try:
        yield
    except PolicyInputError:
        raise
    except Exception as error:  # any policy's code, on any input
        raise PolicyInputError(
            f"pack {pack.name} failed on {subject} ({type(error).__name__}: {error}); its properties are not in a "
            "shape the policies read"
        ) from error


def run_packs(
    document: Any,
    *,
    packs: Iterable[LoadedPack] | None = None,
    config: Mapping[str, Any] | None = None,
    context: Mapping[str, Any] | None = None,
    stock: bool = False,
    extra: Iterable[tuple[LoadedPack, Mapping[str, Any] | None]] = (),
) -> list[Verdict]:
    """Every violation the packs report for an export document (Analyze per resource, then AnalyzeStack).
    `extra`: more packs, each with its own config (a company pack and its `--pack-config`), after `packs`.
    `stock`: pulumi-policy's servicer as it is, decoding everything again for every policy (the reference the
    shared decoding is tested against; slow on a large export)."""
    configured = [(pack, config) for pack in (packs if packs is not None else default_packs())] + list(extra)
    with collector_paused():
        return _run_packs(document, configured, context, stock=stock)


def _run_packs(
    document: Any,
    packs: list[tuple[LoadedPack, Mapping[str, Any] | None]],
    context: Mapping[str, Any] | None,
    *,
    stock: bool,
) -> list[Verdict]:
    resources = export_resources(document)
    verdicts: list[Verdict] = []
    with _decode_lock:  # one run at a time swaps the servicer module's decoder
        once = _DecodedOnce()
        # A view someone wrapped (the schema report's read trace, which reads its caller's frame and records each
        # policy's reads through the view it is given) stays theirs, and so does the servicer that calls it.
        wrapped_view = analyzer_module.unknown_checking_proxy is not unknown_checking_proxy
        # pulumi-policy's servicer decodes the requests' protobuf Structs; the shared one is handed what it would
        # decode from them, read from the export directly (no Struct built and read back).
        direct = not (stock or wrapped_view)
        analyze = analyze_requests(resources, properties=not direct)
        stack = analyze_stack_request(resources, properties=not direct)
        inputs, finals = decoded_properties(resources) if direct else ([], [])
        if not stock:
            analyzer_module.json_format = once  # type: ignore[assignment]
            analyzer_module.deserialize_properties = once.deserialize_properties  # type: ignore[assignment]
            if not wrapped_view:
                analyzer_module.unknown_checking_proxy = once.unknown_checking_proxy  # type: ignore[assignment]
        try:
            for pack, config in packs:
                servicer = pack.servicer(stock=stock or wrapped_view)
                # pulumi_policy's analyzer servicer is unannotated.
                servicer.Configure(configure_request(pack, config, context), None)  # type: ignore[no-untyped-call]
                for index, request in enumerate(analyze):
                    with _crash_is_input_error(pack, request.urn):
                        if isinstance(servicer, SharedServicer) and direct:
                            response = servicer.analyze(request, inputs[index])
                        else:
                            response = servicer.Analyze(request, None)  # type: ignore[no-untyped-call]
                        verdicts += _verdicts(pack, response, request.urn)
                with _crash_is_input_error(pack, "the stack"):
                    if isinstance(servicer, SharedServicer) and direct:
                        response = servicer.analyze_stack(stack, finals)
                    else:
                        response = servicer.AnalyzeStack(stack, None)  # type: ignore[no-untyped-call]
                    verdicts += _verdicts(pack, response)
        finally:
            analyzer_module.json_format = json_format
            analyzer_module.deserialize_properties = deserialize_properties
            if not wrapped_view:
                analyzer_module.unknown_checking_proxy = unknown_checking_proxy
    return verdicts


def policy_verdicts(
    export_doc: Any,
    spec: Any = None,
    config: Mapping[str, Any] | None = None,
    *,
    context: Mapping[str, Any] | None = None,
    extra: Iterable[tuple[LoadedPack, Mapping[str, Any] | None]] = (),
) -> list[Verdict]:
    """Verdicts of both packs, then of the `extra` packs (each with its own config), for one stack's export (what
    `accelstack preview` shows); `context` instead of the spec's (a landing stack's, `pack_context.landing_context`)."""
    context = context if context is not None else context_from_spec(spec)
    return run_packs(export_doc, config=config, context=context, extra=extra)


def pack_config(pack: LoadedPack, spec: Any, *, context: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """A `--policy-pack-config` document for the Pulumi CLI carrying the stack's context (`context` instead of the
    spec's: a landing stack's)."""
    context = {k: v for k, v in (context if context is not None else context_from_spec(spec)).items() if v is not None}
    document: dict[str, dict[str, Any]] = {}
    for policy in pack.policies:
        declared = _declared(policy)
        values = {k: v for k, v in context.items() if k in declared}
        if values:
            document[policy.name] = values
    return document


def stack_name_of_export(document: Any) -> str | None:
    """The accelstack stack an export belongs to: its provider's accelstack:stack tag, else the Stack URN."""
    try:
        resources = export_resources(document)
    except PolicyInputError:
        return None
    return stack_name_of_resources(resources)


def stack_name_of_resources(resources: list[dict[str, Any]]) -> str | None:
    """`stack_name_of_export` of the export whose `export_resources` these are."""
    for entry in resources:
        if entry["type"].startswith(PROVIDER_PREFIX):
            tags = (entry.get("inputs") or {}).get("defaultTags")
            try:
                tags = load_json(tags, "defaultTags") if isinstance(tags, str) else tags
            except JsonInputError:
                continue
            tag_map = tags.get("tags") if isinstance(tags, Mapping) else None
            name = tag_map.get("accelstack:stack") if isinstance(tag_map, Mapping) else None
            if name:
                return str(name)
    for entry in resources:
        if entry["type"] == STACK_TYPE:
            return str(entry["urn"]).split("::")[0].rsplit(":", 1)[-1]
    return None
