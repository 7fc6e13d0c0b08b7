"""Google Cloud, as accelstack describes it: catalog, prices, limits and features (no Pulumi).

Deployable: training and serving (`accelstack.components.gcp`).
"""

from __future__ import annotations

from accelstack.clouds.base import (
    AdmissionLimits,
    BootDataLimit,
    Catalog,
    Cloud,
    DatasetImport,
    Feature,
    MachineOffers,
    ManagedDatabasePrice,
    ManagedScheduler,
    ParallelFsTier,
    PlannedProperty,
    Prices,
    RuleTerms,
)
from accelstack.clouds.gcp import accounting_database as slurmdbd
from accelstack.clouds.gcp import (
    catalog,
    offers,
    prices,
    quotas,
    replace_rows,
    services,
    serving_scaling,
    terraform_types,
)
from accelstack.clouds.serving_terms import ServingTerms

CATALOG = Catalog(
    cloud="gcp",
    # Pub/Sub: a subscription retains unacked messages at most 7 days (a TTL under its 10-minute minimum is the
    # replica worker's to enforce) and dead-letter policies take 5..100 delivery attempts; Cloud Armor throttle
    # rules (accelstack keeps the windows the other clouds share).
    admission=AdmissionLimits(
        queue_service="Pub/Sub",
        ttl_seconds=(60, 604_800),
        max_receive_count=(5, 100),
        rate_service="Cloud Armor",
        per_client_rate=(10, 2_000_000_000),
        rate_windows=(60, 120, 300, 600),
        # Pub/Sub's own default and least: DeadLetterPolicy maxDeliveryAttempts "If this parameter is 0, a default
        # value of 5 is used", 5..100 (pulumi_gcp pubsub/_inputs.py, SubscriptionDeadLetterPolicyArgs).
        default_max_receive_count=5,
    ),
    checked=catalog.CHECKED,
    sources=catalog.SOURCES,
    instances=catalog.ACCELERATED_INSTANCES,
    regions=catalog.REGIONS,
    offers=MachineOffers(offers.CHECKED, offers.SOURCE, offers.ZONES_BY_MACHINE_TYPE),
    replica_image="Google's Deep Learning VM image (a pinned Ubuntu 22.04 release, components/gcp/images.py: NVIDIA driver, Docker)",
    default_head_node="n2-standard-8",  # 8 vCPUs, 32 GB, as AWS's m7i.2xlarge; also a valid Cluster Director login node (n2-standard-2..32)
    parallel_fs_service="Managed Lustre",
    object_store_service="Cloud Storage",
    object_uri_schemes=("gs",),  # Cloud Storage URIs: gs://bucket/object (gcloud storage, Managed Lustre import)
    parallel_fs={
        name: ParallelFsTier(
            name=name,
            # The tier is the throughput (per_unit_storage_throughput); it cannot change after creation.
            throughput_per_tib=(tier.throughput_mbps_per_tib,),
            min_gib=tier.min_gib,
            increment_gib=tier.step_gib,
            max_gib=tier.fine_max_gib,
            # importData / exportData between the instance and a Cloud Storage bucket (no Pulumi field:
            # the stack calls the API).
            imports_from_object_store=True,
            # importData runs once per call: at creation and when the stack's import trigger changes.
            dataset_import=DatasetImport.ON_REQUEST,
            exports_to_object_store=True,
            # exportData runs once per call: the Slurm head copies checkpoints to their bucket on a timer.
            checkpoints_copied_by_head=True,
            persistent=True,
            capacity_property=PlannedProperty("gcp:lustre/instance:Instance", "-lustre", "capacityGib"),
            throughput_property=PlannedProperty("gcp:lustre/instance:Instance", "-lustre", "perUnitStorageThroughput"),
        )
        for name, tier in catalog.LUSTRE_TIERS.items()
    }
    | {
        # Filestore zonal for small clusters: NFS, no link to Cloud Storage (the Slurm head or Cluster Director's
        # login node stages the dataset in and copies checkpoints out); performance fixed per TiB.
        name: ParallelFsTier(
            name=name,
            throughput_per_tib=(),
            min_gib=tier.min_gib,
            increment_gib=tier.step_gib,
            max_gib=tier.max_gib,
            imports_from_object_store=False,
            dataset_import=DatasetImport.HEAD_COPIES,
            exports_to_object_store=False,
            checkpoints_copied_by_head=True,
            persistent=True,
            baseline_throughput_per_tib=tier.write_mbps_per_tib,
            protocol="nfs",
            service="Filestore (zonal)",
            capacity_property=PlannedProperty("gcp:filestore/instance:Instance", "-filestore", "fileShares.capacityGb"),
        )
        for name, tier in catalog.FILESTORE_TIERS.items()
    },
    quotas=quotas.QUOTAS,
    # The serving plan on Google Cloud's resources (components/gcp/serving); a number GCP does not use is None.
    serving_terms=ServingTerms(load_balancer="Cloud Load Balancing", queue="Pub/Sub", warm_pool="standby pool"),
    serving_properties={
        "healthCheckGrace": None,  # no launch hook: the grace counts from launch (unhookedGrace)
        "unhookedGrace": PlannedProperty(
            "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
            "-replicas",
            "autoHealingPolicies.initialDelaySec",
            "the MIG ignores a new VM's health checks while it loads the model",
        ),
        "warmStart": None,  # the autoscaler's cooldown is the cold start
        "launchBudget": None,  # no launch hook
        "healthCheckInterval": PlannedProperty("gcp:compute/healthCheck:HealthCheck", "-health", "checkIntervalSec"),
        "healthCheckTimeout": PlannedProperty("gcp:compute/healthCheck:HealthCheck", "-health", "timeoutSec"),
        "drain": None,  # the backend service keeps its default connection draining
        "idleTimeout": PlannedProperty("gcp:compute/backendService:BackendService", "-backend", "timeoutSec"),
        "backlogTarget": PlannedProperty(
            "gcp:compute/regionAutoscaler:RegionAutoscaler",
            "-autoscaler",
            "autoscalingPolicy.metrics[0].singleInstanceAssignment",
        ),
        # loadTarget is the autoscaler's loadBalancingUtilization.target (a share) x this capacity: an estimate row.
        "replicaFullRate": PlannedProperty(
            "gcp:compute/backendService:BackendService", "-backend", "backends[0].maxRatePerInstance"
        ),
        "lease": PlannedProperty(
            "gcp:pubsub/subscription:Subscription",
            "-requests",
            "ackDeadlineSeconds",
            "Pub/Sub takes 10..600 s: a longer lease is the worker extending the deadline",
        ),
        "ageAlarm": None,
        "rootVolume": PlannedProperty(
            "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate", "-replica", "disks[0].diskSizeGb"
        ),
    },
    serving_backlog_metric="the request subscription's num_undelivered_messages per replica (singleInstanceAssignment)",
)

PRICES = Prices(
    checked=prices.CHECKED,
    region=prices.REGION,
    source="accelstack.clouds.gcp.prices (Google Cloud price pages, see its docstring)",
    on_demand_hourly=prices.ON_DEMAND_HOURLY,
    spot_discount=prices.DEFAULT_SPOT_DISCOUNT,
    parallel_fs_gb_month={},
    object_gb_month=prices.GCS_STANDARD_GB_MONTH,
    block_gb_month=prices.PD_BALANCED_GB_MONTH,
    block_product="pd-balanced",
    not_priced=prices.NOT_PRICED,
    accounting_database=ManagedDatabasePrice(
        product=f"Cloud SQL for MySQL Enterprise {slurmdbd.TIER}, zonal, SSD {slurmdbd.DISK_GIB} GiB",
        # A custom tier bills its vCPUs and memory (MB in the tier's name, GB on the price page).
        hourly=round(
            slurmdbd.VCPUS * prices.CLOUD_SQL_VCPU_HOURLY
            + slurmdbd.MEMORY_MB / 1024 * prices.CLOUD_SQL_MEMORY_GB_HOURLY,
            6,
        ),
        storage_gib=slurmdbd.DISK_GIB,
        storage_gb_month=prices.CLOUD_SQL_SSD_GB_MONTH,
        backup_gb_month=prices.CLOUD_SQL_BACKUP_GB_MONTH,
        backup_free_gib=0,
    ),
)

GCP = Cloud(
    name="gcp",
    title="Google Cloud",
    account_kind="project",
    provider_region_key="gcp:region",
    pulumi_packages=frozenset({"gcp", "random", "time"}),
    features=frozenset(
        {
            Feature.SLURM,  # Slurm on Compute Engine (Cluster Toolkit's Slurm-GCP, or Cluster Director)
            Feature.SLURM_ACCOUNTING,  # slurmdbd with Cloud SQL for MySQL (slurm-gcp's cloudsql)
            Feature.MANAGED_SCHEDULER,  # Cluster Director managed Slurm (hypercomputecluster)
            Feature.RDMA_FABRIC,  # GPUDirect-TCPX, -TCPXO and RDMA (RoCE), per machine type
            Feature.SPOT,
            Feature.TIME_BOXED_RESERVATION,  # DWS calendar mode: future reservations of 1 to 90 days
            Feature.FLEX_START,  # DWS flex-start: MIG resize requests, Cluster Director flex-start instances
            Feature.ON_DEMAND_RESERVATION,  # specific reservations
            Feature.MANAGED_LUSTRE,
            Feature.OBJECT_LINKED_FS,  # Managed Lustre importData / exportData with Cloud Storage
            Feature.ADMISSION_QUEUE,  # Pub/Sub topic + subscription with a dead-letter topic
            Feature.REPLICA_ADMISSION,  # the load balancer straight to replicas running the admission proxy
            Feature.WAF_RATE_LIMIT,  # Cloud Armor throttle rule keyed on the client IP
            Feature.WARM_POOL,  # regional MIG standby policy with stopped VMs
            Feature.QUEUE_DEPTH_SCALING,  # autoscaler on num_undelivered_messages, single_instance_assignment
            Feature.LOAD_BALANCER_SCALING,  # autoscaler on the backend service's load-balancing utilization (RATE per instance)
            Feature.CROSS_ACCOUNT_ARTIFACTS,  # bucket IAM across projects
        }
    ),
    unsupported={
        Feature.OBJECT_STORE_NETWORK_RULES: (
            "Cloud Storage admits readers by IAM (training.artifactReaders); network limits on a bucket are a VPC "
            "Service Controls perimeter, set on the organization's access policy, not by a workload stack"
        ),
    },
    catalog=CATALOG,
    prices=PRICES,
    limits={
        **{f"compact_placement_max_vms_{family}": vms for family, vms in catalog.COMPACT_PLACEMENT_MAX_VMS.items()},
        "calendar_mode_max_days": catalog.CALENDAR_MODE_MAX_DAYS,
    },
    terms=RuleTerms(
        region="a Compute Engine region",
        region_hint="regions look like us-central1 or europe-west4 (gcloud compute regions list)",
        machine_type="GPU machine type",
        # A3 High/Mega, A3 Ultra and A4 have one; A2 and G2 have no GPU network between VMs
        # (cloud.google.com/compute/docs/gpus/gpu-network-bandwidth).
        fabric="GPU network between VMs",
        without_fabric="the system NIC",
        fabric_machine_type="a GPUDirect machine type",
        spot_serving_breaks="standby pools hold stopped VMs, which Spot capacity cannot promise to restart",
    ),
    managed_scheduler=ManagedScheduler("Cluster Director", mounts_checkpoints=True, login_node=True),
    components="accelstack.components.gcp",
    workloads=frozenset({"training", "serving"}),
    rules=(
        "accelstack.clouds.gcp.rules",
        "accelstack.clouds.gcp.serving_rules",
        "accelstack.clouds.gcp.names",
        "accelstack.components.gcp.rules",
    ),
    boot_data_limit=BootDataLimit(
        "metadata value",
        catalog.METADATA_VALUE_MAX_BYTES,
        refused_by="Compute Engine",
        total_max_bytes=catalog.METADATA_TOTAL_MAX_BYTES,
    ),
    replace_rules=replace_rows.REPLACE_RULES,
    terraform=terraform_types.TERRAFORM,
    # The regional autoscaler on undelivered Pub/Sub messages per replica (components/gcp/serving/scaling.py).
    default_autoscaler=serving_scaling.SCALING_RULES.queue,
    load_balancer_autoscaler=serving_scaling.SCALING_RULES.load_balancer,
    serving_scaling=serving_scaling.SCALING_RULES,
    account_services=services.ACCOUNT_SERVICES,
)
