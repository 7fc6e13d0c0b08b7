"""The fetch lines a replica's prepare step runs, as an Output (the reader's ids exist once it is created)."""

from __future__ import annotations

import pulumi

from accelstack.components.handoff import FederatedReader
from accelstack.components.handoff.fetch import fetch_script
from accelstack.components.replica.cloud_config import MODEL_DIR
from accelstack.spec.models import ServingSpec


def artifact_syncs(serving: ServingSpec) -> list[tuple[str, str]]:
    """(uri, destination) of the weights and each adapter, where every cloud's replica keeps them."""
    model = serving.model
    return [(model.weights_uri, f"{MODEL_DIR}/base")] + [
        (a.uri, f"{MODEL_DIR}/adapters/{a.name}") for a in model.adapters
    ]


def artifact_handoff_values(serving: ServingSpec, reader: FederatedReader | None) -> pulumi.Output[list[str] | None]:
    """The fetch lines for another cloud's weights; None (the cloud's own sync) without a reader."""
    if reader is None:
        return pulumi.Output.from_input(None)
    handoff = reader.handoff
    return reader.values.apply(lambda values: fetch_script(handoff, values, artifact_syncs(serving)))
