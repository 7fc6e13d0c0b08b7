"""The spec rules' registry and runner. Rules are validators, ParallelCluster style: one small function per
rule, each yielding Problems (the spec's own are in `accelstack.spec.validators`).

Add a rule by decorating it with `@rule`; `run_validators` runs them all. A rule for one
workload says so, `@rule(workload="training")` or `@rule(workload="serving")`, and receives that
stack's model (`TrainingStack`, `ServingStack`) only; a bare `@rule` receives every stack.

Rule plug-ins. Some rules need the planner's sizing (GPU-memory fit, Lustre capacity and checkpoint
write time, model presets), but the planner sits above this layer and imports it, so the spec may not
import the planner back. Those rules live in `accelstack.planner_rules`, which names itself in the
`accelstack.rules` entry-point group (pyproject.toml). `run_validators` loads that group once per
process, so the spec asks only "which modules extend me?" and never names one, and any caller (the
CLI, the Pulumi program, a test importing just `accelstack.spec`) gets the same rules. An explicit
registration call would need one place every caller passes through, and a test or script importing
only the spec would silently validate less. Entry points need the package installed (`make` installs
it editable); with none found, validation fails loudly instead.

Cloud rules. What every cloud would reject the same way (a machine type its catalog lacks, several nodes
without a fabric, boot data over its limit) is written once in `accelstack.spec.catalog_rules`, from the
stack's cloud's description. What only one cloud's API would reject (its id formats, storage steps) lives
with the cloud: its `Cloud` registration (`accelstack.clouds.registry`) names its rule modules
(`Cloud.rules`), which `run_validators` imports and runs for that cloud's stacks only. So the spec
imports no cloud module, and no rule asks `if spec.cloud == ...`.

Rules run in a fixed order, whatever was imported first: the spec's own (`accelstack.spec.validators`,
`accelstack.spec.handoff_rules`, then `accelstack.spec.catalog_rules` and `accelstack.spec.address_rules`), then the stack's cloud's rule modules in the order its registration lists
them, then each plug-in module (by entry-point name), each in source order.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, overload

from accelstack.clouds import registry
from accelstack.spec.models import WORKLOAD_MODELS, ServingStack, StackSpec, TrainingStack
from accelstack.spec.problems import Problem

Workload = Literal["training", "serving"]
Yielded = TypeVar("Yielded")  # what a registered function yields: a Problem (a rule), or what a rule reads


@dataclass(frozen=True)
class Registered(Generic[Yielded]):
    """A registered function and the workload whose stacks it receives (None: every stack)."""

    func: Callable[[Any], Iterator[Yielded]]
    workload: Workload | None

    @property
    def module(self) -> str:
        return self.func.__module__

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def doc(self) -> str:
        return self.func.__doc__ or ""

    def __call__(self, spec: StackSpec) -> Iterator[Yielded]:
        """What `func` yields for `spec`; nothing for a stack of another workload."""
        if self.workload is None or isinstance(spec, WORKLOAD_MODELS[self.workload]):
            yield from self.func(spec)


Rule = Registered[Problem]
RULES: list[Rule] = []
RULE_PLUGIN_GROUP = "accelstack.rules"
CLOUD_PACKAGES = ("accelstack.clouds.", "accelstack.components.")  # where accelstack's own clouds keep rule modules

AnyStackRule = TypeVar("AnyStackRule", bound=Callable[[StackSpec], Iterator[Problem]])
TrainingRule = TypeVar("TrainingRule", bound=Callable[[TrainingStack], Iterator[Problem]])
ServingRule = TypeVar("ServingRule", bound=Callable[[ServingStack], Iterator[Problem]])


@overload
def rule(func: AnyStackRule, /) -> AnyStackRule: ...
@overload
def rule(*, workload: Literal["training"]) -> Callable[[TrainingRule], TrainingRule]: ...
@overload
def rule(*, workload: Literal["serving"]) -> Callable[[ServingRule], ServingRule]: ...
@overload
def rule(*, workload: None = None) -> Callable[[AnyStackRule], AnyStackRule]: ...
def rule(func: Callable[..., Iterator[Problem]] | None = None, /, *, workload: Workload | None = None) -> Any:
    """Register a rule for `workload`'s stacks (None: every stack); the function itself is returned unchanged."""

    def register(check: Callable[..., Iterator[Problem]]) -> Callable[..., Iterator[Problem]]:
        RULES.append(Registered(check, workload))
        return check

    return register if func is None else register(func)


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


def neutral_rule_modules() -> tuple[str, ...]:
    """The spec's own rule modules, in run order (imported here, not at the top: they import `rule` from this one)."""
    from accelstack.spec import address_rules, catalog_rules, handoff_rules, validators

    return (validators.__name__, handoff_rules.__name__, catalog_rules.__name__, address_rules.__name__)


def in_run_order(registered: list[Registered[Yielded]], cloud: str | None = None) -> list[Registered[Yielded]]:
    """The functions of `registered` that run for a stack of `cloud` (None: of every registered cloud, each
    cloud's after the one before it by name), neutral, cloud and plug-in, in a fixed order independent of
    import order. Another cloud's are left out."""
    clouds = registry.names() if cloud is None else (cloud,)
    cloud_modules = tuple(module for name in clouds for module in cloud_rule_modules(name))
    modules = (*neutral_rule_modules(), *cloud_modules, *load_rule_plugins())
    rank = {module: index for index, module in enumerate(modules)}
    # Another cloud's: those in the modules its registration names, and in any module of accelstack's own cloud
    # packages (imported for its tables by a component, or owned by a cloud whose registration a test replaced).
    named = {module for name in registry.names() for module in registry.get(name).rules}
    owned = {each.module for each in registered if each.module.startswith(CLOUD_PACKAGES)}
    foreign = (named | owned) - set(cloud_modules)

    def position(each: Registered[Yielded]) -> tuple[int, int]:
        index = rank.get(each.module)
        # Registered from elsewhere (none today): last, in registration order (sorted is stable).
        return (len(rank), 0) if index is None else (index, each.func.__code__.co_firstlineno)

    return sorted((each for each in registered if each.module not in foreign), key=position)


def all_rules(cloud: str | None = None) -> list[Rule]:
    """Every rule that runs for a stack of `cloud` (None: of every registered cloud), in run order."""
    return in_run_order(RULES, cloud)


def run_validators(spec: StackSpec) -> list[Problem]:
    return [problem for each in all_rules(spec.cloud) for problem in each(spec)]
