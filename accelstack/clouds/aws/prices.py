"""AWS prices, us-east-1, USD. Data only; `accelstack.planner.pricing` reads and overrides it.

CHECKED is the date this table was last compared with the sources; prices change (AWS cut P4/P5
on-demand prices by up to 45% on 2025-06-05), so `accelstack cost --prices FILE` replaces any entry.

Sources:
- EC2 On-Demand: https://aws.amazon.com/ec2/pricing/on-demand/ (Linux, us-east-1), and the AWS
  announcement "up to 45% price reduction for Amazon EC2 NVIDIA GPU-accelerated instances"
  (2025-06-05) for p4d/p4de/p5/p5en. p5e.48xlarge is sold mainly as Capacity Blocks; its entry
  is the p5en price (same H200 GPUs), marked as an estimate.
- FSx for Lustre: https://aws.amazon.com/fsx/lustre/pricing/ (SSD, per GB-month of provisioned capacity).
- S3 Standard: https://aws.amazon.com/s3/pricing/ (first 50 TB / month).
- EBS gp3: https://aws.amazon.com/ebs/pricing/ (serving replicas' root volumes, warm pool included).
- Spot discount: AWS advertises "up to 90%" off; GPU instances observed on the Spot pricing history
  mostly at 55-70% off, so 60% is the default. An assumption: override it with --spot-discount.
"""

from __future__ import annotations

from accelstack.clouds.not_priced import serving_only

CHECKED = "2026-12-02"
REGION = "us-east-1"

ON_DEMAND_HOURLY: dict[str, float] = {
    "p5.48xlarge": 55.04,
    "p5en.48xlarge": 63.296,
    "p5e.48xlarge": 63.296,  # an estimate: the p5en price (same H200 GPUs), see the docstring
    "p4de.24xlarge": 27.447,
    "p4d.24xlarge": 21.958,
    "g5.xlarge": 1.006,
    "g5.2xlarge": 1.212,
    "g5.4xlarge": 1.624,
    "g5.8xlarge": 2.448,
    "g5.12xlarge": 5.672,
    "g5.16xlarge": 4.096,
    "g5.24xlarge": 8.144,
    "g5.48xlarge": 16.288,
    "g6.xlarge": 0.8048,
    "g6.2xlarge": 0.9776,
    "g6.4xlarge": 1.3232,
    "g6.8xlarge": 2.0144,
    "g6.12xlarge": 4.6016,
    "g6.16xlarge": 3.3968,
    "g6.24xlarge": 6.6752,
    "g6.48xlarge": 13.3504,
    "g6e.xlarge": 1.861,
    "g6e.2xlarge": 2.24208,
    "g6e.4xlarge": 3.00424,
    "g6e.8xlarge": 4.52856,
    "g6e.12xlarge": 10.49264,
    "g6e.16xlarge": 7.57719,
    "g6e.24xlarge": 15.06559,
    "g6e.48xlarge": 30.13118,
    "trn1.2xlarge": 1.34375,
    "trn1.32xlarge": 21.50,
    "trn1n.32xlarge": 24.78,
    "inf2.xlarge": 0.7582,
    "inf2.8xlarge": 1.9679,
    "inf2.24xlarge": 6.4906,
    "inf2.48xlarge": 12.9813,
    # Head nodes and other CPU instances the stacks create.
    "m7i.2xlarge": 0.4032,
    "m7i.xlarge": 0.2016,
}

# FSx for Lustre SSD, $/GB-month, by (deployment type, throughput MB/s/TiB; None = not settable).
LUSTRE_GB_MONTH: dict[tuple[str, int | None], float] = {
    ("PERSISTENT_2", 125): 0.145,
    ("PERSISTENT_2", 250): 0.210,
    ("PERSISTENT_2", 500): 0.340,
    ("PERSISTENT_2", 1000): 0.600,
    ("SCRATCH_2", None): 0.140,
}

S3_STANDARD_GB_MONTH = 0.023
# EBS gp3 (https://aws.amazon.com/ebs/pricing/): storage per GB-month, and provisioned IOPS above 3,000
# and throughput above 125 MiB/s, per month.
EBS_GP3_GB_MONTH = 0.08
EBS_GP3_IOPS_MONTH = 0.005
EBS_GP3_FREE_IOPS = 3000
EBS_GP3_MIBPS_MONTH = 0.040
EBS_GP3_FREE_MIBPS = 125
# Priced by usage or per request, which a spec does not state: listed by `accelstack cost` as not priced.
NOT_PRICED = (
    "NAT gateway (hourly + per GB)", serving_only("ALB (hourly + LCU)"), serving_only("WAF (web ACL, rules, requests)"),
    serving_only("SQS requests"),
    "data transfer", "CloudWatch logs and metrics", "KMS requests", "S3 requests",
)  # fmt: skip
DEFAULT_SPOT_DISCOUNT = 0.60

# Application Load Balancer, https://aws.amazon.com/elasticloadbalancing/pricing/ : per hour, and per
# LCU-hour; an LCU is 25 new connections/s, 3000 active connections/min, 1 GB/h processed or 1000 rule
# evaluations/s, billed on the largest dimension.
ALB_HOURLY = 0.0225
ALB_LCU_HOURLY = 0.008
ALB_NEW_CONNECTIONS_PER_LCU = 25.0
# SQS standard queue, https://aws.amazon.com/sqs/pricing/ : per million API requests (each 64 KB chunk
# of a payload is one request).
SQS_PER_MILLION_REQUESTS = 0.40

# The Slurm accounting database (RDS for MySQL, Single-AZ, us-east-1; https://aws.amazon.com/rds/mysql/pricing/,
# read 2026-12-06 as published copies of the page give it, the page itself rendering in the browser): db.t4g.small
# $0.032/h (2026 breakdowns of the page agree), gp3 storage $0.115/GB-month, backup storage $0.095/GB-month beyond
# the free allowance (backups up to 100% of the provisioned storage of a region's databases are free).
RDS_MYSQL_HOURLY: dict[str, float] = {"db.t4g.small": 0.032}
RDS_GP3_GB_MONTH = 0.115
RDS_BACKUP_GB_MONTH = 0.095
