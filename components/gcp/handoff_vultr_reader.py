"""Google Cloud training artifacts read from Vultr replicas (no instance identity to federate): a reader service
account in the TRAINING project, declared by the serving stack through a second gcp provider pinned to it, with
roles/storage.objectViewer on the bucket conditioned to the artifact prefixes (gcp_reader.prefix_condition), and one
OAuth access token of it per replica (components/gcp/handoff_token.py), minted from the replica's clock and carried
in its user data (the fetch: components/handoff/gcs_token.py).

The service account has no key: only the deployer mints its tokens, and needs roles/iam.serviceAccountTokenCreator on
it for that (the stack cannot name the deployer: a Vultr stack has no Google account of its own, and Application
Default Credentials may be a person or a workload; docs/cross-cloud.md lists it as a prerequisite). A token lives at
most serving.artifactUrlLifetimeMinutes (<= 60) and cannot be revoked: removing the grant stops it reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp.names import resource_id
from accelstack.components.gcp.handoff_token import READ_ONLY_SCOPE, GcpAccessToken
from accelstack.components.handoff import ReaderValues
from accelstack.components.handoff.gcp_reader import prefix_read_grants
from accelstack.components.handoff.per_replica import PerReplicaReader
from accelstack.spec.handoff import ArtifactHandoff


@dataclass(frozen=True)
class GcsTokenReader(PerReplicaReader):
    """The reader service account's email; `replica_credentials` mints one replica's token."""

    email: Any = None  # pulumi.Output[str]
    bucket_grants: tuple[pulumi.Resource, ...] = ()

    def replica_credentials(
        self, name: str, index: int, clock: pulumi.Output[str], parent: pulumi.Resource
    ) -> pulumi.Output[list[str]]:
        token = GcpAccessToken(
            f"{name}-replica-{index}-weights-token",
            service_account=self.email,
            clock=clock,
            lifetime_seconds=self.handoff.url_lifetime_minutes * 60,
            scope=READ_ONLY_SCOPE,
            # The grant first: a token minted before it reads nothing until it lands.
            opts=pulumi.ResourceOptions(parent=parent, depends_on=list(self.bucket_grants)),
        )
        self.grants.append(token)
        return token.access_token.apply(lambda value: [value])


def reader(name: str, handoff: ArtifactHandoff, parent: pulumi.Resource) -> GcsTokenReader:
    provider = gcp.Provider(
        f"{name}-artifacts-gcp",
        project=handoff.training_account,  # the reader and its grant live in the training project, never elsewhere
        default_labels={"accelstack-workload": "serving", "accelstack-stack": pulumi.get_stack()},
        opts=pulumi.ResourceOptions(parent=parent),
    )
    opts = pulumi.ResourceOptions(parent=parent, provider=provider)
    account = gcp.serviceaccount.Account(
        f"{name}-artifact-reader",
        account_id=resource_id(name, "reader", 30),  # 6..30 characters
        display_name=f"{name} artifact reader"[:100],
        description=f"accelstack serving {name} (vultr): read the published model prefix with per-replica tokens",
        opts=opts,
    )
    member = account.email.apply(lambda email: f"serviceAccount:{email}")
    grants: list[pulumi.Resource] = [account, *prefix_read_grants(name, handoff, member, opts)]
    values = pulumi.Output.from_input(ReaderValues(token_audience=""))
    return GcsTokenReader(handoff, values, grants, email=account.email, bucket_grants=tuple(grants))
