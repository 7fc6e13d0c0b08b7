"""The cluster's munge key as a Pulumi resource, the same on every cloud (each stores it in its own secret store)."""

from __future__ import annotations

import pulumi
import pulumi_random as random

MUNGE_KEY_BYTES = 128  # munged needs >= 32; mungekey's default is 1024 bits


def munge_key(name: str, parent: pulumi.Resource) -> tuple[random.Provider, random.RandomBytes]:
    """(the randomness provider, the key): random bytes kept in state as a secret, stable across `up`s.
    Default providers are disabled for the project, so randomness gets an explicit provider (it makes no cloud
    calls: no account to pin); the caller may reuse it for its other random values."""
    randomness = random.Provider(f"{name}-random", opts=pulumi.ResourceOptions(parent=parent))
    key = random.RandomBytes(
        f"{name}-munge-key",
        length=MUNGE_KEY_BYTES,
        # A new key would cut every running slurmd and slurmctld off from each other.
        opts=pulumi.ResourceOptions(parent=parent, provider=randomness, protect=True),
    )
    return randomness, key
