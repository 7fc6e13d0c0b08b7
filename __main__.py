"""The Pulumi program: read stack config -> spec -> build one stack. Nothing else."""

import pulumi

from accelstack.components import build_stack
from accelstack.spec import SpecError, parse_spec
from accelstack.spec.loader import TOP_KEYS


def _provider_setting(key: str) -> str | None:
    namespace, _, name = key.partition(":")
    return pulumi.Config(namespace).get(name)


config = pulumi.Config("accelstack")
raw = {key: value for key in TOP_KEYS if (value := config.get(key)) is not None}
try:
    # The provider's own region setting (aws:region, ...) must not silently disagree with account.region.
    spec = parse_spec(raw, pulumi.get_stack(), provider_settings=_provider_setting, deploy=True)
except SpecError as error:
    # RunError prints the message without a traceback, before any resource is registered.
    raise pulumi.RunError("invalid accelstack config:\n" + str(error)) from None
build_stack(spec)
