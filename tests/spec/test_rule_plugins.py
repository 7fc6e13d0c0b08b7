"""The planner's rules (GPU fit, Lustre capacity, checkpoint write time, model presets) run from the
spec layer through the `accelstack.rules` entry-point group: the same problems, in the same order,
whichever module a process imports first, and with only `accelstack.spec` imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelstack.spec import validators

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"

# Each case: stack file, --set overrides. Run in a fresh interpreter after importing one module.
CASES = [
    ("Pulumi.aws-serving.yaml", ["serving.model.name=meta-llama/Llama-3.1-405B-Instruct"]),  # GPU fit
    ("Pulumi.aws-serving.yaml", ["serving.model.name=acme-custom"]),  # size unknown: a warning
    ("Pulumi.aws-training.yaml", ["training.model.preset=llama-9000"]),  # unknown preset
    ("Pulumi.aws-training.yaml", ["training.model.preset=llama-3.1-405b", "training.storage.lustre.capacityGiB=1200"]),
]

PROBE = """
import importlib, json, sys
from pathlib import Path
importlib.import_module(sys.argv[1])
planner_loaded_by_import = sorted(m for m in sys.modules if m.startswith("accelstack.planner"))
from accelstack.spec import SpecError, parse_spec, spec_warnings
from accelstack.spec.loader import apply_overrides, read_stack_file
from accelstack.spec.validators import all_rules
results = []
for stack, overrides in json.loads(sys.argv[2]):
    raw = apply_overrides(read_stack_file(Path(stack)), overrides)
    try:
        problems = spec_warnings(parse_spec(raw, "probe"))
    except SpecError as exc:
        problems = exc.problems
    results.append([[p.path, p.level.name, p.message] for p in problems])
print(json.dumps({
    "planner_loaded_by_import": planner_loaded_by_import,
    "rules": [f"{r.module}.{r.name}" for r in all_rules()],
    "results": results,
}))
"""

FIRST_IMPORTS = [
    "accelstack.spec",
    "accelstack.clouds.aws.rules",
    "accelstack.clouds.aws.serving_rules",
    "accelstack.planner_rules",
    "accelstack.planner.serving_plan",
]


@pytest.fixture(scope="module")
def probes() -> dict[str, dict]:
    """One fresh interpreter per first import, run side by side."""
    cases = json.dumps([[str(STACKS / stack), overrides] for stack, overrides in CASES])
    running = {
        first: subprocess.Popen(
            [sys.executable, "-c", PROBE, first, cases], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for first in FIRST_IMPORTS
    }
    results = {}
    for first, process in running.items():
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        results[first] = json.loads(out)
    return results


def test_spec_alone_runs_the_planner_rules(probes):
    """A process that imports only the spec still rejects a model too big for its GPUs."""
    spec_only = probes["accelstack.spec"]
    assert spec_only["planner_loaded_by_import"] == []  # importing the spec does not import the planner
    gpu_fit, unknown_size, unknown_preset, lustre = spec_only["results"]
    assert [(path, level) for path, level, _ in gpu_fit] == [("serving.replicas.instanceType", "ERROR")]
    assert "Llama-3.1-405B-Instruct at bf16 needs ~812 GB weights + KV" in gpu_fit[0][2]
    assert "g6e.xlarge has 1 x 48 GiB L40S" in gpu_fit[0][2]
    assert [(path, level) for path, level, _ in unknown_size] == [("serving.model.parametersBillion", "WARNING")]
    assert [(path, level) for path, level, _ in unknown_preset] == [("training.model.preset", "ERROR")]
    assert "unknown model 'llama-9000'; allowed:" in unknown_preset[0][2]
    assert ("training.storage.lustre.capacityGiB", "ERROR") in [(path, level) for path, level, _ in lustre]


@pytest.mark.parametrize("first", FIRST_IMPORTS[1:])
def test_results_do_not_depend_on_import_order(probes, first):
    assert probes[first]["rules"] == probes["accelstack.spec"]["rules"]
    assert probes[first]["results"] == probes["accelstack.spec"]["results"]


def test_every_rule_registered_once_in_layer_order():
    import accelstack.planner_rules  # noqa: F401  (a second import must not register twice)

    names = [f"{r.module}.{r.name}" for r in validators.all_rules()]
    assert len(names) == len(set(names))
    modules = [name.rsplit(".", 1)[0] for name in names]
    layer_order = [
        "accelstack.spec.validators",
        "accelstack.spec.handoff_rules",
        "accelstack.spec.catalog_rules",
        "accelstack.spec.address_rules",
        "accelstack.clouds.aws.rules",
        "accelstack.clouds.aws.serving_rules",
        "accelstack.components.aws.rules",  # what only the rendered components can measure (the SSM bundle)
        "accelstack.clouds.azure.rules",
        "accelstack.clouds.azure.serving_rules",
        "accelstack.clouds.gcp.rules",
        "accelstack.clouds.gcp.serving_rules",
        "accelstack.clouds.oci.rules",
        "accelstack.clouds.vultr.rules",
        "accelstack.planner_rules",
    ]
    assert sorted(set(modules), key=layer_order.index) == layer_order
    assert modules == sorted(modules, key=layer_order.index)
    planner_rules = {n.rsplit(".", 1)[1] for n in names if n.startswith("accelstack.planner_rules.")}
    assert planner_rules == {
        "training_model_preset_known",
        "lustre_holds_dataset_and_checkpoints",
        "checkpoint_write_within_target",
        "serving_instance_fits_model",
        "lustre_capacity_derivable",
        "serving_replicas_carry_load",
        "serving_model_architecture_known",
        "serving_load_meets_slo_in_simulation",
    }
    assert all(r.doc.strip() for r in validators.all_rules() if r.module == "accelstack.planner_rules")


def test_missing_plugins_fail_loudly_instead_of_validating_less(monkeypatch):
    """Without the installed entry points the planner's rules would silently not run."""
    monkeypatch.setattr(validators.registry, "plugins", lambda group: [])
    validators.load_rule_plugins.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=r"accelstack\.rules.*pip install -e"):
            validators.load_rule_plugins()
    finally:
        monkeypatch.undo()
        validators.load_rule_plugins.cache_clear()
    assert validators.load_rule_plugins() == ("accelstack.planner_rules",)
