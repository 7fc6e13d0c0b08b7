"""The Pulumi project file's guard on default providers: every cloud package accelstack deploys with is denied a
default provider (ambient credentials), and nothing else is, because "*" also denies `pulumi-python`, the provider
of Python dynamic resources (the GCP Managed Lustre import) and the `up` would stop there (gcp review W2)."""

from __future__ import annotations

from pathlib import Path

import yaml

from accelstack.clouds import registry

REPO = Path(__file__).resolve().parents[1]


def denied() -> list[str]:
    config = yaml.safe_load((REPO / "Pulumi.yaml").read_text())["config"]
    return list(config["pulumi:disable-default-providers"]["value"])


def test_every_cloud_package_is_denied_a_default_provider() -> None:
    packages = {p for name in registry.names() for p in registry.get(name).pulumi_packages}
    assert packages and set(denied()) == packages


def test_the_dynamic_resources_provider_is_not_denied() -> None:
    assert "*" not in denied() and "pulumi-python" not in denied()
