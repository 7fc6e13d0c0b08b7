"""Amazon Web Services, as accelstack describes it: catalog, prices, limits and features (no Pulumi).

The Pulumi half is `accelstack.components.aws`; the spec rules are `rules` and `serving_rules` here.
"""

from __future__ import annotations

from accelstack.clouds.aws import catalog, prices
from accelstack.clouds.base import Catalog, Cloud, Feature, ParallelFsTier, Prices

CATALOG = Catalog(
    cloud="aws",
    checked=catalog.CHECKED,
    sources=(
        "Amazon EC2 instance types: Accelerated computing specifications",
        "Elastic Fabric Adapter user guide: supported instance types, multiple network cards",
        "EC2 Capacity Blocks for ML: supported instance types",
        "FSx API Reference CreateFileSystem: StorageCapacity, PerUnitStorageThroughput",
        "AWS General Reference: AWS Regions",
    ),
    instances=catalog.ACCELERATED_INSTANCES,
    regions=tuple(catalog.REGIONS),
    parallel_fs={
        name: ParallelFsTier(
            name=name,
            throughput_per_tib=kind.throughput_tiers,
            min_gib=kind.first_steps_gib[0],
            increment_gib=kind.increment_gib,
            first_steps_gib=kind.first_steps_gib,
            imports_from_object_store=kind.data_repository_associations or kind.legacy_import_path,
            exports_to_object_store=kind.data_repository_associations,
            persistent=kind.persistent,
        )
        for name, kind in catalog.LUSTRE_DEPLOYMENT_TYPES.items()
    },
    default_parallel_fs="PERSISTENT_2",
)

PRICES = Prices(
    checked=prices.CHECKED,
    region=prices.REGION,
    source="accelstack.clouds.aws.prices (AWS price pages, see its docstring)",
    on_demand_hourly=prices.ON_DEMAND_HOURLY,
    spot_discount=prices.DEFAULT_SPOT_DISCOUNT,
    parallel_fs_gb_month={
        f"{kind}/{tier}" if tier else kind: price for (kind, tier), price in prices.LUSTRE_GB_MONTH.items()
    },
    object_gb_month=prices.S3_STANDARD_GB_MONTH,
    block_gb_month=prices.EBS_GP3_GB_MONTH,
    not_priced=prices.NOT_PRICED,
    extra={
        "load_balancer_hourly": prices.ALB_HOURLY,
        "load_balancer_capacity_unit_hourly": prices.ALB_LCU_HOURLY,
        "queue_per_million_requests": prices.SQS_PER_MILLION_REQUESTS,
    },
)

AWS = Cloud(
    name="aws",
    title="Amazon Web Services",
    account_kind="account",
    pulumi_packages=frozenset({"aws", "random"}),
    features=frozenset(Feature),  # the reference cloud: every feature accelstack defines
    catalog=CATALOG,
    prices=PRICES,
    limits={
        "capacity_block_max_instances": catalog.CAPACITY_BLOCK_MAX_INSTANCES,
        "lustre_default_quota_gib": catalog.LUSTRE_DEFAULT_QUOTA_GIB,
    },
    components="accelstack.components.aws",
    provider_region_key="aws:region",
    # The last renders node user data with the components (a spec rule that needs them), imported by name.
    rules=("accelstack.clouds.aws.rules", "accelstack.clouds.aws.serving_rules", "accelstack.components.aws.rules"),
)
