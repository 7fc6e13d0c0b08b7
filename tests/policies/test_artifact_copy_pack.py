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
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
from policy_baseline import CONTEXT, context_for, serving_export

from accelstack.engine.capture import SECRET_SIG, SIG_KEY
from accelstack.engine.export import REDACTED
from accelstack.engine.policy_runner import run_packs
from accelstack.policies.common import make_context
from accelstack.policies.separation import copy_rules, handoff_rules

Doc = dict[str, Any]
COPY = "pulumi-python:dynamic/handoff:ArtifactCopy"
PAR = "oci:ObjectStorage/preauthrequest:Preauthrequest"
CLOCK = "time:index/static:Static"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

TRAINING_COMPARTMENT = "ocid1.compartment.oc1..aaaaaaaatrainingcompartment"
TRAINING_TENANCY = "ocid1.tenancy.oc1..aaaaaaaatrainingtenancy"
OCI_REGION = "us-ashburn-1"
NAMESPACE = "axaxnpcrorw5"
SOURCE = f"oci://ckpt@{NAMESPACE}/models/llama-70b/step-12000/"
DESTINATION = "s3://acme-serving-models/llama-70b/step-12000/"
CLOCK_AT = "2026-12-05T12:00:00Z"
PAR_URL = f"https://objectstorage.{OCI_REGION}.oraclecloud.com/p/tok3n/n/{NAMESPACE}/b/ckpt/o/"

# The policy config as accelstack.engine.pack_context writes it (`artifactCopies`, one entry per copy).
OCI_COPY = {
    "sourceCloud": "oci",
    "source": SOURCE,
    "store": "ckpt",
    "namespace": NAMESPACE,
    "prefix": "models/llama-70b/step-12000/",
    "account": TRAINING_COMPARTMENT,
    "tenancy": TRAINING_TENANCY,
    "region": OCI_REGION,
    "lifetimeMinutes": 240,
    "destinationCloud": "aws",
    "destination": DESTINATION,
}


TRAINING_STORES = ["acme-train-checkpoints"]


def oci_context() -> dict[str, Any]:
    training = [*CONTEXT["trainingAccounts"], TRAINING_COMPARTMENT]
    return {**context_for("serving"), "trainingAccounts": training, "trainingStores": TRAINING_STORES,
            "artifactCopies": [copy.deepcopy(OCI_COPY)]}  # fmt: skip


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


def redacted(value: Any) -> Doc:
    """A secret as accelstack's export keeps it (ciphertext redacted): the packs see an unknown."""
    return {SIG_KEY: SECRET_SIG, "ciphertext": REDACTED}


def _set(entry: Doc, **values: Any) -> str:
    for block in ("inputs", "outputs"):
        entry[block].update(values)
    return entry["urn"]


def _drop(entry: Doc, *keys: str) -> str:
    for block in ("inputs", "outputs"):
        for key in keys:
            entry[block].pop(key, None)
    return entry["urn"]


def copy_of(doc: Doc) -> Doc:
    return _resource(doc, COPY)


def par_of(doc: Doc) -> Doc:
    return _resource(doc, PAR)


AZURE_SOURCE = "https://acmetrainckpt.blob.core.windows.net/checkpoints/models/llama-70b/step-12000/"
AZURE_ACCOUNT = "5f1c9a7e-0000-4000-8000-00000000a2b3"
AZURE_COPY = {
    "sourceCloud": "azure",
    "source": AZURE_SOURCE,
    "store": "acmetrainckpt",
    "namespace": None,
    "prefix": "models/llama-70b/step-12000/",
    "account": AZURE_ACCOUNT,
    "tenancy": None,
    "region": None,
    "lifetimeMinutes": None,
    "destinationCloud": "aws",
    "destination": DESTINATION,
}
VULTR_DESTINATION = "s3://acme-weights/llama-70b/step-12000/"
VULTR_KEYS = json.dumps({"accessKey": "VULTRACCESSKEY000001", "secretKey": "s3cr3t" * 6})


def azure_copy_export(**values: Any) -> Doc:
    """A serving stack copying a checkpoint from Azure Blob with the deployer's own token: no source credential."""
    doc = serving_export()
    clock = _clock(doc, "aws-serving")
    props = _copy_props(source_cloud="azure", source=AZURE_SOURCE, source_url=None, **values)
    artifact_copy = _add(doc, _entry("aws-serving", COPY, "llama-copy", props))
    artifact_copy["outputs"].pop("id")
    _depends(artifact_copy, "clock", clock)
    return doc


def azure_context(**changes: Any) -> dict[str, Any]:
    copies = [{**copy.deepcopy(AZURE_COPY), **changes}]
    return {**context_for("serving"), "trainingStores": TRAINING_STORES, "artifactCopies": copies}


def vultr_copy_export(keys: Any = VULTR_KEYS) -> Doc:
    return azure_copy_export(destination_cloud="vultr", destination=VULTR_DESTINATION,
                             destination_endpoint="ewr1.vultrobjects.com", destination_keys=keys)  # fmt: skip


def vultr_context() -> dict[str, Any]:
    return azure_context(destinationCloud="vultr", destination=VULTR_DESTINATION)


@pytest.mark.parametrize(
    ("build", "context"),
    [
        (oci_copy_export, oci_context),
        (lambda: _secrets_redacted(oci_copy_export()), oci_context),
        (azure_copy_export, azure_context),
        (vultr_copy_export, vultr_context),
        (lambda: vultr_copy_export(redacted(VULTR_KEYS)), vultr_context),
    ],
    ids=["oci-to-aws", "oci-to-aws-redacted", "azure-to-aws", "azure-to-vultr", "azure-to-vultr-redacted"],
)
def test_a_legitimate_copy_has_no_verdict(build: Callable[[], Doc], context: Callable[[], Doc]) -> None:
    """Both packs, the whole (hand-built) stack: the copy, its clock, and for OCI its PAR under the provider pinned to
    the training tenancy, judged legitimate with its secrets in clear (the CLI's run) or redacted (accelstack's)."""
    assert [v.line() for v in verdicts(build(), context())] == []


def _secrets_redacted(doc: Doc) -> Doc:
    entry = copy_of(doc)
    for block in ("inputs", "outputs"):
        entry[block]["source_url"] = redacted(PAR_URL)
    return doc


def preview_shape(doc: Doc) -> Doc:
    """The export of a preview: the clock's instant, hence the PAR's expiry, the PAR's URL and the copy's source URL
    and clock, are unknown until created."""
    _resource(doc, CLOCK)["outputs"]["rfc3339"] = UNKNOWN
    _set(par_of(doc), timeExpires=UNKNOWN)
    par_of(doc)["outputs"]["accessUri"] = UNKNOWN
    _set(copy_of(doc), source_url=UNKNOWN, clock=UNKNOWN)
    return doc


def test_a_previewed_copy_has_no_verdict() -> None:
    """In a preview only the links are known (the URL from the PAR, both expiries from the one clock): judged, and
    legitimate; the values follow once known."""
    assert [v.line() for v in verdicts(preview_shape(oci_copy_export()), oci_context())] == []
    doc = preview_shape(oci_copy_export())
    copy_of(doc)["propertyDependencies"].pop("source_url")
    assert any(
        v.mandatory and v.policy == "handoff-copy-into-own-store" and "source_url comes from no" in v.message
        for v in verdicts(doc, oci_context())
    )


ADAPTER_SOURCE = f"oci://ckpt@{NAMESPACE}/models/adapters/acme/"
ADAPTER_DESTINATION = "s3://acme-serving-models/adapters/acme/"


def with_adapter_copy(doc: Doc, context: Doc) -> Doc:
    """A second copy (an adapter's copyFrom) with its own clock and PAR, and its own config entry."""
    renamed = {}
    for kind, name in ((CLOCK, "llama-copy-clock"), (PAR, "llama-copy-par"), (COPY, "llama-copy")):
        entry = copy.deepcopy(_resource(doc, kind))
        entry["urn"] = entry["urn"].replace(f"::{name}", f"::{name.replace('llama', 'acme')}")
        for key, urns in entry["propertyDependencies"].items():
            entry["propertyDependencies"][key] = [renamed.get(u, u) for u in urns]
        entry["dependencies"] = sorted(renamed.get(u, u) for u in entry["dependencies"])
        renamed[_resource(doc, kind)["urn"]] = entry["urn"]
        doc["deployment"]["resources"].append(entry)
    [par, artifact_copy] = [r for r in doc["deployment"]["resources"] if r["urn"] in renamed.values()][1:]
    _set(par, objectName="models/adapters/acme/")
    _set(artifact_copy, source=ADAPTER_SOURCE, destination=ADAPTER_DESTINATION)
    context["artifactCopies"].append(
        {**OCI_COPY, "source": ADAPTER_SOURCE, "prefix": "models/adapters/acme/", "destination": ADAPTER_DESTINATION}
    )
    return doc


def test_two_copies_each_with_its_own_par_and_clock_have_no_verdict() -> None:
    context = oci_context()
    doc = with_adapter_copy(oci_copy_export(), context)
    assert len([r for r in doc["deployment"]["resources"] if r["type"] == COPY]) == 2
    assert [v.line() for v in verdicts(doc, context)] == []
    crossed = copy.deepcopy(doc)  # the adapter's PAR names the weights' prefix: each copy reads through its own
    _set(next(r for r in crossed["deployment"]["resources"] if r["urn"].endswith("::acme-copy-par")),
         objectName="models/llama-70b/step-12000/")  # fmt: skip
    assert any(v.mandatory and "objectName" in v.message for v in verdicts(crossed, context))
    context["artifactCopies"][1]["account"] = "ocid1.compartment.oc1..aaaaaaaaother"
    assert any(v.mandatory and "names another" in v.message for v in verdicts(doc, context))


def test_a_copy_without_its_none_props_has_no_verdict() -> None:
    """The engine drops a None input: an Azure source's source_url and a non-Vultr destination's keys are absent."""
    doc = azure_copy_export()
    _drop(copy_of(doc), "source_url", "destination_keys")
    assert [v.line() for v in verdicts(doc, azure_context())] == []
    doc = oci_copy_export()
    _drop(copy_of(doc), "source_url")  # an OCI copy's URL absent: it comes from no PAR it could be checked against
    assert any(v.mandatory and "source_url" in v.message for v in verdicts(doc, oci_context()))


def test_the_legitimate_copy_is_judged_at_all() -> None:
    """The legitimate shapes pass because they are judged legitimate, not because no rule looked: the copy and its
    PAR are read by the copy rule, the reader's rules and the expiry rule."""
    context = make_context(oci_context(), [])
    doc = oci_copy_export()
    resources = [_stack_resource(r, doc) for r in doc["deployment"]["resources"]]
    by_urn = {r.urn: r for r in resources}
    [artifact_copy] = [r for r in resources if r.resource_type == COPY]
    config = copy_rules.copy_config(context)
    assert config is not None
    problems, destination = copy_rules.copy_problems(artifact_copy, config, context, by_urn)
    assert problems == [] and destination == copy_rules.Place("aws", "acme-serving-models", "llama-70b/step-12000/")
    assert [p.urn for p in copy_rules.source_pars(artifact_copy, by_urn)] == [par_of(doc)["urn"]]
    assert copy_rules.lifetime_seconds(config, artifact_copy) == 240 * 60


def _stack_resource(entry: Doc, doc: Doc) -> Any:
    """An export entry as a stack policy sees it (plain props, dependencies as urns, its provider's props)."""
    provider = None
    if entry.get("provider"):
        urn = entry["provider"].rsplit("::", 1)[0]
        [found] = [r for r in doc["deployment"]["resources"] if r["urn"] == urn]
        provider = SimpleNamespace(resource_type=found["type"], props=found["outputs"], urn=urn)
    name = entry["urn"].rsplit("::", 1)[-1]
    return SimpleNamespace(resource_type=entry["type"], props=entry["outputs"], urn=entry["urn"], name=name,
                           property_dependencies=entry.get("propertyDependencies", {}), provider=provider)  # fmt: skip


@dataclass(frozen=True)
class Case:
    """One mutation of a legitimate copy: `mutate` edits the export (and may edit the context) and returns the urn
    the verdict must name; `policies`: a mandatory verdict of one of them on it (or naming it) catches it."""

    id: str
    mutate: Callable[[Doc, Doc], str]
    policies: frozenset[str] = field(default=frozenset({"handoff-copy-into-own-store"}))
    build: Callable[[], Doc] = oci_copy_export
    context: Callable[[], Doc] = oci_context
    message: str = ""  # what the verdict that catches it says (a part of it)


COPY_RULE = frozenset({"handoff-copy-into-own-store"})
READER = frozenset({"handoff-reader-read-only", "handoff-copy-into-own-store"})
EXPIRES = frozenset({"handoff-reader-expires"})


def _configured_destination(destination: str) -> Callable[[Doc, Doc], str]:
    """The copy and the config both name `destination`: the pair matches, the store is still training's."""

    def mutate(doc: Doc, context: Doc) -> str:
        context["artifactCopies"][0]["destination"] = destination
        return _set(copy_of(doc), destination=destination)

    return mutate


def _another_clock(doc: Doc, context: Doc) -> str:
    other = _clock(doc, "aws-serving", "replica-0-clock")
    entry = par_of(doc)
    _depends(entry, "timeExpires", other)
    return entry["urn"]


def _second_copy(destination: str) -> Callable[[Doc, Doc], str]:
    def mutate(doc: Doc, context: Doc) -> str:
        entry = copy.deepcopy(copy_of(doc))
        entry["urn"] = entry["urn"].replace("::llama-copy", "::llama-copy-2")
        _set(entry, destination=destination)
        context["artifactCopies"].append({**context["artifactCopies"][0], "destination": destination})
        return _add(doc, entry)["urn"]

    return mutate


def _stray_in_training_tenancy(doc: Doc, context: Doc) -> str:
    """A bucket declared through the copy's provider: it would land in the training tenancy."""
    par = par_of(doc)
    stray = copy.deepcopy(par)
    stray["type"] = "oci:ObjectStorage/bucket:Bucket"
    stray["urn"] = par["urn"].replace(PAR, "oci:ObjectStorage/bucket:Bucket").replace("-par", "-stray")
    stray["inputs"] = stray["outputs"] = {
        "name": "stray",
        "namespace": NAMESPACE,
        "compartmentId": TRAINING_COMPARTMENT,
    }
    stray["propertyDependencies"], stray["dependencies"] = {}, []
    return _add(doc, stray)["urn"]


def _grant_in_training_subscription(doc: Doc, context: Doc) -> str:
    """An Azure copy reads with the deployer's token: nothing of the serving stack lands in the training subscription,
    not even a reader grant."""
    subscription = AZURE_ACCOUNT
    context["trainingAccounts"] = [*context["trainingAccounts"], subscription]
    provider = _add(doc, _entry("aws-serving", "pulumi:providers:azure-native", "copy-artifacts-azure",
                                {"subscriptionId": subscription, "location": "eastus"}))  # fmt: skip
    scope = (
        f"/subscriptions/{subscription}/resourceGroups/train/providers/Microsoft.Storage/storageAccounts/acmetrainckpt"
    )
    inputs = {"principalId": "00000000-0000-4000-8000-000000000001", "scope": scope,
              "roleDefinitionId": "/providers/Microsoft.Authorization/roleDefinitions/2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"}  # fmt: skip
    grant = _entry("aws-serving", "azure-native:authorization:RoleAssignment", "copy-reader", inputs,
                   provider=f"{provider['urn']}::copy-artifacts-azure-id")  # fmt: skip
    return _add(doc, grant)["urn"]


def _another_tenancy(doc: Doc, context: Doc) -> str:
    provider = _resource(doc, "pulumi:providers:oci")
    _set(provider, tenancyOcid="ocid1.tenancy.oc1..aaaaaaaaothertenancy")
    return par_of(doc)["urn"]


CASES = [
    # The PAR the copy reads through: read-only, exactly the source prefix, the source bucket and namespace.
    Case("par-read-write", lambda d, c: _set(par_of(d), accessType="AnyObjectReadWrite"), READER),
    Case("par-write", lambda d, c: _set(par_of(d), accessType="AnyObjectWrite"), READER),
    Case("par-bucket-wide", lambda d, c: _set(par_of(d), objectName=""), READER),
    Case("par-wider-prefix", lambda d, c: _set(par_of(d), objectName="models/"), READER),
    Case("par-another-bucket", lambda d, c: _set(par_of(d), bucket="acme-train-datasets"), READER),
    Case("par-another-namespace", lambda d, c: _set(par_of(d), namespace="othernamespace"), READER),
    Case("par-another-tenancy", _another_tenancy, READER),
    Case("par-stray-kind", _stray_in_training_tenancy, frozenset({"handoff-reader-only"})),
    # Its lifetime: from the copy's own clock, within the configured URL lifetime (240 min here).
    Case(
        "par-too-long",
        lambda d, c: _set(par_of(d), timeExpires="2026-12-05T16:01:00Z"),
        EXPIRES,
        message="241 min after its clock llama-copy-clock",
    ),
    Case("par-a-day", lambda d, c: _set(par_of(d), timeExpires="2026-12-06T12:00:00Z"), EXPIRES),
    Case("par-before-clock", lambda d, c: _set(par_of(d), timeExpires="2026-12-05T11:00:00Z"), EXPIRES),
    Case("par-not-rfc3339", lambda d, c: _set(par_of(d), timeExpires="tomorrow"), EXPIRES),
    Case("par-expiry-missing", lambda d, c: _drop(par_of(d), "timeExpires"), EXPIRES),
    Case(
        "par-from-no-clock",
        lambda d, c: (par_of(d)["propertyDependencies"].pop("timeExpires"), par_of(d)["urn"])[1],
        EXPIRES,
    ),
    Case("par-from-another-clock", _another_clock, EXPIRES),
    # The source URL: exactly one PAR of this stack, the value its URL.
    Case(
        "url-literal",
        lambda d, c: (copy_of(d)["propertyDependencies"].pop("source_url"), copy_of(d)["urn"])[1],
        message="source_url comes from no pre-authenticated request",
    ),
    Case(
        "url-from-the-clock",
        lambda d, c: (_depends(copy_of(d), "source_url", _resource(d, CLOCK)), copy_of(d)["urn"])[1],
    ),
    Case(
        "url-unknown-from-nothing",
        lambda d, c: (copy_of(d)["propertyDependencies"].pop("source_url"), _set(copy_of(d), source_url=UNKNOWN))[1],
        message="source_url comes from no pre-authenticated request",
    ),
    Case("url-another-host", lambda d, c: _set(copy_of(d), source_url="https://attacker.example/p/t/n/x/b/ckpt/o/")),
    Case("url-another-bucket", lambda d, c: _set(copy_of(d), source_url=PAR_URL.replace("/b/ckpt/", "/b/other/"))),
    Case("url-a-dict", lambda d, c: _set(copy_of(d), source_url={"url": PAR_URL})),
    Case("url-a-list", lambda d, c: _set(copy_of(d), source_url=[PAR_URL])),
    Case("url-a-number", lambda d, c: _set(copy_of(d), source_url=7)),
    Case("url-none", lambda d, c: _set(copy_of(d), source_url=None)),
    # The source: the configured store and prefix.
    Case("source-another-prefix", lambda d, c: _set(copy_of(d), source=f"oci://ckpt@{NAMESPACE}/models/other/")),
    Case("source-bucket-root", lambda d, c: _set(copy_of(d), source=f"oci://ckpt@{NAMESPACE}/")),
    Case("source-another-bucket", lambda d, c: _set(copy_of(d), source=SOURCE.replace("ckpt@", "datasets@"))),
    Case("source-dot-dot", lambda d, c: _set(copy_of(d), source=SOURCE + "../../")),
    # The destination: a non-empty prefix of the stack's own cloud's store, never training's or the source.
    Case(
        "destination-training-store",
        _configured_destination("s3://acme-train-checkpoints/m/"),
        message="a store the config names as the training side's",
    ),
    Case(
        "destination-the-artifact-store",
        _configured_destination("s3://ckpt/models/llama-70b/"),
        message="a store the config names as the training side's",
    ),
    Case("destination-bucket-root", lambda d, c: _set(copy_of(d), destination="s3://acme-serving-models/")),
    Case(
        "destination-another-cloud",
        lambda d, c: _set(copy_of(d), destination_cloud="gcp", destination="gs://acme-serving-models/llama/"),
    ),
    Case("destination-the-source", lambda d, c: _set(copy_of(d), destination_cloud="oci", destination=SOURCE)),
    Case(
        "destination-inside-the-source",
        lambda d, c: _set(copy_of(d), destination_cloud="oci", destination=SOURCE + "copy/"),
        message="is the source's cloud",
    ),
    Case("destination-lookalike-scheme", lambda d, c: _set(copy_of(d), destination="\u0455" + DESTINATION[1:])),
    Case("destination-lookalike-bucket", lambda d, c: _set(copy_of(d), destination=DESTINATION.replace("a", "\u0430"))),
    Case("destination-not-configured", lambda d, c: _set(copy_of(d), destination="s3://acme-serving-models/other/")),
    Case("destination-overlapping-copy", _second_copy("s3://acme-serving-models/llama-70b/"), message="overlaps"),
    Case("destination-keys-on-aws", lambda d, c: _set(copy_of(d), destination_keys=VULTR_KEYS)),
    Case("destination-region-not-allowed", lambda d, c: _set(copy_of(d), destination_endpoint="eu-west-1")),
    # Hostile shapes: unknown clouds, missing, mistyped and extra props.
    Case("source-cloud-unknown", lambda d, c: _set(copy_of(d), source_cloud="gcp")),
    Case("source-cloud-upper", lambda d, c: _set(copy_of(d), source_cloud="OCI")),
    Case("source-cloud-lookalike", lambda d, c: _set(copy_of(d), source_cloud="\u043eci")),
    Case("source-cloud-none", lambda d, c: _set(copy_of(d), source_cloud=None)),
    Case("source-cloud-list", lambda d, c: _set(copy_of(d), source_cloud=["oci"])),
    Case("source-cloud-number", lambda d, c: _set(copy_of(d), source_cloud=1)),
    Case("source-cloud-dict", lambda d, c: _set(copy_of(d), source_cloud={"cloud": "oci"})),
    Case("destination-cloud-unknown", lambda d, c: _set(copy_of(d), destination_cloud="aws-native")),
    Case("destination-a-dict", lambda d, c: _set(copy_of(d), destination={"bucket": "acme-serving-models"})),
    Case("destination-unknown", lambda d, c: _set(copy_of(d), destination=UNKNOWN)),
    Case("clock-missing", lambda d, c: _drop(copy_of(d), "clock")),
    Case("clock-from-no-clock", lambda d, c: (copy_of(d)["propertyDependencies"].pop("clock"), copy_of(d)["urn"])[1]),
    Case("clock-a-list", lambda d, c: _set(copy_of(d), clock=[CLOCK_AT])),
    Case("props-missing", lambda d, c: _drop(copy_of(d), "source", "destination_keys")),
    Case("props-extra", lambda d, c: _set(copy_of(d), destination_acl="public-read")),
    # Where a copy may be declared at all.
    Case(
        "copy-in-a-training-stack",
        lambda d, c: (c.update(workload="training"), copy_of(d)["urn"])[1],
        message="the training side never writes into the serving account",
    ),
    Case(
        "copy-with-no-config",
        lambda d, c: (c.pop("artifactCopies"), copy_of(d)["urn"])[1],
        frozenset({"handoff-copy-into-own-store", "handoff-reader-read-only"}),
    ),
    Case(
        "copy-config-another-serving-cloud",
        lambda d, c: (c["artifactCopies"][0].update(destinationCloud="gcp"), copy_of(d)["urn"])[1],
    ),
    Case(
        "config-store-a-list",
        lambda d, c: (c["artifactCopies"][0].update(store=["ckpt"]), copy_of(d)["urn"])[1],
        message="cannot be read (copy 0 lacks ['store'])",
    ),
    Case(
        "config-lifetime-a-string",
        lambda d, c: (c["artifactCopies"][0].update(lifetimeMinutes="240"), par_of(d)["urn"])[1],
        frozenset({"handoff-reader-read-only"}),
        message="bearer URL",
    ),
    Case(
        "config-an-unknown-key",
        lambda d, c: (c["artifactCopies"][0].update(writable=True), copy_of(d)["urn"])[1],
        message="has keys ['writable'] the pack does not know",
    ),
    # Azure sources: the deployer's own token, so no credential prop at all.
    Case(
        "azure-sas-url",
        lambda d, c: _set(copy_of(d), source_url=AZURE_SOURCE + "?sv=2024&sig=abc"),
        build=azure_copy_export,
        context=azure_context,
    ),
    Case(
        "azure-url-from-a-resource",
        lambda d, c: (
            _depends(copy_of(d), "source_url", _resource(d, CLOCK)),
            _set(copy_of(d), source_url=redacted("x")),
        )[1],
        build=azure_copy_export,
        context=azure_context,
    ),
    Case(
        "azure-grant-in-the-training-subscription",
        _grant_in_training_subscription,
        frozenset({"handoff-reader-only"}),
        build=azure_copy_export,
        context=azure_context,
        message="may declare there only its artifact reader or its copies' source credential (nothing)",
    ),
    Case(
        "azure-another-account",
        lambda d, c: _set(copy_of(d), source=AZURE_SOURCE.replace("acmetrainckpt", "other")),
        build=azure_copy_export,
        context=azure_context,
    ),
    # Vultr destinations: the stack's Object Storage endpoint and key.
    Case(
        "vultr-no-keys",
        lambda d, c: _set(copy_of(d), destination_keys=None),
        build=vultr_copy_export,
        context=vultr_context,
    ),
    Case(
        "vultr-keys-not-json",
        lambda d, c: _set(copy_of(d), destination_keys="VULTRACCESSKEY000001:secret"),
        build=vultr_copy_export,
        context=vultr_context,
    ),
    Case(
        "vultr-another-endpoint",
        lambda d, c: _set(copy_of(d), destination_endpoint="attacker.example.com"),
        build=vultr_copy_export,
        context=vultr_context,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_copy_mutation_is_caught(case: Case) -> None:
    doc, context = case.build(), case.context()
    assert verdicts(doc, context) == []  # the legitimate shape first
    urn = case.mutate(doc, context)
    found = verdicts(doc, context)
    assert any(
        v.mandatory
        and v.policy in case.policies
        and (v.urn == urn or urn.rsplit("::", 1)[-1] in v.message)
        and case.message in v.message
        for v in found
    ), [v.line() for v in found]


# The pack's copy policies these mutations catch (tests/policies/test_policy_rules.py counts them as covered).
CAUGHT = ("handoff-copy-into-own-store",)


@pytest.mark.parametrize(
    "props",
    [None, [], "oci", 7, [("source_cloud", "oci")], {"source_cloud": {"nested": ["oci"]}}, {1: 2}, object()],
    ids=["none", "list", "string", "number", "pairs", "nested", "int-key", "object"],
)
def test_a_hostile_shape_fails_closed_without_raising(props: Any) -> None:
    """The check functions themselves, on props no export could carry: a verdict, never an exception."""
    context = make_context({**oci_context()}, [])
    resource = SimpleNamespace(resource_type=COPY, props=props, urn="urn::copy", name="copy", property_dependencies={})
    assert list(copy_rules.check_copies([resource], context))
    par = SimpleNamespace(resource_type=PAR, props=props, urn="urn::par", name="par", property_dependencies={})
    list(handoff_rules.check_handoff_pars_expire([par, resource], context))
