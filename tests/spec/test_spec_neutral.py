"""The spec is neutral where the concept is: one workload block chosen by `workload`, the account block chosen
by `cloud`, `cloud` checked against the registry, a missing capability reported at the key that asks for it,
cloud rules that run for their own cloud only, and the parallel file system's keys the same on every cloud.

Clouds other than aws are registered here as fakes (`registry.registered`): AWS's catalog and prices under
another name, without components or rules, with the features each test takes away.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from spec_helpers import DELETE, all_problems, edited, training_raw

from accelstack.clouds import registry
from accelstack.clouds.aws import AWS
from accelstack.clouds.base import Cloud, Feature
from accelstack.spec import SpecError, parse_spec
from accelstack.spec.accounts import ACCOUNT_MODELS, AwsAccount, AzureAccount
from accelstack.spec.loader import apply_overrides, load_stack, read_stack_file
from accelstack.spec.models import ServingStack, TrainingStack
from accelstack.spec.problems import Level, Problem
from accelstack.spec.validators import all_rules

ROOT = Path(__file__).resolve().parents[2]
SERVING_STACK = ROOT / "stacks" / "Pulumi.aws-serving.yaml"
TRAINING_STACK = ROOT / "stacks" / "Pulumi.aws-training.yaml"

SUBSCRIPTION = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
OTHER_SUBSCRIPTION = "7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
TENANT = "0b1c2d3e-4f5a-4b6c-9d7e-8f9a0b1c2d3e"
COMPARTMENT = "ocid1.compartment.oc1..aaaaaaaatrain"
TENANCY = "ocid1.tenancy.oc1..aaaaaaaaacme"

# A valid account block per cloud, and the id separation lists name the other side by.
ACCOUNTS: dict[str, tuple[dict[str, Any], str, str]] = {
    "azure": ({"subscriptionId": SUBSCRIPTION, "tenantId": TENANT, "location": "eastus"}, SUBSCRIPTION, OTHER_SUBSCRIPTION),
    "gcp": ({"projectId": "acme-train", "region": "us-central1"}, "acme-train", "acme-serve"),
    "oci": ({"tenancyOcid": TENANCY, "compartmentOcid": COMPARTMENT, "region": "us-ashburn-1"}, COMPARTMENT, "ocid1.compartment.oc1..aaaaaaaaserve"),
    "vultr": ({"apiKeySecret": "env:VULTR_TRAINING_API_KEY", "region": "ewr"}, "env:VULTR_TRAINING_API_KEY", "env:VULTR_SERVING_API_KEY"),
}  # fmt: skip


def described(name: str, *, without: frozenset[Feature] = frozenset(), **changes: Any) -> Cloud:
    """AWS's description under another name: no components (not deployable), no rules; its catalog has the regions
    the account blocks here name (the neutral rules refuse a region the stack's cloud does not have)."""
    named = tuple(account.get("region") or account.get("location") for account, _, _ in ACCOUNTS.values())
    catalog = dataclasses.replace(AWS.catalog, regions=AWS.catalog.regions + named)
    fields: dict[str, Any] = {
        "name": name, "features": AWS.features - without, "components": None, "rules": (), "catalog": catalog,
    }  # fmt: skip
    return dataclasses.replace(AWS, **{**fields, **changes})


def on_cloud(raw: dict[str, Any], cloud: str) -> dict[str, Any]:
    """`raw` moved to `cloud`: its account block and separation lists in that cloud's terms."""
    account, training_id, serving_id = ACCOUNTS[cloud]
    own_id = training_id if raw["workload"] == "training" else serving_id
    model = ACCOUNT_MODELS[cloud]
    edits: dict[str, Any] = {
        "cloud": cloud,
        "account": {**account, model.key_of(model.ID_FIELD): own_id},
        "separation.trainingAccounts": [training_id],
        "separation.servingAccounts": [serving_id],
        "separation.allowedRegions": DELETE,
    }
    if raw["workload"] == "training":
        edits["training.artifactReaders"] = [serving_id]
    else:
        edits["serving.artifactAccount"] = training_id
    return edited(raw, edits)


def at(problems: list[Problem], path: str) -> list[str]:
    return [p.message for p in problems if p.path == path]


def serving_raw() -> dict[str, Any]:
    return read_stack_file(SERVING_STACK)


# --- the workload is a discriminated union ------------------------------------------------------


def test_each_workload_loads_as_its_own_model():
    assert isinstance(load_stack(TRAINING_STACK), TrainingStack)
    assert isinstance(load_stack(SERVING_STACK), ServingStack)
    assert not hasattr(load_stack(SERVING_STACK), "training")  # no optional block to forget to check


def test_a_serving_stack_with_a_training_block_is_refused_at_that_block():
    raw = {**serving_raw(), "training": training_raw()["training"]}
    [message] = at(all_problems(raw), "training")
    assert "workload is 'serving'" in message and "remove accelstack:training" in message


def test_a_training_stack_with_a_serving_block_is_refused_at_that_block():
    raw = {**training_raw(), "serving": serving_raw()["serving"]}
    [message] = at(all_problems(raw), "serving")
    assert "workload is 'training'" in message and "remove accelstack:serving" in message


def test_the_workload_block_is_required():
    problems = all_problems(edited(training_raw(), {"training": DELETE}))
    assert at(problems, "training") == ["required"]


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        (DELETE, "required; allowed: training, serving, landing"),
        ("trainig", "trainig is not allowed (did you mean 'training'?); allowed: training, serving, landing"),
        (["training"], "is not allowed; allowed: training, serving, landing"),
    ],
)
def test_the_workload_names_its_choices(workload, expected):
    [message] = at(all_problems(edited(training_raw(), {"workload": workload})), "workload")
    assert expected in message


# --- the account block is the cloud's -----------------------------------------------------------


@pytest.mark.parametrize("cloud", sorted(ACCOUNTS))
@pytest.mark.parametrize("raw_of", [training_raw, serving_raw], ids=["training", "serving"])
def test_each_cloud_takes_its_own_account_block(cloud, raw_of):
    with registry.registered(described(cloud)):
        spec = parse_spec(on_cloud(raw_of(), cloud), "test")
    assert type(spec.account) is ACCOUNT_MODELS[cloud]
    side = spec.separation.training_accounts if spec.workload == "training" else spec.separation.serving_accounts
    assert spec.account.account_id == side[0]


def test_an_aws_block_on_azure_names_the_keys_azure_expects():
    raw = edited(training_raw(), {"cloud": "azure"})
    with registry.registered(described("azure")):
        problems = all_problems(raw)
    keys = (
        "the azure account block has location, subscriptionId, tenantId, deployIdentity, hpcCachePrincipalId, "
        "standbyPoolPrincipalId"
    )
    assert at(problems, "account.id") == [f"unknown key: {keys}"]
    assert at(problems, "account.deployRole") == [f"unknown key: {keys}"]
    assert at(problems, "account.region") == [f"unknown key: {keys}"]  # Azure calls it location
    assert at(problems, "account.subscriptionId") == [f"required: {keys}"]
    assert at(problems, "account.location") and at(problems, "account.tenantId")


@pytest.mark.parametrize(
    ("cloud", "edits", "path", "fragment"),
    [
        ("azure", {"account.tenantId": "acme.onmicrosoft.com"}, "account.tenantId", "is not a Microsoft Entra tenant id"),
        ("azure", {"account.location": "East US"}, "account.location", "not an Azure location name"),
        ("azure", {"account.deployIdentity": "deployer"}, "account.deployIdentity", "client id"),
        ("gcp", {"account.projectId": "Acme_Train"}, "account.projectId", "not a Google Cloud project id"),
        ("gcp", {"account.projectId": "acme-"}, "account.projectId", "not ending with a hyphen"),
        ("gcp", {"account.region": "us-central1-a"}, "account.region", "a zone ends in -a/-b/-c"),
        ("gcp", {"account.deployServiceAccount": "deployer@gmail.com"}, "account.deployServiceAccount", ".iam.gserviceaccount.com"),
        ("oci", {"account.tenancyOcid": COMPARTMENT}, "account.tenancyOcid", "not a tenancy OCID"),
        ("oci", {"account.compartmentOcid": "ocid1.compartment.oc2..aaaaaaaatrain"}, "account", "realm oc2"),
        ("oci", {"account.compartmentOcid": "ocid1.instance.oc1..aaaa"}, "account.compartmentOcid", "not a compartment OCID"),
        ("vultr", {"account.apiKeySecret": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}, "account.apiKeySecret", "never write the key"),
        ("vultr", {"account.apiKeySecret": "vault:vultr"}, "account.apiKeySecret", "env:<VARIABLE> or config:<namespace>:<key>"),
        ("vultr", {"account.region": "new-jersey"}, "account.region", "three lowercase letters"),
    ],
)  # fmt: skip
def test_account_fields_are_checked_in_the_clouds_format(cloud, edits, path, fragment):
    with registry.registered(described(cloud)):
        problems = all_problems(edited(on_cloud(training_raw(), cloud), edits))
    assert any(fragment in message for message in at(problems, path)), [str(p) for p in problems]


@pytest.mark.parametrize("cloud", sorted(ACCOUNTS))
def test_separation_lists_ids_in_the_clouds_format(cloud):
    raw = edited(on_cloud(training_raw(), cloud), {"separation.servingAccounts": ["222222222222"]})
    with registry.registered(described(cloud)):
        problems = all_problems(raw)
    [message] = at(problems, "separation.servingAccounts.0")
    assert f"is not {ACCOUNT_MODELS[cloud].ID_KIND}" in message or "API key" in message
    assert at(problems, "training.artifactReaders.0")  # the readers are that cloud's accounts too


def test_the_stack_account_must_be_on_its_side_in_the_clouds_key():
    raw = edited(on_cloud(training_raw(), "azure"), {"separation.trainingAccounts": [OTHER_SUBSCRIPTION]})
    raw = edited(raw, {"separation.servingAccounts": [SUBSCRIPTION], "training.artifactReaders": [SUBSCRIPTION]})
    with registry.registered(described("azure")):
        problems = all_problems(raw)
    assert [m for m in at(problems, "account.subscriptionId") if "is not one of separation.trainingAccounts" in m]


def test_one_subscription_written_in_two_cases_is_one_account():
    """Azure compares subscription ids ignoring case: the same GUID on both sides, once in capitals, is not two
    disjoint accounts, and the stack's own subscription in capitals is still on its side (and its readers too)."""
    overlapping = edited(
        on_cloud(training_raw(), "azure"), {"separation.servingAccounts": [OTHER_SUBSCRIPTION, SUBSCRIPTION.upper()]}
    )
    with registry.registered(described("azure")):
        problems = all_problems(overlapping)
        assert [m for m in at(problems, "separation") if "must be disjoint" in m and SUBSCRIPTION in m]
        capitals = edited(
            on_cloud(training_raw(), "azure"),
            {"account.subscriptionId": SUBSCRIPTION.upper(), "training.artifactReaders": [OTHER_SUBSCRIPTION.upper()]},
        )
        spec = parse_spec(capitals, "test")
    # Kept as written: names derive from the id (the checkpoint storage account's among them), so a rewritten
    # spelling would rename, and so replace, what an earlier `up` created.
    assert spec.account.account_id == SUBSCRIPTION.upper()
    assert spec.training.artifact_readers == [OTHER_SUBSCRIPTION.upper()]


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_serving_reads_artifacts_from_a_training_account_on_every_cloud(cloud):
    """serving.artifactAccount is the training side's account in the cloud's own format, wherever it is set."""
    raw = read_stack_file(ROOT / "stacks" / f"Pulumi.{cloud}-serving.yaml")
    serving_account = raw["separation"]["servingAccounts"][0]
    for value, fragment in (
        ("not-an-account-id!", "is not"),
        (serving_account, "is not one of separation.trainingAccounts"),
    ):
        with pytest.raises(SpecError) as caught:
            parse_spec(edited(raw, {"serving.artifactAccount": value}), f"{cloud}-serving")
        assert [p for p in caught.value.problems if p.path == "serving.artifactAccount" and fragment in p.message]


def test_aws_account_id_format_is_a_model_error_at_account_id():
    assert AwsAccount.id_problem("12345") and AwsAccount.id_problem("111111111111") is None
    [message] = at(all_problems(edited(training_raw(), {"account.id": "12345"})), "account.id")
    assert "12 digits" in message


def test_a_registered_cloud_may_name_its_own_account_model():
    with registry.registered(described("acme", account_model="accelstack.spec.accounts:AzureAccount")):
        raw = edited(on_cloud(training_raw(), "azure"), {"cloud": "acme"})
        spec = parse_spec(raw, "test")
    assert isinstance(spec.account, AzureAccount)


# --- cloud is checked against the registry -------------------------------------------------------


def test_an_unknown_cloud_lists_the_registered_ones():
    [message] = at(all_problems(edited(training_raw(), {"cloud": "ibm"})), "cloud")
    assert message == f"'ibm' is not a registered cloud; registered: {', '.join(registry.names())}"
    with registry.registered(described("ibm")):
        assert "ibm" in registry.names() and not at(all_problems(edited(training_raw(), {"cloud": "ibm"})), "cloud.")


def test_a_described_cloud_validates_but_cannot_be_deployed():
    raw = edited(training_raw(), {"cloud": "lab"})
    with registry.registered(described("lab", account_model="accelstack.spec.accounts:AwsAccount")):
        spec = parse_spec(raw, "test")  # validate, size and cost work
        warnings = [p for p in all_problems(raw) if p.path == "cloud"]
        with pytest.raises(SpecError) as refused:
            parse_spec(raw, "test", deploy=True)
    assert spec.cloud == "lab"
    assert [p.level for p in warnings] == [Level.WARNING]
    [problem] = [p for p in refused.value.problems if p.path == "cloud"]
    assert problem.level is Level.ERROR
    assert "described (catalog, prices) but not deployable yet" in problem.message
    assert "deployable: aws" in problem.message
    parse_spec(training_raw(), "test", deploy=True)  # aws deploys


# --- a feature the cloud lacks is an error at the key that asks -----------------------------------


LACKING = frozenset(
    {
        Feature.SLURM,
        Feature.SPOT,
        Feature.MANAGED_LUSTRE,
        Feature.OBJECT_LINKED_FS,
        Feature.WARM_POOL,
        Feature.CROSS_ACCOUNT_ARTIFACTS,
        Feature.WAF_RATE_LIMIT,
    }
)


def having(feature: Feature) -> str:
    """The registered clouds with `feature`, as the spec's messages list them."""
    return ", ".join(name for name, cloud in registry.clouds().items() if feature in cloud.features)


def lacking_cloud() -> Cloud:
    return described("bare", without=LACKING, account_model="accelstack.spec.accounts:AwsAccount")


def test_training_keys_asking_for_missing_features_name_the_clouds_that_have_them():
    raw = edited(training_raw(), {"cloud": "bare", "training.nodes.capacity": "spot"})
    with registry.registered(lacking_cloud()):
        problems = all_problems(raw)
        with_slurm, with_spot = (having(Feature.SLURM), having(Feature.SPOT))
    assert "aws" in with_slurm.split(", ") and "bare" not in with_spot.split(", ")
    kind = at(problems, "training.scheduler.kind")
    assert kind == [
        f"scheduler kind slurm needs the slurm feature, which bare does not offer; clouds that have it: {with_slurm}; "
        "or scheduler kind managed or none"
    ]
    assert any(
        "needs the spot feature" in m and f"clouds that have it: {with_spot}" in m
        for m in at(problems, "training.nodes.capacity")
    )
    assert any("managed-lustre" in m for m in at(problems, "training.storage.lustre"))
    assert any("object-linked-fs" in m for m in at(problems, "training.storage.lustre.importPath"))
    assert any("cross-account-artifacts" in m for m in at(problems, "training.artifactReaders"))


def test_serving_keys_asking_for_missing_features_name_the_clouds_that_have_them():
    raw = edited(serving_raw(), {"cloud": "bare"})
    with registry.registered(lacking_cloud()):
        problems = all_problems(raw)
        fixed = all_problems(edited(raw, {"serving.replicas.warmPool": 0}))
    [warm] = at(problems, "serving.replicas.warmPool")
    assert "needs the warm-pool feature" in warm and "or warmPool: 0" in warm
    assert any("waf-rate-limit" in m for m in at(problems, "serving.admission.perClientRate"))
    assert any("cross-account-artifacts" in m for m in at(problems, "serving.artifactAccount"))
    assert not at(fixed, "serving.replicas.warmPool")


def test_a_feature_no_cloud_has_says_so():
    with contextlib.ExitStack() as clouds:
        for name in registry.names():
            original = registry.get(name)
            clouds.enter_context(
                registry.registered(dataclasses.replace(original, features=original.features - {Feature.SLURM}))
            )
        clouds.enter_context(registry.registered(lacking_cloud()))
        problems = all_problems(edited(training_raw(), {"cloud": "bare"}))
    assert any(
        m.endswith("no registered cloud has it; or scheduler kind managed or none")
        for m in at(problems, "training.scheduler.kind")
    )


def test_the_same_stack_on_a_cloud_with_every_feature_has_no_feature_problems():
    with registry.registered(described("full", account_model="accelstack.spec.accounts:AwsAccount")):
        problems = all_problems(edited(training_raw(), {"cloud": "full"}))
    assert not [p for p in problems if "feature, which" in p.message]


# --- cloud rules run for their own cloud only ----------------------------------------------------


def test_aws_rules_run_for_aws_stacks_only():
    bad_bucket = {
        "training.storage.datasets.uri": "s3://Acme_Datasets",
        "training.nodes.instanceType": "nd96isr_h100_v5",
    }
    aws_problems = all_problems(edited(training_raw(), bad_bucket))
    assert at(aws_problems, "training.storage.datasets.uri") and at(aws_problems, "training.nodes.instanceType")
    with registry.registered(described("other", account_model="accelstack.spec.accounts:AwsAccount")):
        other = all_problems(edited(training_raw(), {**bad_bucket, "cloud": "other"}))
        other_rules = {f"{r.module}.{r.name}" for r in all_rules("other")}
    assert not at(other, "training.storage.datasets.uri")  # S3 naming is an AWS rule
    assert not any(name.startswith("accelstack.clouds.aws.") for name in other_rules)
    assert "accelstack.spec.validators.cloud_offers_what_the_stack_asks" in other_rules


def test_a_cloud_runs_the_rule_modules_its_registration_names():
    cloud = described(
        "s3like", account_model="accelstack.spec.accounts:AwsAccount", rules=("accelstack.clouds.aws.rules",)
    )
    with registry.registered(cloud):
        rules = [f"{r.module}.{r.name}" for r in all_rules("s3like")]
        problems = all_problems(
            edited(training_raw(), {"cloud": "s3like", "training.storage.datasets.uri": "s3://Acme"})
        )
    assert "accelstack.clouds.aws.rules.s3_bucket_names" in rules
    assert not any(name.startswith("accelstack.clouds.aws.serving_rules.") for name in rules)
    assert at(problems, "training.storage.datasets.uri")


# --- the parallel file system keeps its keys on every cloud ---------------------------------------


def test_deployment_type_is_now_tier():
    raw = edited(
        training_raw(),
        {"training.storage.lustre.tier": DELETE, "training.storage.lustre.deploymentType": "PERSISTENT_2"},
    )
    [message] = at(all_problems(raw), "training.storage.lustre.deploymentType")
    assert "write tier" in message and "tier: PERSISTENT_2" in message


def test_certificate_arn_is_now_certificate():
    """The HTTPS certificate has one key on every cloud; the old AWS spelling says what to write instead."""
    raw = edited(
        serving_raw(),
        {"serving.loadBalancer.certificate": DELETE, "serving.loadBalancer.certificateArn": "arn:aws:acm:x"},
    )
    [message] = at(all_problems(raw), "serving.loadBalancer.certificateArn")
    assert "renamed" in message and "write certificate" in message


def test_the_certificate_rename_keeps_the_deployed_config_digest():
    """Tags carry the config digest: the rename must not retag a deployed serving stack."""
    from accelstack.components.base import config_digest

    spec = parse_spec(serving_raw(), "aws-serving")
    assert config_digest(spec) == "01640a214625"  # tests/golden/aws-serving.json, before the rename


def test_a_tier_is_one_of_the_clouds_parallel_fs_tiers():
    [message] = at(
        all_problems(edited(training_raw(), {"training.storage.lustre.tier": "AMLFS-Durable-Premium-40"})),
        "training.storage.lustre.tier",
    )
    assert message.startswith("'AMLFS-Durable-Premium-40' is not a aws parallel file system tier")
    assert "allowed: SCRATCH_1, SCRATCH_2, PERSISTENT_1, PERSISTENT_2" in message


def test_an_omitted_tier_is_the_clouds_default():
    spec = parse_spec(edited(training_raw(), {"training.storage.lustre.tier": DELETE}), "test")
    assert isinstance(spec, TrainingStack) and spec.training.storage.lustre is not None
    assert spec.training.storage.lustre.tier == "PERSISTENT_2"
    catalog = dataclasses.replace(AWS.catalog, default_parallel_fs="SCRATCH_2")
    cloud = described("scratchy", account_model="accelstack.spec.accounts:AwsAccount", catalog=catalog)
    with registry.registered(cloud):
        raw = edited(training_raw(), {"cloud": "scratchy", "training.storage.lustre": {"capacityGiB": 4800}})
        spec = parse_spec(raw, "test")
    assert isinstance(spec, TrainingStack) and spec.training.storage.lustre is not None
    assert spec.training.storage.lustre.tier == "SCRATCH_2"


def test_capacity_steps_come_from_the_clouds_tier():
    tiers = dict(AWS.catalog.parallel_fs)
    tiers["PERSISTENT_2"] = dataclasses.replace(
        tiers["PERSISTENT_2"], first_steps_gib=(), min_gib=4800, increment_gib=4800
    )
    cloud = described(
        "steps",
        account_model="accelstack.spec.accounts:AwsAccount",
        catalog=dataclasses.replace(AWS.catalog, parallel_fs=tiers),
    )
    with registry.registered(cloud):
        problems = all_problems(edited(training_raw(), {"cloud": "steps", "training.storage.lustre.capacityGiB": 2400}))
    messages = at(problems, "training.storage.lustre.capacityGiB")
    assert "2400 GiB is not a valid PERSISTENT_2 size; allowed: a multiple of 4800 GiB from 4800" in messages
    on_aws = all_problems(edited(training_raw(), {"training.storage.lustre.capacityGiB": 2400}))
    assert not [m for m in at(on_aws, "training.storage.lustre.capacityGiB") if "is not a valid" in m]  # an AWS step


def test_the_spec_imports_no_cloud_package():
    """Only the registry and the neutral description; a cloud's modules come in through its registration."""
    from test_layering import ROOT as REPO
    from test_layering import imported_modules

    # naming: the naming rules every cloud's names module states its services' rules in (stdlib only, no cloud).
    neutral = {"accelstack.clouds", "accelstack.clouds.base", "accelstack.clouds.registry", "accelstack.clouds.naming"}
    found = [
        f"{path.relative_to(REPO)}:{line} imports {name}"
        for path in sorted((REPO / "accelstack" / "spec").rglob("*.py"))
        for line, names, _imported in imported_modules(path, REPO)
        for name in names[:1]
        if name.startswith("accelstack.clouds") and name not in neutral
    ]
    assert found == []


def test_preview_refuses_a_described_cloud_before_running_anything(tmp_path, monkeypatch):
    """The engine's preview (and diff, and the Pulumi program) load with deploy=True: a cloud without
    components is an error at `cloud`, and no worker (no Pulumi) is started."""
    from typer.testing import CliRunner

    from accelstack.cli import app
    from accelstack.engine import preview

    text = TRAINING_STACK.read_text().replace("accelstack:cloud: aws", "accelstack:cloud: lab")
    stack_file = tmp_path / "Pulumi.lab-training.yaml"
    stack_file.write_text(text)
    monkeypatch.setattr(preview, "run_worker", lambda request: pytest.fail("a worker was started"))
    with registry.registered(described("lab", account_model="accelstack.spec.accounts:AwsAccount")):
        with pytest.raises(SpecError) as refused:
            preview.preview_stack(stack_file, project_dir=ROOT)
        validated = CliRunner().invoke(app, ["validate", str(stack_file)])
        previewed = CliRunner().invoke(app, ["preview", str(stack_file), "--project-dir", str(ROOT)])
    assert [p.path for p in refused.value.problems] == ["cloud"]
    assert validated.exit_code == 0, validated.output
    assert "not deployable yet" in validated.output  # a warning: validate, size and cost still work
    assert previewed.exit_code == 2
    assert "cloud: 'lab' is described (catalog, prices) but not deployable yet" in previewed.output


@pytest.mark.parametrize(
    ("cloud", "setting", "path"),
    [("aws", "aws:region", "account.region"), ("azure", "azure-native:location", "account.location"), ("gcp", "gcp:region", "account.region")],
)  # fmt: skip
def test_the_clouds_own_provider_region_setting_must_agree_with_the_account(cloud, setting, path):
    """Pulumi users set the provider's region by habit; a stack that says two regions names both, at the account."""
    raw = training_raw() if cloud == "aws" else on_cloud(training_raw(), cloud)
    region = raw["account"].get("location") or raw["account"]["region"]
    settings = {setting: "somewhere-else-1", "unrelated:region": "x"}
    with pytest.raises(SpecError) as error:
        parse_spec(raw, "dev", provider_settings=settings.get)
    [problem] = [p for p in error.value.problems if setting in p.message]
    assert (
        problem.path == path
        and f"{region!r} but the same stack file sets {setting}: 'somewhere-else-1'" in problem.message
    )
    agreeing = {setting: region}
    try:
        parse_spec(raw, "dev", provider_settings=agreeing.get)
    except SpecError as other:  # the AWS-shaped storage block is not this test's subject
        assert not [p for p in other.problems if setting in p.message]


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
@pytest.mark.parametrize(
    ("key", "value"), [("artifactReaderSubnets", "subnet-1"), ("artifactReaderAddresses", "20.1.2.3")]
)
def test_reader_networks_are_refused_where_the_object_store_admits_readers_by_grant_alone(cloud, key, value):
    """S3 and Cloud Storage have no network rules in front of the checkpoint bucket: a subnet or address list there
    would do nothing, so it is refused at its key, naming the cloud that has such rules."""
    stack = ROOT / "stacks" / f"Pulumi.{cloud}-training.yaml"
    raw = apply_overrides(read_stack_file(stack), [f"training.{key}=[{value}]"])
    with pytest.raises(SpecError) as caught:
        parse_spec(raw, f"{cloud}-training")
    (message,) = [p.message for p in caught.value.problems if p.path == f"training.{key}"]
    assert f"which {cloud} does not offer" in message and "clouds that have it: azure" in message


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_sharing_models_without_a_checkpoint_store_is_refused_not_silently_dropped(cloud):
    stack = ROOT / "stacks" / f"Pulumi.{cloud}-training.yaml"
    raw = read_stack_file(stack)
    reader = raw["separation"]["servingAccounts"][0]
    raw = apply_overrides(
        raw,
        [
            "training.storage.checkpoints=null",
            f'training.artifactReaders=["{reader}"]',
            "training.nodes.capacity=on-demand",
        ],
    )
    with pytest.raises(SpecError) as caught:
        parse_spec(raw, f"{cloud}-training")
    (message,) = [p.message for p in caught.value.problems if p.path == "training.artifactReaders"]
    assert "checkpoint store" in message and "training.storage.checkpoints.uri" in message
