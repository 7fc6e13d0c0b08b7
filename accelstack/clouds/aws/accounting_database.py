"""The Slurm accounting database accelstack deploys on AWS (training.scheduler.accounting: database): RDS for MySQL,
Single-AZ. Data only: components/aws/slurm_accounting.py builds it from these sizes and `accelstack cost` prices
them (accelstack.clouds.aws.prices), so the priced database is the deployed one."""

from __future__ import annotations

# slurmdbd's load is a few writes per job: the smallest Graviton burstable class with 2 GiB holds it.
INSTANCE_CLASS = "db.t4g.small"
STORAGE_TYPE = "gp3"
STORAGE_GIB = 20  # gp3's minimum
MAX_STORAGE_GIB = 100  # storage autoscaling's ceiling (a busy cluster's records grow by a few GB a year)
BACKUP_RETENTION_DAYS = 7
