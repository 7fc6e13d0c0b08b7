"""The Jinja environments every generator renders its node files with (cloud-neutral).

One definition of how templates are read: a missing value is an error, not "" (StrictUndefined); files keep their
last newline; no HTML escaping (config files and shell). Compiled templates are kept in a per-user bytecode cache,
because compiling the Slurm templates was ~25 ms of every training preview and each preview is a fresh process.
"""

from __future__ import annotations

import contextlib
import hashlib
import os

import jinja2
from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from jinja2.bccache import Bucket


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


def _bytecode_cache(options: dict[str, object]) -> FileSystemBytecodeCache | None:
    """Jinja keys an entry by template path and checks it against the source, but not against the environment's
    options or Jinja's version, which change the compiled code: both go into the file names."""
    if os.environ.get("ACCELSTACK_NO_TEMPLATE_CACHE"):
        return None
    flavour = hashlib.sha256(repr((jinja2.__version__, sorted(options.items()))).encode()).hexdigest()[:12]
    try:
        # Jinja's own default directory: <tmp>/_jinja2-cache-<uid>, created 0700 and refused if another user owns it.
        return _BestEffortBytecodeCache(pattern=f"accelstack-{flavour}-%s.cache")
    except (OSError, RuntimeError):
        return None


def template_environment(package: str, *, trim_blocks: bool = True) -> Environment:
    """The environment for the `templates` folder of `package`. `trim_blocks` also strips a block tag's indent
    and newline (`trim_blocks` + `lstrip_blocks`); shell scripts with literal layout turn it off."""
    options: dict[str, object] = {
        "undefined": StrictUndefined.__name__,
        "keep_trailing_newline": True,
        "trim_blocks": trim_blocks,
        "lstrip_blocks": trim_blocks,
        "autoescape": False,
    }
    return Environment(
        loader=PackageLoader(package, "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=trim_blocks,
        lstrip_blocks=trim_blocks,
        autoescape=False,  # config files and shell, not HTML
        bytecode_cache=_bytecode_cache(options),
    )
