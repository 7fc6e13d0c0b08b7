"""How a value is written into what a node boots with, one function per syntax it lands in (cloud-neutral, pure).

The spec already refuses what no quoting can make safe (accelstack.spec.text_grammar: line breaks, control
characters); these are the emitting side's half: each value quoted for the reader it meets, so a value that is
legal but unusual (a quote, a `$`, a `%`) stays data. The templates take them as Jinja filters
(accelstack.components.templates).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

# Characters no reader below takes as anything but data (bash, systemd command lines, environment files).
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_@+=:,./~-]+")
# Environment= does not expand variables: a `${NAME}` placeholder of `accelstack render` is plain there.
_PLAIN_ASSIGNMENT = re.compile(r"[A-Za-z0-9_@+=:,./~${}-]+")
# What ends or breaks a line in a shell script, a unit file or YAML 1.1 (NEL, LS and PS included), and the other
# C0/C1 controls: never legitimate in a single value, and no quoting of any of these readers survives them.
_LINE_OR_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


class UnsafeNodeValueError(ValueError):
    """A value that cannot be written into a node file as data (the spec should have refused it)."""


def one_line(value: object) -> str:
    """`value` as text, refused if it holds a line break or a control character."""
    text = str(value)
    found = _LINE_OR_CONTROL.search(text)
    if found:
        raise UnsafeNodeValueError(
            f"{text!r}: U+{ord(found.group()):04X} cannot be written into a node's files as data"
        )
    return text


def shell_word(value: object) -> str:
    """One bash word, quoted where needed (shlex.quote: single quotes, nothing expands inside them)."""
    return shlex.quote(one_line(value))


def unit_text(value: object) -> str:
    """Text in a unit file setting that takes specifiers (Description=, RequiresMountsFor=, paths): systemd.unit,
    "Specifiers": "%%" is a single percent sign, any other "%x" expands."""
    return one_line(value).replace("%", "%%")


def unit_word(value: object) -> str:
    """One word of an Exec*= command line. systemd.service, "Command lines": a word may be wrapped whole in quotes,
    in which C-style escapes apply ("\\\\", "\\'"); "$$" is a literal dollar (otherwise $NAME expands from the
    environment, quoted or not) and "%%" a literal percent (specifiers). A quote inside a word, as in shlex's
    'a'"'"'b', is not systemd syntax."""
    text = one_line(value)
    if not _PLAIN_WORD.fullmatch(text):
        text = "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return text.replace("%", "%%").replace("$", "$$")


def unit_command(words: Iterable[object]) -> str:
    """An Exec*= command line from its words (unit_word each)."""
    return " ".join(unit_word(word) for word in words)


def unit_assignment(key: str, value: object) -> str:
    """One Environment= assignment. systemd.exec, "Environment=": space-separated assignments, each may be quoted
    whole; specifiers expand, variables do not."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        raise UnsafeNodeValueError(f"{key!r} is not an environment variable name")
    assignment = f"{key}={one_line(value)}"
    if not _PLAIN_ASSIGNMENT.fullmatch(assignment):
        assignment = '"' + assignment.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return assignment.replace("%", "%%")


def unit_environment_line(key: str, value: object) -> str:
    """A KEY=value line of a file only systemd reads (EnvironmentFile=). systemd.exec, "EnvironmentFile=": no
    variable or specifier expansion; a value may be double-quoted, in which a backslash escapes " \\ ` and $."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        raise UnsafeNodeValueError(f"{key!r} is not an environment variable name")
    text = one_line(value)
    if text and not _PLAIN_ASSIGNMENT.fullmatch(text):
        text = '"' + re.sub(r'(["\\`$])', r"\\\1", text) + '"'
    return f"{key}={text}\n"


def environment_line(key: str, value: object) -> str:
    """A KEY=value line of a file read three ways: sourced by bash (`set -a; . FILE`), read by systemd
    (EnvironmentFile=) and echoed by a Slurm TaskProlog as `export KEY=value`, which slurmstepd takes literally.
    No one quoting suits all three, so the value must be a plain word."""
    text = one_line(value)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) or not (text == "" or _PLAIN_WORD.fullmatch(text)):
        raise UnsafeNodeValueError(
            f"{key}={text!r}: an environment file's value must be a plain word (letters, digits and _ @ + = : , . / ~ -)"
        )
    return f"{key}={text}\n"
