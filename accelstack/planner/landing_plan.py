"""What each landing account needs from its quotas: the planner's sizing of a landing stack's quota requests.

Pure: the landing spec and the workload stacks' specs in, one `QuotaNeed` per (side, quota) out. A training
stack draws `nodes.count` machines, a serving stack `replicas.max` (at most that many run at once); machines in a
capacity block or reservation draw on what was bought, not on a quota (accelstack.clouds.aws.quotas), so they
need none. Stacks of one side sharing a quota add up: they run in the same account.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from accelstack.clouds.base import Catalog
from accelstack.spec.landing import SIDES, LandingStack
from accelstack.spec.models import ServingStack, TrainingStack
from accelstack.spec.problems import Problem


@dataclass(frozen=True)
class QuotaNeed:
    """One quota a side's account needs raised: its name, unit and the amount its stacks draw at most."""

    side: str
    region: str  # quotas are per account and Region
    quota: str
    unit: str
    amount: int
    code: str  # the quota's id in the cloud's quota API (what a request names)
    stacks: tuple[str, ...]  # the workload stacks that draw on it
    # The zone the amount is drawn in, for a quota counted per zone that the stacks' machines draw in one zone
    # (a training cluster); "": anywhere in the region.
    zone: str = ""


def zone_drawn(spec: TrainingStack | ServingStack, first_zone: str) -> str:
    """Where a stack draws a per-zone quota (`first_zone`: the quota's default zone, "" for a regional quota): a
    training cluster in its pinned zone or the first, a serving stack's replicas anywhere in the region."""
    if not first_zone or not isinstance(spec, TrainingStack):
        return ""
    return spec.training.network.availability_zone or first_zone


def machines_drawn(spec: TrainingStack | ServingStack) -> tuple[str, str, int]:
    """(instance type, capacity, count) of the machines a workload stack runs at most."""
    if isinstance(spec, TrainingStack):
        nodes = spec.training.nodes
        return nodes.instance_type, nodes.capacity, nodes.count
    replicas = spec.serving.replicas
    return replicas.instance_type, replicas.capacity, replicas.max


def side_of(landing: LandingStack, stack: str) -> str | None:
    """The side whose account `stack` deploys into, as the landing stack lists it; None: neither."""
    return next((side for side in SIDES if stack in landing.side(side).stacks), None)


def plan_quota_needs(
    landing: LandingStack, workloads: Mapping[str, TrainingStack | ServingStack], catalog: Catalog
) -> list[QuotaNeed]:
    """The quota each side needs for the stacks the landing stack lists (`workloads`: stack name -> spec; a
    listed stack missing from it is the caller's error to report). In side, then quota name order."""
    needs: list[QuotaNeed] = []
    for side in SIDES:
        totals: dict[tuple[str, str, str, str, str], tuple[int, list[str]]] = {}
        for name in landing.side(side).stacks:
            spec = workloads.get(name)
            if spec is None:
                continue
            instance_type, capacity, count = machines_drawn(spec)
            # Flex-start machines are charged against the spot (preemptible) quota, as `accelstack cost` says.
            quota = catalog.quota(instance_type, "spot" if capacity == "flex-start" else capacity)
            if quota is None:
                continue  # a capacity block or reservation: bought capacity, no quota drawn
            key = (spec.account.region, quota.name, zone_drawn(spec, quota.first_zone), quota.unit, quota.code)
            amount, stacks = totals.get(key, (0, []))
            totals[key] = (amount + quota.amount(catalog.instance(instance_type), count), [*stacks, name])
        needs.extend(
            QuotaNeed(side, region, quota, unit, amount, code, tuple(stacks), zone)
            for (region, quota, zone, unit, code), (amount, stacks) in sorted(totals.items())
        )
    return needs


def shortfalls(requested: Iterable[QuotaNeed], needed: Iterable[QuotaNeed]) -> list[tuple[QuotaNeed, int]]:
    """(need, amount requested) for each need larger than what the landing stack requests for that side, quota
    and zone."""
    asked = {(r.side, r.region, r.quota, r.zone): r.amount for r in requested}
    return [
        (need, asked.get((need.side, need.region, need.quota, need.zone), 0))
        for need in needed
        if need.amount > asked.get((need.side, need.region, need.quota, need.zone), 0)
    ]


def training_families(
    landing: LandingStack, workloads: Mapping[str, TrainingStack | ServingStack], catalog: Catalog
) -> list[str]:
    """The instance families the serving account's guardrail denies: every family of the cloud's catalog with a
    fabric (the multi-node training machines) and every family the training side's stacks run, less the families
    the serving side's own stacks run (a model served on p5 keeps p5: the guardrail must not deny a listed stack)."""

    def families(side: str) -> set[str]:
        listed = [workloads[name] for name in landing.side(side).stacks if name in workloads]
        return {catalog.instance(machines_drawn(spec)[0]).family for spec in listed}

    fabric = {instance.family for instance in catalog.instances.values() if instance.has_fabric}
    return sorted((fabric | families("training")) - families("serving"))


@dataclass(frozen=True)
class LandingPlan:
    """Every derived number of a landing stack: each side's quota needs and the families serving may not launch."""

    needs: tuple[QuotaNeed, ...]
    training_families: tuple[str, ...]

    def side_needs(self, side: str) -> list[QuotaNeed]:
        return [need for need in self.needs if need.side == side]


def landing_problems(landing: LandingStack, workloads: Mapping[str, TrainingStack | ServingStack]) -> list[Problem]:
    """Why the listed workload stacks cannot land as listed: a stack on the wrong side, in another cloud or in a
    Region the region guardrail denies."""
    problems = []
    for side in SIDES:
        for index, name in enumerate(landing.side(side).stacks):
            spec = workloads.get(name)
            path = f"organization.{side}.stacks.{index}"
            if spec is None:
                continue
            if spec.workload != side:
                problems.append(
                    Problem(
                        path, f"{name} is a {spec.workload} stack; list it under organization.{spec.workload}.stacks"
                    )
                )
            elif spec.cloud != landing.cloud:
                problems.append(
                    Problem(path, f"{name} is a {spec.cloud} stack; this landing stack makes {landing.cloud} accounts")
                )
            elif spec.account.region not in landing.organization.allowed_regions:
                problems.append(
                    Problem(
                        path,
                        f"{name} deploys to {spec.account.region}, which the region guardrail denies; allowed: "
                        f"{', '.join(landing.organization.allowed_regions)}",
                    )
                )
            elif (project := getattr(spec.account, "project_id", None)) not in (None, landing.side(side).account.name):
                # GCP project ids are chosen, not assigned: the stack's resources name the project the landing
                # stack creates, so the two files must agree (AWS account ids come from the landing outputs).
                problems.append(
                    Problem(
                        path,
                        f"{name} deploys to project {project}; this landing stack creates "
                        f"{landing.side(side).account.name} for the {side} side",
                    )
                )
    return problems


def plan_landing(
    landing: LandingStack, workloads: Mapping[str, TrainingStack | ServingStack], catalog: Catalog
) -> LandingPlan:
    """The landing stack's plan from the workload stacks it lists (check `landing_problems` first), with the
    landing cloud's `catalog`."""
    return LandingPlan(
        needs=tuple(plan_quota_needs(landing, workloads, catalog)),
        training_families=tuple(training_families(landing, workloads, catalog)),
    )
