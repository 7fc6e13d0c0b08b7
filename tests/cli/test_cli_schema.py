"""docs/spec-reference.md and docs/accelstack.schema.json: generated from the models, committed, and useful."""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import pytest
import yaml
from pydantic import Field
from typer.testing import CliRunner

from accelstack.cli import app
from accelstack.commands.schema import generated_files, reference_rows, stack_file_schema
from accelstack.examples import example_files
from accelstack.spec.base import Model

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
STACK_FILES = example_files(REPO / "stacks")


@pytest.mark.parametrize("name", sorted(generated_files()))
def test_committed_docs_match_the_models(name: str) -> None:
    assert (DOCS / name).read_text() == generated_files()[name], f"docs/{name} is stale: run `make docs`"


def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["schema", "--out", str(tmp_path)]).exit_code == 0
    assert runner.invoke(app, ["schema", "--out", str(tmp_path), "--check"]).exit_code == 0
    (tmp_path / "spec-reference.md").write_text("old\n")
    result = runner.invoke(app, ["schema", "--out", str(tmp_path), "--check"])
    assert result.exit_code == 1 and "spec-reference.md: out of date" in result.stderr
    assert (tmp_path / "spec-reference.md").read_text() == "old\n"


def test_every_key_has_a_description() -> None:
    schema = stack_file_schema()
    rows = reference_rows(schema, schema["properties"]["config"], "")
    assert len(rows) > 90  # every nested key is walked, not just the top level
    assert [path for path, _, _, description in rows if not description] == []


def test_a_nested_key_shows_its_enclosing_keys_default() -> None:
    """Serving's network defaults to its own VPC range, not the training block's (new-user trial 3, friction 5)."""
    schema = stack_file_schema()
    rows = {(path, default) for path, _, default, _ in reference_rows(schema, schema["properties"]["config"], "")}
    serving_network = next(default for path, default in rows if path == "accelstack:serving.network")
    serving_cidr = next(default for path, default in rows if path == "accelstack:serving.network.vpcCidr")
    assert serving_cidr.strip("`") == '"10.30.0.0/16"' and '"vpcCidr": "10.30.0.0/16"' in serving_network


def test_the_reference_lists_keys_a_user_could_not_find_before() -> None:
    text = (DOCS / "spec-reference.md").read_text()
    for key in (
        "`network.vpcId`",
        "`network.publicSubnetIds`",
        "`replicas.serverImage`",
        "`replicas.warmPool`",
        "`replicas.coldStartSeconds`",
        "`model.checkpointGiB`",
        "`loadBalancer.accessLogs`",
        "`scheduler.partitions[].features`",
    ):
        assert key in text, key


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda p: p.name)
def test_the_schema_accepts_the_shipped_stacks(stack_file: Path) -> None:
    document = yaml.safe_load(stack_file.read_text())
    jsonschema.Draft202012Validator(stack_file_schema()).validate(document)


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda c: c["accelstack:training"]["nodes"].update(instanceTpye="p5.48xlarge"), "unknown nested key"),
        (lambda c: c["accelstack:training"]["nodes"].update(capacity="Spot"), "not an allowed value"),
        (lambda c: c["accelstack:training"]["nodes"].update(count=0), "below the minimum"),
        (lambda c: c.update({"accelstack:trainnig": {}}), "unknown key in the accelstack namespace"),
        (lambda c: c.pop("accelstack:account"), "required key missing"),
    ],
)
def test_the_schema_flags_what_validate_refuses(edit, why: str) -> None:
    document = copy.deepcopy(yaml.safe_load((REPO / "stacks" / "Pulumi.aws-training.yaml").read_text()))
    edit(document["config"])
    assert list(jsonschema.Draft202012Validator(stack_file_schema()).iter_errors(document)), why


def test_other_namespaces_pass() -> None:
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.aws-training.yaml").read_text())
    document["config"]["aws:profile"] = "dev"
    jsonschema.Draft202012Validator(stack_file_schema()).validate(document)


class _Parent(Model):
    size: int = 1
    """How big, from the parent's body."""


class _Child(_Parent):
    node_count: int = 2
    """How many."""

    explicit: int = Field(3, description="said in Field")
    """A docstring that Field's description outranks."""


def test_descriptions_come_from_attribute_docstrings_inherited_and_outranked_by_field() -> None:
    properties = _Child.model_json_schema(by_alias=True)["properties"]
    assert properties["size"]["description"] == "How big, from the parent's body."
    assert properties["nodeCount"]["description"] == "How many."
    assert properties["explicit"]["description"] == "said in Field"
    # Read lazily: validating a model never needs its descriptions.
    assert _Child.model_fields["node_count"].description is None
