"""OCI training rules: what the Compute, Object Storage and File Storage with Lustre APIs would reject at create
time, or what the training components cannot build, checked at the config path before anything exists. They run for
oci stacks only (the OCI registration names this module in `Cloud.rules`); the tables are in `catalog`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from accelstack.clouds.oci import catalog as tables
from accelstack.clouds.oci.names import BUCKET_NAME
from accelstack.spec.models import StackSpec, TrainingStack
from accelstack.spec.problems import Problem
from accelstack.spec.uris import object_uris, split_bucket_uri
from accelstack.spec.validators import rule

# ocid1.<type>.<realm>.[region].<unique id> (docs.oracle.com/iaas/Content/General/Concepts/identifiers.htm).
CAPACITY_RESERVATION_OCID = r"ocid1\.capacityreservation\.oc[0-9]+\.(?P<region>[a-z0-9-]*)\.[a-z0-9]+"
# A custom or platform image: its OCID carries the region it lives in (the nodes' own region).
IMAGE_OCID = re.compile(r"ocid1\.image\.(?P<realm>oc[0-9]+)\.(?P<region>[a-z0-9-]*)\.[a-z0-9]+")
# A region has one or three availability domains (regions.htm).
AVAILABILITY_DOMAIN_NUMBERS = ("1", "2", "3")


@rule
def oci_object_uris(spec: StackSpec) -> Iterator[Problem]:
    """Object URIs name a bucket of the tenancy's Object Storage namespace: oci://<bucket>[/prefix]; bucket names
    are 1-256 letters, digits, '-', '_' and '.' (managingbuckets.htm). The namespace is the tenancy's own (the
    stack reads it with GetNamespace), so a URI never carries one."""
    for path, uri in object_uris(spec):
        if not uri.startswith("oci://"):
            continue  # another scheme: the neutral scheme rule reports it
        bucket, _ = split_bucket_uri(uri)
        if not re.fullmatch(BUCKET_NAME, bucket):
            yield Problem(
                path,
                f"bucket {bucket!r} is not an Object Storage bucket name: 1 to 256 letters, digits, '-', '_' and "
                "'.' (the namespace is the tenancy's, never in the URI); expected oci://<bucket>[/prefix]",
            )


@rule(workload="training")
def oci_capacity_reservation(spec: TrainingStack) -> Iterator[Problem]:
    """A capacity reservation is named by its OCID (ComputeCapacityReservation); the instance configuration's
    launch details take `capacity_reservation_id`, which the API checks for that form."""
    reservation = spec.training.nodes.reservation_id
    if reservation is None:
        return
    match = re.fullmatch(CAPACITY_RESERVATION_OCID, reservation)
    if match is None:
        yield Problem(
            "training.nodes.reservationId",
            f"{reservation!r} is not a compute capacity reservation OCID "
            "(ocid1.capacityreservation.oc1.<region>.<unique id>)",
        )
        return
    yield from _in_the_stacks_region("training.nodes.reservationId", "a capacity reservation", match["region"], spec)


def _in_the_stacks_region(path: str, what: str, ocid_region: str, spec: TrainingStack) -> Iterator[Problem]:
    """A regional OCID's region part (empty, the region's key or its identifier) names the region the resource lives
    in; the launch in another region finds no such resource (identifiers.htm: the region part of a regional OCID)."""
    region = spec.account.region
    key = tables.REGION_KEYS.get(region)
    if ocid_region and ocid_region not in (region, key):
        allowed = " or ".join(repr(name) for name in (key, region) if name)
        yield Problem(
            path,
            f"the OCID names region {ocid_region!r}, the stack deploys to {region}: {what} is used only in its own "
            f"region; allowed: an OCID whose region part is {allowed}",
        )


@rule(workload="training")
def oci_availability_domain(spec: TrainingStack) -> Iterator[Problem]:
    """A cluster network places its one instance pool in one availability domain. The Identity API names them per
    tenancy ("Uocm:US-ASHBURN-AD-1"), so a stack names the domain by its number in the region (1, 2 or 3; most
    regions have one); omitted, the stack takes the first. The stack reads the tenancy's name for it at deploy."""
    domain = spec.training.network.availability_zone
    if domain is not None and domain not in AVAILABILITY_DOMAIN_NUMBERS:
        yield Problem(
            "training.network.availabilityZone",
            f"{domain!r} is not an OCI availability domain number; allowed: "
            f"{', '.join(AVAILABILITY_DOMAIN_NUMBERS)} (AD-1..AD-3 of the region, "
            "`oci iam availability-domain list`)",
        )
        return
    count = tables.AVAILABILITY_DOMAINS.get(spec.account.region)
    if domain is not None and count is not None and int(domain) > count:
        # The launch would find no such domain (quotas.domain_name stops the preview): said here, at its key.
        allowed = ", ".join(str(n) for n in range(1, count + 1))
        yield Problem(
            "training.network.availabilityZone",
            f"{spec.account.region} has {count} availability domain{'s' if count > 1 else ''}; allowed: {allowed}",
        )


@rule(workload="training")
def oci_head_shape(spec: TrainingStack) -> Iterator[Problem]:
    """The Slurm head is a flexible VM whose OCPUs and memory the stack sets (shape_config); only the shapes the
    catalog sizes are built."""
    if spec.training.scheduler.kind != "slurm":
        return
    shape = spec.training.scheduler.head_node.instance_type
    if shape not in tables.HEAD_SHAPES:
        yield Problem(
            "training.scheduler.headNode.instanceType",
            f"{shape!r} is not a head shape accelstack sizes on OCI; allowed: {', '.join(tables.HEAD_SHAPES)}",
        )


@rule(workload="training")
def oci_node_image(spec: TrainingStack) -> Iterator[Problem]:
    """A stated node image is an image OCID of the account's realm (the instance configuration's
    launch_details.source_details.image_id; CreateInstanceConfiguration takes nothing else there), of the account's
    realm and, where the OCID names a region, of the stack's region (its key, iad, or its identifier): a custom image
    is regional and launches only where it lives (export and import it to copy it)."""
    image = spec.training.nodes.image_id
    if image is None:
        return
    match = IMAGE_OCID.fullmatch(image)
    if match is None:
        yield Problem(
            "training.nodes.imageId",
            f"{image!r} is not an image OCID (ocid1.image.oc1.<region>.<unique id>, the OCID of a custom image "
            "built or imported from oracle-quickstart/oci-hpc-images); omit imageId to boot the stack's own",
        )
        return
    realm = re.match(r"ocid1\.[a-z0-9]+\.(oc[0-9]+)\.", str(getattr(spec.account, "compartment_ocid", "")))
    if realm is not None and realm.group(1) != match["realm"]:
        yield Problem(
            "training.nodes.imageId",
            f"{image!r} is in realm {match['realm']}, the account in {realm.group(1)}: an image launches only in "
            "its own realm",
        )
        return
    yield from _in_the_stacks_region("training.nodes.imageId", "a custom image", match["region"], spec)
