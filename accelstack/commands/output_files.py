"""Writing a command's files into the directory the user named, and nowhere else: an empty name is refused, a
symlink (the directory itself or a file in it) is never written through, and each file is a plain name inside the
directory. Used by `render` and `schema`."""

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
