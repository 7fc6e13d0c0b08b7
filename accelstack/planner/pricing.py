"""Price lookup: the dated AWS table, overridable from a YAML/JSON file or single values.

Override file (YAML or JSON), every key optional:

    onDemandHourly: {p5.48xlarge: 40.0}
    spotDiscount: 0.55
    lustreGbMonth: {PERSISTENT_2/250: 0.20, SCRATCH_2: 0.14}
    s3GbMonth: 0.021
    ebsGp3GbMonth: 0.08
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from accelstack.clouds.aws import prices as prices_aws


@dataclass(frozen=True)
class PriceBook:
    on_demand_hourly: dict[str, float]
    lustre_gb_month: dict[tuple[str, int | None], float]
    s3_gb_month: float
    spot_discount: float
    checked: str
    region: str
    overridden: tuple[str, ...] = field(default=())
    ebs_gp3_gb_month: float = prices_aws.EBS_GP3_GB_MONTH

    def gp3_volume_monthly(self, gib: float, iops: int, throughput_mibps: int) -> float:
        """One gp3 volume per month: storage plus the IOPS and throughput provisioned above the free baseline."""
        return (
            gib * self.ebs_gp3_gb_month
            + max(0, iops - prices_aws.EBS_GP3_FREE_IOPS) * prices_aws.EBS_GP3_IOPS_MONTH
            + max(0, throughput_mibps - prices_aws.EBS_GP3_FREE_MIBPS) * prices_aws.EBS_GP3_MIBPS_MONTH
        )

    def hourly(self, instance_type: str, capacity: str = "on-demand") -> float:
        try:
            price = self.on_demand_hourly[instance_type]
        except KeyError:
            raise ValueError(
                f"no price for {instance_type!r}; add it with --prices FILE (onDemandHourly: {{{instance_type}: ...}})"
            ) from None
        return price * (1 - self.spot_discount) if capacity == "spot" else price

    def lustre(self, deployment_type: str, throughput_per_tib: int | None) -> float:
        key = (deployment_type, throughput_per_tib if deployment_type.startswith("PERSISTENT") else None)
        try:
            return self.lustre_gb_month[key]
        except KeyError:
            known = ", ".join(f"{d}/{t}" if t else d for d, t in self.lustre_gb_month)
            raise ValueError(
                f"no FSx for Lustre price for {deployment_type}/{throughput_per_tib}; known: {known}"
            ) from None

    def source(self) -> str:
        note = f" (overridden: {', '.join(self.overridden)})" if self.overridden else ""
        return f"accelstack.clouds.aws.prices {self.region} checked {self.checked}{note}"


def default_book() -> PriceBook:
    return PriceBook(
        dict(prices_aws.ON_DEMAND_HOURLY),
        dict(prices_aws.LUSTRE_GB_MONTH),
        prices_aws.S3_STANDARD_GB_MONTH,
        prices_aws.DEFAULT_SPOT_DISCOUNT,
        prices_aws.CHECKED,
        prices_aws.REGION,
    )


def _lustre_key(text: str) -> tuple[str, int | None]:
    name, _, tier = str(text).partition("/")
    return name.strip(), int(tier) if tier.strip() else None


def load_book(path: Path | None = None, *, spot_discount: float | None = None) -> PriceBook:
    """The default book with a file's overrides and then flag overrides applied; ValueError on bad input."""
    book = default_book()
    changed: list[str] = []
    if path is not None:
        try:
            data: Any = yaml.safe_load(Path(path).read_text())  # YAML is a superset of JSON
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"--prices {path}: cannot read ({exc})") from None
        if not isinstance(data, dict):
            raise ValueError(
                f"--prices {path}: expected a mapping with onDemandHourly/spotDiscount/lustreGbMonth/s3GbMonth/ebsGp3GbMonth"
            )
        allowed = {"onDemandHourly", "spotDiscount", "lustreGbMonth", "s3GbMonth", "ebsGp3GbMonth"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ValueError(
                f"--prices {path}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
            )
        try:
            hourly = {
                **book.on_demand_hourly,
                **{str(k): float(v) for k, v in (data.get("onDemandHourly") or {}).items()},
            }
            lustre = {
                **book.lustre_gb_month,
                **{_lustre_key(k): float(v) for k, v in (data.get("lustreGbMonth") or {}).items()},
            }
            s3 = float(data.get("s3GbMonth", book.s3_gb_month))
            spot = float(data.get("spotDiscount", book.spot_discount))
            ebs = float(data.get("ebsGp3GbMonth", book.ebs_gp3_gb_month))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"--prices {path}: prices must be numbers ({exc})") from None
        book = replace(
            book,
            on_demand_hourly=hourly,
            lustre_gb_month=lustre,
            s3_gb_month=s3,
            spot_discount=spot,
            ebs_gp3_gb_month=ebs,
        )
        changed.append(str(path))
    if spot_discount is not None:
        book = replace(book, spot_discount=spot_discount)
        changed.append("--spot-discount")
    if not 0 <= book.spot_discount < 1:
        raise ValueError(f"spot discount must be in [0, 1), got {book.spot_discount}")
    return replace(book, overridden=tuple(changed))
