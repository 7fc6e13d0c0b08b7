"""The images the nodes boot: the newest Canonical Ubuntu 24.04 platform image OCI lists as compatible with the shape
(`core.get_images(shape=...)` returns only images the shape can boot), so a bare-metal GPU shape never gets an image
it refuses at launch. Ubuntu because the Slurm generator installs Ubuntu's archive packages (noble: Slurm 23.11).
"""

from __future__ import annotations

import pulumi
import pulumi_oci as oci

OPERATING_SYSTEM = "Canonical Ubuntu"
OPERATING_SYSTEM_VERSION = "24.04"


def image_for_shape(compartment_id: str, shape: str, opts: pulumi.InvokeOptions) -> pulumi.Output[str]:
    """The OCID of the newest Ubuntu 24.04 image compatible with `shape` (created-time descending, first)."""
    images = oci.core.get_images_output(
        compartment_id=compartment_id,
        operating_system=OPERATING_SYSTEM,
        operating_system_version=OPERATING_SYSTEM_VERSION,
        shape=shape,
        sort_by="TIMECREATED",
        sort_order="DESC",
        opts=opts,
    )

    def first(found: list[oci.core.outputs.GetImagesImageResult]) -> str:
        if not found:
            raise ValueError(f"no {OPERATING_SYSTEM} {OPERATING_SYSTEM_VERSION} image is compatible with {shape}")
        return found[0].id

    return images.images.apply(first)
