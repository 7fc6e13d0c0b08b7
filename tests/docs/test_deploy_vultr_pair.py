"""The OCI -> Vultr serving stack file of docs/deploy-vultr.md ("The OCI pair's serving stack file, to copy"): a user copies
it whole, so it is checked whole, as the doc prints it. Not a shipped example (it would need a golden export, day-2
rows and a conformance entry): `accelstack validate` accepts it, its preview under mocks declares the pair's reader
(one pre-authenticated request per replica through the provider pinned to the training tenancy) and no Vultr key,
and both packs draw no violation on it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "deploy-vultr.md"
STACK = "vultr-oci-serving"
BLOCK = re.compile(rf"<!-- stack: {STACK} -->\n```yaml\n(.*?)\n```", re.DOTALL)


def stack_text() -> str:
    [text] = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    return text + "\n"


@pytest.fixture(scope="module")
def copied(tmp_path_factory: pytest.TempPathFactory) -> PreviewResult:
    """The doc's stack file saved as a user would (stacks/Pulumi.<stack>.yaml of their copy), then previewed."""
    path = tmp_path_factory.mktemp("stacks") / f"Pulumi.{STACK}.yaml"
    path.write_text(stack_text())
    return preview_stack(path, [], REPO)


def test_the_doc_prints_one_complete_stack_file() -> None:
    config = yaml.safe_load(stack_text())["config"]
    assert (config["accelstack:cloud"], config["accelstack:workload"]) == ("vultr", "serving")
    assert config["accelstack:serving"]["model"]["weightsUri"].startswith("oci://")
    assert "weightsKey" not in config["accelstack:account"]  # weights from OCI: no Vultr key is fetched


def test_validate_accepts_it_as_a_user_would_run_it(tmp_path: Path) -> None:
    path = tmp_path / f"Pulumi.{STACK}.yaml"
    path.write_text(stack_text())
    result = CliRunner().invoke(app, ["validate", str(path), "--project-dir", str(REPO)])
    assert result.exit_code == 0, result.output
    assert f"{STACK}: ok" in result.output


def test_its_preview_declares_the_pars_in_the_training_tenancy(copied: PreviewResult) -> None:
    result = copied
    types = [r.type for r in result.resources]
    replicas = types.count("vultr:index/instance:Instance")
    assert replicas == 2
    assert types.count("oci:ObjectStorage/preauthrequest:Preauthrequest") == replicas
    [provider] = [r for r in result.resources if r.type == "pulumi:providers:oci"]
    assert provider.inputs["tenancyOcid"] == "ocid1.tenancy.oc1..aaaaaaaaacmetenancy", provider.inputs


def test_both_packs_draw_no_violation(copied: PreviewResult) -> None:
    result = copied
    verdicts = policy_verdicts(result.export, result.spec)
    assert verdicts == [], [v.line() for v in verdicts]
