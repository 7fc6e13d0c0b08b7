"""Microsoft Azure, as accelstack describes it: catalog, prices, limits and features (no Pulumi).

Deployable: `accelstack.components.azure` holds its Pulumi half; its spec rules are `accelstack.clouds.azure.rules`.
"""

from __future__ import annotations

from accelstack.clouds import random_provider, time_provider
from accelstack.clouds.azure import accounting_database as slurmdbd
from accelstack.clouds.azure import arm_types, catalog, offers, prices, quotas, replace_rows, services, serving_scaling
from accelstack.clouds.azure.regional_prices import HOURLY_BY_REGION
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
    ReservedRange,
    RuleTerms,
)
from accelstack.clouds.serving_terms import ServingTerms

CATALOG = Catalog(
    cloud="azure",
    # Service Bus: maxDeliveryCount from 1, TTL an ISO 8601 duration (accelstack keeps SQS's 14 days as the most a
    # request waits); Application Gateway WAF rate-limit rules count per OneMin or FiveMins.
    admission=AdmissionLimits(
        queue_service="Service Bus",
        ttl_seconds=(60, 1_209_600),
        max_receive_count=(1, 1000),
        rate_service="Application Gateway WAF",
        per_client_rate=(10, 2_000_000_000),
        rate_windows=(60, 300),
        # Service Bus's own default: "The maximum delivery count ... default value is 10" (pulumi_azure_native
        # servicebus/queue.py, max_delivery_count).
        default_max_receive_count=10,
    ),
    checked=catalog.CHECKED,
    sources=catalog.SOURCES,
    instances=catalog.ACCELERATED_INSTANCES,
    regions=catalog.REGIONS,
    offers=MachineOffers(offers.CHECKED, offers.SOURCE, offers.ZONES_BY_SIZE, offers.REGIONS_READ),
    replica_image="Microsoft's Ubuntu-HPC image (microsoft-dsvm:ubuntu-hpc:2404: GPU driver, AzCopy)",
    default_head_node="Standard_D8s_v5",  # 8 vCPUs, 32 GiB, as AWS's m7i.2xlarge
    parallel_fs_service="Azure Managed Lustre",
    object_store_service="Azure Blob Storage",
    # Blob URLs as Azure writes them: https://<account>.blob.core.windows.net/<container>[/prefix] (what azcopy
    # and the portal take); the "bucket" is the storage account, so datasets and checkpoints live in two.
    object_uri_schemes=("https",),
    parallel_fs={
        name: ParallelFsTier(
            name=name,
            # The SKU fixes the throughput: one value, so `throughputPerTiB` picks the SKU.
            throughput_per_tib=(sku.throughput_mbps_per_tib,),
            min_gib=sku.min_tib * catalog.TIB_GIB,
            increment_gib=sku.increment_tib * catalog.TIB_GIB,
            max_gib=sku.max_tib * catalog.TIB_GIB,
            # Blob integration (HSM) imports at creation and exports with archive / auto-export jobs.
            imports_from_object_store=True,
            # The Blob integration imports its prefix at creation only ("files added to the original blob
            # container after you create the file system won't be imported", amlfs-prerequisites); later data
            # needs an import job, which the stack runs when its import trigger changes.
            dataset_import=DatasetImport.ON_REQUEST,
            exports_to_object_store=True,
            # Exports (archive / auto-export jobs) go to the one linked container, the dataset's; checkpoints
            # have their own versioned container, so the Slurm head node copies them there.
            checkpoints_copied_by_head=True,
            persistent=True,  # "Durable": Premium SSD LRS object storage targets
            # AmlFilesystem takes TiB; the SKU (sku.name), not a number, carries the throughput.
            capacity_property=PlannedProperty(
                "azure-native:storagecache:AmlFilesystem",
                "-storage-lustre",
                "storageCapacityTiB",
                scale=1 / catalog.TIB_GIB,
                unit="TiB",
            ),
        )
        for name, sku in catalog.AMLFS_SKUS.items()
    },
    quotas=quotas.QUOTAS,
    # The serving plan on Azure's resources (components/azure/serving); a number Azure does not use is None.
    serving_terms=ServingTerms(load_balancer="Application Gateway", queue="Service Bus", warm_pool="standby pool"),
    serving_properties={
        "unhookedGrace": None,  # no automatic repairs: the gateway's probe routes around a starting replica
        "healthCheckGrace": None,  # the gateway routes only to replicas its probe finds healthy
        "warmStart": None,  # no warm-up setting: the autoscale cooldown waits a cold start
        "launchBudget": None,  # no launch hook
        "healthCheckInterval": PlannedProperty(
            "azure-native:network:ApplicationGateway", "-gateway", "probes[0].interval"
        ),
        "healthCheckTimeout": PlannedProperty(
            "azure-native:network:ApplicationGateway", "-gateway", "probes[0].timeout"
        ),
        "drain": PlannedProperty(
            "azure-native:network:ApplicationGateway",
            "-gateway",
            "backendHttpSettingsCollection[0].connectionDraining.drainTimeoutInSec",
        ),
        "idleTimeout": PlannedProperty(
            "azure-native:network:ApplicationGateway", "-gateway", "backendHttpSettingsCollection[0].requestTimeout"
        ),
        "backlogTarget": PlannedProperty(
            "azure-native:monitor:AutoscaleSetting", "-autoscale", "profiles[0].rules[0].metricTrigger.threshold"
        ),
        "loadTarget": PlannedProperty(
            "azure-native:monitor:AutoscaleSetting", "-autoscale", "profiles[0].rules[0].metricTrigger.threshold"
        ),
        "replicaFullRate": None,  # the gateway spreads requests round robin, without a per-host rate
        "lease": PlannedProperty(
            "azure-native:servicebus:Queue",
            "-queue-requests",
            "lockDuration",
            "Service Bus locks at most 5 minutes: a longer lease is the worker renewing the lock",
        ),
        "ageAlarm": None,  # the queue's alert is on its depth (serving.admission.maxDepth)
        "rootVolume": PlannedProperty(
            "azure-native:compute:VirtualMachineScaleSet",
            "-replicas",
            "virtualMachineProfile.storageProfile.osDisk.diskSizeGB",
        ),
    },
    serving_backlog_metric="the request queue's ActiveMessages divided per instance (autoscale dividePerInstance)",
)

PRICES = Prices(
    checked=prices.CHECKED,
    region=prices.REGION,
    source="accelstack.clouds.azure.prices (Azure Retail Prices API readings, see its docstring)",
    on_demand_hourly=prices.ON_DEMAND_HOURLY,
    regional_hourly=HOURLY_BY_REGION,
    spot_discount=prices.DEFAULT_SPOT_DISCOUNT,
    parallel_fs_gb_month={},
    object_gb_month=prices.BLOB_HOT_LRS_GB_MONTH,
    block_gb_month=prices.PREMIUM_SSD_GB_MONTH,
    block_product="Premium SSD",
    not_priced=prices.NOT_PRICED,
    # Same key as AWS's ALB hour: the serving front door's fixed charge (here it includes the WAF).
    extra={"load_balancer_hourly": prices.APP_GATEWAY_WAF_V2_HOURLY},
    accounting_database=ManagedDatabasePrice(
        product=f"Azure Database for MySQL flexible server {slurmdbd.SKU_TIER} {slurmdbd.SKU_NAME.removeprefix('Standard_')}, "
        f"{slurmdbd.STORAGE_GIB} GiB",
        hourly=prices.MYSQL_FLEXIBLE_HOURLY[slurmdbd.SKU_NAME],
        storage_gib=slurmdbd.STORAGE_GIB,
        storage_gb_month=prices.MYSQL_FLEXIBLE_STORAGE_GB_MONTH,
        backup_gb_month=prices.MYSQL_FLEXIBLE_BACKUP_GB_MONTH,
        backup_free_gib=slurmdbd.STORAGE_GIB,
    ),
)

AZURE = Cloud(
    name="azure",
    title="Microsoft Azure",
    account_kind="subscription",
    provider_region_key="azure-native:location",
    pulumi_packages=frozenset({"azure-native", "random", "time"}),
    features=frozenset(
        {
            Feature.SLURM,  # Slurm on VMs (CycleCloud Workspace for Slurm ships as an ARM template)
            Feature.SLURM_ACCOUNTING,  # slurmdbd with Azure Database for MySQL flexible server
            Feature.MANAGED_SCHEDULER,  # Azure Machine Learning AmlCompute cluster
            Feature.RDMA_FABRIC,  # InfiniBand between the VMs of one scale set
            Feature.SPOT,
            # Capacity reservations have no end time (future-dated ones add a minimum commitment, New-AzCapacityReservation
            # -MinimumCommitmentDayCount), so Azure sells nothing like a time-boxed block: no TIME_BOXED_RESERVATION.
            Feature.ON_DEMAND_RESERVATION,
            Feature.MANAGED_LUSTRE,
            Feature.OBJECT_LINKED_FS,  # Blob integration (HSM) import, archive/auto-export jobs
            Feature.ADMISSION_QUEUE,  # Service Bus queue with dead-lettering
            Feature.REPLICA_ADMISSION,  # the load balancer straight to replicas running the admission proxy
            Feature.WAF_RATE_LIMIT,  # Application Gateway WAF_v2 RateLimitRule grouped by ClientAddr
            Feature.WARM_POOL,  # standby virtual machine pool (Flexible scale sets)
            Feature.QUEUE_DEPTH_SCALING,  # autoscale on Service Bus ActiveMessages, divided per instance
            Feature.LOAD_BALANCER_SCALING,  # autoscale on Application Gateway AvgRequestCountPerHealthyHost
            Feature.CROSS_ACCOUNT_ARTIFACTS,  # role assignments across subscriptions
            Feature.OBJECT_STORE_NETWORK_RULES,  # storage account virtual network rules (any subscription)
        }
    ),
    unsupported={
        Feature.TIME_BOXED_RESERVATION: (
            "Azure sells no time-boxed GPU block: capacity reservations have no end time (reservationId with "
            "capacity on-demand reserves open-ended)"
        ),
        Feature.FLEX_START: (
            "Azure queues no capacity to lend it for a fixed run time; Spot VMs (capacity: spot) are its "
            "interruptible capacity"
        ),
    },
    catalog=CATALOG,
    prices=PRICES,
    limits={"infiniband_cluster_max_vms": catalog.SINGLE_PLACEMENT_GROUP_MAX_VMS},
    # Azure's virtual public IP: DNS, DHCP, the VM agent and health probes reach it from every VM
    # (learn.microsoft.com/azure/virtual-network/virtual-networks-faq, "What address ranges can I use in my VNets?").
    reserved_ranges=(ReservedRange("168.63.129.16/32", "Azure's platform address: DNS, the VM agent, health probes"),),
    boot_data_limit=BootDataLimit(
        "custom data", catalog.CUSTOM_DATA_MAX_BYTES, refused_by="Azure", base64_encoded=True
    ),
    terms=RuleTerms(
        region="an Azure region",
        region_hint="locations look like eastus or westeurope (az account list-locations --query [].name)",
        machine_type="GPU VM size",
        fabric="InfiniBand",  # the ND sizes; NC sizes have accelerated Ethernet only
        without_fabric="Ethernet",
        fabric_machine_type="an ND size",
        spot_serving_breaks="a standby pool and the queue worker's leases assume VMs that are not evicted",
    ),
    managed_scheduler=ManagedScheduler("Azure Machine Learning", mounts_checkpoints=True),
    components="accelstack.components.azure",
    workloads=frozenset({"training", "serving"}),
    rules=(
        "accelstack.clouds.azure.rules",
        "accelstack.clouds.azure.serving_rules",
        "accelstack.clouds.azure.names",
        "accelstack.components.azure.rules",
    ),
    replace_rules=replace_rows.REPLACE_RULES,
    # azure-native is not Terraform-bridged: no Terraform plan of its resources, only of pulumi-random's and
    # pulumiverse-time's (which make no cloud calls: the ARM template view leaves them out).
    terraform=(random_provider.TERRAFORM, time_provider.TERRAFORM),
    arm=(arm_types.ARM,),
    # Azure Monitor autoscale on Service Bus active messages per instance (components/azure/serving/scaling.py).
    default_autoscaler=serving_scaling.SCALING_RULES.queue,
    load_balancer_autoscaler=serving_scaling.SCALING_RULES.load_balancer,
    serving_scaling=serving_scaling.SCALING_RULES,
    account_services=services.ACCOUNT_SERVICES,
)
