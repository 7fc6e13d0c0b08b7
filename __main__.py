"""The Pulumi program: read stack config -> spec -> build one stack. Nothing else."""

import pulumi

from accelstack.components import build_stack
from accelstack.spec import SpecError, parse_spec
from accelstack.spec.loader import TOP_KEYS

config = pulumi.Config("accelstack")
raw = {key: value for key in TOP_KEYS if (value := config.get(key)) is not None}
try:
    # aws:region must not silently disagree with account.region (the Region accelstack deploys to).
    spec = parse_spec(raw, pulumi.get_stack(), provider_region=pulumi.Config("aws").get("region"), deploy=True)
except SpecError as error:
    # RunError prints the message without a traceback, before any resource is registered.
    raise pulumi.RunError("invalid accelstack config:\n" + str(error)) from None
build_stack(spec)
