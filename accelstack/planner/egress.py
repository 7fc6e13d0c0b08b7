"""What a cross-cloud handoff (accelstack.spec.handoff) costs in data transfer: the training cloud bills the weights
leaving it for the internet, per GB, every time a replica fetches them (ingress is free on every cloud here).

List prices, USD per GB, the first paid tier from North America or Europe, as each cloud published them (dated below;
`--prices` does not cover them: re-check the page before budgeting). Private interconnects (Direct Connect,
ExpressRoute, Cloud Interconnect) and committed-use discounts are lower and not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from accelstack.planner.cost import DAYS_PER_MONTH


@dataclass(frozen=True)
class EgressPrice:
    usd_per_gb: float
    tier: str
    source: str
    as_of: str


EGRESS_TO_INTERNET: dict[str, EgressPrice] = {
    "aws": EgressPrice(
        0.09,
        "S3/EC2 data transfer out to the internet, first 10 TB/month (after 100 GB/month free)",
        "https://aws.amazon.com/s3/pricing/ (Data Transfer)",
        "2025-01",
    ),
    "gcp": EgressPrice(
        0.12,
        "Cloud Storage network egress, Premium Tier, 0-1 TB/month to worldwide destinations (not China, Australia)",
        "https://cloud.google.com/storage/pricing#network-egress",
        "2025-01",
    ),
    "azure": EgressPrice(
        0.087,
        "Internet egress, Microsoft premium global network, North America/Europe, 10 GB-10 TB/month (first 100 GB free)",
        "https://azure.microsoft.com/pricing/details/bandwidth/",
        "2025-01",
    ),
    # Weights on OCI read from Vultr (the PAR handoff): OCI meters outbound data transfer only past the first 10 TB a
    # month per tenancy, which is not modelled here (the whole volume is priced: an upper bound).
    "oci": EgressPrice(
        0.0085,
        "Outbound data transfer originating in North America/Europe, after the first 10 TB/month free (not deducted)",
        "https://www.oracle.com/cloud/networking/pricing/",
        "2025-01",
    ),
}


@dataclass(frozen=True)
class HandoffEgress:
    training_cloud: str
    serving_cloud: str
    usd_per_gb: float
    weights_gb: float
    usd_per_fetch: float  # one replica fetching the weights and adapters once
    fetches_per_month: float  # replicas started without the weights on disk (scale-ups over the daily profile)
    monthly_usd: float
    basis: str
    source: str
    as_of: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def fetches_per_month(replicas_by_hour: Sequence[int], warm_pool: int) -> float:
    """Replicas that fetch the weights each month: each day's scale-ups over the profile (a replica started into
    the group fetches once; a warm-pool replica fetched when it was prepared and is counted once, as a start), at
    least the first fleet's once."""
    hours = list(replicas_by_hour)
    ups = sum(max(0, b - a) for a, b in zip(hours[-1:] + hours[:-1], hours, strict=True))  # the day wraps
    return max(ups * DAYS_PER_MONTH, float(max(replicas_by_hour, default=0) + warm_pool))


def handoff_egress(
    training_cloud: str, serving_cloud: str, weights_gb: float, replicas_by_hour: Sequence[int], warm_pool: int
) -> HandoffEgress:
    price = EGRESS_TO_INTERNET[training_cloud]
    per_fetch = weights_gb * price.usd_per_gb
    fetches = fetches_per_month(replicas_by_hour, warm_pool)
    return HandoffEgress(
        training_cloud,
        serving_cloud,
        price.usd_per_gb,
        round(weights_gb, 2),
        round(per_fetch, 2),
        round(fetches, 1),
        round(per_fetch * fetches, 2),
        f"{weights_gb:.1f} GB x ${price.usd_per_gb}/GB ({price.tier}) x {fetches:.0f} fetches/month "
        "(each day's scale-ups over the traffic profile; the training account pays)",
        price.source,
        price.as_of,
    )


@dataclass(frozen=True)
class CopyEgress:
    """The copy handoff (accelstack.spec.copies): the deployer copies each checkpoint once into the serving stack's
    own store, so the training cloud bills the weights leaving it once per checkpoint copied, not per replica boot
    (the replicas then read their own store: no egress)."""

    training_cloud: str
    serving_cloud: str
    usd_per_gb: float
    weights_gb: float
    usd_per_copy: float  # the weights and copied adapters leaving the training cloud once
    basis: str
    source: str
    as_of: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def copy_egress(training_cloud: str, serving_cloud: str, weights_gb: float) -> CopyEgress:
    price = EGRESS_TO_INTERNET[training_cloud]
    per_copy = weights_gb * price.usd_per_gb
    return CopyEgress(
        training_cloud,
        serving_cloud,
        price.usd_per_gb,
        round(weights_gb, 2),
        round(per_copy, 2),
        f"{weights_gb:.1f} GB x ${price.usd_per_gb}/GB ({price.tier}), once per checkpoint copied (a new copyFrom "
        "prefix); the replicas read this stack's own store (the training account pays the copy's egress)",
        price.source,
        price.as_of,
    )
