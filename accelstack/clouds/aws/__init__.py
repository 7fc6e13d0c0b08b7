"""Amazon Web Services, as accelstack describes it: catalog, prices, limits and features (no Pulumi).

The Pulumi half is `accelstack.components.aws`; the spec rules are `rules` and `serving_rules` here.
"""

from __future__ import annotations

from accelstack.clouds.aws import accounting_database as slurmdbd
from accelstack.clouds.aws import catalog, offers, prices, quotas, replace_rows, serving_scaling, terraform_types
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
from accelstack.clouds.serving_terms import ServingTerms

CATALOG = Catalog(
    cloud="aws",
    # SQS MessageRetentionPeriod 60 s..14 days and redrive maxReceiveCount 1..1000; AWS WAF rate-based rules:
    # limit 10..2e9 per evaluation window of 60, 120, 300 or 600 s (WAF API RateBasedStatement).
    admission=AdmissionLimits(
        queue_service="SQS",
        ttl_seconds=(60, 1_209_600),
        max_receive_count=(1, 1000),
        rate_service="AWS WAF",
        per_client_rate=(10, 2_000_000_000),
        rate_windows=(60, 120, 300, 600),
        # SQS has no default redrive count (the redrive policy's maxReceiveCount is required, pulumi_aws sqs/queue.py
        # redrive_policy; SQS developer guide, dead-letter queues): ours, 3 retries a request
        # a replica crashed on, and moves a poison request aside before it takes a fourth replica down.
        default_max_receive_count=3,
    ),
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
    offers=MachineOffers(offers.CHECKED, offers.SOURCE, offers.ZONES_BY_INSTANCE_TYPE, offers.REGIONS_READ),
    default_mount_path="/fsx",  # FSx for Lustre's documented mount point (and every earlier release's)
    # The Deep Learning Base GPU AMI (Ubuntu 22.04: NVIDIA driver, CUDA, Docker with the NVIDIA toolkit), its
    # latest release resolved by EC2 at launch from AWS's public SSM parameter.
    default_replica_image=(
        "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
    ),
    default_head_node="m7i.2xlarge",  # 8 vCPUs, 32 GiB: slurmctld and slurmdbd for hundreds of nodes
    parallel_fs={
        name: ParallelFsTier(
            name=name,
            throughput_per_tib=kind.throughput_tiers,
            min_gib=kind.first_steps_gib[0],
            increment_gib=kind.increment_gib,
            first_steps_gib=kind.first_steps_gib,
            imports_from_object_store=kind.data_repository_associations or kind.legacy_import_path,
            # Both links import on their own: the datasets association's auto-import policy (NEW, CHANGED,
            # DELETED) and the legacy link's AutoImportPolicy NEW_CHANGED_DELETED (components/aws/storage.py).
            dataset_import=DatasetImport.AUTOMATIC,
            exports_to_object_store=kind.data_repository_associations,
            persistent=kind.persistent,
            baseline_throughput_per_tib=None if kind.throughput_tiers else catalog.SCRATCH_BASELINE_MBPS_PER_TIB,
            capacity_property=PlannedProperty("aws:fsx/lustreFileSystem:LustreFileSystem", "-storage-lustre", "storageCapacity"),
            throughput_property=(
                PlannedProperty("aws:fsx/lustreFileSystem:LustreFileSystem", "-storage-lustre", "perUnitStorageThroughput")
                if kind.throughput_tiers
                else None
            ),
        )
        for name, kind in catalog.LUSTRE_DEPLOYMENT_TYPES.items()
    },
    default_parallel_fs="PERSISTENT_2",
    parallel_fs_service="FSx for Lustre",
    object_store_service="S3",
    object_uri_schemes=("s3",),
    serving_candidates=(
        "g6.xlarge", "g5.xlarge", "g6e.xlarge", "g6.12xlarge", "g5.12xlarge", "g6e.12xlarge",
        "g6e.48xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge",
    ),
    single_node_training_candidates=(
        "g6e.xlarge", "g6e.12xlarge", "g6e.48xlarge", "g5.48xlarge", "g6.48xlarge",
        "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge",
    ),
    distributed_training_instance="p5.48xlarge",
    managed_model_api="Amazon Bedrock",
    quotas=quotas.QUOTAS,
    serving_terms=ServingTerms(load_balancer="ALB", queue="SQS", warm_pool="warm pool"),
    serving_properties={
        "unhookedGrace": None,  # the launch hook holds a replica until it serves
        "healthCheckGrace": PlannedProperty(
            "aws:autoscaling/group:Group",
            "-replicas",
            "healthCheckGracePeriod",
            "counts from InService, after the launch hook waited out the cold start",
        ),
        "warmStart": PlannedProperty("aws:autoscaling/group:Group", "-replicas", "defaultInstanceWarmup"),
        "healthCheckInterval": PlannedProperty("aws:lb/targetGroup:TargetGroup", "-replicas", "healthCheck.interval"),
        "healthCheckTimeout": PlannedProperty("aws:lb/targetGroup:TargetGroup", "-replicas", "healthCheck.timeout"),
        "drain": PlannedProperty("aws:lb/targetGroup:TargetGroup", "-replicas", "deregistrationDelay"),
        "idleTimeout": PlannedProperty("aws:lb/loadBalancer:LoadBalancer", "-alb", "idleTimeout"),
        "backlogTarget": PlannedProperty(
            "aws:autoscaling/policy:Policy", "-backlog-per-instance", "targetTrackingConfiguration.targetValue"
        ),
        "loadTarget": PlannedProperty(
            "aws:autoscaling/policy:Policy", "-requests-per-target", "targetTrackingConfiguration.targetValue"
        ),
        "replicaFullRate": None,  # the ALB routes by least outstanding requests, without a per-target rate
        "lease": PlannedProperty("aws:sqs/queue:Queue", "-requests", "visibilityTimeoutSeconds"),
        "ageAlarm": PlannedProperty("aws:cloudwatch/metricAlarm:MetricAlarm", "-queue-age", "threshold"),
        "rootVolume": PlannedProperty(
            "aws:ec2/launchTemplate:LaunchTemplate", "-replica", "blockDeviceMappings[0].ebs.volumeSize"
        ),
    },
)  # fmt: skip

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
    block_product="EBS gp3",
    not_priced=prices.NOT_PRICED,
    extra={
        "load_balancer_hourly": prices.ALB_HOURLY,
        "load_balancer_capacity_unit_hourly": prices.ALB_LCU_HOURLY,
        "load_balancer_new_connections_per_capacity_unit": prices.ALB_NEW_CONNECTIONS_PER_LCU,
        "queue_per_million_requests": prices.SQS_PER_MILLION_REQUESTS,
    },
    block_iops_month=prices.EBS_GP3_IOPS_MONTH,
    block_free_iops=prices.EBS_GP3_FREE_IOPS,
    block_mibps_month=prices.EBS_GP3_MIBPS_MONTH,
    block_free_mibps=prices.EBS_GP3_FREE_MIBPS,
    accounting_database=ManagedDatabasePrice(
        product=f"RDS for MySQL {slurmdbd.INSTANCE_CLASS}, Single-AZ, {slurmdbd.STORAGE_TYPE} {slurmdbd.STORAGE_GIB} GiB",
        hourly=prices.RDS_MYSQL_HOURLY[slurmdbd.INSTANCE_CLASS],
        storage_gib=slurmdbd.STORAGE_GIB,
        storage_gb_month=prices.RDS_GP3_GB_MONTH,
        backup_gb_month=prices.RDS_BACKUP_GB_MONTH,
        backup_free_gib=slurmdbd.STORAGE_GIB,
    ),
    label="accelstack.clouds.aws.prices",
)

AWS = Cloud(
    name="aws",
    title="Amazon Web Services",
    account_kind="account",
    pulumi_packages=frozenset({"aws", "random"}),
    # The reference cloud: every feature accelstack defines but flex-start (EC2 has no queued, time-lent
    # capacity; its time-boxed capacity is a Capacity Block, capacity: capacity-block) and network rules on the
    # checkpoint store (S3 admits the readers by bucket policy, not by network).
    features=frozenset(Feature) - {Feature.FLEX_START, Feature.OBJECT_STORE_NETWORK_RULES},
    unsupported={
        Feature.FLEX_START: (
            "EC2 queues no capacity to lend it for a fixed run time; its time-boxed GPUs are Capacity Blocks, "
            "bought for a window (capacity: capacity-block with reservationId)"
        ),
        Feature.OBJECT_STORE_NETWORK_RULES: (
            "S3 admits readers by principal (the checkpoint bucket's policy names training.artifactReaders); a "
            "network path to it is a gateway endpoint in the reader's own VPC, not a rule on the bucket"
        ),
    },
    catalog=CATALOG,
    prices=PRICES,
    limits={
        "capacity_block_max_instances": catalog.CAPACITY_BLOCK_MAX_INSTANCES,
        "lustre_default_quota_gib": catalog.LUSTRE_DEFAULT_QUOTA_GIB,
    },
    # 16 KB of raw user data (catalog.EC2_USER_DATA_MAX_BYTES, from the EC2 User Guide).
    boot_data_limit=BootDataLimit(
        "user data", catalog.EC2_USER_DATA_MAX_BYTES, refused_by="EC2", gzipped_when_over=True
    ),
    terms=RuleTerms(
        region="an AWS Region name",
        region_hint="Regions look like us-east-1 or eu-west-1 (aws ec2 describe-regions)",
        machine_type="accelerated instance type",
        fabric="EFA",  # EFA user guide, "Supported instance types"
        without_fabric="plain TCP, an order of magnitude slower",
        fabric_machine_type="an EFA instance type",
        spot_serving_breaks="Auto Scaling warm pools cannot hold spot instances",
    ),
    managed_scheduler=ManagedScheduler("AWS Batch"),
    components="accelstack.components.aws",
    provider_region_key="aws:region",
    # The last renders node user data with the components (a spec rule that needs them), imported by name.
    rules=(
        "accelstack.clouds.aws.rules",
        "accelstack.clouds.aws.serving_rules",
        "accelstack.clouds.aws.names",
        "accelstack.components.aws.rules",
    ),
    replace_rules=replace_rows.REPLACE_RULES,
    terraform=terraform_types.TERRAFORM,
    # Target tracking on backlog per instance (accelstack.components.aws.serving.scaling).
    default_autoscaler=serving_scaling.SCALING_RULES.queue,
    load_balancer_autoscaler=serving_scaling.SCALING_RULES.load_balancer,
    serving_scaling=serving_scaling.SCALING_RULES,
)
