"""Price lookup: a cloud's dated table (`accelstack.clouds.base.Prices`, handed in by the caller),
overridable from a YAML/JSON file or single values.

Override file (YAML or JSON), every key optional:

    onDemandHourly: {p5.48xlarge: 40.0}
    spotDiscount: 0.55
    lustreGbMonth: {PERSISTENT_2/250: 0.20, SCRATCH_2: 0.14}
    s3GbMonth: 0.021
    ebsGp3GbMonth: 0.08

The keys keep their first (AWS) names on every cloud: `s3GbMonth` is the object storage price and
`ebsGp3GbMonth` the block volume price, whatever the cloud calls them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from accelstack.clouds.base import Prices
from accelstack.spec.input_files import read_text
from accelstack.spec.problems import SpecError
from accelstack.spec.yaml_input import MAX_DOCUMENT_BYTES, load_yaml


@dataclass(frozen=True)
class PriceBook:
    """The prices the planner ranks and totals with: a cloud's `Prices`, with any overrides applied."""

    on_demand_hourly: dict[str, float]
    lustre_gb_month: dict[tuple[str, int | None], float]  # (ParallelFsTier.name, MB/s/TiB or None) -> USD/GB-month
    object_gb_month: float
    spot_discount: float
    checked: str
    region: str
    listed: Prices  # the cloud's table before overrides (what `lustre_setting` sizes a deployed file system by)
    overridden: tuple[str, ...] = field(default=())
    block_gb_month: float = 0.0
    # The stack's region (None: not asked) and, per instance type, where its hourly price comes from: a region whose
    # list price it is, or the --prices file. A type without an entry has `region`'s list price.
    stack_region: str | None = None
    hourly_source: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_prices(cls, prices: Prices, region: str | None = None) -> PriceBook:
        """The book of a cloud's dated table, no overrides; instance prices of `region` where the table has them."""
        regional = dict(prices.regional_hourly.get(region, {})) if region is not None else {}
        return cls(
            on_demand_hourly={**prices.on_demand_hourly, **regional},
            lustre_gb_month={_lustre_key(k): v for k, v in prices.parallel_fs_gb_month.items()},
            object_gb_month=prices.object_gb_month,
            spot_discount=prices.spot_discount,
            checked=prices.checked,
            region=prices.region,
            listed=prices,
            block_gb_month=prices.block_gb_month,
            stack_region=region,
            hourly_source=dict.fromkeys(regional, region) if region is not None else {},
        )

    def list_prices(self) -> PriceBook:
        """This cloud's book without the overrides."""
        return PriceBook.from_prices(self.listed, self.stack_region)

    def block_volume_monthly(self, gib: float, iops: int, throughput_mibps: int) -> float:
        """One block volume per month: storage plus the IOPS and throughput provisioned above the free baseline."""
        listed = self.listed
        return (
            gib * self.block_gb_month
            + max(0, iops - listed.block_free_iops) * listed.block_iops_month
            + max(0, throughput_mibps - listed.block_free_mibps) * listed.block_mibps_month
        )

    def hourly(self, instance_type: str, capacity: str = "on-demand") -> float:
        try:
            price = self.on_demand_hourly[instance_type]
        except KeyError:
            raise ValueError(
                f"no price for {instance_type!r}; add it with --prices FILE (onDemandHourly: {{{instance_type}: ...}})"
            ) from None
        return price * (1 - self.spot_discount) if capacity == "spot" else price

    def hourly_basis(self, instance_type: str) -> str:
        """Where `instance_type`'s hourly price comes from, as a cost line says it: the stack's region's list price,
        another region's (the table has none for the stack's), or the --prices file."""
        source = self.hourly_source.get(instance_type, self.region)
        if source.startswith("--prices"):
            return source
        if self.stack_region is None or source == self.stack_region:
            return f"{source} list price"
        return f"{source} list price (none recorded for {self.stack_region}; --prices to give it)"

    def lustre(self, deployment_type: str, throughput_per_tib: int | None) -> float:
        """USD per GB-month of a parallel file system tier at a throughput; a tier priced without one
        (its throughput is fixed) is priced the same at any."""
        for key in ((deployment_type, throughput_per_tib), (deployment_type, None)):
            if key in self.lustre_gb_month:
                return self.lustre_gb_month[key]
        known = ", ".join(f"{d}/{t}" if t else d for d, t in self.lustre_gb_month)
        if not known:  # a described cloud whose price table leaves the file system out (its not_priced says so)
            known = "none: this price table records no parallel file system price (give one with --prices)"
        raise ValueError(f"no parallel file system price for {deployment_type}/{throughput_per_tib}; known: {known}")

    def source(self) -> str:
        note = f" (overridden: {', '.join(self.overridden)})" if self.overridden else ""
        if self.stack_region in self.listed.regional_hourly and self.stack_region != self.region:
            note = f" ({self.stack_region}'s instance prices where recorded){note}"
        return f"{self.listed.label} {self.region} checked {self.checked}{note}"


def _lustre_key(text: str) -> tuple[str, int | None]:
    name, _, tier = str(text).partition("/")
    return name.strip(), int(tier) if tier.strip() else None


def load_book(
    prices: Prices, path: Path | None = None, *, spot_discount: float | None = None, region: str | None = None
) -> PriceBook:
    """The book of `prices` (instance prices of `region` where the table has them) with a file's overrides and then
    flag overrides applied; ValueError on bad input."""
    book = PriceBook.from_prices(prices, region)
    changed: list[str] = []
    if path is not None:
        source = f"--prices {path}"
        try:
            # YAML is a superset of JSON; the stack file's reader and limits (size before reading, duplicate keys,
            # depth, integer digits).
            data: Any = load_yaml(read_text(path, source, MAX_DOCUMENT_BYTES), source)
        except SpecError as error:
            where = [str(p) if p.path.startswith(source) else f"{source}: {p}" for p in error.problems]
            raise ValueError("; ".join(where)) from None
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
        for table in ("onDemandHourly", "lustreGbMonth"):
            if not isinstance(data.get(table) or {}, dict):
                raise ValueError(f"--prices {path}: {table} must be a mapping of name to price")
        try:
            hourly = {
                **book.on_demand_hourly,
                **{str(k): float(v) for k, v in (data.get("onDemandHourly") or {}).items()},
            }
            lustre = {
                **book.lustre_gb_month,
                **{_lustre_key(k): float(v) for k, v in (data.get("lustreGbMonth") or {}).items()},
            }
            object_storage = float(data.get("s3GbMonth", book.object_gb_month))
            spot = float(data.get("spotDiscount", book.spot_discount))
            block = float(data.get("ebsGp3GbMonth", book.block_gb_month))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"--prices {path}: prices must be numbers ({exc})") from None
        if not all(math.isfinite(v) and v >= 0 for v in (*hourly.values(), *lustre.values(), object_storage, block)):
            raise ValueError(f"--prices {path}: prices must be finite numbers >= 0 (no .nan, .inf or negatives)")
        book = replace(
            book,
            on_demand_hourly=hourly,
            lustre_gb_month=lustre,
            object_gb_month=object_storage,
            spot_discount=spot,
            block_gb_month=block,
            hourly_source={**book.hourly_source, **dict.fromkeys(map(str, data.get("onDemandHourly") or {}), source)},
        )
        changed.append(str(path))
    if spot_discount is not None:
        book = replace(book, spot_discount=spot_discount)
        changed.append("--spot-discount")
    if not 0 <= book.spot_discount < 1:
        raise ValueError(f"spot discount must be in [0, 1), got {book.spot_discount}")
    return replace(book, overridden=tuple(changed))
