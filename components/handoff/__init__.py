"""The cross-cloud artifact handoff's parts (accelstack.spec.handoff): the serving stack declares, in the TRAINING
cloud where the artifacts are, a reader its replicas federate into with their own platform identity, read-only and
scoped to the artifact prefix, with no long-lived key. The training side writes nothing into the serving account.

Each reader is declared through a second provider pinned to the training account (the deployer needs, there, the
right to create the reader and its grant; nothing else). `declare_reader` returns the values the replica boot needs
(`ReaderValues`), as one Output; `components.handoff.fetch` turns them into the fetch commands.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from accelstack.spec.handoff import ArtifactHandoff


@dataclass(frozen=True)
class ServingIdentity:
    """The replicas' own identity, as the training cloud's trust must name it exactly (no wildcard subject).

    gcp: the service account's unique id (the `sub` of its Google ID tokens). azure: the user-assigned identity's
    principal (object) id, its client id and tenant. aws: the replica role's name and ARN, and the serving account.
    """

    cloud: str
    subject: pulumi.Input[str]  # what the token's `sub` claim carries
    client_id: pulumi.Input[str] = ""  # azure: the identity the boot asks IMDS for
    tenant_id: pulumi.Input[str] = ""  # azure: the token's issuer
    role_name: pulumi.Input[str] = ""  # aws: the assumed-role name GCP's pool matches
    account_id: str = ""  # aws: the serving account GCP's pool trusts


@dataclass(frozen=True)
class ReaderValues:
    """What the boot needs to fetch, all resolved: the AWS role to assume (aws training), the workload identity
    provider audience (gcp training), the managed identity's client and tenant ids (azure training), and the
    audience the replica's own token must carry."""

    token_audience: str
    role_arn: str = ""
    provider_audience: str = ""
    client_id: str = ""
    tenant_id: str = ""
    serving_client_id: str = ""  # azure serving: which identity IMDS issues the token for


@dataclass(frozen=True)
class FederatedReader:
    handoff: ArtifactHandoff
    values: pulumi.Output[ReaderValues]
    grants: list[pulumi.Resource]  # the replica group waits for them


def declare_reader(
    name: str, handoff: ArtifactHandoff, identity: ServingIdentity, parent: pulumi.Resource
) -> FederatedReader:
    """The reader in `handoff.training_cloud`, trusting `identity` only (imports are lazy: a stack loads only the
    provider SDK of the cloud it reads from)."""
    per_replica = {"oci": "handoff_reader", "gcp": "handoff_vultr_reader", "aws": "handoff_vultr_reader"}
    if handoff.serving_cloud == "vultr" and handoff.training_cloud in per_replica:
        # No identity to trust: a credential per replica (the replicas declare them), from the training cloud's own
        # folder (components/oci/handoff_reader.py: PARs; components/<gcp|aws>/handoff_vultr_reader.py: access
        # tokens, STS sessions).
        import importlib

        from accelstack.clouds import registry

        module = f"{registry.get(handoff.training_cloud).components}.{per_replica[handoff.training_cloud]}"
        made: FederatedReader = importlib.import_module(module).reader(name, handoff, parent)
        return made
    if handoff.training_cloud == "aws":
        from accelstack.components.handoff.aws_reader import aws_reader

        return aws_reader(name, handoff, identity, parent)
    if handoff.training_cloud == "gcp":
        from accelstack.components.handoff.gcp_reader import gcp_reader

        return gcp_reader(name, handoff, identity, parent)
    from accelstack.components.handoff.azure_reader import azure_reader

    return azure_reader(name, handoff, identity, parent)
