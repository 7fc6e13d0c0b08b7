"""The example stacks accelstack ships: `stacks/` in the repository, `accelstack/stacks/` once installed (the same
files, through a link). This list is the one place that says which stack files are examples: the repository's
tests (golden exports, day-2 tables, config digests, the policy runs) iterate over it, so an environment of a
user's own in `stacks/` is previewed by `preview --all` and the PR gate but never needs a golden file or a
day-2 table; `accelstack init` copies one of them into a new project, and the wheel carries exactly these."""

from __future__ import annotations

from pathlib import Path

SHIPPED_EXAMPLES = (
    "aws-finetune",
    "aws-landing",
    "aws-serving",
    "aws-training",
    "azure-landing",
    "azure-serving",
    "azure-training",
    "gcp-landing",
    "gcp-serving",
    "gcp-training",
    "oci-landing",
    "oci-training",
    "vultr-serving",
)

# The landing stacks among them (`workload: landing`): they make the accounts the others deploy into, and the
# commands that read workloads (cost, size, simulate, render, the day-2 and checkpoint tables) leave them out.
LANDING_EXAMPLES = tuple(name for name in SHIPPED_EXAMPLES if name.endswith("-landing"))
WORKLOAD_EXAMPLES = tuple(name for name in SHIPPED_EXAMPLES if name not in LANDING_EXAMPLES)

# The example `accelstack init --cloud C --workload W` starts a project from.
STARTER = {
    ("aws", "training"): "aws-training",
    ("aws", "serving"): "aws-serving",
    ("azure", "training"): "azure-training",
    ("azure", "serving"): "azure-serving",
    ("gcp", "training"): "gcp-training",
    ("gcp", "serving"): "gcp-serving",
    ("oci", "training"): "oci-training",
    ("vultr", "serving"): "vultr-serving",
}

EXAMPLES_DIR = Path(__file__).resolve().parent / "stacks"


def example_file(name: str, stacks_dir: Path = EXAMPLES_DIR) -> Path:
    """The stack file of the shipped example `name` (under `stacks_dir`: the repository's `stacks/` in its tests)."""
    if name not in SHIPPED_EXAMPLES:
        raise KeyError(f"{name!r} is not a shipped example; shipped: {', '.join(SHIPPED_EXAMPLES)}")
    return stacks_dir / f"Pulumi.{name}.yaml"


def example_files(stacks_dir: Path = EXAMPLES_DIR, prefix: str = "", *, landing: bool = False) -> list[Path]:
    """Every shipped workload example's stack file (those whose name starts with `prefix`), in name order; with
    `landing`, the landing stacks too."""
    return [
        example_file(name, stacks_dir)
        for name in SHIPPED_EXAMPLES
        if name.startswith(prefix) and (landing or name not in LANDING_EXAMPLES)
    ]
