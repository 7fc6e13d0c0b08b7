"""`accelstack scaffold cloud NAME`: the skeleton of a new cloud, as docs/adding-a-cloud.md lists it.

Writes the description (`accelstack/clouds/NAME/`), the Pulumi half (`components/NAME/`) and the packs' vendor
(`policies/NAME/`) from the Jinja templates in `accelstack/commands/templates/`, with placeholder values marked
TODO, and prints the lines to add to the existing files (it edits none). Every check runs before the first write:
a refused scaffold writes nothing.
"""

from __future__ import annotations

import datetime
import keyword
import re
from pathlib import Path
from typing import Annotated

import typer

from accelstack.commands.common import EXIT_FAILED, EXIT_OK, CliError, echo_lines, find_project_dir, guarded

NAME_FORM = re.compile(r"[a-z][a-z0-9_]*")

# Where each part of a cloud lives, relative to the project directory (the folders a new cloud owns).
DESCRIPTION_DIR = Path("accelstack/clouds")
COMPONENTS_DIR = Path("components")
POLICIES_DIR = Path("policies")

# Template -> the file it becomes, under the cloud's folder in DESCRIPTION_DIR, COMPONENTS_DIR or POLICIES_DIR.
DESCRIPTION_FILES = {
    "scaffold_cloud_init.py.j2": "__init__.py",
    "scaffold_cloud_catalog.py.j2": "catalog.py",
    "scaffold_cloud_prices.py.j2": "prices.py",
    "scaffold_cloud_replace_rows.py.j2": "replace_rows.py",
    "scaffold_cloud_rules.py.j2": "rules.py",
}
ACCOUNT_MODEL_FILE = ("scaffold_cloud_accounts.py.j2", "accounts.py")
COMPONENT_FILES = {
    "scaffold_components_init.py.j2": "__init__.py",
    "scaffold_components_node_platform.py.j2": "node_platform.py",
    "scaffold_components_mocks.py.j2": "mocks.py",
    "scaffold_components_images.py.j2": "images.py",
    "scaffold_components_training.py.j2": "training.py",
    "scaffold_components_serving.py.j2": "serving.py",
}
POLICY_FILES = {"scaffold_policies_init.py.j2": "__init__.py"}


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a new cloud, or None."""
    from accelstack.clouds import registry

    allowed = "a lowercase Python identifier: a letter, then lowercase letters, digits or _ (e.g. acme)"
    if not NAME_FORM.fullmatch(name):
        return f"NAME {name!r} is not {allowed}"
    if keyword.iskeyword(name):
        return f"NAME {name!r} is a Python keyword; allowed: {allowed}, not a keyword"
    if name in registry.names():
        return f"NAME {name!r} is a registered cloud (registered: {', '.join(registry.names())}); choose another"
    return None


def planned_files(name: str) -> dict[Path, str]:
    """Relative path -> template of every file the scaffold writes for `name`."""
    from accelstack.spec.accounts import ACCOUNT_MODELS

    description = dict(DESCRIPTION_FILES)
    if name not in ACCOUNT_MODELS:  # accelstack has an account model for a few clouds it is designed for
        description[ACCOUNT_MODEL_FILE[0]] = ACCOUNT_MODEL_FILE[1]
    planned: dict[Path, str] = {}
    for folder, files in (
        (DESCRIPTION_DIR, description),
        (COMPONENTS_DIR, COMPONENT_FILES),
        (POLICIES_DIR, POLICY_FILES),
    ):
        planned.update({folder / name / filename: template for template, filename in files.items()})
    return planned


def _symlinks_on_the_way(root: Path, relative: Path) -> list[Path]:
    """The existing paths from `root` down to `root / relative` that are symlinks (writing through one would
    land outside the target)."""
    found, path = [], root
    for part in relative.parts:
        path = path / part
        if path.is_symlink():
            found.append(path)
    return found


def target_problems(out: Path, name: str) -> list[str]:
    """Why the scaffold cannot write `name`'s folders under `out` (empty: it can)."""
    if out.is_symlink():
        return [f"--out {out}: is a symlink; give the directory itself"]
    if not out.is_dir():
        return [f"--out {out}: no such directory"]
    problems = []
    for folder in (DESCRIPTION_DIR, COMPONENTS_DIR, POLICIES_DIR):
        cloud_folder = folder / name
        for link in _symlinks_on_the_way(out, cloud_folder):
            problems.append(
                f"--out {out}: {link.relative_to(out)} is a symlink; the scaffold writes no file through one"
            )
        for taken in (out / cloud_folder, out / folder / f"{name}.py"):
            if taken.exists() or taken.is_symlink():
                problems.append(
                    f"NAME {name!r}: {taken.relative_to(out)} already exists; the scaffold overwrites nothing"
                )
    return problems


def render_files(name: str, today: datetime.date) -> dict[Path, str]:
    """Relative path -> content of every file of `name`'s skeleton."""
    from accelstack.components.templates import template_environment
    from accelstack.spec.accounts import ACCOUNT_MODELS

    environment = template_environment("accelstack.commands")
    context = {
        "name": name,
        "constant": name.upper(),
        "class_prefix": "".join(part.capitalize() for part in name.split("_")),
        "title": " ".join(part.capitalize() for part in name.split("_") if part),
        "account_model": name not in ACCOUNT_MODELS,
        "today": today.isoformat(),
    }
    return {path: environment.get_template(template).render(context) for path, template in planned_files(name).items()}


def next_steps(name: str) -> list[str]:
    """What the contributor adds to existing files (the scaffold edits none), then where the checklist goes on."""
    constant = name.upper()
    return [
        "next: add to pyproject.toml",
        '  [project.entry-points."accelstack.clouds"]',
        f'  {name} = "accelstack.clouds.{name}:{constant}"',
        "  [tool.setuptools] packages:",
        f'  "accelstack.clouds.{name}", "accelstack.components.{name}", "accelstack.policies.{name}",',
        '  [project.entry-points."accelstack.policy_vendors"]   (the packs list it after the built-in vendors)',
        f'  {name} = "accelstack.policies.{name}:VENDOR"',
        "next: replace every TODO, following docs/adding-a-cloud.md (steps 1 to 5)",
    ]


@guarded
def scaffold_cloud_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The new cloud's name (a lowercase Python identifier).")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Project directory to write into (default: the one holding Pulumi.yaml, found upward).",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
) -> int:
    """Write the skeleton of a new cloud (description, components, policy vendor) with placeholder values marked
    TODO, and print the lines to add to pyproject.toml. Overwrites nothing."""
    problem = name_problem(name)
    if problem:
        raise CliError(problem)
    root = out if out is not None else find_project_dir()
    problems = target_problems(root, name)
    if problems:
        raise CliError(problems)
    files = render_files(name, datetime.date.today())
    written = []
    try:
        for relative, content in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x") as handle:  # "x": never replaces a file that appeared since the checks
                handle.write(content)
            written.append(path)
    except OSError as error:
        raise CliError(f"--out {root}: cannot write ({error.strerror or error})", EXIT_FAILED) from None
    echo_lines([f"wrote {path}" for path in written], stderr=True)
    echo_lines(next_steps(name))
    return EXIT_OK


scaffold_app = typer.Typer(
    name="scaffold",
    help="Generate the skeleton of a new part of accelstack.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
scaffold_app.command("cloud")(scaffold_cloud_command)


def register(app: typer.Typer) -> None:
    app.add_typer(scaffold_app, name="scaffold")
