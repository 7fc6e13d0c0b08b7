"""Writing a command's files into the directory the user named, and nowhere else: an empty name is refused, a
symlink (the directory itself or a file in it) is never written through, and each file is a plain name inside the
directory. Used by `render`, `schema` and `init` (which also refuses to replace an existing file)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from accelstack.commands.common import EXIT_FAILED, CliError


def output_directory(raw: str, option: str = "--out") -> Path:
    """The directory an option names; an empty or blank one is refused (it would mean the current directory)."""
    if not raw.strip():
        raise CliError(f"{option}: empty; give the directory to write into")
    return Path(raw)


def write_into(
    directory: Path,
    files: Mapping[str, str],
    *,
    option: str = "--out",
    executable: Callable[[str], bool] = lambda name: False,
) -> list[Path]:
    """Write each file into `directory` (created, with its parents, when missing) and return their paths."""
    if directory.is_symlink():
        raise CliError(f"{option} {directory}: is a symlink; give the directory itself")
    if directory.exists() and not directory.is_dir():
        raise CliError(f"{option} {directory}: not a directory")
    for name in files:
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise CliError(f"{option} {directory}: {name!r} is not a plain file name", EXIT_FAILED)
        if (directory / name).is_symlink():
            raise CliError(f"{option} {directory}: {name} is a symlink; accelstack writes no file through one")
    written = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            path = directory / name
            mode = 0o755 if executable(name) else 0o644
            # O_NOFOLLOW: a symlink put in place since the check above is refused, not followed.
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(text)
            os.chmod(path, mode)
            written.append(path)
    except OSError as error:
        raise CliError(f"{option} {directory}: cannot write ({error.strerror or error})", EXIT_FAILED) from None
    return written


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
