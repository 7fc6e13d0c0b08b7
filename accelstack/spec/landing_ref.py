"""A workload stack's reference to its landing stack (`accelstack:landing: {stack: org/project/aws-landing}`).

Kept apart from `accelstack.spec.landing` (the landing stack's own model) so the workload models import only this:
the landing stack creates the accounts, and a workload stack wired to it takes its account id and deploy role
from the landing stack's outputs (a Pulumi StackReference) instead of copying them by hand.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from accelstack.spec.base import Model

# Clouds whose landing parts are built (components/<cloud>/landing.py).
LANDING_CLOUDS = ("aws", "azure", "gcp", "oci")
# Pulumi's fully qualified stack name: <organization>/<project>/<stack> (Pulumi docs, "Stack references").
QUALIFIED_STACK_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[a-z0-9][a-z0-9-]{0,39}$"


class LandingRef(Model):
    """The landing stack a workload stack deploys into."""

    stack: str = Field(pattern=QUALIFIED_STACK_PATTERN)
    """Fully qualified name of the landing stack, e.g. acme/accelstack/aws-landing; its outputs give this stack's account id and deploy role."""

    @property
    def stack_name(self) -> str:
        """The landing stack's own name (its stack file is stacks/Pulumi.<name>.yaml when it is in this project)."""
        return self.stack.rsplit("/", 1)[1]


class LandingWired(Model):
    """A workload stack's base: it may name the landing stack that made its account."""

    landing: LandingRef | None = None
    """The landing stack (workload: landing) that created this stack's account; none: the account was made by hand."""

    @model_validator(mode="after")
    def _landing_gives_the_role(self) -> Any:
        if self.landing is None:
            return self
        cloud = getattr(self, "cloud", None)
        if cloud not in LANDING_CLOUDS:
            raise ValueError(f"landing: {cloud} has no landing stacks yet; landing stacks: {', '.join(LANDING_CLOUDS)}")
        if getattr(getattr(self, "account", None), "deploy_role", None):
            raise ValueError(
                "account.deployRole: remove it; with landing set, the deploy role comes from the landing stack's outputs"
            )
        return self
