"""Issue 31, the copy handoff: the separation pack judges a serving stack's ArtifactCopy (components/handoff/copy.py)
and the OCI pre-authenticated request its source URL comes from, on hand-built exports. The legitimate shapes (an
AWS stack copying from OCI through a PAR; a Vultr stack copying from Azure Blob with the deployer's token) get no
verdict from either pack; each mutation (a write-capable or bucket-wide PAR, a PAR of another tenancy, a literal
URL, a destination in the training store or the bucket root, a hostile prop shape, a copy in a training stack) gets
a mandatory verdict on the resource it touched, and no mutation makes a pack raise."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from policy_baseline import CONTEXT, SERVING_ACCOUNT, Builder, context_for, serving_export

from accelstack.engine.policy_runner import run_packs

Doc = dict[str, Any]
COPY = "pulumi-python:dynamic/handoff:ArtifactCopy"
PAR = "oci:ObjectStorage/preauthrequest:Preauthrequest"
CLOCK = "time:index/static:Static"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SECRET_SIG = "4dabf18193072939515e22adc298d5d0"

TRAINING_COMPARTMENT = "ocid1.compartment.oc1..aaaaaaaatrainingcompartment"
TRAINING_TENANCY = "ocid1.tenancy.oc1..aaaaaaaatrainingtenancy"
OCI_REGION = "us-ashburn-1"
NAMESPACE = "axaxnpcrorw5"
SOURCE = f"oci://ckpt@{NAMESPACE}/models/llama-70b/step-12000/"
DESTINATION = "s3://acme-serving-models/llama-70b/step-12000/"
CLOCK_AT = "2026-12-05T12:00:00Z"
PAR_URL = f"https://objectstorage.{OCI_REGION}.oraclecloud.com/p/tok3n/n/{NAMESPACE}/b/ckpt/o/"

OCI_COPIES = {
    "cloud": "oci",
    "servingCloud": "aws",
    "account": TRAINING_COMPARTMENT,
    "region": OCI_REGION,
    "tenancy": TRAINING_TENANCY,
    "stores": ["ckpt"],
    "namespaces": [NAMESPACE],
    "prefixes": ["models/llama-70b/step-12000/"],
    "lifetimeMinutes": 240,
    "copies": [{"source": SOURCE, "destination": DESTINATION}],
}


def oci_context() -> dict[str, Any]:
    training = [*CONTEXT["trainingAccounts"], TRAINING_COMPARTMENT]
    return {**context_for("serving"), "trainingAccounts": training, "artifactCopies": copy.deepcopy(OCI_COPIES)}


def _resource(doc: Doc, type_token: str) -> Doc:
    [found] = [r for r in doc["deployment"]["resources"] if r["type"] == type_token]
    return found


def _add(doc: Doc, entry: Doc) -> Doc:
    doc["deployment"]["resources"].append(entry)
    return entry


def _entry(stack: str, type_token: str, name: str, inputs: Doc, **extra: Any) -> Doc:
    urn = f"urn:pulumi:{stack}::accelstack::{type_token}::{name}"
    outputs = {**inputs, **extra.pop("outputs", {}), "id": f"{name}-id"}
    return {"urn": urn, "custom": True, "id": f"{name}-id", "type": type_token, "inputs": inputs, "outputs": outputs,
            "protect": False, "dependencies": [], "propertyDependencies": {}, **extra}  # fmt: skip


def _depends(entry: Doc, key: str, *targets: Doc) -> None:
    entry["propertyDependencies"][key] = [t["urn"] for t in targets]
    entry["dependencies"] = sorted({*entry["dependencies"], *(t["urn"] for t in targets)})


def _clock(doc: Doc, stack: str, name: str = "llama-copy-clock") -> Doc:
    triggers = {"source": SOURCE, "destination": DESTINATION}
    return _add(doc, _entry(stack, CLOCK, name, {"triggers": triggers}, outputs={"rfc3339": CLOCK_AT}))


def _copy_props(**values: Any) -> Doc:
    props = {
        "source_cloud": "oci",
        "source": SOURCE,
        "source_url": PAR_URL,
        "destination_cloud": "aws",
        "destination": DESTINATION,
        "destination_endpoint": "us-east-1",
        "destination_keys": None,
        "clock": CLOCK_AT,
        "__provider": "gASVpgAAAAAAAACMGmFjY2Vsc3RhY2suY29tcG9uZW50cy5oYW5kb2Zm",
    }
    props.update(values)
    return props


def oci_copy_export() -> Doc:
    """An AWS serving stack copying a checkpoint from OCI: the oci provider pinned to the training tenancy, the copy's
    clock, its PAR (AnyObjectRead + ListObjects on exactly the source prefix, expiring 4 h after the clock) and the
    copy, whose source_url and clock come from them."""
    doc = serving_export()
    stack = "aws-serving"
    provider = _add(doc, _entry(stack, "pulumi:providers:oci", "copy-artifacts-oci",
                                {"tenancyOcid": TRAINING_TENANCY, "region": OCI_REGION}))  # fmt: skip
    clock = _clock(doc, stack)
    par_inputs = {
        "accessType": "AnyObjectRead",
        "bucket": "ckpt",
        "namespace": NAMESPACE,
        "name": "llama-copy",
        "objectName": "models/llama-70b/step-12000/",
        "bucketListingAction": "ListObjects",
        "timeExpires": "2026-12-05T16:00:00Z",
    }
    par = _add(doc, _entry(stack, PAR, "llama-copy-par", par_inputs,
                           outputs={"accessUri": f"/p/tok3n/n/{NAMESPACE}/b/ckpt/o/"},
                           provider=f"{provider['urn']}::copy-artifacts-oci-id"))  # fmt: skip
    _depends(par, "timeExpires", clock)
    artifact_copy = _add(doc, _entry(stack, COPY, "llama-copy", _copy_props(), provider=None))
    artifact_copy["outputs"].pop("id")  # a dynamic resource's id is not among its props
    _depends(artifact_copy, "source_url", par)
    _depends(artifact_copy, "clock", clock)
    return doc


def verdicts(doc: Doc, context: Doc) -> list[Any]:
    return run_packs(doc, context=context)


def test_the_oci_copy_has_no_verdict():
    found = verdicts(oci_copy_export(), oci_context())
    assert [v.line() for v in found] == []
