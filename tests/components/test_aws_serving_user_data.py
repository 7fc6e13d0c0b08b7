"""The replica boot script as cloud-init receives it: a shell script, rendered from
components/aws/serving/templates/replica-boot.sh.j2.

`cloud-init schema` checks only `#cloud-config` documents (22.4 rejects anything else with "needs to
begin with #cloud-config"), and this user data is a `#!` script, so the check here is cloud-init's
own user-data processing: the part must come out as text/x-shellscript, the type cloud-init's
scripts-user module runs once per instance.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import jinja2
import pytest

from accelstack.components.aws.serving import READY_HOOK, replica_user_data
from accelstack.components.aws.serving.user_data import WORKER_DIR, _templates
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG

EXAMPLE = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.aws-serving.yaml"
VARIANTS = {
    "example": [],
    "fp8, no adapters": ["serving.model.precision=fp8", "serving.model.adapters=[]"],
    "int4": ["serving.model.precision=int4"],
}


def user_data(*overrides: str) -> str:
    serving = parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), "aws-serving").serving
    return replica_user_data(
        serving, plan_serving(serving, AWS_CATALOG), region="us-east-1", group_name="accelstack-aws-serving-replicas",
        hook_name=READY_HOOK, request_queue_url="https://sqs.us-east-1.amazonaws.com/222222222222/requests",
        response_queue_url="https://sqs.us-east-1.amazonaws.com/222222222222/responses",
    )  # fmt: skip


def heredoc(script: str, opener: str, end: str) -> str:
    return script.split(f"{opener} <<'{end}'\n", 1)[1].split(f"\n{end}\n", 1)[0]


@pytest.mark.parametrize("overrides", VARIANTS.values(), ids=VARIANTS.keys())
def test_rendered_script_and_its_boot_script_are_valid_bash(overrides, tmp_path) -> None:
    script = user_data(*overrides)
    # The shebang must be the first bytes: a template comment leaving a blank line above it would
    # make the kernel refuse to exec the file cloud-init writes.
    assert script.startswith("#!/bin/bash\nset -euo pipefail\n")
    # Nothing of the template is left (the embedded worker is base85, whose alphabet has braces: skip it).
    embedded = heredoc(script, f"' {WORKER_DIR}", "B85")
    outside = script.replace(embedded, "")
    assert len(embedded) > 1000 and "{{" not in outside and "{%" not in outside and "{#" not in outside
    for name, text in (("user-data", script), ("boot.sh", heredoc(script, "cat > /opt/accelstack/boot.sh", "BOOT"))):
        (tmp_path / name).write_text(text)
        result = subprocess.run(["bash", "-n", str(tmp_path / name)], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, f"{name}: {result.stderr}"


def test_every_adapter_is_synced_and_the_environment_written_once_per_key() -> None:
    script = user_data()
    serving = parse_spec(read_stack_file(EXAMPLE), "aws-serving").serving
    boot = heredoc(script, "cat > /opt/accelstack/boot.sh", "BOOT")
    syncs = [line.strip() for line in boot.splitlines() if line.strip().startswith("aws s3 sync")]
    assert len(syncs) == 1 + len(serving.model.adapters) >= 2
    assert syncs[0].endswith("/opt/accelstack/models/base")
    unit = heredoc(script, "cat > /etc/systemd/system/accelstack-queue-worker.service", "UNIT")
    keys = [line.split("=", 2)[1] for line in unit.splitlines() if line.startswith("Environment=")]
    assert len(keys) == len(set(keys)) and "REQUEST_QUEUE_URL" in keys


def test_a_value_the_template_uses_but_is_not_given_fails_the_render() -> None:
    with pytest.raises(jinja2.UndefinedError, match="'aws_cli' is undefined"):
        _templates.get_template("replica-boot.sh.j2").render()
    with pytest.raises(jinja2.UndefinedError, match="'budget' is undefined"):
        _templates.get_template("replica-boot.sh.j2").render(
            aws_cli="", imds="", model_dir="/m", worker_dir="/w", worker_manifest="", model_name="m", image="i",
            worker_b85="", server="s", environment={}, proxy=False, stop_timeout=60, region="r", group_name="g", hook_name="h", heartbeat_every=60,
            status_file="s.py", status_command="/s",
        )  # fmt: skip


@pytest.mark.integration
def test_cloud_init_runs_the_user_data_as_a_shell_script(tmp_path) -> None:
    if shutil.which("cloud-init") is None:
        pytest.skip("cloud-init is not installed")
    path = tmp_path / "user-data"
    path.write_text(user_data())
    # cloud-init's own classifier, with the interpreter cloud-init runs under.
    program = (
        "import sys\nfrom cloudinit.user_data import UserDataProcessor\n"
        "message = UserDataProcessor({}).process(open(sys.argv[1], 'rb').read())\n"
        "print(' '.join(p.get_content_type() for p in message.walk() if not p.is_multipart()))"
    )
    interpreter = Path(shutil.which("cloud-init")).read_text().splitlines()[0].removeprefix("#!").split()
    result = subprocess.run([*interpreter, "-c", program, str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["text/x-shellscript"]
