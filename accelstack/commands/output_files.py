"""Writing a command's files where the user said, and nowhere else (`render`, `schema`, `export`, `--json OUT`,
`simulate --plot`, and `init`, which also never replaces an existing file). The rules, the same for every command:

- An empty or blank name is refused (it would mean the current directory).
- No symlink on the way: the directory, any component of the path as written, and each file written are checked,
  and a file is written under a temporary name and renamed into place (a rename replaces a link, never follows
  it). The only symlinks followed are the system's own above the user's files: a
  top-level one (`/tmp` -> `/private/tmp` on macOS) and the home directory or one of its parents.
- Only the last directory of the path is created: its parent must exist, so a typo in a parent
  (`--out /srv/acelstack/render`) is refused instead of creating a tree somewhere unexpected. `--parents` asks for
  the missing parents too (as `mkdir -p`).
- All or nothing: every check runs before the first write, each file is written to a temporary name in the target
  directory and only renamed into place once every file is complete; on failure the temporaries (and a directory
  the command created) are removed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated

import typer

from accelstack.commands.common import EXIT_FAILED, CliError

ParentsOpt = Annotated[
    bool,
    typer.Option(
        "--parents", help="Create the output's missing parent directories too (default: only its last directory)."
    ),
]


def output_directory(raw: str, option: str = "--out") -> Path:
    """The directory an option names; an empty or blank one is refused (it would mean the current directory)."""
    if not raw.strip():
        raise CliError(f"{option}: empty; give the directory to write into")
    return Path(raw)


def _system_links() -> set[Path]:
    """Symlinks a path may pass through: the home directory and its parents, as $HOME spells them."""
    home = Path(os.path.expanduser("~"))
    return {home, *home.parents}


def symlink_on_the_way(path: Path) -> Path | None:
    """The first component of `path` as written (`..` not folded away) that is a symlink accelstack would follow."""
    absolute = path if path.is_absolute() else Path.cwd() / path
    allowed = _system_links()
    current = Path(absolute.anchor)
    for depth, part in enumerate(absolute.parts[1:], start=1):
        current = current / part
        if current.is_symlink() and depth > 1 and current not in allowed:
            return current
    return None


def check_output_directory(directory: Path, option: str = "--out", *, parents: bool = False) -> None:
    """CliError unless files may be written into `directory` by the rules above."""
    _check_target_directory(directory, option, parents)


def is_current(path: Path, content: str) -> bool:
    """`path` is a plain file (no link) holding exactly `content`; its size is compared before anything is read."""
    expected = content.encode()
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size != len(expected):
            return False
        return path.read_bytes() == expected
    except OSError:
        return False


def _check_target_directory(directory: Path, option: str, parents: bool) -> None:
    link = symlink_on_the_way(directory)
    if link is not None:
        raise CliError(f"{option} {directory}: {link} is a symlink; accelstack writes no file through one")
    if directory.exists() and not directory.is_dir():
        raise CliError(f"{option} {directory}: not a directory")
    parent = directory.parent
    if not directory.exists() and not parent.is_dir() and not parents:
        raise CliError(
            f"{option} {directory}: its parent {parent} does not exist; accelstack creates only the last directory "
            "(pass --parents to create the parents too)"
        )


def _check_names(directory: Path, names: list[str], option: str) -> None:
    for name in names:
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise CliError(f"{option} {directory}: {name!r} is not a plain file name", EXIT_FAILED)
        target = directory / name
        if target.is_symlink():
            raise CliError(f"{option} {directory}: {name} is a symlink; accelstack writes no file through one")
        if target.exists() and not target.is_file():
            raise CliError(f"{option} {directory}: {name} exists and is not a regular file")


def _write_staged(
    directory: Path, files: Mapping[str, str | bytes], option: str, mode_of: Callable[[str], int], parents: bool
) -> list[Path]:
    created = not directory.exists()
    staged: list[tuple[str, Path]] = []
    try:
        directory.mkdir(parents=parents, exist_ok=True)
        for name, content in files.items():
            descriptor, partial = tempfile.mkstemp(prefix=f".{name}.", suffix=".partial", dir=directory)
            staged.append((name, Path(partial)))
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(content.encode() if isinstance(content, str) else content)
            os.chmod(partial, mode_of(name))
        written = []
        for name, temporary in staged:
            if (directory / name).is_symlink():  # put in place since the check: refused, not followed
                raise CliError(f"{option} {directory}: {name} is a symlink; accelstack writes no file through one")
            os.replace(temporary, directory / name)  # replaces a name, never follows a link
            written.append(directory / name)
        return written
    except OSError as error:
        raise CliError(f"{option} {directory}: cannot write ({error.strerror or error})", EXIT_FAILED) from None
    finally:
        for _, leftover in staged:
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
        if created and directory.is_dir() and not any(directory.iterdir()):
            with contextlib.suppress(OSError):
                directory.rmdir()


def write_into(
    directory: Path,
    files: Mapping[str, str],
    *,
    option: str = "--out",
    executable: Callable[[str], bool] = lambda name: False,
    parents: bool = False,
) -> list[Path]:
    """Write each file into `directory` (its last component created when missing) and return their paths."""
    check_output_files(directory, list(files), option, parents=parents)
    return _write_staged(directory, files, option, lambda name: 0o755 if executable(name) else 0o644, parents)


def check_output_file(path: Path, option: str, *, parents: bool = False) -> None:
    """CliError unless `path` may be written by the rules above (checked before any work, and again on writing)."""
    if not str(path).strip():
        raise CliError(f"{option}: empty; give the file to write")
    if path.name in ("", ".", ".."):
        raise CliError(f"{option} {path}: not a file name")
    _check_target_directory(path.parent, option, parents)
    _check_names(path.parent, [path.name], option)


def check_output_files(directory: Path, names: list[str], option: str = "--out", *, parents: bool = False) -> None:
    """CliError unless each of `names` may be written into `directory` by the rules above."""
    _check_target_directory(directory, option, parents)
    _check_names(directory, names, option)


def write_file(path: Path, content: str | bytes, *, option: str, parents: bool = False) -> Path:
    """Write one file at `path` by the same rules (its directory must exist, or only its last part is created)."""
    check_output_file(path, option, parents=parents)
    [written] = _write_staged(path.parent, {path.name: content}, option, lambda name: 0o644, parents)
    return written


@contextlib.contextmanager
def staged_file(path: Path, *, option: str) -> Iterator[Path]:
    """A temporary path beside `path` for a writer that wants a file name (matplotlib), renamed onto `path` by the
    same rules once the writer returns; removed if it raises."""
    if not path.parent.is_dir():
        raise CliError(f"{option} {path}: cannot write (no directory {path.parent})")
    _check_target_directory(path.parent, option, False)
    _check_names(path.parent, [path.name], option)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(descriptor)
    try:
        yield Path(temporary)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _symlinks_on_the_way(root: Path, relative: Path) -> list[Path]:
    """The existing paths from `root` down to `root / relative` that are symlinks (a write through one would land
    outside the target)."""
    found, path = [], root
    for part in relative.parts:
        path = path / part
        if path.is_symlink():
            found.append(path)
    return found


def new_tree_problems(root: Path, files: Mapping[str, str], option: str = "DIR") -> list[str]:
    """Why `files` (relative paths, `/`-separated) cannot all be created under `root`: empty when they can. Nothing
    existing is ever replaced and no symlink is written through, the root itself included."""
    if root.is_symlink():
        return [f"{option} {root}: is a symlink; give the directory itself"]
    if root.exists() and not root.is_dir():
        return [f"{option} {root}: not a directory"]
    problems = []
    for name in files:
        relative = Path(name)
        if relative.is_absolute() or not relative.parts or any(part in ("", ".", "..") for part in relative.parts):
            problems.append(f"{option} {root}: {name!r} is not a relative path inside it")
            continue
        links = _symlinks_on_the_way(root, relative)
        problems.extend(
            f"{option} {root}: {link.relative_to(root)} is a symlink; nothing is written through one" for link in links
        )
        if not links and (root / relative).exists():
            problems.append(f"{option} {root}: {name} already exists; nothing is overwritten")
    return problems


def create_tree(root: Path, files: Mapping[str, str], option: str = "DIR") -> list[Path]:
    """Create each file (relative path -> text) under `root`, with its folders; refused as a whole (CliError, exit 2,
    nothing written) when any file exists or any path runs through a symlink (new_tree_problems)."""
    problems = new_tree_problems(root, files, option)
    if not root.exists() and not root.parent.is_dir():
        # As for --out: only the last directory is created, so a typo in a parent creates no tree elsewhere.
        problems.append(f"{option} {root}: its parent {root.parent} does not exist; create it first")
    if problems:
        raise CliError(problems)
    written = []
    try:
        for name, text in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            # O_EXCL + O_NOFOLLOW: a file or link that appeared since the checks is refused, never replaced.
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            written.append(path)
    except OSError as error:
        raise CliError(f"{option} {root}: cannot write ({error.strerror or error})", EXIT_FAILED) from None
    return written
