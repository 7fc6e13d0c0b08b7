"""Readers for replicas with no platform identity (Vultr's): each replica gets a short-lived bearer credential of its
own, declared by the serving stack in the TRAINING account from the replica's clock (a `time_static`,
components/vultr/serving/weights_key.py ReplicaClocks) and delivered in its user data; its prepare step fetches the
artifact prefixes with it once, then deletes its copy. Per training cloud (accelstack.spec.handoff PER_REPLICA_PAIRS):

- OCI: one pre-authenticated request per replica and prefix (components/handoff/oci_par.py);
- Google Cloud: one OAuth access token per replica of a reader service account (components/gcp/handoff_vultr_reader.py,
  gcs_token.py);
- AWS: one STS session per replica of a reader role trusting the deployer (components/aws/handoff_vultr_reader.py,
  s3_session.py).

`ReplicaFetch` is what the boot document needs (pure: `accelstack render` has no reader), `PerReplicaReader` what
the replicas declare.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from accelstack.components.handoff import FederatedReader
from accelstack.spec.handoff import ArtifactHandoff


@dataclass(frozen=True)
class ReplicaFetch:
    """Where the credential sits on the replica (root only, 0600), what stands in its place before it exists (the
    render, the clock's digest), and the prepare step's lines that fetch with it and delete it."""

    credential_file: str
    placeholder: list[str]
    lines: list[str]


def replica_fetch(handoff: ArtifactHandoff, destinations: list[str]) -> ReplicaFetch:
    """The fetch of `handoff`'s locations into `destinations` (the weights first, then each adapter)."""
    if handoff.training_cloud == "gcp":
        from accelstack.components.handoff.gcs_token import TOKEN_FILE, TOKEN_PLACEHOLDER, gcs_fetch_script

        return ReplicaFetch(TOKEN_FILE, [TOKEN_PLACEHOLDER], gcs_fetch_script(handoff, destinations))
    if handoff.training_cloud == "aws":
        from accelstack.components.handoff.s3_session import CREDENTIAL_FILE, CREDENTIAL_PLACEHOLDER, s3_fetch_script

        return ReplicaFetch(CREDENTIAL_FILE, list(CREDENTIAL_PLACEHOLDER), s3_fetch_script(handoff, destinations))
    from accelstack.components.handoff.oci_par import PAR_URL_FILE, par_fetch_script, par_placeholders

    return ReplicaFetch(PAR_URL_FILE, par_placeholders(handoff), par_fetch_script(handoff, destinations))


@dataclass(frozen=True)
class PerReplicaReader(FederatedReader):
    """A reader whose credentials come with the replicas: `replica_credentials` declares replica `index`'s (appended
    to `grants`) and answers the lines of its credential file."""

    def replica_credentials(
        self, name: str, index: int, clock: pulumi.Output[str], parent: pulumi.Resource
    ) -> pulumi.Output[list[str]]:
        raise NotImplementedError(f"{type(self).__name__} declares no per-replica credential")
