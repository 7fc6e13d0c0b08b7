"""The resource kinds the components can create, read from their source: every provider SDK resource class
(a `pulumi.CustomResource` subclass of pulumi_aws, pulumi_azure_native, pulumi_gcp, pulumi_random, and the
community packages' pulumiverse_time, ...) that
components/ names as a value (instantiated, or picked to be instantiated), and the dynamic provider's kind
where components/ defines a dynamic resource. A class named only in a type annotation, or only to call a
class method on it (`Vpc.get(...)` reads an existing resource), creates nothing and is not counted."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pulumi
import pulumi.dynamic

from accelstack.policies.concepts import DYNAMIC

REPO = Path(__file__).resolve().parents[2]
COMPONENTS = REPO / "components"
SDK_PREFIXES = ("pulumi_", "pulumiverse_")  # Pulumi's own packages, the community's (pulumiverse)
DYNAMIC_KIND = DYNAMIC["dynamic-operation"][0]
TOKEN_IN_SOURCE = re.compile(r"super\([^)]*\)\.__init__\(\s*'([a-z][\w-]*(?::[\w/]+:\w+)?)'")


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted module or object it binds, for imports of provider SDKs."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(SDK_PREFIXES):
                    bound[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(SDK_PREFIXES):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _dotted(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _resolve(path: str) -> object | None:
    """The object a dotted path names (module.attr.attr...), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr, None)
            if found is None:
                return None
        return found
    return None


def _annotations(tree: ast.Module) -> set[int]:
    """ids of every node inside a type annotation."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        roots: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            every = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]
            roots += [a.annotation for a in every if a is not None]
            roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        for root in roots:
            if root is not None:
                inside.update(id(n) for n in ast.walk(root))
    return inside


def _type_token(resource_class: type) -> str | None:
    """The class's type token: `pulumi_type` (set by `@pulumi.type_token` in newer generated SDKs), else the token
    the generated `_internal_init` passes to `super().__init__` (older codegen, e.g. pulumiverse-time 0.1.x)."""
    token = getattr(resource_class, "pulumi_type", None)
    if isinstance(token, str):
        return token
    init = getattr(resource_class, "_internal_init", None)
    if init is None:
        return None
    found = TOKEN_IN_SOURCE.search(inspect.getsource(init))
    if found is None:
        return None
    token = found.group(1)
    # A provider class passes its package's name; its type token is `pulumi:providers:<package>`.
    return f"pulumi:providers:{token}" if issubclass(resource_class, pulumi.ProviderResource) else token


def _kinds_in(path: Path, root: Path) -> Iterator[tuple[str, str]]:
    """(type token, where) for every resource class the module names as a value."""
    tree = ast.parse(path.read_text(), str(path))
    bound = _imports(tree)
    annotated = _annotations(tree)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    dynamic_bases = {"pulumi.dynamic.Resource", "dynamic.Resource"} | {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "pulumi.dynamic"
        for alias in node.names
        if alias.name == "Resource"
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(ast.unparse(base) in dynamic_bases for base in node.bases):
            yield DYNAMIC_KIND, f"{path.relative_to(root.parent)}:{node.lineno}"
        if not isinstance(node, (ast.Attribute, ast.Name)) or id(node) in annotated:
            continue
        if isinstance(parents.get(id(node)), ast.Attribute):
            continue  # a longer path is judged at its end; `Cls.get(...)` reads, it does not create
        dotted = _dotted(node)
        if not dotted or dotted[0] not in bound:
            continue
        found = _resolve(".".join([bound[dotted[0]], *dotted[1:]]))
        if (
            isinstance(found, type)
            and issubclass(found, pulumi.CustomResource)
            and not issubclass(found, pulumi.dynamic.Resource)
        ):
            token = _type_token(found)
            if isinstance(token, str):
                yield token, f"{path.relative_to(root.parent)}:{node.lineno}"


def component_kinds(root: Path = COMPONENTS) -> dict[str, list[str]]:
    """Type token -> where in components/ it is named, for every resource kind the components can create."""
    from accelstack.clouds import registry

    # A described cloud's components (not deployable yet: no example stack previews them) are held to this once
    # it deploys.
    described = {name for name, cloud in registry.clouds().items() if not cloud.deployable}
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] in described:
            continue
        for token, where in _kinds_in(path, root):
            found.setdefault(token, []).append(where)
    return found
