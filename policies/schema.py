"""The provider SDKs' input schemas of the kinds the packs guard, and the packs' classification of them.

For every resource kind of a security concept (SECURITY_CONCEPTS), every input property of the installed
SDK's Args class is either judged by a named pack rule or declared inert with a reason
(policies/<vendor>/properties.py); a property that matters but no rule reads yet is listed as unjudged,
with why it matters. tests/policies/test_schema_coverage.py fails when a provider upgrade adds a property
nobody classified; `python -m accelstack.engine.schema_report` prints what is left. Wire names are the SDK's
`pulumi.getter` names (camelCase), what an export and the packs see.

Only the report and the tests import this module (it imports the provider SDKs; the packs never do).
"""

from __future__ import annotations

import enum
import importlib
import inspect
import keyword
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from . import vendors

# Concepts whose kinds guard who may reach what, where data lives and how it is protected: identities and
# grants, storage, keys, the serving front door (load balancers, listeners, WAF), firewalls, nodes,
# queues, file systems and logging.
SECURITY_CONCEPTS: dict[str, tuple[str, ...]] = {
    "aws": (
        "bucket",
        "bucket-encryption",
        "bucket-public-access-block",
        "bucket-versioning",
        "bucket-acl",
        "bucket-lifecycle",
        "bucket-ownership",
        "bucket-logging",
        "bucket-policy",
        "parallel-file-system",
        "file-system",
        "key",
        "key-policy",
        "key-grant",
        "queue",
        "queue-policy",
        "queue-redrive",
        "queue-redrive-allow",
        "load-balancer",
        "listener",
        "web-acl",
        "web-acl-association",
        "web-acl-logging",
        "node-group",
        "node-template",
        "instance",
        "firewall",
        "firewall-rule",
        "identity",
        "identity-grant",
        "identity-attachment",
        "resource-grant",
        "log-group",
        # A VPN and what gives its far end ranges (policies/aws/properties_vpn.py).
        "vpn",
        # A landing stack's organization: the guardrails themselves and what they contain.
        "org-unit",
        "member-account",
        "guardrail-policy",
        "guardrail-attachment",
        "quota-request",
        "budget",
    ),
    "azure-native": (
        "storage-account",
        "bucket",
        "bucket-versioning",
        "bucket-lifecycle",
        "parallel-file-system",
        "key-vault",
        "key",
        "queue-namespace",
        "queue",
        "queue-policy",
        "load-balancer",
        "web-acl",
        "node-group",
        "instance",
        "firewall",
        "firewall-rule",
        "identity",
        "role-definition",
        "role-binding",
        "log-group",
        "log-routing",
        "vpn",  # policies/azure/properties_vpn.py
        # A landing stack's organization (policies/azure/properties_landing.py).
        "org-unit",
        "member-account",
        "guardrail-policy",
        "budget",
    ),
    "gcp": (
        "bucket",
        "parallel-file-system",
        "file-system",
        "key-ring",
        "key",
        "queue",
        "load-balancer",
        "listener",
        "target-group",
        "tls-policy",
        "web-acl",
        "node-group",
        "node-template",
        "instance",
        "firewall-rule",
        "identity",
        "role-binding",
        "resource-grant",
        "vpn",  # policies/gcp/properties_vpn.py
        # A landing stack's organization (policies/gcp/properties_landing.py).
        "org-unit",
        "member-account",
        "guardrail-policy",
        "guardrail-constraint",
        "quota-request",
        "budget",
    ),
}

SECURITY_CONCEPTS["oci"] = (
    "bucket",
    "bucket-replication",
    "bucket-lifecycle",
    "resource-grant",
    "network-link",
    "parallel-file-system",
    "file-system-link",
    "volume",
    "volume-attachment",
    "key-vault",
    "key",
    "secret",
    "identity",
    "identity-grant",
    "node-group",
    "node-template",
    "instance",
    "firewall",
    "firewall-rule",
    # A landing stack's organization (policies/oci/properties_landing.py).
    "org-unit",
    "member-account",
    "quota-request",
    "budget",
)

# Vultr has no IAM (an API key is the whole account): its guarded kinds are the network front door, firewalls,
# nodes and the startup scripts they run, and Object Storage (policies/vultr/properties.py).
SECURITY_CONCEPTS["vultr"] = (
    "instance",
    "node-template",
    "load-balancer",
    "firewall",
    "firewall-rule",
    "network",
    "bucket",
)

SDK_MODULES = {
    "aws": "pulumi_aws",
    "azure-native": "pulumi_azure_native",
    "gcp": "pulumi_gcp",
    "oci": "pulumi_oci",
    "vultr": "ediri_vultr",  # the `ediri-vultr` package (the community provider: Vultr publishes none for Pulumi)
}
VENDOR_DIRS = {"aws": "aws", "azure-native": "azure", "gcp": "gcp", "oci": "oci", "vultr": "vultr"}
INERT, UNJUDGED = "inert:", "unjudged:"
_ALIAS = re.compile(r'Alias\(type_="([a-z-]+:[^"]+)"\)')
_TOKEN = re.compile(r'@pulumi\.type_token\("([a-z-]+:[^"]+)"\)')


@dataclass(frozen=True)
class Prop:
    """One input of an Args class: its wire name, the Python attribute, and its shape (bool, number, string,
    enum, list, map, object or any), with the enum's allowed values where the SDK has an enum class."""

    wire: str
    attribute: str
    shape: str
    choices: tuple[str, ...] = ()
    required: bool = False


def _module_path(token: str) -> tuple[str, str, str]:
    """`aws:s3/bucket:Bucket` -> (pulumi_aws, s3, Bucket); `azure-native:storage:StorageAccount` -> (.., storage, ..)."""
    package, module, name = token.split(":")
    python_name = module.split("/")[0].replace("-", "_")
    if package == "oci":  # pulumi-oci's tokens capitalize the module (`oci:Core/...`); its Python modules do not
        python_name = python_name.lower()
    if package == "vultr":  # ediri-vultr's tokens are all `vultr:index/<camelName>:..`, one Python module per kind
        python_name = re.sub(r"(?<!^)(?=[A-Z])", "_", module.split("/")[1]).lower()
    return SDK_MODULES[package], python_name + ("_" if keyword.iskeyword(python_name) else ""), name


@cache
def _aliases(package: str) -> dict[str, str]:
    """alias token -> current token of the installed SDK (read from the resource classes' sources)."""
    sdk: Any = importlib.import_module(SDK_MODULES[package])
    root = Path(sdk.__file__).parent
    found: dict[str, str] = {}
    for path in root.rglob("*.py"):
        if package == "azure-native" and re.search(r"/v\d{8}", str(path.relative_to(root))):
            continue
        text = path.read_text()
        if "Alias(type_=" not in text:
            continue
        current = _TOKEN.findall(text)
        if len(current) == 1:
            found.update({alias: current[0] for alias in _ALIAS.findall(text)})
    return found


def current_token(token: str) -> str:
    """The token of the SDK class that creates this kind (an alias token names its current class's)."""
    try:
        resource_class(token)
        return token
    except LookupError:
        return _aliases(token.split(":")[0]).get(token, token)


@cache
def resource_class(token: str) -> type:
    sdk, module_name, name = _module_path(token)
    try:
        module: ModuleType = importlib.import_module(f"{sdk}.{module_name}")
    except ImportError as error:
        raise LookupError(token) from error
    klass = getattr(module, name, None)
    if klass is None or getattr(klass, "pulumi_type", None) != token:
        raise LookupError(token)
    return typing.cast(type, klass)


def args_class(token: str) -> type:
    klass = resource_class(current_token(token))
    module = importlib.import_module(klass.__module__)
    # `<Name>InitArgs` where an input type of the package already holds the name `<Name>Args` (S3's split
    # encryption resource and the Bucket's nested block); only a class defined in the resource's own file counts.
    for name in (f"{klass.__name__}InitArgs", f"{klass.__name__}Args"):
        candidate = getattr(module, name, None)
        if isinstance(candidate, type) and candidate.__module__ == klass.__module__:
            return candidate
    raise LookupError(f"{klass.__module__} defines no Args class for {klass.__name__}")


def _names(annotation: Any) -> list[Any]:
    """Every type an annotation names, unwrapping Optional, Input (Awaitable/Output) and forward refs."""
    origin, found = typing.get_origin(annotation), []
    if origin is typing.Union:
        for arg in typing.get_args(annotation):
            found += _names(arg)
    elif isinstance(annotation, typing.ForwardRef):
        if annotation.__forward_arg__ != "Output[T]":
            found.append(annotation.__forward_arg__)
    elif annotation is not type(None) and origin is not None and getattr(origin, "__name__", "") == "Awaitable":
        pass  # the same type again, as an awaitable
    elif annotation is not type(None):
        found.append(annotation)
    return found


def _enum(name: str, module: ModuleType) -> type[enum.Enum] | None:
    package = importlib.import_module(module.__name__.rsplit(".", 1)[0])
    candidate = getattr(package, name, None)
    return candidate if isinstance(candidate, type) and issubclass(candidate, enum.Enum) else None


def _shape(annotation: Any, module: ModuleType) -> tuple[str, tuple[str, ...]]:
    names = _names(annotation)
    choices: list[str] = []
    for name in names:
        if isinstance(name, str):
            found = _enum(name, module)
            if found is not None:
                choices += [str(member.value) for member in found]
    if choices:
        return "enum", tuple(dict.fromkeys(choices))
    for name in names:
        origin = typing.get_origin(name)
        if name is bool:
            return "bool", ()
        if name in (int, float):
            return "number", ()
        if origin is not None and getattr(origin, "__name__", "") in ("Sequence", "list"):
            items = [n for arg in typing.get_args(name) for n in _names(arg)]
            objects = any(isinstance(n, str) and n.endswith(("Args", "ArgsDict")) for n in items)
            return ("list-of-objects" if objects else "list"), ()
        if origin is not None and getattr(origin, "__name__", "") in ("Mapping", "dict"):
            return "map", ()
        if isinstance(name, str) and (name.endswith("Args") or name.endswith("ArgsDict")):
            return "object", ()
    if str in names:
        return "string", ()
    return "any", ()


@cache
def properties(token: str) -> dict[str, Prop]:
    """wire name -> Prop for every input of the kind's Args class."""
    klass = args_class(token)
    module = importlib.import_module(klass.__module__)
    init = inspect.signature(klass.__init__).parameters  # type: ignore[misc]
    required = {name for name, p in init.items() if p.default is inspect.Parameter.empty and name != "self"}
    found: dict[str, Prop] = {}
    for attribute, member in vars(klass).items():
        if not isinstance(member, property) or member.fget is None:
            continue
        wire = getattr(member.fget, "_pulumi_name", attribute)
        shape, choices = _shape(member.fget.__annotations__.get("return"), module)
        found[wire] = Prop(wire, attribute, shape, choices, attribute in required)
    return found


@cache
def security_kinds(package: str) -> dict[str, tuple[str, ...]]:
    """Current token -> every tabled token of that class, for each kind of a security concept."""
    vendor = vendors.by_package(package)
    table = vendor.concepts if vendor is not None else {}
    kinds: dict[str, list[str]] = {}
    for concept in SECURITY_CONCEPTS[package]:
        for token in table.get(concept, ()):
            kinds.setdefault(current_token(token), []).append(token)
    return {current: tuple(tokens) for current, tokens in kinds.items()}


def classification_module(package: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.{VENDOR_DIRS[package]}.properties")


def classified(package: str) -> dict[str, dict[str, str]]:
    """Current token -> {wire name: rule names (comma-separated) | "inert: why"} of one vendor."""
    module = classification_module(package)
    table: dict[str, dict[str, str]] = {token: dict(props) for token, props in module.PROPERTIES.items()}
    for token, same in getattr(module, "SAME_AS", {}).items():
        table[token] = dict(table[same])
    return table


def unjudged(package: str) -> dict[str, dict[str, str]]:
    """Current token -> {wire name: why it matters} of properties no rule reads yet."""
    module = classification_module(package)
    table = {token: dict(props) for token, props in getattr(module, "UNJUDGED", {}).items()}
    for token, same in getattr(module, "SAME_AS", {}).items():
        if same in table:
            table[token] = dict(table[same])
    return table


def rules_of(verdict: str) -> list[str]:
    """The rule names a classification names ([] for inert)."""
    if verdict.startswith(INERT):
        return []
    return [name.strip() for name in verdict.split(",") if name.strip()]


def policy_names() -> frozenset[str]:
    """Every policy of both packs."""
    from .guardrails import observability
    from .guardrails import rules as guardrails
    from .separation import rules as separation

    return frozenset(p.name for p in [*guardrails.POLICIES, *observability.POLICIES, *separation.POLICIES])


@dataclass(frozen=True)
class Problems:
    """What the classification of one vendor gets wrong against the installed SDK and the packs."""

    unclassified: Mapping[str, tuple[str, ...]]  # kind -> SDK properties in neither table
    stale: Mapping[str, tuple[str, ...]]  # kind -> classified properties the SDK no longer has
    unknown_rules: Mapping[str, tuple[str, ...]]  # kind -> "prop: rule" naming no policy of the packs
    unlisted_kinds: tuple[str, ...]  # kinds of a security concept with no table at all
    both: Mapping[str, tuple[str, ...]]  # kind -> properties both judged/inert and unjudged


def problems(package: str) -> Problems:
    judged, open_, names = classified(package), unjudged(package), policy_names()
    unclassified, stale, unknown, both = {}, {}, {}, {}
    kinds = security_kinds(package)
    for kind in kinds:
        sdk = set(properties(kind))
        mine, theirs = judged.get(kind, {}), open_.get(kind, {})
        if missing := sorted(sdk - set(mine) - set(theirs)):
            unclassified[kind] = tuple(missing)
        if gone := sorted((set(mine) | set(theirs)) - sdk):
            stale[kind] = tuple(gone)
        if bad := sorted(f"{p}: {r}" for p, v in mine.items() for r in rules_of(v) if r not in names):
            unknown[kind] = tuple(bad)
        if twice := sorted(set(mine) & set(theirs)):
            both[kind] = tuple(twice)
    for kind in set(judged) | set(open_):
        if kind not in kinds:
            stale[kind] = ("(the kind is not of a security concept, or not its SDK class's token)",)
    unlisted = tuple(sorted(k for k in kinds if k not in judged and k not in open_))
    return Problems(unclassified, stale, unknown, unlisted, both)
