"""`accelstack init [DIR]`: a Pulumi project of the user's own that deploys with an installed accelstack.

Writes Pulumi.yaml (the user's project name, which every URN carries), a `__main__.py` calling
`accelstack.program.main`, one stack file copied from the shipped example for the cloud and workload, both policy
packs (thin entry points into the installed packs), a requirements.txt pinning this accelstack, and the PR gate
workflow for the cloud (OIDC / federated credentials / workload identity federation). Every check runs before the
first write: an existing file or a symlink on the way refuses the whole init, and nothing is written.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from accelstack.commands.common import EXIT_OK, CliError, echo_lines, guarded
from accelstack.commands.output_files import create_tree

CLOUDS = ("aws", "azure", "gcp")
WORKLOADS = ("training", "serving")
CLOUD_TITLES = {"aws": "AWS", "azure": "Azure", "gcp": "Google Cloud"}
PACKS = ("separation", "guardrails")
PACKS_DIR = "policy-packs"
WORKFLOW = ".github/workflows/accelstack-pr.yml"
# Where each cloud's self-managed Pulumi state would live, and what the preview identity needs on it.
BACKENDS = {
    "aws": ("s3://BUCKET", "s3:GetObject, s3:PutObject, s3:DeleteObject and s3:ListBucket on the bucket"),
    "azure": ("azblob://CONTAINER", "Storage Blob Data Contributor on the container"),
    "gcp": ("gs://BUCKET", "roles/storage.objectUser on the bucket"),
}


def _version(distribution: str, fallback: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return fallback


def project_name_problem(name: str) -> str | None:
    from accelstack.engine.preview import PROJECT_NAME

    if not PROJECT_NAME.fullmatch(name):
        return (
            f"--name {name!r}: not a Pulumi project name (letters, digits, '-', '_' or '.'; 1 to 100), "
            "the project part of every URN"
        )
    return None


def _account(stack_text: str) -> dict[str, Any]:
    config = (yaml.safe_load(stack_text) or {}).get("config") or {}
    account = config.get("accelstack:account")
    return account if isinstance(account, dict) else {}


def planned_files(project: str, cloud: str, workload: str) -> dict[str, str]:
    """Relative path -> text of every file `init` writes."""
    import accelstack
    import accelstack.policies
    from accelstack.clouds import registry
    from accelstack.components.templates import template_environment
    from accelstack.examples import STARTER, example_file

    stack = STARTER[(cloud, workload)]
    stack_text = example_file(stack).read_text(encoding="utf-8")
    account = _account(stack_text)
    version = _version("accelstack", accelstack.__version__)
    context = {
        "project": project,
        "cloud": cloud,
        "cloud_title": CLOUD_TITLES[cloud],
        "workload": workload,
        "stack": stack,
        "version": version,
        "pulumi_version": _version("pulumi", "3.272.0"),
        # Every cloud accelstack deploys to: a stack of another cloud added later is guarded as well.
        "denied": sorted({package for name in registry.names() for package in registry.get(name).pulumi_packages}),
        "region": account.get("region", ""),
        "tenant": account.get("tenantId", ""),
        "subscription": account.get("subscriptionId", ""),
        "backend_example": BACKENDS[cloud][0],
        "backend_access": BACKENDS[cloud][1],
    }
    environment = template_environment("accelstack.commands")
    packs_dir = Path(accelstack.policies.__file__).resolve().parent
    files = {
        "Pulumi.yaml": environment.get_template("init_Pulumi.yaml.j2").render(context),
        "__main__.py": environment.get_template("init_main.py.j2").render(context),
        "requirements.txt": f"accelstack=={version}\n",
        f"stacks/Pulumi.{stack}.yaml": stack_text,
        WORKFLOW: environment.get_template("init_workflow.yml.j2").render(context),
        ".gitignore": environment.get_template("init_gitignore.j2").render(context),
    }
    for pack in PACKS:
        files[f"{PACKS_DIR}/{pack}/PulumiPolicy.yaml"] = (packs_dir / pack / "PulumiPolicy.yaml").read_text()
        files[f"{PACKS_DIR}/{pack}/__main__.py"] = environment.get_template("init_pack_main.py.j2").render(
            {**context, "pack": pack}
        )
        # The pack's own virtualenv (the CLI builds it) gets the project's accelstack, and with it the rules.
        files[f"{PACKS_DIR}/{pack}/requirements.txt"] = "-r ../../requirements.txt\n"
    return files


def next_steps(directory: Path, stack: str) -> list[str]:
    packs = " ".join(f"--policy-pack {PACKS_DIR}/{pack}" for pack in PACKS)
    return [
        f"next: cd {directory}",
        "next: python -m venv .venv && .venv/bin/pip install -r requirements.txt",
        f"next: replace the example's account ids and regions in stacks/Pulumi.{stack}.yaml, then "
        f"`accelstack validate {stack}` and `accelstack preview {stack}` (offline)",
        f"next: pulumi login && pulumi stack init {stack} && pulumi preview -s {stack} {packs}",
        f"next: set the secrets {WORKFLOW} names (its header says which role each needs)",
    ]


@guarded
def init_command(
    directory: Annotated[
        Path,
        typer.Argument(metavar="DIR", help="The new project's directory (default: the current one).", file_okay=False),
    ] = Path("."),
    cloud: Annotated[str, typer.Option("--cloud", help=f"One of: {', '.join(CLOUDS)}.")] = "aws",
    workload: Annotated[str, typer.Option("--workload", help=f"One of: {', '.join(WORKLOADS)}.")] = "training",
    name: Annotated[
        str | None,
        typer.Option(
            "--name", metavar="PROJECT", help="Pulumi project name (default: DIR's name).", show_default=False
        ),
    ] = None,
) -> int:
    """Start a Pulumi project of your own on an installed accelstack: Pulumi.yaml, __main__.py, a stack file from the
    shipped example, both policy packs, requirements.txt and a PR workflow for the cloud. Overwrites nothing."""
    problems = []
    if cloud not in CLOUDS:
        problems.append(f"--cloud {cloud!r}: allowed: {', '.join(CLOUDS)}")
    if workload not in WORKLOADS:
        problems.append(f"--workload {workload!r}: allowed: {', '.join(WORKLOADS)}")
    if not str(directory).strip():
        problems.append("DIR: empty; give the directory to create the project in")
    project = name if name is not None else directory.resolve().name
    problem = project_name_problem(project)
    if problem:
        problems.append(problem if name is not None else f"{problem.replace('--name', 'DIR name', 1)}; pass --name")
    if problems:
        raise CliError(problems)
    from accelstack.examples import STARTER

    written = create_tree(directory, planned_files(project, cloud, workload), option="DIR")
    echo_lines([f"wrote {path}" for path in written], stderr=True)
    echo_lines(next_steps(directory, STARTER[(cloud, workload)]))
    return EXIT_OK


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)
