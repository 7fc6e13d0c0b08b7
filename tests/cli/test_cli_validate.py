"""`accelstack validate`: bad input is one line per problem naming its config path, exit 2, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelstack.cli import app


def invoke(runner, project: Path, *args: str):
    return runner.invoke(app, ["validate", "--project-dir", str(project), *args])


def problem_lines(result, stack: str = "alpha") -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith(f"{stack}: ")]


def write_stack(project: Path, name: str, text: str) -> None:
    (project / "stacks" / f"Pulumi.{name}.yaml").write_text(text)


def edited_alpha(project: Path, edit) -> None:
    path = project / "stacks" / "Pulumi.alpha.yaml"
    document = yaml.safe_load(path.read_text())
    edit(document["config"])
    path.write_text(yaml.safe_dump(document))


def test_valid_stack_is_ok(runner, project):
    result = invoke(runner, project, "alpha")
    assert result.exit_code == 0, result.output
    assert "alpha: ok" in result.output


def test_help_lists_every_discovered_command(runner):
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "validate" in result.output and "preview" in result.output


def test_yaml_syntax_error_names_file_and_line(runner, project):
    write_stack(project, "alpha", "config:\n  accelstack:cloud: aws\n  accelstack:training: {nodes: [\n")
    result = invoke(runner, project, "alpha")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    [line] = problem_lines(result)
    assert "Pulumi.alpha.yaml" in line and "not valid YAML" in line and "line" in line


def test_unknown_key_names_its_path(runner, project):
    edited_alpha(project, lambda c: c["accelstack:training"]["nodes"].update(gpusPerNode=8))
    result = invoke(runner, project, "alpha")
    assert result.exit_code == 2
    [line] = problem_lines(result)
    assert line.startswith("alpha: training.nodes.gpusPerNode: unknown key; allowed: instanceType, count, ")


def test_unknown_top_level_key(runner, project):
    edited_alpha(project, lambda c: c.update({"accelstack:trainng": {}}))
    result = invoke(runner, project, "alpha")
    assert result.exit_code == 2
    [line] = problem_lines(result)
    assert line.startswith("alpha: accelstack:trainng: unknown key (did you mean 'training'?); allowed:")


def test_wrong_type_names_its_path(runner, project):
    edited_alpha(project, lambda c: c["accelstack:training"]["nodes"].update(count="many"))
    result = invoke(runner, project, "alpha")
    assert result.exit_code == 2
    [line] = problem_lines(result)
    assert line.startswith("alpha: training.nodes.count: ")


def test_out_of_range_names_its_path_and_bound(runner, project):
    result = invoke(runner, project, "alpha", "--set", "training.nodes.count=0")
    assert result.exit_code == 2
    [line] = problem_lines(result)
    assert line.startswith("alpha: training.nodes.count: ") and "1" in line


def test_every_problem_gets_its_own_line(runner, project):
    result = invoke(runner, project, "alpha", "--set", "training.nodes.count=0", "--set", "training.nodes.bogus=1")
    assert result.exit_code == 2
    paths = sorted(line.split(": ")[1] for line in problem_lines(result))
    assert paths == ["training.nodes.bogus", "training.nodes.count"]


@pytest.mark.parametrize("path", [".", "training..nodes.count", "serving.", ".training"])
def test_a_set_path_with_an_empty_key_names_the_set(runner, project, path):
    result = invoke(runner, project, "alpha", "--set", f"{path}=1")
    assert result.exit_code == 2
    assert f"--set: {path!r} has an empty key" in result.output and "starting at one of: cloud" in result.output
    assert "Traceback" not in result.output


def test_bad_set_syntax(runner, project):
    result = invoke(runner, project, "alpha", "--set", "training.nodes.count")
    assert result.exit_code == 2
    assert "--set: expected path=value" in result.output
    assert "Traceback" not in result.output


def test_set_below_a_scalar(runner, project):
    result = invoke(runner, project, "alpha", "--set", "cloud.region=x")
    assert result.exit_code == 2
    assert "alpha: cloud: is not a mapping" in result.output


def test_control_characters_in_values_stay_escaped_on_one_line(runner, project):
    result = invoke(runner, project, "alpha", "--set", "account.id=\x1b[31mred\x85x\nnext")
    assert result.exit_code == 2
    assert "\x1b" not in result.output and "\x85" not in result.output
    assert all(line.startswith("alpha: account.id: ") for line in result.output.splitlines())


def test_set_overrides_are_applied(runner, project):
    assert invoke(runner, project, "alpha", "--set", "training.nodes.count=64").exit_code == 0
    assert invoke(runner, project, "alpha", "--set", "training.nodes.count=100000").exit_code == 2


def test_unknown_stack_lists_available_ones(runner, project):
    write_stack(project, "beta", (project / "stacks" / "Pulumi.alpha.yaml").read_text())
    result = invoke(runner, project, "nope", "alpha")
    assert result.exit_code == 2
    assert "nope: no such stack; available: alpha, beta" in result.output
    assert "alpha: ok" not in result.output  # nothing is checked until every name resolves


def test_stack_given_as_path(runner, project, tmp_path):
    other = tmp_path / "elsewhere.yaml"
    other.write_text((project / "stacks" / "Pulumi.alpha.yaml").read_text())
    result = invoke(runner, project, str(other))
    assert result.exit_code == 0
    assert "elsewhere: ok" in result.output


def test_all_validates_every_stack_and_reports_each(runner, project):
    write_stack(project, "beta", "config:\n  accelstack:cloud: aws\n")
    result = invoke(runner, project, "--all")
    assert result.exit_code == 2
    assert "alpha: ok" in result.output
    assert any(line.startswith("beta: ") for line in result.output.splitlines())


def test_no_project_found(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["validate", "alpha"])
    assert result.exit_code == 2
    assert "no Pulumi.yaml" in result.output


def test_project_found_from_a_subdirectory(runner, project, monkeypatch):
    monkeypatch.chdir(project / "stacks")
    result = runner.invoke(app, ["validate", "alpha"])
    assert result.exit_code == 0, result.output


PATHS = st.sampled_from(
    [
        "cloud",
        "workload",
        "account.id",
        "account.region",
        "training.nodes.count",
        "training.nodes.instanceType",
        "training.nodes.capacity",
        "training.storage.lustre.capacityGiB",
        "training.storage.lustre.tier",
        "training.storage.datasets.uri",
        "training.network.vpcCidr",
        "training.scheduler.partitions",
        "separation.servingAccounts",
        "serving",
        "nope.deeper.still",
    ]
)
VALUES = st.one_of(
    st.text(max_size=20),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.sampled_from(["", "null", "[]", "{}", "[1, 2", "{a: 1}", "- x", "!!binary x", "*ref", "&a b", "1e400", ":"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=PATHS, value=VALUES)
def test_random_set_values_never_crash(runner, project, path, value):
    result = invoke(runner, project, "alpha", "--set", f"{path}={value}")
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    if result.exit_code == 2:
        assert all(re.match(r"^alpha: \S", line) for line in result.output.splitlines() if line.strip())


# --- inputs that used to validate and then break: one line each, config path, exit 2 -----------


def only_problem(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    [line] = problem_lines(result)
    return line


def alpha_text(project: Path) -> str:
    return (project / "stacks" / "Pulumi.alpha.yaml").read_text()


def test_duplicate_key_in_a_stack_file(runner, project):
    text = alpha_text(project).replace(
        "nodes: {instanceType: p5.48xlarge, count: 4}", "nodes: {instanceType: p5.48xlarge, count: 4, count: 64}"
    )
    write_stack(project, "alpha", text)
    line = only_problem(invoke(runner, project, "alpha"))
    assert line.startswith("alpha: training.nodes.count: line ") and "duplicate key" in line


def test_alias_bomb_in_a_stack_file(runner, project):
    bomb = "x0: &x0 [a, a, a, a, a, a, a, a, a, a]\n" + "".join(
        f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 10)}]\n" for i in range(1, 9)
    )
    write_stack(project, "alpha", bomb + alpha_text(project))
    assert "aliases expand to more than" in only_problem(invoke(runner, project, "alpha"))


def test_yaml_boolean_key_in_a_stack_file(runner, project):
    write_stack(project, "alpha", alpha_text(project).replace("count: 4}", "count: 4, on: 1}"))
    line = only_problem(invoke(runner, project, "alpha"))
    assert line.startswith("alpha: training.nodes: line ") and "key 'on' is not a string" in line


def test_unquoted_account_id_names_what_was_written(runner, project):
    write_stack(project, "alpha", alpha_text(project).replace('id: "111111111111"', "id: 011111111111"))
    result = invoke(runner, project, "alpha")
    assert result.exit_code == 2
    assert 'alpha: account.id: write 011111111111 quoted ("011111111111")' in result.output


def test_provider_region_disagreeing_with_account_region(runner, project):
    write_stack(project, "alpha", alpha_text(project).replace("aws:region: us-east-1", "aws:region: eu-west-1"))
    line = only_problem(invoke(runner, project, "alpha"))
    assert line.startswith("alpha: account.region: 'us-east-1' but the same stack file sets aws:region: 'eu-west-1'")


def test_wrong_type_from_set_echoes_the_value_and_the_set(runner, project):
    line = only_problem(invoke(runner, project, "alpha", "--set", "training.nodes.count=sixteen"))
    assert (
        line == "alpha: training.nodes.count: 'sixteen' is not a whole number (from --set training.nodes.count=sixteen)"
    )


def test_unknown_key_from_set_suggests_and_names_the_set(runner, project):
    line = only_problem(invoke(runner, project, "alpha", "--set", "training.nodes.cout=8"))
    assert line == "alpha: training.nodes.cout: unknown key (did you mean 'count'?) (from --set training.nodes.cout=8)"


def test_uri_without_a_scheme_gets_an_example(runner, project):
    line = only_problem(invoke(runner, project, "alpha", "--set", "training.storage.datasets.uri=newco-llm-datasets"))
    assert "'newco-llm-datasets' is not a URI; write scheme://bucket[/prefix], e.g. s3://newco-llm-datasets/" in line


def test_a_uri_without_a_bucket_keeps_its_scheme_in_the_example(runner, project):
    """'gs://' on its own: the example stays on Cloud Storage (gs://bucket/), not another cloud's store."""
    line = only_problem(invoke(runner, project, "alpha", "--set", "training.storage.datasets.uri=gs://"))
    assert "'gs://' is not a URI; write scheme://bucket[/prefix], e.g. gs://bucket/" in line


@pytest.mark.parametrize(
    ("override", "path"),
    [
        ("training.scheduler.partitions=[{name: default, default: true}]", "training.scheduler.partitions.0.name"),
        ("training.scheduler.partitions=[{name: gpu, default: true, maxTime: '99999-00'}]", "training.scheduler.partitions.0.maxTime"),
        ("training.storage.lustre.mountPath=/etc", "training.storage.lustre.mountPath"),
        ("training.network={vpcId: vpc-00000001, subnetIds: [subnet-0000000a, subnet-0000000b]}", "training.network.subnetIds"),
        ("training.storage.lustre.capacityGiB=.inf", "training.storage.lustre.capacityGiB"),
        ("training.nodes.count=.nan", "training.nodes.count"),
        ("training.nodes.count=yes", "training.nodes.count"),
        ("separation.servingAccounts=['222222222222', '222222222222']", "separation.servingAccounts.1"),
        ("training.nodes={instanceType: p5.48xlarge, count: 4, capacity: spot, reservationId: cr-0123456789abcdef0}",
         "training.nodes.reservationId"),
    ],
)  # fmt: skip
def test_hostile_set_values_are_one_line_at_their_path(runner, project, override, path):
    result = invoke(runner, project, "alpha", "--set", override)
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = problem_lines(result)
    assert any(line.startswith(f"alpha: {path}: ") and "(from --set " in line for line in lines), lines


def test_too_many_partitions_for_the_heads_configuration_object(runner, project):
    """slurm.conf travels in an SSM parameter (8 KB, compressed), not the head's user data: partitions whose names
    do not compress (hashes) overflow it at 250."""
    import hashlib

    names = [f"p{hashlib.sha256(str(i).encode()).hexdigest()[:28]}" for i in range(250)]
    parts = ", ".join(
        f"{{name: {name}, maxTime: '7-00:00:00', default: {str(i == 0).lower()}}}" for i, name in enumerate(names)
    )
    line = only_problem(invoke(runner, project, "alpha", "--set", f"training.scheduler.partitions=[{parts}]"))
    assert line.startswith("alpha: training.scheduler.partitions: 250 partitions make the head's Slurm configuration")
    assert "an SSM parameter holds at most 8,192" in line


@pytest.mark.parametrize(
    ("stack", "override", "path", "says"),
    [
        ("gcp-training", "training.network.vpcCidr=169.254.0.0/16", "training.network.vpcCidr", "overlaps 169.254.0.0/16"),
        ("azure-training", "training.network.vpcCidr=168.63.0.0/16", "training.network.vpcCidr", "overlaps 168.63.129.16/32"),
        ("aws-serving", "serving.network.vpcCidr=172.17.0.0/16", "serving.network.vpcCidr", "Docker's default bridge"),
        ("gcp-serving", "serving.replicas.max=30", "serving.network.vpcCidr", "surge VMs of a rolling update"),
        ("azure-serving", "serving.slo.targetSeconds=100000", "serving.slo.targetSeconds", "the Service Bus queue drops it"),
    ],
)  # fmt: skip
def test_every_clouds_limits_are_refused_at_validate(runner, project, stack, override, path, says):
    """The neutral limit rules on the shipped stacks of each cloud: exit 2, one line at the config path."""
    source = Path(__file__).resolve().parents[2] / "stacks" / f"Pulumi.{stack}.yaml"
    write_stack(project, stack, source.read_text())
    extra = ["--set", "serving.network.vpcCidr=10.8.0.0/27"] if stack == "gcp-serving" else []
    result = invoke(runner, project, stack, "--set", override, *extra)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = [line for line in problem_lines(result, stack) if line.startswith(f"{stack}: {path}: ")]
    assert any(says in line for line in lines), result.output
