"""Issue 31, the copy handoff: a serving stack on each cloud copies, at `up`, the weights a training stack published on
OCI or Azure into its OWN store (serving.model.copyFrom -> serving.model.weightsUri), and its replicas read them there
(mocks). Each pair validates and resolves one copy; the stack declares the copy's clock, for OCI the PAR under a
provider pinned to the training tenancy, and the ArtifactCopy, and its replica group waits for the copy; the
replicas' own-store grants name the stack's own account, never the copy source's; the pairs refused before without a
copy are still refused without it, pointing at serving.model.copyFrom."""

from __future__ import annotations

import json

import pytest

from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.spec.copies import artifact_copies
from accelstack.spec.handoff import artifact_handoff
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from accelstack.spec.problems import SpecError
from tests.stack_edits import MAIN, STACKS

OCI_TENANCY = "ocid1.tenancy.oc1..aaaaaaaaacmetenancy"
SOURCES = {
    "oci": (
        "oci:ocid1.compartment.oc1..aaaaaaaaacmetrain",
        "oci://acme-train-checkpoints@acmetenancy/models/llama-3.1-8b/step-12000/",
        [f"serving.artifactTenancy={OCI_TENANCY}", "serving.artifactRegion=us-ashburn-1"],
    ),
    "azure": (
        "azure:3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c",
        "https://acmetrainckpts.blob.core.windows.net/checkpoints/models/llama-3.1-8b/step-12000/",
        ["serving.artifactRegion=null"],
    ),
}
# The destination: a prefix of the serving stack's own store (Vultr's: its Object Storage bucket, s3://).
DESTINATIONS = {
    "aws": "s3://acme-serving-models/models/llama-3.1-8b/step-12000/",
    "gcp": "gs://acme-serving-models/models/llama-3.1-8b/step-12000/",
    "azure": "https://acmeservemodels.blob.core.windows.net/models/llama-3.1-8b/step-12000/",
    "vultr": "s3://acme-models/models/llama-3.1-8b/step-12000/",
}
PAIRS = [(s, d) for s in SOURCES for d in DESTINATIONS if s != d]
GROUPS = {
    "aws": "aws:autoscaling/group:Group",
    "gcp": "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
    "azure": "azure-native:compute:VirtualMachineScaleSet",
    "vultr": "vultr:index/instance:Instance",
}
COPY = "pulumi-python:dynamic/handoff:ArtifactCopy"


def copy_edits(source: str, serving: str, *, copy: bool = True) -> list[str]:
    account, uri, extra = SOURCES[source]
    return [
        f'separation.trainingAccounts=["{account}"]',
        f'serving.artifactAccount="{account}"',
        f"serving.model.weightsUri={DESTINATIONS[serving] if copy else uri}",
        *([f"serving.model.copyFrom={uri}"] if copy else []),
        "serving.model.adapters=[]",
        *extra,
    ]


def copy_config(source: str, serving: str, *, copy: bool = True) -> dict:
    return apply_overrides(
        read_stack_file(STACKS / f"Pulumi.{serving}-serving.yaml"), copy_edits(source, serving, copy=copy)
    )


_CAPTURES: dict[tuple[str, str], Capture] = {}


def copy_capture(source: str, serving: str) -> Capture:
    if (source, serving) not in _CAPTURES:
        config = config_for_pulumi(copy_config(source, serving))
        _CAPTURES[(source, serving)] = capture(MAIN, config, stack=f"{serving}-serving", preview=False)
    return _CAPTURES[(source, serving)]


@pytest.mark.parametrize(("source", "serving"), PAIRS)
def test_pair_validates_and_resolves_one_copy_into_the_own_store(source, serving):
    spec = parse_spec(copy_config(source, serving))
    assert artifact_handoff(spec) is None  # the replicas read their own store: no reader on the training cloud
    [copy] = artifact_copies(spec)
    assert (copy.source_cloud, copy.destination_cloud, copy.destination) == (source, serving, DESTINATIONS[serving])
    assert copy.source.prefix == "models/llama-3.1-8b/step-12000/"
    assert copy.training_account == SOURCES[source][0].split(":", 1)[1]
    if source == "oci":
        assert (copy.tenancy, copy.region, copy.lifetime_minutes) == (OCI_TENANCY, "us-ashburn-1", 120)
    else:
        assert (copy.tenancy, copy.region, copy.lifetime_minutes) == ("", "", 0)


@pytest.mark.parametrize(("source", "serving"), PAIRS)
def test_the_copy_is_declared_and_the_replicas_wait_for_it(source, serving):
    cap = copy_capture(source, serving)
    [copy] = [r for r in cap.resources if r.type == COPY]
    [clock] = [r for r in cap.by_type("time:index/static:Static") if "copy" in r.name]
    window = {"lifetimeMinutes": "120"} if source == "oci" else {}  # a new PAR lifetime is a new window
    assert clock.inputs["triggers"] == {"source": SOURCES[source][1], "destination": DESTINATIONS[serving], **window}
    inputs = copy.inputs
    assert (inputs["source_cloud"], inputs["source"]) == (source, SOURCES[source][1])
    assert (inputs["destination_cloud"], inputs["destination"]) == (serving, DESTINATIONS[serving])
    assert inputs["clock"] == clock.outputs["rfc3339"]
    assert any(clock.name in urn for urn in copy.property_dependencies["clock"])
    assert inputs["destination_endpoint"] == {"aws": "us-east-1", "vultr": "ewr1.vultrobjects.com"}.get(serving, "")
    assert (inputs.get("destination_keys") is not None) == (serving == "vultr")  # Vultr's writing key, a secret
    pars = cap.by_type("oci:ObjectStorage/preauthrequest:Preauthrequest")
    if source == "oci":
        [par] = pars
        provider = next(r for r in cap.resources if r.type == "pulumi:providers:oci")
        assert (provider.inputs["tenancyOcid"], provider.inputs["region"]) == (OCI_TENANCY, "us-ashburn-1")
        assert par.provider.split("::")[-2] == provider.name
        assert (par.inputs["accessType"], par.inputs["bucketListingAction"]) == ("AnyObjectRead", "ListObjects")
        assert (par.inputs["bucket"], par.inputs["namespace"], par.inputs["objectName"]) == (
            "acme-train-checkpoints",
            "acmetenancy",
            "models/llama-3.1-8b/step-12000/",
        )
        assert (
            clock.outputs["rfc3339"] == "2026-12-05T12:00:00Z" and par.inputs["timeExpires"] == "2026-12-05T14:00:00Z"
        )
        assert any(clock.name in urn for urn in par.property_dependencies["timeExpires"])
        assert "objectstorage.us-ashburn-1.oraclecloud.com/p/" in json.dumps(inputs["source_url"])
    else:  # the deployer's own Entra ID token: nothing declared in the training subscription, no URL
        assert not pars and inputs.get("source_url") is None
        assert not [r for r in cap.resources if r.type == "pulumi:providers:azure-native" and "copy" in r.name]
    groups = cap.by_type(GROUPS[serving])
    assert groups
    for group in groups:
        assert any(urn.endswith(f"::{copy.name}") for urn in group.dependencies), group.dependencies
    # No federated reader, no per-replica credential: the replicas read the copy in their own store.
    assert not [r for r in cap.resources if "artifacts" in r.name and r.type.startswith("pulumi:providers:")]


@pytest.mark.parametrize("source", list(SOURCES))
def test_the_replicas_own_store_read_names_the_stacks_own_account(source):
    """A copy's artifactAccount is the source cloud's: the replicas' grants on the copied weights name this stack's
    own account (AWS: kms:Decrypt of this account's keys; Azure: the role assignment in this subscription; GCP: the
    objectViewer grant on the destination bucket)."""
    aws = copy_capture(source, "aws")
    policy = json.loads(
        next(r for r in aws.by_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("model-read")).inputs["policy"]
    )
    decrypt = next(s for s in policy["Statement"] if s["Sid"] == "DecryptModelArtifactsViaS3")
    spec = parse_spec(copy_config(source, "aws"))
    assert decrypt["Resource"] == f"arn:aws:kms:*:{spec.account.id}:key/*"
    read = next(s for s in policy["Statement"] if s["Sid"] == "ReadModelArtifacts")
    assert read["Resource"] == ["arn:aws:s3:::acme-serving-models/models/llama-3.1-8b/step-12000/*"]
    gcp = copy_capture(source, "gcp")
    grant = next(r for r in gcp.by_type("gcp:storage/bucketIAMMember:BucketIAMMember") if r.name.endswith("models"))
    assert (grant.inputs["bucket"], grant.inputs["role"]) == ("acme-serving-models", "roles/storage.objectViewer")
    if source != "azure":
        azure = copy_capture(source, "azure")
        subscription = parse_spec(copy_config(source, "azure")).account.subscription_id
        assignment = next(
            r for r in azure.by_type("azure-native:authorization:RoleAssignment") if r.name.endswith("replicas-models")
        )
        assert assignment.inputs["scope"] == f"/subscriptions/{subscription}"
        assert "'acmeservemodels'" in assignment.inputs["condition"] and "'models'" in assignment.inputs["condition"]
        assert "StringStartsWith 'llama-3.1-8b/step-12000/'" in assignment.inputs["condition"]


# The pairs no reader serves: refused without a copy, the refusal naming serving.model.copyFrom.
REFUSED = [("oci", "aws"), ("oci", "azure"), ("oci", "gcp"), ("azure", "vultr")]


@pytest.mark.parametrize(("source", "serving"), REFUSED)
def test_a_refused_pair_without_copy_points_at_copy_from(source, serving):
    config = copy_config(source, serving, copy=False)
    with pytest.raises(SpecError) as raised:
        parse_spec(config)
    assert "serving.model.copyFrom" in str(raised.value)


@pytest.mark.parametrize(("source", "serving"), REFUSED)
def test_validate_passes_with_copy_from_and_fails_without(source, serving):
    """`accelstack validate` of the stack file: exit 0 with the copy, exit 2 naming serving.model.copyFrom without."""
    from typer.testing import CliRunner

    from accelstack.cli import app

    stack_file = str(STACKS / f"Pulumi.{serving}-serving.yaml")
    for copy, code in ((True, 0), (False, 2)):
        sets = [arg for edit in copy_edits(source, serving, copy=copy) for arg in ("--set", edit)]
        result = CliRunner().invoke(app, ["validate", stack_file, *sets])
        assert result.exit_code == code, result.output
        if not copy:
            assert "serving.model.copyFrom" in result.output and "Traceback" not in result.output


def test_each_copied_adapter_gets_its_own_clock_par_and_copy_under_one_pinned_provider():
    adapter = (
        "{name: acme, uri: gs://acme-serving-models/adapters/acme/, "
        "copyFrom: oci://acme-train-checkpoints@acmetenancy/models/adapters/acme/}"
    )
    config = config_for_pulumi(apply_overrides(copy_config("oci", "gcp"), [f"serving.model.adapters=[{adapter}]"]))
    cap = capture(MAIN, config, stack="gcp-serving", preview=False)
    copies = [r for r in cap.resources if r.type == COPY]
    assert sorted(c.inputs["destination"] for c in copies) == [
        "gs://acme-serving-models/adapters/acme/",
        DESTINATIONS["gcp"],
    ]
    pars = cap.by_type("oci:ObjectStorage/preauthrequest:Preauthrequest")
    assert sorted(p.inputs["objectName"] for p in pars) == ["models/adapters/acme/", "models/llama-3.1-8b/step-12000/"]
    assert len([r for r in cap.resources if r.type == "pulumi:providers:oci"]) == 1
    assert len([c for c in cap.by_type("time:index/static:Static") if "copy" in c.name]) == 2
    [group] = cap.by_type(GROUPS["gcp"])
    assert all(any(urn.endswith(f"::{c.name}") for urn in group.dependencies) for c in copies)
    # The replicas read both copies where they were written: the grant's condition names each prefix (not "models/").
    [grant] = [r for r in cap.by_type("gcp:storage/bucketIAMMember:BucketIAMMember") if r.name.endswith("models")]
    expression = grant.inputs["condition"]["expression"]
    for prefix in ("adapters/acme/", "models/llama-3.1-8b/step-12000/"):
        assert f'objects/{prefix}")' in expression and f'.startsWith("{prefix}")' in expression


def test_gcp_replicas_read_a_copy_in_another_bucket_and_outside_models():
    """Every cloud reads the weights and adapters under their own prefixes (AWS model_read_policy, Azure's role
    condition): on GCP too, one conditioned grant per bucket, whatever the prefix."""
    adapter = "{name: acme, uri: gs://acme-serving-adapters/lora/acme/}"
    edits = [
        "serving.model.weightsUri=gs://acme-serving-models/serving/llama/step-1/",
        f"serving.model.adapters=[{adapter}]",
    ]
    cap = capture(
        MAIN, config_for_pulumi(apply_overrides(copy_config("oci", "gcp"), edits)), stack="gcp-serving", preview=False
    )
    grants = {
        r.inputs["bucket"]: r.inputs["condition"]["expression"]
        for r in cap.by_type("gcp:storage/bucketIAMMember:BucketIAMMember")
        if "replica-models" in r.name
    }
    assert set(grants) == {"acme-serving-models", "acme-serving-adapters"}
    assert 'buckets/acme-serving-models/objects/serving/llama/step-1/")' in grants["acme-serving-models"]
    assert '.startsWith("lora/acme/")' in grants["acme-serving-adapters"]
    assert "models/" not in grants["acme-serving-adapters"]


def test_the_pack_context_places_the_copys_source_and_destination():
    """The packs' context: the copy's source bucket is training's, its destination bucket serving's, and each copy
    is described (artifactCopies) for the separation pack's copy rules; no reader handoff."""
    from accelstack.engine.pack_context import context_from_spec

    context = context_from_spec(parse_spec(copy_config("oci", "aws")))
    assert context["artifactHandoff"] is None
    assert context["trainingStores"] == ["acme-train-checkpoints"]
    assert context["servingStores"] == ["acme-serving-models"]
    [copy] = context["artifactCopies"]
    assert copy["sourceCloud"] == "oci" and copy["destination"] == DESTINATIONS["aws"]
    assert (copy["tenancy"], copy["region"], copy["lifetimeMinutes"]) == (OCI_TENANCY, "us-ashburn-1", 120)
    assert (copy["store"], copy["namespace"], copy["prefix"]) == (
        "acme-train-checkpoints",
        "acmetenancy",
        "models/llama-3.1-8b/step-12000/",
    )
    plain = context_from_spec(parse_spec(read_stack_file(STACKS / "Pulumi.aws-serving.yaml")))
    assert plain["artifactCopies"] is None and plain["servingStores"] is None


def test_a_new_par_lifetime_starts_a_new_window():
    """An interrupted OCI copy whose PAR expired resumes when the lifetime is raised (its refusal says so): the
    clock's triggers change, so the clock (hence the PAR, expiring from the new clock, and the copy) is replaced;
    a PAR expiring from the first try's clock could already lie in the past, which OCI refuses at create."""
    longer = config_for_pulumi(apply_overrides(copy_config("oci", "aws"), ["serving.artifactUrlLifetimeMinutes=600"]))
    cap = capture(MAIN, config_for_pulumi(copy_config("oci", "aws")), stack="aws-serving", preview=False)
    again = capture(MAIN, longer, stack="aws-serving", preview=False)
    [before] = [r.inputs["triggers"] for r in cap.by_type("time:index/static:Static") if "copy" in r.name]
    [after] = [r.inputs["triggers"] for r in again.by_type("time:index/static:Static") if "copy" in r.name]
    assert before != after and after["lifetimeMinutes"] == "600"
    assert {k: v for k, v in after.items() if k != "lifetimeMinutes"} == {
        k: v for k, v in before.items() if k != "lifetimeMinutes"
    }
