"""Azure Linux pay-as-you-go VM prices in every region of the catalog, USD per hour, and so which regions offer
each GPU size (`offers.py` reads the same table). Data only; `accelstack cost --prices FILE` replaces any entry.

Source: Azure Retail Prices API as Microsoft's Karpenter provider for AKS snapshots it,
github.com/Azure/karpenter-provider-azure pkg/providers/pricing/zz_generated.pricing.go at commit
2b431da153a6a92b705c18046512c60b1631b682 (2026-07-16; "generated at 2026-06-18T03:43:41Z"), read 2026-12-06. Its
generator (pkg/providers/pricing/pricing.go) asks https://prices.azure.com/api/retail/prices for serviceName
"Virtual Machines" by armRegionName and keeps the Linux meters (products ending " Windows" dropped), not Spot and
not Low Priority: the list price `cost` wants. A "-" is a region with no such meter for the size.

Checked against the two-record East US prices of `prices.py`: every one of them (ND96isr_H100_v5 98.32,
ND96amsr_A100_v4 32.77, ND96asr_v4 27.197, NC24ads/NC48ads_A100_v4 3.673/7.346, D2s..D16s_v5) is the eastus row
below to the cent. Microsoft's "Products available by region" page and `az vm list-skus --size SIZE --location
REGION` are the authority a row is checked against when it changes; a subscription may still lack a size a region
prices (capacity, restricted SKUs), which only the create call shows.
"""

from __future__ import annotations

CHECKED = "2026-12-06"
SOURCE = (
    "Azure Retail Prices API (Linux pay-as-you-go meters) as Azure/karpenter-provider-azure "
    "pkg/providers/pricing/zz_generated.pricing.go @2b431da snapshots it (generated 2026-06-18)"
)

# The GPU sizes of `catalog.ACCELERATED_INSTANCES`, in that order.
_GPU_COLUMNS = (
    "Standard_ND96isr_H100_v5",
    "Standard_ND96isr_H200_v5",
    "Standard_ND96isr_MI300X_v5",
    "Standard_ND96amsr_A100_v4",
    "Standard_ND96asr_v4",
    "Standard_NC24ads_A100_v4",
    "Standard_NC48ads_A100_v4",
    "Standard_NC96ads_A100_v4",
    "Standard_NC40ads_H100_v5",
    "Standard_NC80adis_H100_v5",
)
# region             ND-H100  ND-H200   MI300X  A100-80  A100-40 NC24A100 NC48A100 NC96A100 NC40H100 NC80H100
_GPU_TABLE = """
australiacentral           -        -        -        -        -        -        -        -        -        -
australiacentral2          -        -        -        -        -        -        -        -        -        -
australiaeast          142.6   122.96        -   47.516        -    5.326   10.652   21.303   10.121   20.242
australiasoutheast         -   110.24     67.2        -        -        -        -        -        -        -
austriaeast                -        -        -        -        -        -        -        -        -        -
brazilsouth                -    169.6       96    65.54        -    7.346   14.692   29.384        -        -
brazilsoutheast            -        -        -        -        -        -        -        -        -        -
canadacentral        117.984        -     57.6   39.324        -    4.408    8.815    17.63     8.59    17.18
canadaeast                 -        -        -   39.324        -        -        -        -        -        -
centralindia               -        -        -        -        -    5.142   10.284   20.569    9.772   19.544
centralus            120.934   95.824   59.041    37.03        -     4.15    8.301   16.602    8.585    17.17
chilecentral               -        -        -        -        -        -        -        -        -        -
eastasia                   -        -        -        -        -        -        -        -        -        -
eastus                 98.32        -        -    32.77   27.197    3.673    7.346   14.692     6.98    13.96
eastus2                98.32     84.8       48    32.77        -    3.673    7.346   14.692     6.98    13.96
francecentral              -      106       60   40.962        -    4.591    9.183   18.365        -        -
francesouth                -        -        -        -        -        -        -        -        -        -
germanynorth               -        -        -   55.381        -        -        -        -        -        -
germanywestcentral         -   110.24     62.4        -        -    4.775     9.55     19.1    9.074   18.148
indonesiacentral           -   99.216        -        -        -        -        -        -    8.167   16.333
israelcentral              -        -        -        -        -        -        -        -        -        -
italynorth                 -   110.24        -   40.962   35.357    4.775     9.55     19.1        -        -
japaneast            142.564      106        -   47.517        -    5.326   10.652   21.303   10.121   20.242
japanwest            152.396   131.44        -   50.794        -        -        -        -        -        -
koreacentral         132.732        -        -        -        -    4.959    9.917   19.834    9.423   18.846
koreasouth                 -      106       60        -        -        -        -        -    8.725    17.45
malaysiawest               -   99.216        -        -        -        -        -        -    8.167   16.333
mexicocentral              -    93.28        -        -        -        -        -        -        -        -
newzealandnorth            -        -        -        -        -        -        -        -        -        -
northcentralus       117.984   101.76     57.6        -        -    4.408    8.815    17.63    8.376   16.752
northeurope                -   101.76     57.6        -        -    4.408    8.815    17.63    8.376   16.752
norwayeast                 -  121.264        -   46.861        -        -        -        -        -        -
norwaywest                 -        -        -        -        -        -        -        -        -        -
polandcentral        127.816  130.592    73.92    46.89        -    4.775     9.55     19.1        -        -
qatarcentral               -        -        -        -        -        -        -        -        -        -
southafricanorth     168.672  123.808        -   47.844        -        -        -        -        -        -
southafricawest      186.608        -        -        -        -        -        -        -        -        -
southcentralus       117.968        -        -   39.324    32.63    4.408    8.815    17.63     8.38    16.76
southeastasia              -   110.24        -        -        -    4.775     9.55     19.1    9.074   18.148
southindia                 -        -        -   49.483        -        -        -        -        -        -
spaincentral         127.816   110.24        -   40.962        -    4.775     9.55     19.1    9.074   18.148
swedencentral        127.816  110.272     67.2   40.962        -    4.775     9.55     19.1    9.074   18.148
switzerlandnorth     140.598        -        -   46.861        -    5.252   10.505    21.01    9.981   19.963
switzerlandwest            -        -        -   60.919        -        -        -        -        -        -
uaecentral                 -        -        -   60.919        -        -        -        -        -        -
uaenorth             140.598  121.264    68.64   46.861        -        -        -        -     9.98    19.96
uksouth                122.9      106       60   40.962        -    4.591    9.183   18.365    8.725    17.45
ukwest                     -  111.088        -   42.929        -        -        -        -        -        -
westcentralus        117.984        -     57.6        -        -        -        -        -        -        -
westeurope           127.816        -        -   40.962   35.357    4.775     9.55     19.1     9.08    18.16
westindia                  -        -        -        -        -        -        -        -        -        -
westus               127.816   110.24   62.853   42.601        -    4.775     9.55     19.1    9.074   18.148
westus2                98.32     84.8        -    32.77   27.197    3.673    7.346   14.692     6.98    13.96
westus3                98.32     84.8       48    32.77        -    3.673    7.346   14.692     6.98    13.96
"""

# The Slurm head node's general-purpose sizes (Dsv5).
_HEAD_COLUMNS = ("Standard_D2s_v5", "Standard_D4s_v5", "Standard_D8s_v5", "Standard_D16s_v5")
# region               D2s    D4s    D8s   D16s
_HEAD_TABLE = """
australiacentral      0.12   0.24   0.48   0.96
australiacentral2     0.12   0.24   0.48   0.96
australiaeast         0.12   0.24   0.48   0.96
australiasoutheast   0.125   0.25  0.499  0.998
austriaeast          0.115   0.23   0.46   0.92
brazilsouth          0.153  0.306  0.612  1.224
brazilsoutheast      0.199  0.398  0.796  1.591
canadacentral        0.107  0.214  0.428  0.856
canadaeast           0.107  0.214  0.428  0.856
centralindia         0.101  0.202  0.404  0.808
centralus            0.108  0.217  0.434  0.868
chilecentral         0.134  0.269  0.538  1.075
eastasia             0.132  0.264  0.528  1.056
eastus               0.096  0.192  0.384  0.768
eastus2              0.096  0.192  0.384  0.768
francecentral        0.112  0.224  0.448  0.896
francesouth          0.146  0.291  0.582  1.165
germanynorth          0.15  0.299  0.598  1.196
germanywestcentral   0.115   0.23   0.46   0.92
indonesiacentral     0.108  0.216  0.432  0.864
israelcentral        0.112  0.224  0.448  0.896
italynorth           0.112  0.224  0.448  0.896
japaneast            0.124  0.248  0.496  0.992
japanwest            0.124  0.248  0.496  0.992
koreacentral         0.118  0.236  0.472  0.944
koreasouth            0.11  0.221  0.442  0.883
malaysiawest         0.108  0.216  0.432  0.864
mexicocentral        0.106  0.211  0.422  0.845
newzealandnorth      0.126  0.252  0.504  1.008
northcentralus       0.096  0.192  0.384  0.768
northeurope          0.107  0.214  0.428  0.856
norwayeast           0.127  0.253  0.506  1.012
norwaywest           0.164  0.329  0.658  1.316
polandcentral        0.115   0.23   0.46   0.92
qatarcentral         0.118  0.235  0.471  0.942
southafricanorth     0.127  0.254  0.508  1.016
southafricawest      0.165   0.33   0.66  1.321
southcentralus       0.115   0.23  0.461  0.922
southeastasia         0.12   0.24   0.48   0.96
southindia           0.135  0.271  0.541  1.083
spaincentral         0.107  0.214  0.428  0.856
swedencentral        0.102  0.204  0.408  0.816
switzerlandnorth     0.127  0.253  0.506  1.012
switzerlandwest      0.164  0.329  0.657  1.314
uaecentral           0.153  0.306  0.612  1.224
uaenorth             0.118  0.235  0.471  0.942
uksouth              0.111  0.222  0.444  0.888
ukwest               0.116  0.232  0.465  0.929
westcentralus        0.115   0.23  0.461  0.922
westeurope           0.115   0.23   0.46   0.92
westindia            0.123  0.246  0.492  0.983
westus               0.112  0.224  0.448  0.896
westus2              0.096  0.192  0.384  0.768
westus3              0.096  0.192  0.384  0.768
"""


def _parse(columns: tuple[str, ...], table: str) -> dict[str, dict[str, float]]:
    """region -> size -> USD per hour, leaving out the "-" cells."""
    rows: dict[str, dict[str, float]] = {}
    for line in table.strip().splitlines():
        region, *cells = line.split()
        if len(cells) != len(columns):
            raise ValueError(f"regional_prices: {region} has {len(cells)} prices for {len(columns)} sizes")
        rows[region] = {size: float(cell) for size, cell in zip(columns, cells, strict=True) if cell != "-"}
    return rows


_GPU = _parse(_GPU_COLUMNS, _GPU_TABLE)
_HEAD = _parse(_HEAD_COLUMNS, _HEAD_TABLE)
HOURLY_BY_REGION: dict[str, dict[str, float]] = {region: {**_GPU[region], **_HEAD[region]} for region in _GPU}
