"""Parsing JSON a user handed over (`policy --file` exports, `--policy-config`, structured values Pulumi passes as
JSON strings) without trusting its shape. Python's `json` is lenient where these inputs must not be:

- `NaN`, `Infinity` and `-Infinity` are not JSON (RFC 8259 section 6), yet `json.loads` accepts them; a number too
  large for a double (`1e400`) becomes `inf`. Either then crashes protobuf (a Pulumi property value is a double) or
  silently compares false everywhere. Refused, with the line.
- Integers: CPython refuses to convert more than 4,300 digits with a ValueError traceback, and any integer past a
  double's range cannot be a Pulumi value. Bounded in digits before conversion.
- Duplicate keys: `json.loads` keeps the last; which one a different reader keeps is anyone's guess. Refused.
- Nesting: the C parser raises RecursionError near 1,000 levels, and the recursive walks downstream (secrets,
  protobuf Structs) fail earlier. Bounded at `MAX_DEPTH`, far above any export (a Pulumi export is ~10 deep).

Every refusal is a `JsonInputError` (an `InputFileError`, so a ValueError) naming the source and, where the
parser can say, the line.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from accelstack.spec.input_files import InputFileError, read_text

MAX_DEPTH = 100
MAX_INT_DIGITS = 64  # a double holds ~308 digits of magnitude but only 15-17 of precision; no quantity needs more
# A 20,000-resource `pulumi stack export` (inputs and outputs) is ~100 MB.
MAX_EXPORT_BYTES = 128 * 1024 * 1024
MAX_CONFIG_BYTES = 1024 * 1024  # a policy config is a few hundred bytes

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


class JsonInputError(InputFileError):
    """JSON this project refuses (or text that is not JSON at all)."""


class JsonSyntaxError(JsonInputError):
    """The text is not JSON at all (as opposed to JSON this project refuses)."""


class _RefusedError(Exception):
    """Raised from inside the parser's hooks: (what, the literal text to find its line by)."""

    def __init__(self, message: str, literal: str | None = None):
        self.message = message
        self.literal = literal
        super().__init__(message)


def _constant(name: str) -> Any:
    raise _RefusedError(f"{name} is not a JSON number (RFC 8259 allows finite numbers only)", name)


def _float(text: str) -> float:
    if len(text) > MAX_INT_DIGITS * 2:
        raise _RefusedError(f"a number written with {len(text):,} characters; at most {MAX_INT_DIGITS * 2}", text)
    value = float(text)
    if not math.isfinite(value):
        raise _RefusedError(f"{text} is beyond the range of a double (about 1.8e308)", text)
    return value


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _RefusedError(f"an integer of {digits:,} digits; at most {MAX_INT_DIGITS}", text)
    return int(text)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                break
            seen.add(key)
        raise _RefusedError(f"duplicate key {key!r} in one object: readers disagree on which value wins; keep one")
    return document


def _line_of(text: str, literal: str) -> int | None:
    """Line of `literal` written as a bare token (outside strings); strings hold no raw newline, so blanking them
    keeps every line where it was."""
    skeleton = _STRING.sub('""', text)
    match = re.search(rf"(?<![\w.+-]){re.escape(literal)}(?![\w.])", skeleton)
    return skeleton.count("\n", 0, match.start()) + 1 if match else None


def _too_deep(document: Any) -> str | None:
    """Path of the first container nested deeper than MAX_DEPTH (iterative: depth cannot blow the stack here).
    Level by level without paths first (a 20,000-resource export has some 400,000 containers), the paths only
    for a document that is too deep."""
    level, depth = [document], 1
    while level:
        if depth > MAX_DEPTH:
            return _deep_path(document)
        below: list[Any] = []
        for node in level:
            below += [
                child for child in (node.values() if isinstance(node, dict) else node) if isinstance(child, dict | list)
            ]
        level, depth = below, depth + 1
    return None


def _deep_path(document: Any) -> str | None:
    pending: list[tuple[Any, int, tuple[str, ...]]] = [(document, 1, ())]
    while pending:
        node, depth, path = pending.pop()
        if depth > MAX_DEPTH:
            shown = ".".join(path[:6]) + (f"... ({len(path)} levels)" if len(path) > 6 else "")
            return shown or "the document"
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(child, dict | list):
                pending.append((child, depth + 1, (*path, str(key))))
    return None


def load_json(text: str, source: str) -> Any:
    """`text` parsed with the checks above; JsonInputError names `source` (and the line) otherwise."""
    try:
        document = json.loads(
            text, parse_constant=_constant, parse_float=_float, parse_int=_int, object_pairs_hook=_object
        )
    except _RefusedError as refused:
        line = _line_of(text, refused.literal) if refused.literal else None
        raise JsonInputError(source, (f"line {line}: " if line else "") + refused.message) from None
    except json.JSONDecodeError as error:
        raise JsonInputError(
            source, f"not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from None
    except RecursionError:
        raise JsonInputError(source, f"nested deeper than {MAX_DEPTH} levels") from None
    if isinstance(document, dict | list):
        deep = _too_deep(document)
        if deep is not None:
            raise JsonInputError(source, f"nested deeper than {MAX_DEPTH} levels (at {deep})")
    return document


def read_json(path: Path | str, source: str, max_bytes: int) -> Any:
    """A JSON file (`-`: stdin) read with `input_files.read_text`'s limits, then `load_json`."""
    return load_json(read_text(path, source, max_bytes), source)
