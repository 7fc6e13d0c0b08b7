"""The Slurm accounting database accelstack deploys on Google Cloud (training.scheduler.accounting: database): Cloud
SQL for MySQL, Enterprise edition, zonal. Data only: components/gcp/slurm_accounting.py builds it from these sizes and
`accelstack cost` prices them (accelstack.clouds.gcp.prices)."""

from __future__ import annotations

# One vCPU and 3.75 GB, Enterprise edition (shared-core tiers are not covered by the SLA and not offered for 8.4).
VCPUS = 1
MEMORY_MB = 3840
TIER = f"db-custom-{VCPUS}-{MEMORY_MB}"
DISK_TYPE = "PD_SSD"
DISK_GIB = 10  # Cloud SQL's minimum; grows by itself (disk_autoresize)
RETAINED_BACKUPS = 7
