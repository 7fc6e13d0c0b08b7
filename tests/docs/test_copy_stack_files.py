"""The copy handoff's stack files (docs/cross-cloud.md "Copying the weights into the serving stack's own store", and
docs/deploy-vultr.md "Weights trained on Azure: copied"; each a `<!-- copy-stack: NAME -->` block): a user copies one
whole, so each is checked whole, as the doc prints it. `accelstack validate` accepts it; its preview under mocks
declares the copy from the source cloud into the stack's own store, the replica group waits for it, and no reader is
declared on the training cloud; both packs draw no violation, the copy and its PAR included."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.engine.policy_runner import policy_verdicts
from accelstack.engine.preview import PreviewResult, preview_stack
from accelstack.spec.copies import SOURCE_FORMS

REPO = Path(__file__).resolve().parents[2]
DOCS = {REPO / "docs" / "cross-cloud.md": 6, REPO / "docs" / "deploy-vultr.md": 1}
BLOCK = re.compile(r"<!-- copy-stack: ([a-z0-9-]+) -->\n```yaml\n(.*?)\n```", re.DOTALL)
COPY = "pulumi-python:dynamic/handoff:ArtifactCopy"
GROUPS = {
    "aws": "aws:autoscaling/group:Group",
    "gcp": "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
    "azure": "azure-native:compute:VirtualMachineScaleSet",
    "vultr": "vultr:index/instance:Instance",
}


def stack_files() -> dict[str, str]:
    found: dict[str, str] = {}
    for doc, count in DOCS.items():
        blocks = BLOCK.findall(doc.read_text(encoding="utf-8"))
        assert len(blocks) == count, (doc.name, [name for name, _ in blocks])
        for name, text in blocks:
            assert name not in found, name  # one block per name
            found[name] = text + "\n"
    return found


STACKS = sorted(stack_files())


def saved(directory: Path, stack: str) -> Path:
    path = directory / f"Pulumi.{stack}.yaml"
    path.write_text(stack_files()[stack])
    return path


@pytest.fixture(scope="module", params=STACKS)
def previewed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, PreviewResult]:
    stack = request.param
    return stack, preview_stack(saved(tmp_path_factory.mktemp("stacks"), stack), [], REPO)


def test_every_new_pair_has_its_stack_file():
    pairs = {(name.split("-")[1], name.split("-")[0]) for name in STACKS}
    assert pairs == {("oci", s) for s in ("aws", "azure", "gcp", "vultr")} | {
        ("azure", s) for s in ("aws", "gcp", "vultr")
    }


@pytest.mark.parametrize("stack", STACKS)
def test_the_doc_prints_a_complete_copying_stack_file(stack: str) -> None:
    serving_cloud, source = stack.split("-")[:2]
    config = yaml.safe_load(stack_files()[stack])["config"]
    assert (config["accelstack:cloud"], config["accelstack:workload"]) == (serving_cloud, "serving")
    serving = config["accelstack:serving"]
    assert serving["artifactAccount"].startswith(f"{source}:")
    assert serving["model"]["copyFrom"].startswith(SOURCE_FORMS[source].partition("<")[0])


@pytest.mark.parametrize("stack", STACKS)
def test_validate_accepts_it_as_a_user_would_run_it(tmp_path: Path, stack: str) -> None:
    result = CliRunner().invoke(app, ["validate", str(saved(tmp_path, stack)), "--project-dir", str(REPO)])
    assert result.exit_code == 0, result.output
    assert f"{stack}: ok" in result.output


def test_its_preview_copies_before_the_replicas_boot(previewed: tuple[str, PreviewResult]) -> None:
    stack, result = previewed
    serving_cloud, source = stack.split("-")[:2]
    serving = yaml.safe_load(stack_files()[stack])["config"]["accelstack:serving"]
    [copy] = [r for r in result.resources if r.type == COPY]
    assert (copy.inputs["source_cloud"], copy.inputs["destination_cloud"]) == (source, serving_cloud)
    assert copy.inputs["source"] == serving["model"]["copyFrom"]
    assert copy.inputs["destination"] == serving["model"]["weightsUri"]
    groups = [r for r in result.resources if r.type == GROUPS[serving_cloud]]
    assert groups and all(any(urn.endswith(f"::{copy.name}") for urn in g.dependencies) for g in groups)
    # No reader in the training account: the replicas read the copy in their own store.
    assert not [r for r in result.resources if r.type.startswith("pulumi:providers:") and "artifacts" in r.name]


def test_both_packs_draw_no_violation(previewed: tuple[str, PreviewResult]) -> None:
    """The copy, its PAR and the OCI provider included: the separation pack's copy rules judge them."""
    _, result = previewed
    verdicts = policy_verdicts(result.export, result.spec)
    assert verdicts == [], [v.line() for v in verdicts]
