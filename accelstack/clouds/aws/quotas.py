"""Which EC2 service quota each accelerated instance type draws on (pure data).

EC2 counts running instances against vCPU-based quotas per instance family class, per account and Region
(Service Quotas, service code `ec2`; "On-Demand Instance quotas" and "Spot Instance quotas" in the EC2 user
guide, ec2-resource-limits). Instances in a Capacity Block or a capacity reservation draw on what was bought,
so only on-demand and spot are listed.
"""

from __future__ import annotations

from accelstack.clouds.aws.catalog import ACCELERATED_INSTANCES
from accelstack.clouds.base import Quota

# Instance name prefix -> (on-demand quota, spot quota). Prefixes are matched longest first (trn before t).
FAMILY_CLASSES: dict[str, tuple[str, str]] = {
    "p": ("Running On-Demand P instances", "All P Spot Instance Requests"),
    "g": ("Running On-Demand G and VT instances", "All G and VT Spot Instance Requests"),
    "trn": ("Running On-Demand Trn instances", "All Trn Spot Instance Requests"),
    "inf": ("Running On-Demand Inf instances", "All Inf Spot Instance Requests"),
}


def _family_class(instance: str) -> tuple[str, str]:
    family = instance.split(".", 1)[0]
    for prefix in sorted(FAMILY_CLASSES, key=len, reverse=True):
        if family.startswith(prefix):
            return FAMILY_CLASSES[prefix]
    raise ValueError(f"{instance}: no EC2 quota class for its family; add it to FAMILY_CLASSES")


# Service Quotas codes of the quotas above (service code `ec2`), what aws.servicequotas.ServiceQuota requests by:
# `aws service-quotas list-service-quotas --service-code ec2` lists them (the code is stable, the name may be renamed).
SERVICE_CODE = "ec2"
QUOTA_CODES: dict[str, str] = {
    "Running On-Demand P instances": "L-417A185B",
    "Running On-Demand G and VT instances": "L-DB2E81BA",
    "Running On-Demand Trn instances": "L-2C3B7624",
    "Running On-Demand Inf instances": "L-1945791B",
    "All P Spot Instance Requests": "L-7212CCBC",
    "All G and VT Spot Instance Requests": "L-3819A6DF",
    "All Trn Spot Instance Requests": "L-6B0D517C",
    "All Inf Spot Instance Requests": "L-B5D1601B",
}

QUOTAS: dict[str, dict[str, Quota]] = {
    capacity: {
        name: Quota(quota, "vCPUs", QUOTA_CODES[quota])
        for name in ACCELERATED_INSTANCES
        for quota in [_family_class(name)[index]]
    }
    for capacity, index in (("on-demand", 0), ("spot", 1))
}
