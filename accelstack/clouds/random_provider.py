"""pulumi-random's tables (pure data): every cloud whose stacks draw randomness (the Slurm munge key, Azure's
admin key seed) pins the `random` package and declares these rows with its own (`Cloud.replace_rules`,
`Cloud.terraform`), so the union over the registered clouds holds them whichever clouds are installed.
"""

from __future__ import annotations

from accelstack.clouds.base import TerraformProvider

# Inputs whose change makes the provider replace the resource (terraform-provider-random: every argument).
REPLACE_FORCING: dict[str, tuple[str, ...]] = {
    # terraform-provider-random random_bytes: every argument (length, keepers) replaces.
    "random:index/randomBytes:RandomBytes": ("length", "keepers"),
    # terraform-provider-random random_password: every argument replaces.
    "random:index/randomPassword:RandomPassword": (
        "length",
        "special",
        "upper",
        "lower",
        "numeric",
        "minUpper",
        "minLower",
        "minNumeric",
        "minSpecial",
        "overrideSpecial",
        "keepers",
    ),
    # The provider holds no settings: nothing about it replaces what it manages.
    "pulumi:providers:random": (),
}

# pulumi-random 4.x bridges terraform-provider-random (bridge-metadata.json "renames.resources").
TERRAFORM = TerraformProvider(
    package="random",
    address="registry.terraform.io/hashicorp/random",
    types={"random:index/randomBytes:RandomBytes": "random_bytes"},
)
