"""AWS training artifacts read from GCP or Azure replicas: an IAM role in the TRAINING account that the replicas
assume by web identity (sts:AssumeRoleWithWebIdentity), allowed only GetObject under the artifact prefixes, a List
limited to them and Decrypt through S3. Same-account grants: the training stack's key policy delegates to the
account's IAM (components/aws/kms.py), and its bucket policy needs no statement for a role of its own account.

Trust (IAM User Guide, "Creating a role for web identity or OIDC federation", "Available keys for OIDC federation"):
- Google: the built-in provider `accounts.google.com`; `accounts.google.com:sub` and `:aud` (the ID token's `azp`)
  are the service account's unique id, `:oaud` the audience the replica asked the metadata server for.
- Microsoft Entra ID: an IAM OIDC provider for the tenant's v2.0 issuer, audience api://AzureADTokenExchange (the
  audience a managed identity's token for workload identity federation carries); `sub` is the identity's object id.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from accelstack.components.handoff import FederatedReader, ReaderValues, ServingIdentity
from accelstack.spec.handoff import ArtifactHandoff

GOOGLE_AUDIENCE = "sts.amazonaws.com"
ENTRA_AUDIENCE = "api://AzureADTokenExchange"


def read_policy(handoff: ArtifactHandoff) -> dict[str, Any]:
    """GetObject under each prefix, ListBucket limited to the prefixes, Decrypt only through S3 in the store's Region."""
    locations = sorted({(loc.bucket, loc.prefix) for loc in handoff.locations})
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ReadArtifactPrefix",
            "Effect": "Allow",
            "Action": ["s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{bucket}/{prefix}*" for bucket, prefix in locations],
        }
    ]
    for index, bucket in enumerate(sorted({bucket for bucket, _ in locations})):
        statements.append(
            {
                "Sid": f"ListArtifactPrefix{index}",
                "Effect": "Allow",
                "Action": ["s3:ListBucket"],
                "Resource": f"arn:aws:s3:::{bucket}",
                "Condition": {"StringLike": {"s3:prefix": [f"{p}*" for b, p in locations if b == bucket]}},
            }
        )
    statements.append(
        {
            "Sid": "DecryptArtifactsViaS3",
            "Effect": "Allow",
            "Action": ["kms:Decrypt"],
            "Resource": f"arn:aws:kms:{handoff.region}:{handoff.training_account}:key/*",
            "Condition": {"StringEquals": {"kms:ViaService": f"s3.{handoff.region}.amazonaws.com"}},
        }
    )
    return {"Version": "2012-10-17", "Statement": statements}


def web_identity_trust(federated: str, issuer: str, audience: str, subject: str, *, google: bool) -> str:
    """The role's trust: one federated principal, its exact subject and audience (never a wildcard)."""
    conditions = (
        {f"{issuer}:sub": subject, f"{issuer}:aud": subject, f"{issuer}:oaud": audience}
        if google
        else {f"{issuer}:sub": subject, f"{issuer}:aud": audience}
    )
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": federated},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {"StringEquals": conditions},
                }
            ],
        }
    )


def training_provider(name: str, handoff: ArtifactHandoff, parent: pulumi.Resource) -> aws.Provider:
    """The aws provider the reader is declared through: the training account's, in the store's region."""
    return aws.Provider(
        f"{name}-artifacts-aws",
        region=handoff.region,
        allowed_account_ids=[handoff.training_account],  # the reader lands in the training account, never elsewhere
        default_tags=aws.ProviderDefaultTagsArgs(
            tags={"accelstack:workload": "serving", "accelstack:stack": pulumi.get_stack()}
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def aws_reader(
    name: str, handoff: ArtifactHandoff, identity: ServingIdentity, parent: pulumi.Resource
) -> FederatedReader:
    opts = pulumi.ResourceOptions(parent=parent, provider=training_provider(name, handoff, parent))
    grants: list[pulumi.Resource] = []
    if identity.cloud == "gcp":
        audience = GOOGLE_AUDIENCE
        trust = pulumi.Output.from_input(identity.subject).apply(
            lambda sub: web_identity_trust("accounts.google.com", "accounts.google.com", audience, sub, google=True)
        )
    else:
        audience = ENTRA_AUDIENCE
        oidc = aws.iam.OpenIdConnectProvider(
            f"{name}-artifacts-entra",
            url=pulumi.Output.from_input(identity.tenant_id).apply(
                lambda t: f"https://login.microsoftonline.com/{t}/v2.0"
            ),
            client_id_lists=[audience],
            opts=opts,
        )
        grants.append(oidc)
        trust = pulumi.Output.all(oidc.arn, identity.tenant_id, identity.subject).apply(
            lambda v: web_identity_trust(v[0], f"login.microsoftonline.com/{v[1]}/v2.0", audience, v[2], google=False)
        )
    # Named, not generated: the replicas' boot names the ARN, known before the role exists (and in a preview).
    role_name = f"accelstack-{name}-artifact-reader"[:64]
    role_arn = f"arn:aws:iam::{handoff.training_account}:role/{role_name}"
    role = aws.iam.Role(
        f"{name}-artifact-reader",
        name=role_name,
        assume_role_policy=trust,
        description=f"accelstack serving {name} ({identity.cloud}): read the published model prefix",
        max_session_duration=3600,
        opts=opts,
    )
    grants.append(
        aws.iam.RolePolicy(f"{name}-artifact-read", role=role.id, policy=json.dumps(read_policy(handoff)), opts=opts)
    )
    values = pulumi.Output.from_input(identity.client_id).apply(
        lambda client_id: ReaderValues(token_audience=audience, role_arn=role_arn, serving_client_id=client_id or "")
    )
    return FederatedReader(handoff, values, grants)
