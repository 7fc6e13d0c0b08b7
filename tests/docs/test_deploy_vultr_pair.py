"""The cross-cloud serving stack files of docs/deploy-vultr.md ("The OCI pair's serving stack file, to copy" and its
Google Cloud and AWS siblings, each a `<!-- stack: NAME -->` block): a user copies one whole, so each is checked
whole, as the doc prints it. Not shipped examples (each would need a golden export, day-2 rows and a conformance
entry): `accelstack validate` accepts it, its preview under mocks declares the pair's reader in the training account
(OCI: one pre-authenticated request per replica through the provider pinned to the training tenancy; Google Cloud:
a keyless reader service account and one access token of it per replica; AWS: a reader role trusted by the deployer
only and one session of it per replica) and no Vultr key, and both packs draw no violation on it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.components.vultr.serving.weights_key import WEIGHTS_KEY_FILE, WEIGHTS_KEY_URL_FILE
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "deploy-vultr.md"
BLOCK = re.compile(r"<!-- stack: ([a-z0-9-]+) -->\n```yaml\n(.*?)\n```", re.DOTALL)
INSTANCE = "vultr:index/instance:Instance"


def stack_files() -> dict[str, str]:
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len({name for name, _ in blocks}) == len(blocks), [name for name, _ in blocks]  # one block per name
    return {name: text + "\n" for name, text in blocks}


def provider_of(resource) -> str:
    """The name of the provider a resource is registered through (its URN `::name::id` reference)."""
    return resource.provider.split("::")[-2] if resource.provider else ""


def oci_reader(result: PreviewResult, serving: dict) -> None:
    types = [r.type for r in result.resources]
    pars = [r for r in result.resources if r.type == "oci:ObjectStorage/preauthrequest:Preauthrequest"]
    assert len(pars) == types.count(INSTANCE), types
    [provider] = [r for r in result.resources if r.type == "pulumi:providers:oci"]
    assert provider.inputs["tenancyOcid"] == serving["artifactTenancy"], provider.inputs
    assert all(provider_of(par) == provider.name for par in pars), [par.provider for par in pars]
    assert {par.inputs["accessType"] for par in pars} == {"AnyObjectRead"}


def gcp_reader(result: PreviewResult, serving: dict) -> None:
    project = serving["artifactAccount"].removeprefix("gcp:")
    [provider] = [r for r in result.resources if r.type == "pulumi:providers:gcp"]
    assert provider.inputs["project"] == project, provider.inputs
    [reader] = [r for r in result.resources if r.type == "gcp:serviceaccount/account:Account"]
    assert provider_of(reader) == provider.name, reader.provider
    assert not [r for r in result.resources if r.type == "gcp:serviceaccount/key:Key"]  # keyless
    email = f"{reader.inputs['accountId']}@{project}.iam.gserviceaccount.com"
    tokens = [r for r in result.resources if r.type.endswith(":GcpAccessToken")]
    assert len(tokens) == [r.type for r in result.resources].count(INSTANCE), tokens
    assert len({t.name for t in tokens}) == len(tokens)  # one per replica
    for token in tokens:
        assert token.inputs["service_account"] == email, token.inputs
        assert token.inputs["scope"] == "https://www.googleapis.com/auth/devstorage.read_only", token.inputs
        assert float(token.inputs["lifetime_seconds"]) == 60 * serving["artifactUrlLifetimeMinutes"]


def aws_reader(result: PreviewResult, serving: dict) -> None:
    account = serving["artifactAccount"].removeprefix("aws:")
    [provider] = [r for r in result.resources if r.type == "pulumi:providers:aws"]
    assert json.loads(provider.inputs["allowedAccountIds"]) == [account], provider.inputs
    assert provider.inputs["region"] == serving["artifactRegion"]
    [role] = [r for r in result.resources if r.type == "aws:iam/role:Role"]
    assert provider_of(role) == provider.name, role.provider
    [trust] = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust["Condition"] == {"ArnEquals": {"aws:PrincipalArn": serving["artifactDeployer"]}}, trust
    sessions = [r for r in result.resources if r.type.endswith(":AwsSession")]
    assert len(sessions) == [r.type for r in result.resources].count(INSTANCE), sessions
    assert len({s.inputs["session_name"] for s in sessions}) == len(sessions)  # one per replica
    for session in sessions:
        assert session.inputs["role_arn"] == f"arn:aws:iam::{account}:role/{role.inputs['name']}", session.inputs
        assert float(session.inputs["duration_seconds"]) == 60 * serving["artifactUrlLifetimeMinutes"]


# Each stack file the doc prints, by its block's name: the scheme of its weights and what its reader must be.
PAIRS: dict[str, tuple[str, Callable[[PreviewResult, dict], None]]] = {
    "vultr-oci-serving": ("oci://", oci_reader),
    "vultr-gcp-serving": ("gs://", gcp_reader),
    "vultr-aws-serving": ("https://acme-train-checkpoints.s3.us-east-1.amazonaws.com/", aws_reader),
}


def saved(directory: Path, stack: str) -> Path:
    """The doc's stack file saved as a user would (stacks/Pulumi.<stack>.yaml of their copy)."""
    path = directory / f"Pulumi.{stack}.yaml"
    path.write_text(stack_files()[stack])
    return path


@pytest.fixture(scope="module", params=sorted(PAIRS))
def copied(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, PreviewResult]:
    stack = request.param
    return stack, preview_stack(saved(tmp_path_factory.mktemp("stacks"), stack), [], REPO)


def test_the_doc_prints_each_pairs_stack_file_once() -> None:
    assert sorted(stack_files()) == sorted(PAIRS)


@pytest.mark.parametrize("stack", sorted(PAIRS))
def test_the_doc_prints_one_complete_stack_file(stack: str) -> None:
    config = yaml.safe_load(stack_files()[stack])["config"]
    assert (config["accelstack:cloud"], config["accelstack:workload"]) == ("vultr", "serving")
    assert config["accelstack:serving"]["model"]["weightsUri"].startswith(PAIRS[stack][0])
    assert "weightsKey" not in config["accelstack:account"]  # weights from the training cloud: no Vultr key


@pytest.mark.parametrize("stack", sorted(PAIRS))
def test_validate_accepts_it_as_a_user_would_run_it(tmp_path: Path, stack: str) -> None:
    result = CliRunner().invoke(app, ["validate", str(saved(tmp_path, stack)), "--project-dir", str(REPO)])
    assert result.exit_code == 0, result.output
    assert f"{stack}: ok" in result.output


def test_its_preview_declares_the_pairs_reader_in_the_training_account(copied: tuple[str, PreviewResult]) -> None:
    stack, result = copied
    serving = yaml.safe_load(stack_files()[stack])["config"]["accelstack:serving"]
    assert [r.type for r in result.resources].count(INSTANCE) == serving["replicas"]["max"] == 2
    PAIRS[stack][1](result, serving)


def test_its_replicas_fetch_no_vultr_key(copied: tuple[str, PreviewResult]) -> None:
    _, result = copied
    for instance in (r for r in result.resources if r.type == INSTANCE):
        files = [f["path"] for f in yaml.safe_load(instance.inputs["userData"])["write_files"]]
        assert WEIGHTS_KEY_URL_FILE not in files, files
        assert WEIGHTS_KEY_FILE not in instance.inputs["userData"]


def test_both_packs_draw_no_violation(copied: tuple[str, PreviewResult]) -> None:
    _, result = copied
    verdicts = policy_verdicts(result.export, result.spec)
    assert verdicts == [], [v.line() for v in verdicts]
