"""Which Compute Engine zones offer each accelerator-optimized machine type of the catalog, as data for the neutral
rule that refuses a region (or zone) without it (`accelstack.spec.catalog_rules.region_offers_the_machine_type`).

Source: SkyPilot's public GCP catalog (github.com/skypilot-org/skypilot-catalog, catalogs/v8/gcp/vms.csv at commit
006059e0f18acb1341e22a27751e9f80df6ba92f), which lists the zones Compute Engine's machineTypes.aggregatedList
returns for each type; read 2026-12-05. Google's page "GPU regions and zones availability"
(cloud.google.com/compute/docs/gpus/gpu-regions-zones) is the authority a row is checked against when it changes.

Re-read 2026-12-06 at a second stored version of that file (commit 8427bbff988abdd050a9f51addd314ef31cb4e85): its
a3-highgpu-8g, a3-megagpu-8g, a3-ultragpu-8g and a4-highgpu-8g rows name the same zones as the tables below. Google's
own page was not readable here, so the A3 High/Mega/Ultra and A4 rows are checked against SkyPilot's two readings of
Compute Engine's API, not against Google's page.

The G2 (L4) rows, which the first reading did not reach, are from that second version (read 2026-12-06): every
g2-standard type, 4 to 96 vCPUs, lists the same zones (`_G2_STANDARD`).

A zone newer than this table is refused until its row is added here.
"""

from __future__ import annotations

from collections.abc import Mapping

CHECKED = "2026-12-06"
LEFT_OUT: tuple[str, ...] = ()
SOURCE = (
    "skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv @006059e and @8427bbf (Compute Engine machineTypes by zone)"
)

_A2_HIGHGPU = {
    "asia-northeast1": ("a", "c"),
    "asia-northeast3": ("a", "b"),
    "asia-southeast1": ("a", "b", "c"),
    "europe-west4": ("a", "b"),
    "me-west1": ("a", "c"),
    "us-central1": ("a", "b", "c", "f"),
    "us-east1": ("b",),
    "us-west1": ("b",),
    "us-west3": ("b",),
    "us-west4": ("b",),
}
_A2_MEGAGPU = {"asia-southeast1": ("a", "c"), "europe-west4": ("a", "b"), "us-central1": ("a", "b", "c", "f")}
_A2_ULTRAGPU = {
    "asia-southeast1": ("c",),
    "europe-west4": ("a",),
    "us-central1": ("a", "c"),
    "us-east4": ("c",),
    "us-east5": ("a", "b"),
}
_A3_MEGAGPU = {
    "asia-east1": ("c",),
    "asia-northeast1": ("b",),
    "asia-southeast1": ("b", "c"),
    "australia-southeast1": ("c",),
    "europe-north1": ("c",),
    "europe-west1": ("b", "c"),
    "europe-west3": ("c",),
    "europe-west4": ("b", "c"),
    "us-central1": ("a", "b", "c"),
    "us-east4": ("a", "b", "c"),
    "us-east5": ("a",),
    "us-west1": ("a", "b"),
    "us-west4": ("a",),
}
# A3 High (8 GPUs) is offered wherever A3 Mega is, and in Mumbai, Delhi and Paris besides.
_A3_HIGHGPU = {**_A3_MEGAGPU, "asia-south1": ("c",), "asia-south2": ("b",), "europe-west9": ("c",)}
_A3_ULTRAGPU = {
    "asia-south1": ("b",),
    "asia-south2": ("c",),
    "europe-west1": ("b",),
    "europe-west4": ("a",),
    "us-central1": ("b",),
    "us-east4": ("b",),
    "us-east5": ("a",),
    "us-south1": ("b",),
    "us-west1": ("c",),
}
_A4_HIGHGPU = {
    "asia-northeast1": ("b",),
    "asia-southeast1": ("b",),
    "europe-north1": ("b",),
    "europe-west4": ("b",),
    "us-central1": ("b",),
    "us-east1": ("b",),
    "us-east4": ("b",),
    "us-south1": ("b",),
    "us-west2": ("c",),
    "us-west3": ("b", "c"),
}

# g2-standard-4/8/12/16/24/32/48/96 (catalogs/v8/gcp/vms.csv @8427bbf): one zone list for all eight.
_G2_STANDARD = {
    "asia-east1": ("a", "b", "c"),
    "asia-northeast1": ("a", "b", "c"),
    "asia-northeast3": ("a", "b"),
    "asia-south1": ("a", "b", "c"),
    "asia-southeast1": ("a", "b", "c"),
    "europe-west1": ("b", "c"),
    "europe-west2": ("a", "b"),
    "europe-west3": ("a", "b"),
    "europe-west4": ("a", "b", "c"),
    "europe-west6": ("b", "c"),
    "me-central2": ("a", "c"),
    "northamerica-northeast1": ("b",),
    "northamerica-northeast2": ("a", "b"),
    "us-central1": ("a", "b", "c"),
    "us-east1": ("b", "c", "d"),
    "us-east4": ("a", "c"),
    "us-west1": ("a", "b", "c"),
    "us-west4": ("a", "c"),
}


def _zones(letters_by_region: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    return {region: tuple(f"{region}-{letter}" for letter in letters) for region, letters in letters_by_region.items()}


ZONES_BY_MACHINE_TYPE: dict[str, dict[str, tuple[str, ...]]] = {
    **{f"a2-highgpu-{n}g": _zones(_A2_HIGHGPU) for n in (1, 2, 4, 8)},
    "a2-megagpu-16g": _zones(_A2_MEGAGPU),
    **{f"a2-ultragpu-{n}g": _zones(_A2_ULTRAGPU) for n in (1, 2, 4, 8)},
    "a3-highgpu-8g": _zones(_A3_HIGHGPU),
    "a3-megagpu-8g": _zones(_A3_MEGAGPU),
    "a3-ultragpu-8g": _zones(_A3_ULTRAGPU),
    "a4-highgpu-8g": _zones(_A4_HIGHGPU),
    **{f"g2-standard-{vcpus}": _zones(_G2_STANDARD) for vcpus in (4, 8, 12, 16, 24, 32, 48, 96)},
}
