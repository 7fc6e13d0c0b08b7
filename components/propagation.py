"""Grants must propagate before their dependants, on every cloud that needs it.

A role assignment or IAM binding exists once its API call returns, but the cloud honours it only after it has
propagated: Azure RBAC, Key Vault's data plane and Google Cloud IAM are eventually consistent (the figures and
their sources are in the clouds' catalogs). `depends_on` orders the calls, not the propagation, so a resource whose
creation is checked against a fresh grant (a file system reading its container, a storage account, bucket, disk or
topic encrypting with a key its service agent was just granted, a gateway fetching its certificate, a standby pool
creating VMs) could fail, or come up degraded, on a first `up`. Such a resource depends on a wait instead: a
`time:index/sleep:Sleep` (pulumiverse-time, which bridges terraform-provider-time's time_sleep) that starts once its
grants exist and lasts as long as the cloud documents propagation can take.

The wait's `triggers` are its grants' ids, and a triggers change replaces a time_sleep (RequiresReplace in
terraform-provider-time): a new or replaced grant is a new wait, while an `up` that changes no grant keeps the wait
and waits nothing. Dependants only depend on it, so a new wait neither updates nor replaces them (a file system, a
storage account or a key stays as it is). A grant used only later, by software that retries (a node reading its
bucket at boot: components/slurm/config_delivery.py), needs no wait.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumiverse_time as time


def sleep_duration(seconds: int) -> str:
    """A time_sleep duration ("420s"): a number and a unit (terraform-provider-time's create_duration)."""
    if seconds <= 0:
        raise ValueError(f"a propagation wait lasts a positive number of seconds, not {seconds}")
    return f"{seconds}s"


class PropagationWaits:
    """The propagation waits of one component: `after(label, grants, seconds)` is what a resource whose creation
    uses `grants` lists in `depends_on` in their place. One explicit time provider for them all (the project
    denies every package a default provider: Pulumi.yaml)."""

    def __init__(self, name: str, parent: pulumi.Resource):
        self.name = name
        self.parent = parent
        self._provider: time.Provider | None = None

    def provider(self) -> time.Provider:
        if self._provider is None:
            self._provider = time.Provider(f"{self.name}-time", opts=pulumi.ResourceOptions(parent=self.parent))
        return self._provider

    def after(self, label: str, grants: Sequence[pulumi.Resource], seconds: int) -> list[pulumi.Resource]:
        """One wait of `seconds` after every grant of `grants` exists ([] without grants): named `<label>-propagation`,
        triggered by the grants' ids."""
        if not grants:
            return []
        triggers: dict[str, pulumi.Input[str]] = {}
        for index, grant in enumerate(grants):
            if not isinstance(grant, pulumi.CustomResource):
                raise TypeError(f"{label}: a propagation wait follows grants (custom resources), not {grant!r}")
            triggers[f"grant-{index}"] = grant.id
        sleep = time.Sleep(
            f"{label}-propagation",
            create_duration=sleep_duration(seconds),
            triggers=triggers,
            opts=pulumi.ResourceOptions(parent=self.parent, provider=self.provider(), depends_on=list(grants)),
        )
        return [sleep]


SLEEP = "time:index/sleep:Sleep"
# A time_sleep's id is the RFC3339 time it finished waiting (terraform-provider-time's Create); the mocks answer a
# fixed one, so previews and the golden exports stay deterministic.
MOCK_SLEPT_AT = "2025-01-01T00:00:00Z"


def mock_sleep(args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, object]]:
    """How the clouds' mocks answer a propagation wait: its inputs back, and the time it finished as its id."""
    return MOCK_SLEPT_AT, {**dict(args.inputs), "id": MOCK_SLEPT_AT}
