"""Azure constraint tables. Checked 2026-12-03 against the Microsoft documentation named beside each table.

Data only, like `accelstack.clouds.aws.catalog`: rules that read these tables come with the Azure port.
When Azure changes a size or a limit, change the table (and its date), not a rule.

Left out because the sources at hand did not confirm them (add a row once a source does):
- ND GB200 v6 / ND GB300 v6 (Arm hosts; the size tables read did not give vCPU and memory per size).
- NCads H100 v5 and NC A100 v4 InfiniBand: none (the size pages list no InfiniBand), so they carry no fabric.
- Which region offers which size: Microsoft's per-size regional availability page was not readable here, so
  `REGIONS` is Azure's physical regions and `offers.py` pairs each size with the regions where Azure's Retail
  Prices API has a Linux meter for it (`regional_prices.py`, every region of `REGIONS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelstack.clouds.base import InstanceType

CHECKED = "2026-12-03"

SOURCES = (
    "Microsoft Learn, ND-H100-v5 size series (learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/"
    "ndh100v5-series; MicrosoftDocs/azure-compute-docs ndh100v5-series.md and its includes)",
    "Microsoft Learn, ND-H200-v5 size series (nd-h200-v5-series.md and nd-h200-v5-series-summary.md)",
    "Microsoft Learn, ND-MI300X-v5 size series (ndmi300xv5-series.md and ndmi300xv5-series-summary.md)",
    "Microsoft Learn, NDm_A100_v4 and NDasrA100_v4 size series (ndma100v4-series.md, ndasra100v4-series.md, "
    "MicrosoftDocs/azure-docs includes ndma100v4-series-summary.md, ndasra100v4-series-summary.md)",
    "Microsoft Learn, NC_A100_v4 and NCads_H100_v5 size series (nca100v4-series.md, ncadsh100v5-series.md)",
    "Microsoft Learn, Create an Azure Managed Lustre file system by using the Azure portal: Throughput "
    "configurations (MicrosoftDocs/azure-stack-docs azure-managed-lustre/create-file-system-portal.md, 2024-11-11)",
    'Azure SDK reference, VirtualMachineScaleSetProperties.SinglePlacementGroup ("limits the scale set to a '
    'single placement group, of max size 100 virtual machines"); Virtual Machine Scale Sets and placement groups',
    "az account list-locations (Azure physical regions)",
)


# --- VM sizes -----------------------------------------------------------------------------------

# InfiniBand per size (the series summaries): ND H100 v5, ND H200 v5 and ND MI300X v5 give each GPU its
# own 400 Gb/s NDR Quantum-2 CX7 port (3.2 Tb/s per VM); NDm A100 v4 and ND A100 v4 give each GPU a
# 200 Gb/s HDR port (1.6 Tb/s per VM). InfiniBand joins only VMs of one scale set.
_IB_PORT_GBPS = {"NDR": 400, "HDR": 200}


def _nd(
    name: str,
    accelerator: str,
    accelerator_memory_gib: int,
    vcpus: int,
    memory_gib: int,
    ib: str,
    *,
    vendor: str = "nvidia",
) -> InstanceType:
    """An 8-GPU ND size with one InfiniBand port per GPU; `network_cards` is the size's documented Max NICs."""
    return InstanceType(
        name,
        accelerator,
        8,
        accelerator_memory_gib,
        vcpus,
        memory_gib,
        fabric="infiniband",
        fabric_interfaces=8,
        fabric_gbps=8 * _IB_PORT_GBPS[ib],
        network_cards=8,
        vendor=vendor,
    )


def _nc(
    name: str, accelerator: str, gpus: int, memory_per_gpu: int, vcpus: int, memory_gib: int, nics: int
) -> InstanceType:
    """An NC size: PCIe GPUs, accelerated Ethernet only (no InfiniBand)."""
    return InstanceType(name, accelerator, gpus, memory_per_gpu, vcpus, memory_gib, network_cards=nics)


# Sizes tables ("Basics", "Network" and "Accelerators" tabs) of each series page. Accelerator memory is
# per GPU: the ND H200 v5 page lists 1128 GB for 8 GPUs (141 each), ND MI300X v5 1535 GB for 8 (192
# each, as sold), ND96asr_v4 320 GB for 8 (40 each); NDm A100 v4 is the 80 GB A100, NCads H100 v5 the
# 94 GB H100 NVL ("H100-NVL": a PCIe part with other bandwidth than the SXM H100).
ACCELERATED_INSTANCES: dict[str, InstanceType] = {
    i.name: i
    for i in (
        _nd("Standard_ND96isr_H100_v5", "H100", 80, 96, 1900, "NDR"),
        _nd("Standard_ND96isr_H200_v5", "H200", 141, 96, 1850, "NDR"),
        _nd("Standard_ND96isr_MI300X_v5", "MI300X", 192, 96, 1850, "NDR", vendor="amd"),
        _nd("Standard_ND96amsr_A100_v4", "A100", 80, 96, 1900, "HDR"),
        _nd("Standard_ND96asr_v4", "A100", 40, 96, 900, "HDR"),
        _nc("Standard_NC24ads_A100_v4", "A100", 1, 80, 24, 220, 2),
        _nc("Standard_NC48ads_A100_v4", "A100", 2, 80, 48, 440, 4),
        _nc("Standard_NC96ads_A100_v4", "A100", 4, 80, 96, 880, 8),
        _nc("Standard_NC40ads_H100_v5", "H100-NVL", 1, 94, 40, 320, 2),
        _nc("Standard_NC80adis_H100_v5", "H100-NVL", 2, 94, 80, 640, 4),
    )
}

# Source: VirtualMachineScaleSetProperties.SinglePlacementGroup ("limits the scale set to a single
# placement group, of max size 100 virtual machines") and the ND series pages (InfiniBand joins the VMs of one scale set only), so
# one InfiniBand training cluster is at most this many nodes (more is a support request, not a setting).
SINGLE_PLACEMENT_GROUP_MAX_VMS = 100


# --- Azure Managed Lustre ----------------------------------------------------------------------


@dataclass(frozen=True)
class AmlfsSku:
    """One Azure Managed Lustre SKU (`sku.name` of Microsoft.StorageCache/amlFilesystems).

    The SKU fixes the throughput per TiB; `storageCapacityTiB` must be a multiple of `increment_tib`
    between `min_tib` and `max_tib` (larger file systems, up to 2.5 PB, only through a support request).
    """

    name: str
    throughput_mbps_per_tib: int
    min_tib: int
    max_tib: int
    increment_tib: int


# Source: "Create an Azure Managed Lustre file system by using the Azure portal", Throughput
# configurations table (throughput per TiB, storage minimum, maximum, increment).
AMLFS_SKUS: dict[str, AmlfsSku] = {
    s.name: s
    for s in (
        AmlfsSku("AMLFS-Durable-Premium-40", 40, 48, 768, 48),
        AmlfsSku("AMLFS-Durable-Premium-125", 125, 16, 128, 16),
        AmlfsSku("AMLFS-Durable-Premium-250", 250, 8, 128, 8),
        AmlfsSku("AMLFS-Durable-Premium-500", 500, 4, 128, 4),
    )
}
TIB_GIB = 1024


# --- Regions ------------------------------------------------------------------------------------

# Azure's physical regions as `az account list-locations` names them (the logical geographies such as
# "europe" and the EUAP canary regions left out). Not every region offers every size above.
REGIONS: tuple[str, ...] = (
    "australiacentral", "australiacentral2", "australiaeast", "australiasoutheast", "austriaeast",
    "brazilsouth", "brazilsoutheast", "canadacentral", "canadaeast", "centralindia", "centralus",
    "chilecentral", "eastasia", "eastus", "eastus2", "francecentral", "francesouth", "germanynorth",
    "germanywestcentral", "indonesiacentral", "israelcentral", "italynorth", "japaneast", "japanwest",
    "koreacentral", "koreasouth", "malaysiawest", "mexicocentral", "newzealandnorth", "northcentralus",
    "northeurope", "norwayeast", "norwaywest", "polandcentral", "qatarcentral", "southafricanorth",
    "southafricawest", "southcentralus", "southeastasia", "southindia", "spaincentral", "swedencentral",
    "switzerlandnorth", "switzerlandwest", "uaecentral", "uaenorth", "uksouth", "ukwest", "westcentralus",
    "westeurope", "westindia", "westus", "westus2", "westus3",
)  # fmt: skip


# --- Networking ---------------------------------------------------------------------------------

# Source: "Azure Managed Lustre file system prerequisites", network prerequisites (learn.microsoft.com/azure/
# azure-managed-lustre/amlfs-prerequisites): one dedicated IPv4 subnet per file system, at least this large
# for its capacity. (largest capacity in TiB, smallest prefix length); larger than the last row: not in the
# table, so accelstack takes a /22 and says so.
AMLFS_SUBNET_PREFIX_BY_TIB: tuple[tuple[int, int], ...] = ((16, 27), (40, 26), (92, 25), (196, 24), (400, 23))
AMLFS_SUBNET_PREFIX_BEYOND_TABLE = 22

# Azure reserves five addresses in every subnet: network, the first three hosts (gateway, 2 x DNS) and the
# broadcast address (learn.microsoft.com/azure/virtual-network/virtual-networks-faq, "Are there any
# restrictions on using IP addresses within these subnets?").
SUBNET_RESERVED_ADDRESSES = 5

# Azure availability zones are named "1", "2", "3" in every region that has them
# (learn.microsoft.com/azure/reliability/availability-zones-overview).
ZONES = ("1", "2", "3")


def amlfs_subnet_prefix(capacity_tib: float) -> int:
    """The prefix length of the dedicated subnet an Azure Managed Lustre file system of `capacity_tib` needs."""
    for largest, prefix in AMLFS_SUBNET_PREFIX_BY_TIB:
        if capacity_tib <= largest:
            return prefix
    return AMLFS_SUBNET_PREFIX_BEYOND_TABLE


# --- Storage names ------------------------------------------------------------------------------

# Source: "Storage account overview" (storage account name: 3-24 lowercase letters and digits, unique in
# Azure) and "Naming and referencing containers, blobs, and metadata" (container: 3-63 lowercase letters,
# digits and hyphens, starting with a letter or digit, no consecutive hyphens).
STORAGE_ACCOUNT_NAME = r"^[a-z0-9]{3,24}$"
CONTAINER_NAME = r"^(?=.{3,63}$)[a-z0-9]+(-[a-z0-9]+)*$"
BLOB_HOST_SUFFIX = ".blob.core.windows.net"
# Source: "Scalability and performance targets for standard storage accounts" (at most 400 virtual network
# rules per storage account) and "Configure Azure Storage firewalls and virtual networks" (a rule may name a
# subnet of any subscription, in any Microsoft Entra tenant; the subnet needs a Microsoft.Storage or
# Microsoft.Storage.Global service endpoint). One rule is the training nodes' own subnet.
STORAGE_VIRTUAL_NETWORK_RULES_MAX = 400
# Source: "Azure Storage firewall guidelines and limitations" (storage-network-security-limitations, "IP network
# rules") and the standard account scalability targets: at most 400 IP network rules per storage account; public IPv4
# only (no private RFC 1918 ranges, nor other reserved ones); a /31 or /32 range is not supported ("use individual IP
# address rules"), the address itself is. The widest range accelstack admits is the guardrails pack's: wider than a
# /16 is an internet audience (policies/azure/readers.py NARROWEST_WIDE_PREFIX; a test holds the two equal).
STORAGE_IP_RULES_MAX = 400
STORAGE_IP_RULE_NARROWEST_RANGE = 30  # /31 and /32 are refused as ranges
STORAGE_IP_RULE_WIDEST_RANGE = 16
# A subnet's ARM id; resource group 1-90 of letters, digits, _ ( ) - . ; virtual network 2-64 and subnet 1-80
# of letters, digits, _ - . ("Naming rules and restrictions for Azure resources", Microsoft.Network). ARM
# segment names are case-insensitive.
SUBNET_ID = (
    r"(?i)^/subscriptions/(?P<subscription>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"/resourceGroups/[-\w._()]{1,90}/providers/Microsoft\.Network/virtualNetworks/[\w][-\w.]{0,62}[\w]"
    r"/subnets/[\w](?:[-\w.]{0,78}[\w])?$"
)

# Source: "Capacity reservation group" ARM id (Microsoft.Compute/capacityReservationGroups).
CAPACITY_RESERVATION_GROUP_ID = (
    r"^/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[-\w._()]+/providers/Microsoft\.Compute/"
    r"capacityReservationGroups/[-\w._]+$"
)
# Source: VM size names ("Standard_<family>..."), e.g. Standard_D8s_v5.
VM_SIZE_NAME = r"^Standard_[A-Za-z0-9_]+$"


# Compute REST API, OSProfile.customData: "The maximum length of the binary array is 65535 bytes" (the cloud-init
# document before base64); learn.microsoft.com/azure/virtual-machines/custom-data: "The maximum size of custom data
# is 64 KB, after it's Base64 encoded". The spec rules hold the base64 text to it, the stricter of the two readings.
CUSTOM_DATA_MAX_BYTES = 65535

# How long a new role assignment may take to be honoured, as Azure documents it: a resource whose creation uses a
# fresh grant waits this long after it (components/propagation.py). Azure RBAC on resources (Managed Lustre's Blob
# roles, the standby pool provider's roles): "It can take up to five minutes for the role settings to propagate"
# (Azure Managed Lustre, amlfs-prerequisites, "Blob integration prerequisites").
RBAC_PROPAGATION_SECONDS = 5 * 60
# Key Vault's data plane (a key a storage account or file system encrypts with, the gateway's certificate secret):
# "it will take up to 10 minutes (600 seconds) after role assignments is changed for role to be applied"
# (learn.microsoft.com/azure/key-vault/general/rbac-guide, "Known limits and performance"). The gateway does not fail
# without it: it disables the HTTPS listener ("Common key vault errors in Application Gateway").
KEY_VAULT_RBAC_PROPAGATION_SECONDS = 10 * 60
