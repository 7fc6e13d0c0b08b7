"""Vultr, as accelstack describes it: Cloud GPU plans, prices, limits and features (no Pulumi).

Deployable: serving (`accelstack.components.vultr`), in the direct topology only: Vultr has no managed queue, no
instance group or autoscaler, no warm pool and no WAF, so the replicas admit requests themselves (bounded queue
with TTL, the per-client rate limit, 429/503 on overload) as a fixed fleet the planner sizes for the peak.
"""

from __future__ import annotations

from accelstack.clouds import time_provider
from accelstack.clouds.base import (
    BootDataLimit,
    Catalog,
    Cloud,
    Feature,
    MachineOffers,
    PlannedProperty,
    Prices,
    RuleTerms,
)
from accelstack.clouds.serving_terms import ServingTerms
from accelstack.clouds.vultr import catalog, prices, replace_rows
from accelstack.planner.scaling_rules import ScalingRules

CATALOG = Catalog(
    cloud="vultr",
    checked=catalog.CHECKED,
    sources=catalog.SOURCES,
    instances=catalog.ACCELERATED_PLANS,
    regions=catalog.REGIONS,
    offers=MachineOffers(
        catalog.CHECKED,
        "Vultr API v2, GET /v2/plans?type=vcg (locations)",
        {plan: {region: () for region in regions} for plan, regions in catalog.PLAN_LOCATIONS.items()},
    ),
    replica_image=f"Ubuntu 22.04 LTS x64 (Vultr os_id {catalog.UBUNTU_2204_OS_ID}; Docker and the NVIDIA container toolkit installed at boot)",
    object_store_service="Vultr Object Storage",
    # Vultr Object Storage is S3-compatible: s3://bucket/prefix, read at the region's cluster endpoint.
    object_uri_schemes=("s3",),
    serving_candidates=tuple(catalog.ACCELERATED_PLANS),
    # The serving plan on Vultr's resources (components/vultr/serving); a number Vultr does not use is None.
    serving_terms=ServingTerms(load_balancer="Vultr Load Balancer"),  # no queue, no warm pool
    serving_properties={
        "healthCheckGrace": None,  # no launch hook and no autohealing: the load balancer only stops sending
        "unhookedGrace": None,
        "warmStart": None,  # no warm pool
        "launchBudget": None,
        "healthCheckInterval": PlannedProperty(
            "vultr:index/loadBalancer:LoadBalancer", "-lb", "healthCheck.checkInterval"
        ),
        "healthCheckTimeout": PlannedProperty(
            "vultr:index/loadBalancer:LoadBalancer", "-lb", "healthCheck.responseTimeout"
        ),
        "drain": None,
        "idleTimeout": None,  # the API's timeout is not an input of this provider version
        "backlogTarget": None,  # a fixed fleet: no autoscaler
        "replicaFullRate": None,
        "lease": None,  # no queue
        "ageAlarm": None,
        "rootVolume": None,  # the plan's local NVMe disk is the root volume: its size is the plan's
    },
)

PRICES = Prices(
    checked=prices.CHECKED,
    region=prices.REGION,
    source="accelstack.clouds.vultr.prices (vultr.com/pricing, see its docstring)",
    on_demand_hourly=prices.ON_DEMAND_HOURLY,
    spot_discount=prices.SPOT_DISCOUNT,
    parallel_fs_gb_month={},
    object_gb_month=prices.OBJECT_GB_MONTH,
    block_gb_month=prices.BLOCK_GB_MONTH,
    block_product="Vultr Block Storage (NVMe)",
    not_priced=prices.NOT_PRICED,
    extra={"load_balancer_hourly": prices.LOAD_BALANCER_HOURLY},
)

QUEUE_INSTEAD = "Vultr has no managed queue: admission.kind replica (the replicas' own bounded queue with TTL)"

VULTR = Cloud(
    name="vultr",
    title="Vultr",
    account_kind="account",
    provider_region_key=None,  # the vultr provider takes no region: every resource names account.region
    pulumi_packages=frozenset({"vultr", "time"}),  # time: the replicas' weights key clocks
    features=frozenset(
        {
            Feature.REPLICA_ADMISSION,  # the load balancer straight to replicas running the admission proxy
        }
    ),
    unsupported={
        Feature.SLURM: "the Vultr components build serving only (no training cluster, so no Slurm)",
        Feature.SLURM_ACCOUNTING: "the Vultr components build serving only (no Slurm, so no Slurm accounting)",
        Feature.MANAGED_SCHEDULER: "Vultr has no managed batch scheduler (and its components build serving only)",
        Feature.RDMA_FABRIC: "Vultr Cloud GPU VMs have no fabric between instances, only the VPC",
        Feature.SPOT: "Vultr sells no interruptible (spot) capacity: capacity on-demand",
        Feature.TIME_BOXED_RESERVATION: "Vultr has no time-boxed GPU reservations in its API",
        Feature.FLEX_START: "Vultr has no queued capacity requests (no flex-start): capacity on-demand",
        Feature.ON_DEMAND_RESERVATION: "Vultr has no capacity reservations in its API",
        Feature.MANAGED_LUSTRE: "Vultr has no managed Lustre (its file storage is NFS-like VFS, not built here)",
        Feature.OBJECT_LINKED_FS: "Vultr has no parallel file system linked to Object Storage",
        Feature.ADMISSION_QUEUE: QUEUE_INSTEAD,
        Feature.WAF_RATE_LIMIT: (
            "the Vultr load balancer has no WAF or per-client rate limit: the replicas' admission proxy enforces "
            "perClientRate (admission.kind replica)"
        ),
        Feature.WARM_POOL: "Vultr has no instance group or stopped-instance pool: warmPool 0 (a fixed fleet)",
        Feature.QUEUE_DEPTH_SCALING: f"no queue and no instance autoscaler on Vultr: scaling fixed ({QUEUE_INSTEAD})",
        Feature.LOAD_BALANCER_SCALING: "Vultr has no instance autoscaler: scaling fixed (the planner sizes the fleet)",
        Feature.CROSS_ACCOUNT_ARTIFACTS: (
            "Vultr has no cross-account grants: the replicas read the weights with a read-only Object Storage key "
            "(docs/deploy-vultr.md)"
        ),
        Feature.OBJECT_STORE_NETWORK_RULES: "Vultr Object Storage has no network rules per bucket",
    },
    catalog=CATALOG,
    prices=PRICES,
    limits={
        "firewall_max_rules": catalog.FIREWALL_MAX_RULES,
        "load_balancer_max_instances": catalog.LOAD_BALANCER_MAX_INSTANCES,
    },
    terms=RuleTerms(
        region="a Vultr region id",
        region_hint="region ids are three lowercase letters such as ewr or fra (vultr-cli regions list)",
        machine_type="Cloud GPU plan",
        fabric="fabric between instances",
        without_fabric="the VPC",
        fabric_machine_type="another cloud (Vultr GPU VMs have none)",
    ),
    components="accelstack.components.vultr",
    workloads=frozenset({"serving"}),
    rules=("accelstack.clouds.vultr.rules", "accelstack.components.vultr.rules"),
    boot_data_limit=BootDataLimit("user data", catalog.USER_DATA_MAX_BYTES, refused_by="Vultr"),
    replace_rules=replace_rows.REPLACE_RULES,
    terraform=(replace_rows.TERRAFORM, time_provider.TERRAFORM),
    # No autoscaler on Vultr: `simulate serving` replays the fixed fleet (the simulator's "fixed" still replaces a
    # failed replica, which on Vultr is the next `pulumi up`, not an instance group).
    default_autoscaler="fixed",
    # No autoscaler and no queue: every Vultr stack deploys the fixed fleet (ScalingRules' rule for scaling: fixed).
    serving_scaling=ScalingRules(),
)
