"""Google Cloud training artifacts read from AWS or Azure replicas: a workload identity pool in the TRAINING project
with one provider trusting the replicas' identity only, and objectViewer on the bucket for that principal, limited
by an IAM condition to the artifact prefixes (Cloud Storage grants a pool's principals directly: no service account
key, no impersonation). cloud.google.com/iam/docs/workload-identity-federation-with-other-clouds.

- AWS: the provider's `aws` block names the serving account; the mapped `attribute.aws_role` is the assumed role's
  name, and the condition admits the replica role only.
- Azure: an OIDC provider for the tenant's v2.0 issuer, audience api://AzureADTokenExchange; the principal is the
  managed identity's object id (`sub`).
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp.names import resource_id
from accelstack.components.handoff import FederatedReader, ReaderValues, ServingIdentity
from accelstack.spec.handoff import ArtifactHandoff, ArtifactLocation

ENTRA_AUDIENCE = "api://AzureADTokenExchange"


def prefix_condition(bucket: str, prefixes: list[str]) -> str:
    """Object reads under the prefixes, and listings of them (objects.list is judged on the bucket, with the list
    prefix attribute: cloud.google.com/storage/docs/access-control/iam#conditions)."""
    reads = " || ".join(f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{p}")' for p in prefixes)
    lists = " || ".join(
        f'api.getAttribute("storage.googleapis.com/objectListPrefix", "").startsWith("{p}")' for p in prefixes
    )
    return f'{reads} || (resource.type == "storage.googleapis.com/Bucket" && ({lists}))'


def by_bucket(locations: tuple[ArtifactLocation, ...]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for loc in locations:
        found.setdefault(loc.bucket, [])
        if loc.prefix not in found[loc.bucket]:
            found[loc.bucket].append(loc.prefix)
    return found


def prefix_read_grants(
    name: str, handoff: ArtifactHandoff, member: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> list[gcp.storage.BucketIAMMember]:
    """objectViewer for `member` on each artifact bucket, conditioned to its artifact prefixes."""
    return [
        gcp.storage.BucketIAMMember(
            f"{name}-artifact-read-{index}",
            bucket=bucket,
            role="roles/storage.objectViewer",
            member=member,
            condition=gcp.storage.BucketIAMMemberConditionArgs(
                title="artifact-prefix-only", expression=prefix_condition(bucket, prefixes)
            ),
            opts=opts,
        )
        for index, (bucket, prefixes) in enumerate(sorted(by_bucket(handoff.locations).items()))
    ]


def gcp_reader(
    name: str, handoff: ArtifactHandoff, identity: ServingIdentity, parent: pulumi.Resource
) -> FederatedReader:
    provider = gcp.Provider(
        f"{name}-artifacts-gcp",
        project=handoff.training_account,  # the pool and the grant live in the training project
        default_labels={"accelstack-workload": "serving", "accelstack-stack": pulumi.get_stack()},
        opts=pulumi.ResourceOptions(parent=parent),
    )
    opts = pulumi.ResourceOptions(parent=parent, provider=provider)
    # Pool and provider ids: 4 to 32 lowercase letters, digits, hyphens; a deleted pool keeps its id 30 days.
    pool = gcp.iam.WorkloadIdentityPool(
        f"{name}-artifacts",
        workload_identity_pool_id=resource_id(name, "artifacts", 32),
        display_name=f"{name} artifact readers"[:32],
        description=f"accelstack serving {name} ({identity.cloud}) reads the published model prefix",
        opts=opts,
    )
    if identity.cloud == "aws":
        member_suffix = pulumi.Output.from_input(identity.role_name).apply(lambda r: f"attribute.aws_role/{r}")
        pool_provider = gcp.iam.WorkloadIdentityPoolProvider(
            f"{name}-artifacts-aws",
            workload_identity_pool_id=pool.workload_identity_pool_id,
            workload_identity_pool_provider_id=resource_id(name, "aws", 32),
            aws=gcp.iam.WorkloadIdentityPoolProviderAwsArgs(account_id=identity.account_id),
            attribute_mapping={
                "google.subject": "assertion.arn",
                "attribute.aws_role": "assertion.arn.extract('assumed-role/{role}/')",
            },
            attribute_condition=pulumi.Output.from_input(identity.role_name).apply(
                lambda r: f'attribute.aws_role == "{r}"'
            ),
            opts=opts,
        )
        audience = ""  # the AWS credential source signs GetCallerIdentity; no token audience
    else:
        member_suffix = pulumi.Output.from_input(identity.subject).apply(lambda s: f"subject/{s}")
        pool_provider = gcp.iam.WorkloadIdentityPoolProvider(
            f"{name}-artifacts-entra",
            workload_identity_pool_id=pool.workload_identity_pool_id,
            workload_identity_pool_provider_id=resource_id(name, "entra", 32),
            oidc=gcp.iam.WorkloadIdentityPoolProviderOidcArgs(
                issuer_uri=pulumi.Output.from_input(identity.tenant_id).apply(
                    lambda t: f"https://login.microsoftonline.com/{t}/v2.0"
                ),
                allowed_audiences=[ENTRA_AUDIENCE],
            ),
            attribute_mapping={"google.subject": "assertion.sub"},
            attribute_condition=pulumi.Output.from_input(identity.subject).apply(lambda s: f'assertion.sub == "{s}"'),
            opts=opts,
        )
        audience = ENTRA_AUDIENCE
    kind = "principalSet" if identity.cloud == "aws" else "principal"
    member = pulumi.Output.all(pool.name, member_suffix).apply(lambda v: f"{kind}://iam.googleapis.com/{v[0]}/{v[1]}")
    grants: list[pulumi.Resource] = [pool_provider, *prefix_read_grants(name, handoff, member, opts)]
    values = pulumi.Output.all(pool_provider.name, identity.client_id).apply(
        lambda v: ReaderValues(
            token_audience=audience, provider_audience=f"//iam.googleapis.com/{v[0]}", serving_client_id=v[1] or ""
        )
    )
    return FederatedReader(handoff, values, grants)
