"""The image the OCI GPU nodes boot: the OCI HPC team's build for the shape's GPU vendor, imported into the stack's
compartment from the URL oci-hpc publishes, made compatible with the shape before the pool launches from it, and left
alone by later `up`s (components/oci/images.py)."""

from __future__ import annotations

import pytest

from accelstack.clouds.oci import catalog
from accelstack.components.oci import images
from accelstack.engine.capture import Capture, Registration
from accelstack.spec.loader import SpecError, apply_overrides, parse_spec, read_stack_file
from tests.components.oci.test_oci_training import COMPARTMENT, one, run, spec_errors
from tests.stack_edits import STACKS, deployed, replacements, updated

IMAGE = "oci:Core/image:Image"
SHAPE_ENTRY = "oci:Core/shapeManagement:ShapeManagement"
CONFIGURATION = "oci:Core/instanceConfiguration:InstanceConfiguration"
# What each vendor's build must carry, as the HPC team names its builds (<base>-<kernel>-<OFED>-<GPU stack>-<date>).
DRIVER_IN_NAME = {"nvidia": "-GPU-580-OPEN-CUDA-13.0-", "amd": "-AMD-ROCM-643-"}
PUBLISHED_AT = "https://objectstorage.ca-montreal-1.oraclecloud.com/p/"


def node_image(cap: Capture) -> Registration:
    return one(cap, IMAGE)


@pytest.mark.parametrize("shape", sorted(catalog.ACCELERATED_INSTANCES))
def test_each_gpu_shape_boots_its_vendors_build_imported_from_the_published_url(shape: str) -> None:
    cap = run(f"training.nodes.instanceType={shape}")
    image = node_image(cap)
    source = image.inputs["imageSourceDetails"]
    vendor = catalog.ACCELERATED_INSTANCES[shape].vendor
    assert source["sourceType"] == "objectStorageUri"
    assert source["sourceUri"].startswith(PUBLISHED_AT)
    # The object is the build, and the image is named after it.
    assert source["sourceUri"].endswith("/o/" + image.inputs["displayName"])
    assert DRIVER_IN_NAME[vendor] in image.inputs["displayName"]
    assert image.inputs["displayName"].startswith("Canonical-Ubuntu-24.04-")
    assert (source["operatingSystem"], source["operatingSystemVersion"]) == ("Canonical Ubuntu", "24.04")
    assert image.inputs["compartmentId"] == COMPARTMENT
    # OCI-format exports carry their launch options: no QCOW2/VMDK type, no launch mode.
    assert "sourceImageType" not in source and "launchMode" not in image.inputs

    entry = one(cap, SHAPE_ENTRY)
    assert entry.inputs == {"compartmentId": COMPARTMENT, "imageId": image.id, "shapeName": shape}
    configuration = one(cap, CONFIGURATION)
    launch = configuration.inputs["instanceDetails"]["launchDetails"]
    assert launch["sourceDetails"]["imageId"] == image.id
    # The pool launches only once the image is imported and lists the shape.
    assert {image.urn, entry.urn} <= set(configuration.dependencies)


@pytest.mark.parametrize("shape", sorted(catalog.ACCELERATED_INSTANCES))
def test_each_gpu_shape_boots_a_build_oci_hpc_lists_for_its_gpu(shape: str) -> None:
    """oci-hpc's Prerequisites.md names the GPUs each build is for: a shape whose GPU its vendor's build does not
    list (an Arm GB200, an MI355X with Pollara NICs) would boot an image built for other hardware."""
    machine = catalog.ACCELERATED_INSTANCES[shape]
    build = images.BUILDS[machine.vendor]
    assert machine.accelerator in build.gpus, (shape, machine.accelerator, build.name, build.gpus)


def test_no_other_resource_boots_the_gpu_build() -> None:
    """The head (no GPU, a VM shape) keeps the platform image: the HPC build is only in the nodes' launch."""
    cap = run()
    image_id = node_image(cap).id
    head = one(cap, "oci:Core/instance:Instance", "-head")
    assert head.inputs["sourceDetails"]["sourceId"] != image_id


@pytest.mark.parametrize(
    "edit",
    [("training.nodes.count=4",), ("training.scheduler.partitions.0.maxTime=14-00:00:00",)],
    ids=["node count", "partition edited"],
)
def test_a_day_two_edit_neither_reimports_nor_relaunches_from_another_image(edit: tuple[str, ...]) -> None:
    """The build is pinned: the image and its shape entry are not replaced, and the launch details name the same
    image (a configuration the edit rebuilds for its own reasons, the user data, still launches from it)."""
    before = deployed("oci-training")[0]
    replaced = replacements("oci-training", edit)
    assert not [line for line in replaced if line.startswith((IMAGE, SHAPE_ENTRY))], replaced
    after = updated("oci-training", edit)
    assert (node_image(after).urn, node_image(after).inputs) == (node_image(before).urn, node_image(before).inputs)
    launch = [one(cap, CONFIGURATION).inputs["instanceDetails"]["launchDetails"] for cap in (before, after)]
    assert launch[0]["sourceDetails"] == launch[1]["sourceDetails"]


USERS_IMAGE = "ocid1.image.oc1.iad.aaaaaaaausersownhpcbuild"


def test_a_stated_image_is_launched_as_it_is_without_an_import_or_a_shape_entry() -> None:
    cap = run(f"training.nodes.imageId={USERS_IMAGE}")
    assert cap.by_type(IMAGE) == [] and cap.by_type(SHAPE_ENTRY) == []
    launch = one(cap, CONFIGURATION).inputs["instanceDetails"]["launchDetails"]
    assert launch["sourceDetails"]["imageId"] == USERS_IMAGE


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("ami-0123456789abcdef0", "is not an image OCID"),
        ("ocid1.instance.oc1.iad.aaaaaaaaexample", "is not an image OCID"),
        ("ocid1.image.oc2.us-langley-1.aaaaaaaaexample", "in realm oc2, the account in oc1"),
        # A custom image is regional: one in Phoenix (phx) does not launch in the stack's us-ashburn-1.
        ("ocid1.image.oc1.phx.aaaaaaaaexample", "names region 'phx', the stack deploys to us-ashburn-1"),
        ("ocid1.image.oc1.eu-frankfurt-1.aaaaaaaaexample", "allowed: an OCID whose region part is 'iad' or"),
    ],
)
def test_validate_refuses_what_is_not_an_image_of_the_accounts_realm(value: str, words: str) -> None:
    message = spec_errors(f"training.nodes.imageId={value}")
    assert "training.nodes.imageId" in message and words in message, message


@pytest.mark.parametrize(
    "value",
    [
        "ocid1.image.oc1.iad.aaaaaaaaexample",  # the region's key
        "ocid1.image.oc1.us-ashburn-1.aaaaaaaaexample",  # its identifier
        "ocid1.image.oc1..aaaaaaaaexample",  # no region part
    ],
)
def test_an_image_of_the_stacks_own_region_validates(value: str) -> None:
    raw = apply_overrides(read_stack_file(STACKS / "Pulumi.oci-training.yaml"), [f"training.nodes.imageId={value}"])
    assert parse_spec(raw, "oci-training").training.nodes.image_id == value


def test_every_catalog_region_has_its_key() -> None:
    """The region rule reads each region's key: a region added without one would accept another region's OCIDs."""
    assert set(catalog.REGION_KEYS) == set(catalog.REGIONS)
    assert all(len(key) == 3 and key.isalpha() and key.islower() for key in catalog.REGION_KEYS.values())
    assert len(set(catalog.REGION_KEYS.values())) == len(catalog.REGION_KEYS)


def test_a_cloud_choosing_its_own_node_image_refuses_one() -> None:
    raw = apply_overrides(read_stack_file(STACKS / "Pulumi.aws-training.yaml"), ["training.nodes.imageId=ami-0abc"])
    with pytest.raises(SpecError) as caught:
        parse_spec(raw, "aws-training")
    assert "training.nodes.imageId" in str(caught.value) and "remove imageId" in str(caught.value)
