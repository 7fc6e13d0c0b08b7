"""Oracle Cloud Infrastructure, as accelstack describes it: catalog, prices, limits and features (no Pulumi).

Deployable for training (`accelstack.components.oci`: a cluster network of bare-metal GPU shapes, File Storage with
Lustre, Object Storage, Vault and Slurm); the policy packs know the OCI kinds (policies/oci) and stacks/
Pulumi.oci-training.yaml is a shipped example. Serving on OCI is not built yet.
"""

from __future__ import annotations

from accelstack.clouds.base import BootDataLimit, Catalog, Cloud, Feature, Prices, RuleTerms
from accelstack.clouds.oci import catalog, prices, quotas, replace_rows
from accelstack.clouds.oci.lustre_tiers import lustre_tiers

NO_SERVING = "serving on OCI is not built yet (accelstack deploys OCI training only); serve from another cloud"

CATALOG = Catalog(
    cloud="oci",
    checked=catalog.CHECKED,
    sources=catalog.SOURCES,
    instances=catalog.ACCELERATED_INSTANCES,
    regions=catalog.REGIONS,
    default_head_node=catalog.HEAD_SHAPE,
    parallel_fs_service="File Storage with Lustre",
    object_store_service="Object Storage",
    object_uri_schemes=("oci",),  # oci://bucket/prefix in the tenancy's namespace
    parallel_fs=lustre_tiers(),
    default_parallel_fs="MBPS_PER_TB_125",
    quotas=quotas.QUOTAS,
    replica_image="no serving replicas on OCI yet",
    node_image_id_form="an image OCID (ocid1.image.<realm>.<region>.<unique id>)",
    node_image="the OCI HPC team's GPU image for the shape's vendor (components/oci/images.py)",
)

PRICES = Prices(
    checked=prices.CHECKED,
    region=prices.REGION,
    source="accelstack.clouds.oci.prices (Oracle's GPU and compute price pages, see its docstring)",
    on_demand_hourly=prices.ON_DEMAND_HOURLY,
    # OCI's preemptible instances cost half, but cluster networks (how accelstack trains on OCI) do not take them:
    # nothing here can be bought at that price, so none is quoted.
    spot_discount=0.0,
    parallel_fs_gb_month={},
    object_gb_month=prices.OBJECT_STANDARD_GB_MONTH,
    block_gb_month=prices.BLOCK_BALANCED_GB_MONTH,
    block_product="Block Volume (balanced, 10 VPUs)",
    not_priced=prices.NOT_PRICED,
)

OCI = Cloud(
    name="oci",
    title="Oracle Cloud Infrastructure",
    account_kind="compartment",
    provider_region_key="oci:region",
    pulumi_packages=frozenset({"oci", "random", "time"}),
    features=frozenset(
        {
            Feature.SLURM,  # Slurm on the cluster network's nodes and a head VM
            Feature.RDMA_FABRIC,  # RoCE v2 between the bare-metal GPU nodes of one cluster network
            Feature.ON_DEMAND_RESERVATION,  # ComputeCapacityReservation: capacity_reservation_id in the launch details
            Feature.MANAGED_LUSTRE,  # File Storage with Lustre
            Feature.OBJECT_LINKED_FS,  # FileStorageObjectStorageLink: import from Object Storage on request
        }
    ),
    unsupported={
        Feature.SLURM_ACCOUNTING: (
            "the OCI Slurm head keeps no accounting database yet (OCI's MySQL HeatWave is not built by the OCI "
            "components): use training.scheduler.accounting: none"
        ),
        Feature.SPOT: (
            "cluster networks do not offer preemptible capacity (OCI preemptible instances cannot join one): use "
            "on-demand capacity or a capacity reservation (training.nodes.reservationId)"
        ),
        Feature.MANAGED_SCHEDULER: (
            "OCI has no managed batch scheduler accelstack builds (oci-hpc is Terraform and Ansible, with no "
            "Resource Manager stack resource in pulumi-oci): use training.scheduler.kind: slurm"
        ),
        Feature.TIME_BOXED_RESERVATION: (
            "OCI sells no time-boxed GPU blocks; a ComputeCapacityReservation is open-ended: use capacity "
            "on-demand with training.nodes.reservationId"
        ),
        Feature.FLEX_START: (
            "OCI has no queued, time-limited capacity for cluster networks: use capacity on-demand, with a "
            "capacity reservation where the region is short"
        ),
        Feature.CROSS_ACCOUNT_ARTIFACTS: (
            "cross-compartment reads of the checkpoint bucket are not built yet on OCI (an IAM policy in the "
            "serving compartment's tenancy would grant them): leave training.artifactReaders empty"
        ),
        Feature.OBJECT_STORE_NETWORK_RULES: (
            "Object Storage admits readers by IAM policy; network limits are a private endpoint, not bucket "
            "rules: leave training.artifactReaderSubnets empty"
        ),
        Feature.ADMISSION_QUEUE: NO_SERVING,
        Feature.REPLICA_ADMISSION: NO_SERVING,
        Feature.WAF_RATE_LIMIT: NO_SERVING,
        Feature.WARM_POOL: NO_SERVING,
        Feature.QUEUE_DEPTH_SCALING: NO_SERVING,
        Feature.LOAD_BALANCER_SCALING: NO_SERVING,
    },
    catalog=CATALOG,
    prices=PRICES,
    limits={"lustre_min_gb": catalog.LUSTRE_MIN_GB, "instance_metadata_max_bytes": 32_000},
    terms=RuleTerms(
        region="an OCI region identifier",
        region_hint="regions look like us-ashburn-1 or eu-frankfurt-1 (oci iam region list)",
        machine_type="bare-metal GPU shape",
        fabric="RDMA cluster network (RoCE v2)",
        without_fabric="the VCN's front-end network",
        fabric_machine_type="a BM.GPU shape in a cluster network",
    ),
    components="accelstack.components.oci",
    workloads=frozenset({"training"}),
    rules=("accelstack.clouds.oci.rules", "accelstack.components.oci.rules"),
    # Instance metadata, user_data included, takes at most 32,000 bytes (LaunchInstanceDetails.metadata, Core API
    # reference); user_data is base64 there, so the limit counts the encoded text.
    boot_data_limit=BootDataLimit(
        "user_data metadata", 32_000, refused_by="OCI Compute", base64_encoded=True, total_max_bytes=32_000
    ),
    replace_rules=replace_rows.REPLACE_RULES,
)
