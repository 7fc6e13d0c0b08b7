"""The Pulumi program, as a function: a project's `__main__.py` is `from accelstack.program import main; main()`.

Read the stack's `accelstack:*` config -> validated spec -> build the one stack it describes. The repository's own
`__main__.py` and the one `accelstack init` writes into a user's project both call this, so an installed accelstack
deploys exactly what the repository previews.
"""

from __future__ import annotations

import pulumi

from accelstack.components import build_stack
from accelstack.spec import SpecError, parse_spec
from accelstack.spec.loader import NAMESPACE, TOP_KEYS


def _provider_setting(key: str) -> str | None:
    namespace, _, name = key.partition(":")
    return pulumi.Config(namespace).get(name)


def main() -> None:
    """Build the stack `pulumi up` / `pulumi preview` runs (its name and config come from the Pulumi engine)."""
    config = pulumi.Config(NAMESPACE)
    raw = {key: value for key in TOP_KEYS if (value := config.get(key)) is not None}
    try:
        # The provider's own region setting (aws:region, ...) must not silently disagree with account.region.
        spec = parse_spec(raw, pulumi.get_stack(), provider_settings=_provider_setting, deploy=True)
    except SpecError as error:
        # RunError prints the message without a traceback, before any resource is registered.
        raise pulumi.RunError("invalid accelstack config:\n" + str(error)) from None
    build_stack(spec)
