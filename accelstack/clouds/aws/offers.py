"""Which EC2 Regions offer each accelerated instance type of the catalog, as data for the neutral rule that
refuses a region without it (`accelstack.spec.catalog_rules.region_offers_the_machine_type`).

Source: SkyPilot's public AWS catalog (github.com/skypilot-org/skypilot-catalog, catalogs/v8/aws/vms.csv at commit
00148f2af3672e2229b4f7bf8157d5a3f36e3c35), whose rows are what `aws ec2 describe-instance-type-offerings
--location-type availability-zone-id` returns in each Region it lists; read 2026-12-05, every row of every type
below. Amazon's page "Amazon EC2 instance types by Region" (docs.aws.amazon.com/ec2/latest/instancetypes/
ec2-instance-regions.html) and that call are the authority a row is checked against when it changes.

Region level only: the source names zones by AZ ID (use1-az2), which maps to a different AZ name (us-east-1a) in
every account, so a pinned `training.network.availabilityZone` is not checked here (the components ask EC2 for
the AZs that offer the type at deploy time: aws:ec2/getInstanceTypeOfferings).

The source lists the 24 Regions in `REGIONS_READ` (r5.metal, offered in every commercial Region, has rows in
exactly these); a Region of the catalog outside them (opt-in Regions such as il-central-1 or ap-south-2, China,
GovCloud) is not checked. p5e.48xlarge rows carry no on-demand price (it is sold through Capacity Blocks), but
the Region rows are there and are kept. No type of the catalog is left out.
"""

from __future__ import annotations

CHECKED = "2026-12-05"
SOURCE = "skypilot-org/skypilot-catalog catalogs/v8/aws/vms.csv @00148f2 (EC2 instance type offerings by Region)"
LEFT_OUT: tuple[str, ...] = ()  # every type of the catalog has rows in the source

REGIONS_READ = (
    "af-south-1",
    "ap-east-1",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ca-central-1",
    "eu-central-1",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "me-central-1",
    "me-south-1",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
)

# Every size of G5, G6 and G6e has rows in the same Regions; Inferentia2's smallest size is in Seoul besides.
_G5 = (
    "ap-east-1",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-south-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ca-central-1",
    "eu-central-1",
    "eu-north-1",
    "eu-west-1",
    "eu-west-2",
    "me-central-1",
    "us-east-1",
    "us-east-2",
    "us-west-2",
)
_G6 = (
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-south-1",
    "ap-southeast-2",
    "ca-central-1",
    "eu-central-1",
    "eu-north-1",
    "eu-south-2",
    "eu-west-2",
    "eu-west-3",
    "me-central-1",
    "us-east-1",
    "us-east-2",
    "us-west-2",
)
_G6E = (
    "ap-northeast-1",
    "ap-northeast-2",
    "eu-central-1",
    "eu-north-1",
    "eu-south-2",
    "us-east-1",
    "us-east-2",
    "us-west-2",
)
_INF2 = (
    "ap-northeast-1",
    "ap-south-1",
    "ap-southeast-1",
    "ap-southeast-2",
    "eu-central-1",
    "eu-north-1",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "us-east-1",
    "us-east-2",
    "us-west-2",
)
_P4D = (
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-south-1",
    "ap-southeast-2",
    "ca-central-1",
    "eu-central-1",
    "eu-north-1",
    "eu-west-1",
    "eu-west-2",
    "us-east-1",
    "us-east-2",
    "us-west-2",
)
_P5 = (
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-south-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ca-central-1",
    "eu-north-1",
    "eu-west-2",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
)
_P5EN = (
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-south-1",
    "ap-southeast-3",
    "eu-north-1",
    "eu-south-2",
    "me-central-1",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
)
_US_TRAINIUM = ("us-east-1", "us-east-2", "us-west-2")

_SIZES = ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")

REGIONS_BY_INSTANCE_TYPE: dict[str, tuple[str, ...]] = {
    **{f"g5.{size}": _G5 for size in _SIZES},
    **{f"g6.{size}": _G6 for size in _SIZES},
    **{f"g6e.{size}": _G6E for size in _SIZES},
    "inf2.xlarge": (*_INF2, "ap-northeast-2"),
    **{f"inf2.{size}": _INF2 for size in ("8xlarge", "24xlarge", "48xlarge")},
    "p4d.24xlarge": _P4D,
    "p4de.24xlarge": ("ap-northeast-1", "ap-southeast-1", "eu-central-1", "us-east-1", "us-west-2"),
    "p5.48xlarge": _P5,
    # Not us-east-1: the source has no row for it there.
    "p5e.48xlarge": ("ap-southeast-2", "ap-southeast-3", "eu-north-1", "eu-west-2", "us-east-2", "us-west-2"),
    "p5en.48xlarge": _P5EN,
    "p6-b200.48xlarge": ("us-east-1", "us-east-2", "us-west-2"),
    "trn1.2xlarge": _US_TRAINIUM,
    "trn1.32xlarge": ("ap-south-1", "ap-southeast-2", "ap-southeast-4", *_US_TRAINIUM),
    "trn1n.32xlarge": _US_TRAINIUM,
}

# The rule's shape: machine type -> Region -> zones; empty zones: the Region is checked, its zones are not.
ZONES_BY_INSTANCE_TYPE: dict[str, dict[str, tuple[str, ...]]] = {
    name: {region: () for region in regions} for name, regions in REGIONS_BY_INSTANCE_TYPE.items()
}
