"""Node paths: where a mount point or accelstack's own directory may go on a node (the spec rules that check
`lustre.mountPath` and `checkpoints.path`, and the planner, read them)."""

from __future__ import annotations

import posixpath
import re


def path_within(path: str, root: str) -> bool:
    """True if POSIX `path` is `root` or below it (`/fsx/ckpt` is within `/fsx`, `/fsx2` is not)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return root == "/" or path == root or path.startswith(root + "/")


# Node paths a mount or checkpoint directory must not be, contain or sit in: the OS's own trees (Filesystem
# Hierarchy Standard), the home directories, and what the Slurm nodes use (accelstack.components.slurm: spool, logs,
# /run). A Lustre mount over /etc or /usr hides the system; over /home, every user's files.
SYSTEM_PATHS = (
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/root", "/run",
    "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr", "/var",
)  # fmt: skip
# Paths below which nothing may be mounted or written by us either (the rest of /var, /opt, /srv and
# /mnt-like places may hold a mount point).
SYSTEM_TREES = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/root", "/run", "/sbin", "/sys",
    "/usr", "/var/lib", "/var/log", "/var/spool", "/var/run",
)  # fmt: skip


_PLAIN_PATH_CHARS = re.compile(r"[A-Za-z0-9._@+/-]+")


def not_plain(path: str) -> bool:
    """`..`, `.` or `//` make a path mean something else than it reads (`/fsx/../etc` is /etc)."""
    parts = path.split("/")
    return ".." in parts or "." in parts or "//" in path


def node_path_problem(path: str) -> str | None:
    """None if `path` may hold a mount point or accelstack's own directory on a node, else why not."""
    if "\0" in path or any(ord(c) < 32 for c in path):
        return f"{path!r} contains control characters"
    if not _PLAIN_PATH_CHARS.fullmatch(path):
        # The path lands in the jobs' environment file (sourced by login shells, read by systemd), in mount
        # units and in boot scripts: a space, quote, `$` or `;` there would split it or run as a command.
        return (
            f"{path!r} has characters node scripts would have to quote (space, quotes, $, ;, ...); allowed: "
            "letters, digits, '.', '_', '-', '+', '@' and '/'"
        )
    if not_plain(path):
        return f"{path!r} is not a plain absolute path; write it as {posixpath.normpath(path)!r} (no '.', '..' or '//')"
    path = posixpath.normpath(path)  # a trailing '/' is harmless
    if path == "/" or path in SYSTEM_PATHS:
        return f"{path} is a system directory; mounting or writing there hides or breaks it (e.g. use /fsx)"
    for tree in SYSTEM_TREES:
        if path_within(path, tree):
            return f"{path} is inside the system directory {tree}; use a directory of its own (e.g. /fsx)"
    return None
