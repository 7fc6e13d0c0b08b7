"""The Pulumi program, as a function: a project's `__main__.py` is `from accelstack.program import main; main()`.

Read the stack's `accelstack:*` config -> validated spec -> build the one stack it describes. The repository's own
`__main__.py` and the one `accelstack init` writes into a user's project both call this, so an installed accelstack
deploys exactly what the repository previews.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi

from accelstack.clouds import registry
from accelstack.components import build_landing, build_stack
from accelstack.planner.landing_plan import LandingPlan, landing_problems, plan_landing
from accelstack.spec import SpecError, parse_spec
from accelstack.spec.landing import LandingStack, is_landing, parse_landing, workload_specs
from accelstack.spec.loader import NAMESPACE, TOP_KEYS

# Where the workload stacks' files are, relative to the project dir the program runs in (Pulumi.yaml's
# stackConfigDir): a landing stack sizes its quota requests from the stacks it lists.
STACKS_DIR = Path("stacks")


def _provider_setting(key: str) -> str | None:
    namespace, _, name = key.partition(":")
    return pulumi.Config(namespace).get(name)


def main() -> None:
    """Build the stack `pulumi up` / `pulumi preview` runs (its name and config come from the Pulumi engine)."""
    config = pulumi.Config(NAMESPACE)
    raw = {key: value for key in TOP_KEYS if (value := config.get(key)) is not None}
    if is_landing(raw):
        build_landing(*landing_plan(raw))
        return
    try:
        # The provider's own region setting (aws:region, ...) must not silently disagree with account.region.
        spec = parse_spec(raw, pulumi.get_stack(), provider_settings=_provider_setting, deploy=True)
    except SpecError as error:
        # RunError prints the message without a traceback, before any resource is registered.
        raise pulumi.RunError("invalid accelstack config:\n" + str(error)) from None
    build_stack(spec)


def landing_plan(raw: dict[str, Any]) -> tuple[LandingStack, LandingPlan]:
    """The landing stack's spec and plan, from its config and the workload stacks it lists; RunError otherwise."""
    try:
        spec = parse_landing(raw, pulumi.get_stack(), provider_settings=_provider_setting)
        workloads = workload_specs(spec, STACKS_DIR)
        problems = landing_problems(spec, workloads)
        if problems:
            raise SpecError(problems)
    except SpecError as error:
        raise pulumi.RunError("invalid accelstack config:\n" + str(error)) from None
    return spec, plan_landing(spec, workloads, registry.get(spec.cloud).catalog)
