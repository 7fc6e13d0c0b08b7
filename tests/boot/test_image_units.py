"""slurmd waits for the units the node image runs at boot that jobs rely on (`NodePlatform.units_before_slurmd`):
each is a unit the image row ships (a claim about the published image, with its source there), and the rendered
compute setup orders slurmd after it. A unit the image lacks would order nothing, silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelstack.clouds import registry
from accelstack.components import slurm
from accelstack.components.node_platform import node_platform_for
from accelstack.examples import example_files
from accelstack.spec.loader import load_stack
from tests.boot.test_boots_run import IMAGES

STACKS_DIR = Path(__file__).resolve().parents[2] / "stacks"
TRAINING = [
    p.name.split(".")[1]
    for p in example_files(STACKS_DIR)
    if p.name.endswith("-training.yaml") and p.name.split(".")[1].split("-")[0] in IMAGES
]


@pytest.mark.parametrize("stack", TRAINING)
def test_slurmd_follows_only_units_its_image_ships(stack: str) -> None:
    spec = load_stack(STACKS_DIR / f"Pulumi.{stack}.yaml")
    platform = node_platform_for(spec)
    catalog = registry.get(spec.cloud).catalog.instances
    for name, instance in catalog.items():
        if instance.accelerators < 1:
            continue
        row = (
            "training-node-rocm"
            if instance.vendor == "amd" and "training-node-rocm" in IMAGES[spec.cloud]
            else "training-node"
        )
        missing = set(platform.units_before_slurmd(instance)) - IMAGES[spec.cloud][row].services
        assert not missing, f"{spec.cloud} {name}: slurmd ordered after {missing}, which image row {row} lacks"


@pytest.mark.parametrize("stack", TRAINING)
def test_the_compute_setup_orders_slurmd_after_them(stack: str) -> None:
    spec = load_stack(STACKS_DIR / f"Pulumi.{stack}.yaml")
    nodes = slurm.nodes_for(spec)
    units = nodes.platform.units_before_slurmd(nodes.instance)
    setup = slurm.compute_setup_script(spec, nodes, slurm.DeployValues())
    drop_in = setup.split("slurmd.service.d/accelstack.conf <<UNIT", 1)[1].split("\nUNIT\n", 1)[0]
    for unit in units:
        assert f"\nAfter={unit}\n" in drop_in
    if spec.cloud == "azure":
        assert units == ("sku_customizations.service",)


# The command each GPU vendor's driver installs: an image row without it boots GPUs nothing can drive. (Trainium's
# Neuron driver is not among them: its image and row are AWS's own concern.)
DRIVER_COMMAND = {"nvidia": "nvidia-smi", "amd": "rocm-smi"}


@pytest.mark.parametrize("stack", TRAINING)
def test_gpu_nodes_boot_an_image_with_their_gpu_driver(stack: str) -> None:
    spec = load_stack(STACKS_DIR / f"Pulumi.{stack}.yaml")
    catalog = registry.get(spec.cloud).catalog.instances
    missing = []
    for name, instance in catalog.items():
        if instance.accelerators < 1 or instance.vendor not in DRIVER_COMMAND:
            continue
        rocm_row = instance.vendor == "amd" and "training-node-rocm" in IMAGES[spec.cloud]
        row = "training-node-rocm" if rocm_row else "training-node"
        if DRIVER_COMMAND[instance.vendor] not in IMAGES[spec.cloud][row].ships:
            missing.append(f"{name} ({instance.vendor}) on {row}")
    assert not missing, f"{spec.cloud}: GPU types whose node image has no driver: {missing}"
