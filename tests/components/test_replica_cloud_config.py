"""The Azure and GCP replicas' cloud-configs are data written by a YAML emitter (components/replica/cloud_config.py):
a deploy-time name the spec does not check (a Service Bus namespace, a Pub/Sub subscription) with YAML and shell
punctuation stays a value of the worker's environment file, and one with a line break is refused, not written."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from accelstack.components.azure.serving.user_data import replica_user_data as azure_user_data
from accelstack.components.base import ServingServiceArgs
from accelstack.components.gcp.serving.user_data import replica_user_data as gcp_user_data
from accelstack.components.node_syntax import UnsafeNodeValueError
from accelstack.spec import load_stack

STACKS = Path(__file__).resolve().parents[2] / "stacks"
HOSTILE = "ns: x # 'a' \"b\" $(touch /tmp/injected) `id` %n \\"


def _azure(name: str) -> str:
    args = ServingServiceArgs.of(load_stack(STACKS / "Pulumi.azure-serving.yaml"))
    return azure_user_data(args.spec.serving, args.plan, namespace=name, client_id="0000")


def _gcp(name: str) -> str:
    args = ServingServiceArgs.of(load_stack(STACKS / "Pulumi.gcp-serving.yaml"))
    return gcp_user_data(args.spec.serving, args.plan, project="p", request_subscription=name, response_topic="t")


def _structure(document: str) -> list[object]:
    parsed = yaml.safe_load(document)
    return [list(parsed), [[*sorted(entry), entry["path"]] for entry in parsed["write_files"]], parsed["runcmd"]]


@pytest.mark.parametrize("render", [_azure, _gcp], ids=["azure", "gcp"])
def test_a_name_with_yaml_and_shell_punctuation_stays_an_environment_value(render: Callable[[str], str]) -> None:
    plain, hostile = render("plain-name"), render(HOSTILE)
    assert hostile.startswith("#cloud-config\n")
    assert _structure(hostile) == _structure(plain)
    written = {entry["path"]: entry["content"] for entry in yaml.safe_load(hostile)["write_files"]}
    # systemd's EnvironmentFile= double quotes escape what bash's do: bash reads the file back as systemd would.
    read_back = subprocess.run(
        ["bash", "-c", 'set -a; . /dev/stdin; printf "%s\\n" "$SERVICE_BUS_NAMESPACE" "$REQUEST_SUBSCRIPTION"'],
        input=written["/etc/accelstack/worker.env"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert HOSTILE in read_back.stdout.splitlines()


@pytest.mark.parametrize("render", [_azure, _gcp], ids=["azure", "gcp"])
def test_a_name_with_a_line_break_is_refused_not_written(render: Callable[[str], str]) -> None:
    with pytest.raises(UnsafeNodeValueError):
        render("x\nbootcmd: [touch /tmp/injected]")
