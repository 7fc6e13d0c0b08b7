"""AWS serving rules: what ELB, ACM, SQS, EC2 and the inference server would reject, or what would
break the service's promise (answers while someone waits), checked before anything exists.

GPU memory fit needs the planner's model sizing, so that rule lives in `accelstack.planner_rules`
(a rule plug-in: the spec layer never imports the planner). These rules run for aws stacks only: the
AWS registration names this module (`Cloud.rules`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from accelstack.spec.models import ServingStack
from accelstack.spec.problems import Level, Problem
from accelstack.spec.uris import split_bucket_uri
from accelstack.spec.validators import rule

# Source: ACM API reference "CertificateArn" pattern and IAM "ARN format".
ACM_CERTIFICATE_ARN = re.compile(
    r"^arn:(?P<partition>aws|aws-cn|aws-us-gov):acm:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):"
    r"certificate/(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$"
)


@rule(workload="serving")
def certificate_is_an_acm_arn(spec: ServingStack) -> Iterator[Problem]:
    """An ALB listener takes an ACM certificate from its own Region."""
    serving = spec.serving
    path = "serving.loadBalancer.certificate"
    arn = serving.load_balancer.certificate
    match = ACM_CERTIFICATE_ARN.match(arn)
    if match is None:
        yield Problem(
            path, f"{arn!r} is not an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<uuid>)"
        )
        return
    if match["region"] != spec.account.region:
        yield Problem(
            path,
            f"certificate is in {match['region']} but the load balancer is in {spec.account.region}; "
            "an ALB can only use an ACM certificate from its own Region",
        )


@rule(workload="serving")
def health_path_absolute(spec: ServingStack) -> Iterator[Problem]:
    serving = spec.serving
    path = serving.load_balancer.health_path
    if not path.startswith("/") or len(path) > 1024:
        yield Problem(
            "serving.loadBalancer.healthPath",
            f"{path!r} must start with / (ELB health check path, at most 1024 characters)",
        )


@rule(workload="serving")
def model_artifacts_on_s3(spec: ServingStack) -> Iterator[Problem]:
    """Replicas pull weights and adapters from S3 (the training account's artifact prefix)."""
    serving = spec.serving
    uris = [("serving.model.weightsUri", serving.model.weights_uri)]
    uris += [(f"serving.model.adapters.{i}.uri", a.uri) for i, a in enumerate(serving.model.adapters)]
    for path, uri in uris:
        if uri.startswith("s3://") and not split_bucket_uri(uri)[1].strip("/"):  # other schemes: a spec rule
            yield Problem(
                path,
                f"{uri!r} names a whole bucket; point at the artifact prefix (e.g. s3://bucket/models/name/) "
                "so the read grant can be limited to it",
            )
    names = [a.name for a in serving.model.adapters]
    for index, name in enumerate(names):
        if name in names[:index]:
            yield Problem(f"serving.model.adapters.{index}.name", f"duplicate adapter name {name!r}")


# Subnets carved from a new serving VPC: one public and one private per AZ.
SERVING_ZONES = 2
SERVING_MAX_VPC_PREFIX = 24  # 4 subnets of /26 still fit


@rule(workload="serving")
def serving_network_spans_zones(spec: ServingStack) -> Iterator[Problem]:
    """An ALB needs subnets in at least two AZs, and replicas spread over them survive an AZ loss."""
    serving = spec.serving
    network = serving.network
    if network.subnet_id:
        yield Problem(
            "serving.network.subnetId",
            f"serving needs private subnets in at least {SERVING_ZONES} AZs; use subnetIds (a list)",
        )
    if network.subnet_ids is not None and len(set(network.subnet_ids)) < SERVING_ZONES:
        yield Problem(
            "serving.network.subnetIds",
            f"{len(set(network.subnet_ids))} subnet(s) given; serving needs private subnets in at least {SERVING_ZONES} AZs",
        )
    if network.vpc_id is not None and len(set(network.public_subnet_ids or [])) < SERVING_ZONES:
        yield Problem(
            "serving.network.publicSubnetIds",
            f"an existing VPC needs public subnets in at least {SERVING_ZONES} AZs for the internet-facing load balancer",
        )
    if network.availability_zone:
        yield Problem(
            "serving.network.availabilityZone",
            f"pins serving to one AZ; replicas and the load balancer need at least {SERVING_ZONES}",
        )
    if network.vpc_id is None and network.vpc_cidr:
        prefix = int(network.vpc_cidr.split("/")[1])
        if prefix > SERVING_MAX_VPC_PREFIX:
            yield Problem(
                "serving.network.vpcCidr",
                f"/{prefix} is too small for {2 * SERVING_ZONES} subnets (public + private per AZ); "
                f"use /{SERVING_MAX_VPC_PREFIX} or larger (e.g. /16)",
            )


@rule(workload="serving")
def warm_pool_within_group(spec: ServingStack) -> Iterator[Problem]:
    serving = spec.serving
    if serving.replicas.warm_pool is None:
        return
    replicas = serving.replicas
    headroom = replicas.max - replicas.min
    if serving.replicas.warm_pool > headroom:
        yield Problem(
            "serving.replicas.warmPool",
            f"{replicas.warm_pool} warm instances but the group can only grow by max - min = {headroom}; "
            "the extra stopped instances are never used (their EBS volumes are still billed)",
            Level.WARNING,
        )
