"""pulumiverse-time's tables (pure data): every cloud whose stacks wait for grants to propagate
(components/propagation.py) pins the `time` package and declares these rows with its own (`Cloud.replace_rules`,
`Cloud.terraform`), so the union over the registered clouds holds them whichever clouds are installed.
"""

from __future__ import annotations

from accelstack.clouds.base import TerraformProvider

SLEEP = "time:index/sleep:Sleep"
STATIC = "time:index/static:Static"

# Inputs whose change makes the provider replace the resource. terraform-provider-time's time_sleep
# (internal/provider/resource_time_sleep.go): `triggers` carries mapplanmodifier.RequiresReplace; create_duration
# and destroy_duration update in place ("Updating this value by itself will not trigger a delay").
REPLACE_FORCING: dict[str, tuple[str, ...]] = {
    SLEEP: ("triggers",),
    # time_static (internal/provider/resource_time_static.go): `triggers` and `rfc3339` carry RequiresReplace; its
    # time is set at create and kept (Vultr's replicas sign their weights key URL at it: components/vultr).
    STATIC: ("triggers", "rfc3339"),
    # The provider has no settings ("The provider itself has no configuration options"): nothing replaces.
    "pulumi:providers:time": (),
}

# pulumiverse-time 0.1.x bridges terraform-provider-time (its README: "Time" provider, hashicorp/time).
TERRAFORM = TerraformProvider(
    package="time",
    address="registry.terraform.io/hashicorp/time",
    types={SLEEP: "time_sleep", STATIC: "time_static"},
    map_attributes={
        "time_sleep": frozenset({"triggers"}),
        "time_static": frozenset({"triggers"}),
    },  # a map of strings, its keys as the program wrote them
)
