"""File Storage with Lustre as the neutral `training.storage.lustre` keys see it: the spec states GiB, OCI sells GB.

Each OCI step (31,200 GB, +10,400 GB up to 124,800 GB, then +41,600 GB) is accepted as the whole GiB it holds
(31,200 GB = 29,057 GiB and a third): the stack then provisions exactly that step (`catalog.gb_for_gib`), so the
conversion is exact both ways and nothing is rounded silently. A size between steps is refused, naming the steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelstack.clouds.base import DatasetImport, ParallelFsTier, PlannedProperty
from accelstack.clouds.oci.catalog import (
    LUSTRE_COARSE_STEP_GB,
    LUSTRE_FINE_MAX_GB,
    LUSTRE_FINE_STEP_GB,
    LUSTRE_MIN_GB,
    LUSTRE_STEPS_GB,
    LUSTRE_STEPS_GIB,
    LUSTRE_TIER_MBPS_PER_TB,
    gb_for_gib,
    gib_of_gb,
    lustre_tier_name,
    mbps_per_tib,
)

LUSTRE_TYPE = "oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem"


@dataclass(frozen=True)
class OciLustreTier(ParallelFsTier):
    """One performance tier: the capacity is one of OCI's steps, in whole GiB."""

    def capacity_allowed(self, gib: int) -> bool:
        return gib in self.first_steps_gib

    def capacity_rule(self) -> str:
        first, top = LUSTRE_STEPS_GIB[0], LUSTRE_STEPS_GIB[-1]
        return (
            f"one of OCI's steps in whole GiB: {LUSTRE_MIN_GB} GB ({first} GiB), then +{LUSTRE_FINE_STEP_GB} GB "
            f"({self.increment_gib} GiB more each) up to {LUSTRE_FINE_MAX_GB} GB ({gib_of_gb(LUSTRE_FINE_MAX_GB)} "
            f"GiB), then +{LUSTRE_COARSE_STEP_GB} GB up to {LUSTRE_STEPS_GB[-1]} GB ({top} GiB): "
            f"{', '.join(str(step) for step in LUSTRE_STEPS_GIB[:6])}, ..."
        )


def lustre_tiers() -> dict[str, ParallelFsTier]:
    """The four performance tiers (MB/s per TB of capacity, fixed per tier: it cannot change after creation)."""
    return {
        lustre_tier_name(tier): OciLustreTier(
            name=lustre_tier_name(tier),
            throughput_per_tib=(),  # the tier fixes it
            baseline_throughput_per_tib=mbps_per_tib(tier),
            min_gib=LUSTRE_STEPS_GIB[0],
            increment_gib=gib_of_gb(LUSTRE_FINE_STEP_GB),
            first_steps_gib=LUSTRE_STEPS_GIB,
            max_gib=LUSTRE_STEPS_GIB[-1],
            # FileStorageObjectStorageLink: import from and export to one bucket prefix, each run when its
            # integer trigger is incremented.
            imports_from_object_store=True,
            dataset_import=DatasetImport.ON_REQUEST,
            # The link exports to the bucket it imports from only; checkpoints have their own bucket, so the Slurm
            # head copies them there (never deleting).
            exports_to_object_store=False,
            checkpoints_copied_by_head=True,
            persistent=True,
            service="OCI File Storage with Lustre",
            capacity_property=PlannedProperty(
                LUSTRE_TYPE,
                "-lustre",
                "capacityInGbs",
                scale=1.073741824,
                unit="GB",
                convert=lambda gib: float(gb_for_gib(int(gib))),  # the exact step, as components/oci/storage.py sends
            ),
        )
        for tier in LUSTRE_TIER_MBPS_PER_TB
    }
