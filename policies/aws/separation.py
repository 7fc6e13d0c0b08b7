"""AWS accounts the separation pack trusts beside the two sides: the accounts AWS delivers load balancer
access logs from. Cross-account access itself is judged over the access graph (policies/aws/access.py
reads AWS's edges; policies/separation/access_rules.py judges them)."""

from __future__ import annotations

# AWS-owned accounts that deliver ALB/ELB access logs into a bucket (legacy regions use an account
# principal instead of the logdelivery.elasticloadbalancing.amazonaws.com service principal).
# Source: https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html
# (as of 2025-06; ap-southeast-3 added 2026-12-02). The pack runs without the project installed, so
# the table is copied from accelstack.components.aws.serving.edge.ELB_LOG_ACCOUNTS; a test keeps the two equal.
ELB_LOG_DELIVERY_ACCOUNTS = frozenset(
    {
        "127311923021",
        "033677994240",
        "027434742980",
        "797873946194",  # us-east-1/2, us-west-1/2
        "098369216593",
        "754344448648",
        "718504428378",
        "383597477331",  # af-south-1, ap-east-1, ap-south-1, ap-northeast-3
        "600734575887",
        "114774131450",
        "783225319266",
        "582318560864",  # ap-northeast-2, ap-southeast-1/2, ap-northeast-1
        "985666609251",
        "054676820928",
        "156460612806",
        "652711504416",  # ca-central-1, eu-central-1, eu-west-1/2
        "635631232127",
        "009996457667",
        "897822967062",
        "076674570225",  # eu-south-1, eu-west-3, eu-north-1, me-south-1
        "507241528517",
        "048591011584",
        "190560391635",
        "638102146993",  # sa-east-1, us-gov-west-1/east-1, cn-north-1
        "037604701340",
        "589379963580",  # cn-northwest-1, ap-southeast-3
    }
)
