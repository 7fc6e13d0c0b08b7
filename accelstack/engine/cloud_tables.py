"""The engine's per-provider tables: the union of what the registered clouds declare (`Cloud.replace_rules`,
`Cloud.terraform`), so the engine names no cloud and a plug-in's rows count without an edit here.

A preview or a diff may hold resources of any registered cloud's packages, so the tables are global. Two
clouds may declare the same row (every cloud that pins pulumi-random declares its rows), never two different
rows for one key: that is refused (`TableConflictError`) rather than merged, since either answer could be wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from accelstack.clouds import registry
from accelstack.clouds.base import Cloud, ReplaceRules

Row = TypeVar("Row")

# Tags and tags_all are maps in every Terraform provider that has them.
MAP_ATTRIBUTES_EVERYWHERE = frozenset({"tags", "tags_all"})


class TableConflictError(ValueError):
    """Two registered clouds declare different rows for one key of a global table."""


@dataclass(frozen=True)
class TerraformTables:
    """Every registered cloud's `TerraformProvider` rows, merged."""

    addresses: Mapping[str, str] = field(default_factory=dict)  # Pulumi package -> Terraform provider address
    types: Mapping[str, str] = field(default_factory=dict)  # Pulumi type token -> Terraform resource type
    block_renames: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # by Terraform type
    map_attributes: Mapping[str, frozenset[str]] = field(default_factory=dict)  # by Terraform type
    map_forms: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # by Terraform type

    def maps_of(self, tf_type: str) -> frozenset[str]:
        """The attributes of `tf_type` that are Terraform maps."""
        return MAP_ATTRIBUTES_EVERYWHERE | self.map_attributes.get(tf_type, frozenset())


@dataclass(frozen=True)
class EngineTables:
    replace: ReplaceRules
    terraform: TerraformTables


def union(table: str, declared: Iterable[tuple[str, Mapping[str, Row]]]) -> dict[str, Row]:
    """The rows of `table` that each cloud (by name) declares, merged; a key two clouds declare differently
    raises TableConflictError naming both."""
    merged: dict[str, Row] = {}
    declared_by: dict[str, str] = {}
    for cloud, rows in declared:
        for key, row in rows.items():
            if key in merged and merged[key] != row:
                raise TableConflictError(
                    f"{table} {key!r}: clouds {declared_by[key]!r} and {cloud!r} declare different rows "
                    f"({merged[key]!r} and {row!r}); one type token has one provider, so one of them is wrong"
                )
            merged.setdefault(key, row)
            declared_by.setdefault(key, cloud)
    return merged


def merge(clouds: Iterable[Cloud]) -> EngineTables:
    """The engine's tables of `clouds` (in name order, as the registry lists them)."""
    clouds = list(clouds)
    rules = [(c.name, c.replace_rules) for c in clouds]
    providers = [(c.name, p) for c in clouds for p in c.terraform]
    replace = ReplaceRules(
        forcing=union("replace-forcing", ((n, r.forcing) for n, r in rules)),
        shrink=union("shrink-replaces", ((n, r.shrink) for n, r in rules)),
        forcing_when=union("replace-forcing-when", ((n, r.forcing_when) for n, r in rules)),
        auto_name=union("auto-name", ((n, r.auto_name) for n, r in rules)),
        tag_properties=frozenset().union(*(r.tag_properties for _, r in rules)),
    )
    terraform = TerraformTables(
        addresses=union("Terraform provider", ((n, {p.package: p.address}) for n, p in providers)),
        types=union("Terraform type", ((n, p.types) for n, p in providers)),
        block_renames=union("Terraform block renames", ((n, p.block_renames) for n, p in providers)),
        map_attributes=union("Terraform map attributes", ((n, p.map_attributes) for n, p in providers)),
        map_forms=union("Terraform map forms", ((n, p.map_forms) for n, p in providers)),
    )
    return EngineTables(replace, terraform)


_merged: tuple[tuple[Cloud, ...], EngineTables] | None = None


def _same(these: tuple[Cloud, ...], those: tuple[Cloud, ...]) -> bool:
    return len(these) == len(those) and all(a is b for a, b in zip(these, those, strict=True))


def tables() -> EngineTables:
    """The tables of the clouds registered now (merged again only when the registered clouds change: a
    preview asks once per resource)."""
    global _merged
    clouds = tuple(registry.clouds().values())
    if _merged is None or not _same(_merged[0], clouds):
        _merged = (clouds, merge(clouds))
    return _merged[1]


def replace_rules() -> ReplaceRules:
    return tables().replace


def terraform_tables() -> TerraformTables:
    return tables().terraform
