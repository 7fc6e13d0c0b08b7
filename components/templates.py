"""The Jinja environments every generator renders its node files with (cloud-neutral).

One definition of how templates are read: a missing value is an error, not "" (StrictUndefined); files keep their
last newline; no HTML escaping (config files and shell). Compiled templates are kept in a per-user bytecode cache,
because compiling the Slurm templates was ~25 ms of every training preview and each preview is a fresh process.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re

import jinja2
from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from jinja2.bccache import Bucket

from accelstack.components.node_syntax import (
    UnsafeNodeValueError,
    shell_word,
    unit_assignment,
    unit_command,
    unit_text,
    unit_word,
)


class _BestEffortBytecodeCache(FileSystemBytecodeCache):
    """A cache that never fails a render: an unwritable or vanished cache directory means compiling again."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - unreadable or truncated (pickle, marshal): Jinja compiles the source
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


# The settings that shape the code Jinja compiles a template to (its lexer's and code generator's).
_COMPILE_SETTINGS = (
    "block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
    "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix",
    "trim_blocks", "lstrip_blocks", "newline_sequence", "keep_trailing_newline", "optimized", "autoescape",
    "is_async", "undefined", "finalize",
)  # fmt: skip


def _setting(value: object) -> str:
    """A setting as the cache key holds it: a function (finalize) by its name, not by its address in this process."""
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def _bytecode_cache(environment: Environment) -> FileSystemBytecodeCache | None:
    """Jinja keys an entry by template path and checks it against the source, but not against the environment's
    settings or Jinja's version, which change the compiled code: both go into the file names."""
    if os.environ.get("ACCELSTACK_NO_TEMPLATE_CACHE"):
        return None
    settings = [_setting(getattr(environment, name, None)) for name in _COMPILE_SETTINGS]
    flavour = hashlib.sha256(repr((jinja2.__version__, settings)).encode()).hexdigest()[:12]
    try:
        # Jinja's own default directory: <tmp>/_jinja2-cache-<uid>, created 0700 and refused if another user owns it.
        return _BestEffortBytecodeCache(pattern=f"accelstack-{flavour}-%s.cache")
    except (OSError, RuntimeError):
        return None


# Characters no generated file has a use for (NUL, CR, the other C0 and C1 controls but tab and LF, Unicode line and
# paragraph separators, which YAML 1.1 reads as line breaks): a value carrying one was never checked.
_NEVER_EMITTED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _checked_output(value: object) -> object:
    """Every `{{ ... }}` of every template passes here (Jinja's `finalize`): fail the render, not the boot."""
    if isinstance(value, str) and _NEVER_EMITTED.search(value):
        raise UnsafeNodeValueError(f"{value[:80]!r}: a control character cannot be written into a node's files")
    return value


# Quoting for where a value lands (accelstack.components.node_syntax): `{{ path | unit_text }}` in a unit file.
_FILTERS = {
    "shell_word": shell_word,
    "unit_text": unit_text,
    "unit_word": unit_word,
    "unit_command": unit_command,
    "unit_assignment": lambda pair: unit_assignment(*pair),
}


def template_environment(package: str, *, trim_blocks: bool = True) -> Environment:
    """The environment for the `templates` folder of `package`. `trim_blocks` also strips a block tag's indent
    and newline (`trim_blocks` + `lstrip_blocks`); shell scripts with literal layout turn it off."""
    environment = Environment(
        finalize=_checked_output,
        loader=PackageLoader(package, "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=trim_blocks,
        lstrip_blocks=trim_blocks,
        autoescape=False,  # config files and shell, not HTML
    )
    environment.filters.update(_FILTERS)
    environment.bytecode_cache = _bytecode_cache(environment)
    return environment
