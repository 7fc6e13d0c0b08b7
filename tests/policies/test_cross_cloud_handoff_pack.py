"""Issue 31: the separation pack judges a serving stack's reader on another cloud exactly as a cross-account grant:
only read of the artifact prefix crosses, and a federated trust names its subject. Each of the six pairs gets no
verdict once its values are known (as after `pulumi up`, the mocks resolving every output) and no mandatory one in
preview; each mutation (the prefix widened, a write added, a wildcard subject) is caught by a mandatory verdict on
the resource it touched. OCI -> Vultr: each replica's pre-authenticated request is read-only (ObjectRead,
AnyObjectRead), on the artifact prefix of the named bucket and namespace, and expires within a day of its clock."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from accelstack.engine.capture import Capture, Registration
from accelstack.engine.export import deployment_v3
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PROGRAM, PROJECT, preview_stack, run_worker, stack_config
from accelstack.spec.loader import parse_spec
from tests.conformance.test_cross_cloud_handoff import PAIRS, overrides
from tests.policies.test_policy_real_mutations import REPO

Doc = dict[str, Any]


def stack_file(serving: str):
    return REPO / "stacks" / f"Pulumi.{serving}-serving.yaml"


@cache
def known(training: str, serving: str) -> tuple[Doc, Any]:
    raw, config = stack_config(stack_file(serving), overrides(training, serving))
    request = {"main": str(REPO / PROGRAM), "project_dir": str(REPO), "config": config,
               "stack": f"{serving}-serving", "project": PROJECT, "preview": False}  # fmt: skip
    result = run_worker(request)
    assert result["ok"], result.get("error")
    registrations = [Registration(**data) for data in result["resources"]]
    capture = Capture(PROJECT, f"{serving}-serving", False, registrations, result.get("stack_outputs", {}))
    return deployment_v3(capture), parse_spec(raw, f"{serving}-serving")


@pytest.mark.parametrize(("training", "serving"), PAIRS)
def test_pair_has_no_verdict_once_known_and_no_mandatory_one_in_preview(training, serving):
    doc, spec = known(training, serving)
    assert [v.line() for v in policy_verdicts(doc, spec)] == []
    preview = preview_stack(stack_file(serving), overrides(training, serving), REPO)
    assert [v.line() for v in policy_verdicts(preview.export, preview.spec) if v.mandatory] == []


def resource(doc: Doc, type_token: str, suffix: str = "") -> Doc:
    found = [r for r in doc["deployment"]["resources"] if r["type"] == type_token and r["urn"].endswith(suffix)]
    assert len(found) == 1, (type_token, suffix, [r["urn"] for r in found])
    return found[0]


def edit_json(entry: Doc, key: str, change: Callable[[Any], None]) -> None:
    value = json.loads(entry["inputs"][key])
    change(value)
    entry["inputs"][key] = json.dumps(value)


ROLE, ROLE_POLICY = "aws:iam/role:Role", "aws:iam/rolePolicy:RolePolicy"
GCS_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
POOL_PROVIDER = "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider"
FIC = "azure-native:managedidentity:FederatedIdentityCredential"
ASSIGNMENT = "azure-native:authorization:RoleAssignment"
BLOB_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"


def _aws_widen(doc: Doc) -> str:
    entry = resource(doc, ROLE_POLICY, "artifact-read")
    edit_json(entry, "policy", lambda p: p["Statement"][0].update(Resource="arn:aws:s3:::acme-train-checkpoints/*"))
    return entry["urn"]


def _aws_write(doc: Doc) -> str:
    entry = resource(doc, ROLE_POLICY, "artifact-read")
    edit_json(entry, "policy", lambda p: p["Statement"][0].update(Action=["s3:GetObject", "s3:PutObject"]))
    return entry["urn"]


def _aws_wildcard_subject(doc: Doc) -> str:
    entry = resource(doc, ROLE, "artifact-reader")

    def wildcard(trust: Any) -> None:
        condition = trust["Statement"][0]["Condition"]
        equals = condition.pop("StringEquals")
        condition["StringLike"] = {k: ("*" if k.endswith(":sub") else v) for k, v in equals.items()}

    edit_json(entry, "assumeRolePolicy", wildcard)
    return entry["urn"]


def _gcs_widen(doc: Doc) -> str:
    entry = resource(doc, GCS_MEMBER, "artifact-read-0")
    entry["inputs"].pop("condition")
    return entry["urn"]


def _gcs_write(doc: Doc) -> str:
    entry = resource(doc, GCS_MEMBER, "artifact-read-0")
    entry["inputs"]["role"] = "roles/storage.objectAdmin"
    return entry["urn"]


def _pool_wildcard_subject(doc: Doc) -> str:
    entry = resource(doc, POOL_PROVIDER)
    entry["inputs"].pop("attributeCondition")
    entry["inputs"].pop("aws", None)  # an AWS account is placed by its id; an OIDC issuer needs the condition
    entry["inputs"]["oidc"] = {"issuerUri": "https://token.actions.githubusercontent.com"}
    return entry["urn"]


def _blob_widen(doc: Doc) -> str:
    entry = resource(doc, ASSIGNMENT, "artifact-read")
    entry["inputs"].pop("condition")
    entry["inputs"].pop("conditionVersion", None)
    return entry["urn"]


def _blob_write(doc: Doc) -> str:
    entry = resource(doc, ASSIGNMENT, "artifact-read")
    entry["inputs"]["roleDefinitionId"] = entry["inputs"]["roleDefinitionId"].rsplit("/", 1)[0] + "/" + BLOB_CONTRIBUTOR
    return entry["urn"]


def _fic_wildcard_subject(doc: Doc) -> str:
    entry = resource(doc, FIC)
    entry["inputs"]["subject"] = "*"
    return entry["urn"]


PAR = "oci:ObjectStorage/preauthrequest:Preauthrequest"


def _par_set(doc: Doc, **values: Any) -> str:
    """Replica 0's PAR with `values` in its inputs and its outputs (stack policies read the outputs)."""
    entry = resource(doc, PAR, "replica-0-weights-par")
    for block in ("inputs", "outputs"):
        if block in entry:
            entry[block].update(values)
    return entry["urn"]


def _par_write(doc: Doc) -> str:
    return _par_set(doc, accessType="ObjectWrite", objectName="models/llama-3.1-8b/model.safetensors")


def _par_read_write(doc: Doc) -> str:
    return _par_set(doc, accessType="AnyObjectReadWrite")


def _par_bucket_wide(doc: Doc) -> str:
    return _par_set(doc, objectName="")  # no object name: every object of the bucket


def _par_another_prefix(doc: Doc) -> str:
    return _par_set(doc, objectName="models/")  # the training side's other models too


def _par_another_bucket(doc: Doc) -> str:
    return _par_set(doc, bucket="acme-train-datasets")


def _par_long_expiry(doc: Doc) -> str:
    return _par_set(doc, timeExpires="2026-12-07T12:00:00Z")  # 48 h after its clock (2026-12-05T12:00:00Z)


def _par_expiry_from_no_clock(doc: Doc) -> str:
    urn = _par_set(doc, timeExpires="2027-12-05T12:00:00Z")
    resource(doc, PAR, "replica-0-weights-par").get("propertyDependencies", {}).pop("timeExpires", None)
    return urn


TOKEN = "pulumi-python:dynamic/handoff:GcpAccessToken"


def _token_set(doc: Doc, **values: Any) -> str:
    """Replica 0's access token with `values` in its inputs and outputs."""
    entry = resource(doc, TOKEN, "replica-0-weights-token")
    for block in ("inputs", "outputs"):
        if block in entry:
            entry[block].update(values)
    return entry["urn"]


def _token_full_control(doc: Doc) -> str:
    return _token_set(doc, scope="https://www.googleapis.com/auth/devstorage.full_control")


def _token_cloud_platform(doc: Doc) -> str:
    return _token_set(doc, scope="https://www.googleapis.com/auth/cloud-platform")


def _token_long(doc: Doc) -> str:
    return _token_set(doc, lifetime_seconds=43200)  # the extension's 12 h, which this stack never asks for


def _token_of_another_account(doc: Doc) -> str:
    return _token_set(doc, service_account="accelstack-deploy@acme-train.iam.gserviceaccount.com")


def _token_from_no_clock(doc: Doc) -> str:
    urn = _token_set(doc, clock="2026-12-05T12:00:00Z")
    resource(doc, TOKEN, "replica-0-weights-token").get("propertyDependencies", {}).pop("clock", None)
    return urn


def _gcs_grant_to_anyone(doc: Doc) -> str:
    entry = resource(doc, GCS_MEMBER, "artifact-read-0")
    entry["inputs"]["member"] = "allAuthenticatedUsers"
    return entry["urn"]


SESSION = "pulumi-python:dynamic/handoff:AwsSession"


def _session_set(doc: Doc, **values: Any) -> str:
    """Replica 0's STS session with `values` in its inputs and outputs."""
    entry = resource(doc, SESSION, "replica-0-weights-session")
    for block in ("inputs", "outputs"):
        if block in entry:
            entry[block].update(values)
    return entry["urn"]


def _session_policy(doc: Doc, change: Callable[[Any], None]) -> str:
    policy = json.loads(resource(doc, SESSION, "replica-0-weights-session")["inputs"]["policy"])
    change(policy)
    return _session_set(doc, policy=json.dumps(policy))


def _session_widen(doc: Doc) -> str:
    return _session_policy(doc, lambda p: p["Statement"][0].update(Resource="arn:aws:s3:::acme-train-checkpoints/*"))


def _session_write(doc: Doc) -> str:
    return _session_policy(doc, lambda p: p["Statement"][0].update(Action=["s3:GetObject", "s3:PutObject"]))


def _session_long(doc: Doc) -> str:
    return _session_set(doc, duration_seconds=43200)


def _session_of_another_role(doc: Doc) -> str:
    return _session_set(doc, role_arn="arn:aws:iam::111111111111:role/OrganizationAccountAccessRole")


def _session_from_no_clock(doc: Doc) -> str:
    urn = _session_set(doc, clock="2026-12-05T12:00:00Z")
    resource(doc, SESSION, "replica-0-weights-session").get("propertyDependencies", {}).pop("clock", None)
    return urn


def _deployer_trust_edit(doc: Doc, change: Callable[[Any], None]) -> str:
    entry = resource(doc, ROLE, "artifact-reader")
    edit_json(entry, "assumeRolePolicy", lambda trust: change(trust["Statement"][0]))
    return entry["urn"]


def _trust_whole_account(doc: Doc) -> str:
    return _deployer_trust_edit(doc, lambda statement: statement.pop("Condition"))


def _trust_any_sso_role(doc: Doc) -> str:
    return _deployer_trust_edit(
        doc, lambda st: st.update(Condition={"ArnLike": {"aws:PrincipalArn": "arn:aws:iam::111111111111:role/*"}})
    )


def _trust_another_principal(doc: Doc) -> str:
    other = "arn:aws:iam::111111111111:role/ci-deploy"
    return _deployer_trust_edit(doc, lambda st: st.update(Condition={"ArnEquals": {"aws:PrincipalArn": other}}))


def _trust_condition_unreadable(doc: Doc) -> str:
    """A Condition the SDK takes as any JSON (here a string): unreadable, so it fails closed, and the pack runs on."""
    return _deployer_trust_edit(doc, lambda st: st.update(Condition="aws:PrincipalArn=*"))


def _trust_web_identity(doc: Doc) -> str:
    return _deployer_trust_edit(doc, lambda st: st.update(Action="sts:AssumeRoleWithWebIdentity"))


def _user_data_long_lived_key(doc: Doc) -> str:
    """A long-lived access key (AKIA...) where the replica's temporary session credentials go: still a secret."""
    entry = resource(doc, "vultr:index/instance:Instance", "replica-0")
    for block in ("inputs", "outputs"):
        data = entry.get(block, {}).get("userData")
        if isinstance(data, str):
            entry[block]["userData"] = data.replace("AWS_ACCESS_KEY_ID=ASIA", "AWS_ACCESS_KEY_ID=AKIA")
    return entry["urn"]


MUTATIONS: dict[str | tuple[str, str], list[Callable[[Doc], str]]] = {
    ("aws", "vultr"): [
        _aws_widen,
        _aws_write,
        _trust_whole_account,
        _trust_any_sso_role,
        _trust_another_principal,
        _trust_web_identity,
        _trust_condition_unreadable,
        _session_widen,
        _session_write,
        _session_long,
        _session_of_another_role,
        _session_from_no_clock,
        _user_data_long_lived_key,
    ],
    ("gcp", "vultr"): [
        _gcs_widen,
        _gcs_write,
        _gcs_grant_to_anyone,
        _token_full_control,
        _token_cloud_platform,
        _token_long,
        _token_of_another_account,
        _token_from_no_clock,
    ],
    "aws": [_aws_widen, _aws_write, _aws_wildcard_subject],
    "gcp": [_gcs_widen, _gcs_write, _pool_wildcard_subject],
    "azure": [_blob_widen, _blob_write, _fic_wildcard_subject],
    "oci": [
        _par_write,
        _par_read_write,
        _par_bucket_wide,
        _par_another_prefix,
        _par_another_bucket,
        _par_long_expiry,
        _par_expiry_from_no_clock,
    ],
}


@pytest.mark.parametrize(("training", "serving"), PAIRS)
def test_every_handoff_mutation_is_caught(training, serving):
    base, spec = known(training, serving)
    survivors = []
    for mutate in MUTATIONS.get((training, serving)) or MUTATIONS[training]:
        doc = copy.deepcopy(base)
        urn = mutate(doc)
        verdicts = policy_verdicts(doc, spec)
        if not any(
            (v.mandatory and v.urn in (urn, "")) or (v.mandatory and urn.rsplit("::", 1)[-1] in v.message)
            for v in verdicts
        ):
            got = "\n    ".join(v.line() for v in verdicts) or "(no verdict)"
            survivors.append(f"{mutate.__name__}: expected a mandatory verdict on {urn}; got\n    {got}")
    assert not survivors, "\n".join(survivors)


# The pack's handoff policies these mutations catch (tests/policies/test_policy_rules.py counts them as covered).
CAUGHT = ("handoff-reader-read-only", "handoff-reader-only", "handoff-reader-expires")


@pytest.mark.parametrize(
    "values",
    [
        {"accessType": "ObjectRead", "objectName": "models/llama-3.1-8b/config.json"},  # one object of the prefix
        {"timeExpires": "2026-12-06T12:00:00Z"},  # exactly a day after its clock
        {"bucketListingAction": "Deny"},  # a PAR that may not list reads less
    ],
)
def test_a_narrower_par_passes(values):
    """Legit cases: the pack refuses what crosses more, not a PAR that reads less or lives the longest allowed."""
    base, spec = known("oci", "vultr")
    doc = copy.deepcopy(base)
    _par_set(doc, **values)
    assert [v.line() for v in policy_verdicts(doc, spec)] == []


def test_the_par_expiry_is_judged_once_known_only():
    """In a preview the clock, hence the expiry, is unknown: no verdict on it then; the known one is judged."""
    preview = preview_stack(stack_file("vultr"), overrides("oci"), REPO)
    pars = [r for r in preview.export["deployment"]["resources"] if r["type"] == PAR]
    assert len(pars) == 2 and all("timeExpires" in r["propertyDependencies"] for r in pars)
    assert not [v for v in policy_verdicts(preview.export, preview.spec) if v.policy == "handoff-reader-expires"]


def test_anything_but_the_reader_in_the_training_account_is_caught():
    """A bucket the serving stack would create through the reader's provider lands in the training account."""
    base, spec = known("aws", "gcp")
    doc = copy.deepcopy(base)
    reader = resource(doc, ROLE, "artifact-reader")
    stray = copy.deepcopy(reader)
    stray["type"] = "aws:s3/bucket:Bucket"
    stray["urn"] = reader["urn"].replace("aws:iam/role:Role::", "aws:s3/bucket:Bucket::").replace("-reader", "-stray")
    stray["inputs"] = {"bucket": "acme-serve-stray"}
    doc["deployment"]["resources"].append(stray)
    verdicts = policy_verdicts(doc, spec)
    assert any(v.mandatory and v.policy == "handoff-reader-only" and v.urn == stray["urn"] for v in verdicts), [
        v.line() for v in verdicts
    ]
    mutated = copy.deepcopy(base)
    urn = _aws_write(mutated)
    assert any(v.policy == "handoff-reader-read-only" and v.urn == urn for v in policy_verdicts(mutated, spec))


def test_a_par_anywhere_but_under_the_readers_provider_is_refused():
    """The packs know a PAR only as this reader: pinned to another tenancy, its PARs are refused (fail closed)."""
    base, spec = known("oci", "vultr")
    doc = copy.deepcopy(base)
    [provider] = [r for r in doc["deployment"]["resources"] if r["type"] == "pulumi:providers:oci"]
    for block in ("inputs", "outputs"):
        provider.get(block, {})["tenancyOcid"] = "ocid1.tenancy.oc1..aaaaaaaaothertenancy"
    urn = resource(doc, PAR, "replica-0-weights-par")["urn"]
    verdicts = policy_verdicts(doc, spec)
    assert any(
        v.mandatory and v.policy == "handoff-reader-read-only" and v.urn == urn and "bearer URL" in v.message
        for v in verdicts
    ), [v.line() for v in verdicts]


def test_a_token_outside_a_vultr_stacks_cloud_storage_reader_is_refused():
    """The packs know the access token kind only as the GCS reader of a Vultr stack: anywhere else it fails closed."""
    base, _ = known("gcp", "vultr")
    doc = copy.deepcopy(base)
    token = resource(doc, TOKEN, "replica-0-weights-token")
    other, other_spec = known("oci", "vultr")
    mutated = copy.deepcopy(other)
    mutated["deployment"]["resources"].append(token)
    verdicts = policy_verdicts(mutated, other_spec)
    assert any(
        v.mandatory and v.policy == "handoff-reader-expires" and v.urn == token["urn"] and "declared only" in v.message
        for v in verdicts
    ), [v.line() for v in verdicts]
