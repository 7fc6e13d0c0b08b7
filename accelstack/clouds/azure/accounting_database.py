"""The Slurm accounting database accelstack deploys on Azure (training.scheduler.accounting: database): Azure Database
for MySQL flexible server, no high availability. Data only: components/azure/slurm_accounting.py builds it from these
sizes and `accelstack cost` prices them (accelstack.clouds.azure.prices)."""

from __future__ import annotations

# Burstable B1ms (1 vCore, 2 GiB): slurmdbd writes a few rows per job.
SKU_NAME = "Standard_B1ms"
SKU_TIER = "Burstable"
STORAGE_GIB = 20  # the flexible server's minimum; grows by itself (auto_grow)
BACKUP_RETENTION_DAYS = 7
