"""Numbers and switches as the spec wants them written: no text, fraction or boolean passes for another kind.

pydantic's lax mode would turn `"120"` (quoted: text in every YAML) and `120.0` or `1e2` into the integer 120, and
`"yes"`, `"on"`, `1` into True. A stack file is read twice, by this reader and by Pulumi's, and the value deployed is
the one written into boot scripts and resource properties, so a value passes only as the kind its field is:

- integer fields (counts, sizes in GiB, ports, minutes): an integer; not text, not a fraction (not even 120.0: the
  file should say 120), not true/false;
- number fields (rates, seconds, dollars, billions of parameters): an integer or a decimal number (120 is a fine
  120.0); not text, not true/false;
- switches (`create`, `accessLogs`, `default`): true or false; not text ("yes", "true") and not 0/1.

The check is one `before` validator on every model (accelstack.spec.base.Model), walking the field's annotation
(`int | None`, `list[int]`, `dict[str, float]`), so a new field is strict unasked.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

SCALARS = (bool, int, float)


def _example_int(text: str) -> int | None:
    digits = text.strip()
    if digits[:1] in "+-":
        digits = digits[1:]
    return int(text.strip()) if digits.isascii() and digits.isdigit() and len(digits) <= 30 else None


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def scalar_problem(kind: type, value: object) -> str | None:
    """Why `value` is not of the scalar `kind` (bool, int or float) as written, or None (including values of
    other shapes, which pydantic's own message describes)."""
    if kind is bool:
        if isinstance(value, bool):
            return None
        if isinstance(value, str):
            return f"{_shown(value)} is text (quoted); allowed: true or false, unquoted"
        if isinstance(value, int | float):
            return f"{_shown(value)} is a number; allowed: true or false"
        return None
    if isinstance(value, bool):
        return f"{str(value).lower()} is true/false, not a number"
    if kind is int:
        if isinstance(value, float):
            whole = value.is_integer() and abs(value) < 1e18
            example = f", e.g. {int(value)}" if whole else ""
            return (
                f"{_shown(value)} is a decimal number, not a whole number; allowed: a whole number in digits{example}"
            )
        if isinstance(value, str):
            number = _example_int(value)
            if number is None:
                return None  # pydantic: "'sixteen' is not a whole number"
            return f"{_shown(value)} is text (quoted); allowed: a whole number without quotes, e.g. {number}"
        return None
    if kind is float and isinstance(value, str):
        try:
            spelt = float(value.strip())
        except ValueError:
            return None  # pydantic: "'fast' is not a number"
        return f"{_shown(value)} is text (quoted); allowed: a number without quotes, e.g. {spelt:g}"
    return None


def kind_problem(annotation: Any, value: object) -> str | None:
    """Why `value` (raw config) does not have the scalar kinds of `annotation`, or None. Containers are walked item
    by item; the problem names the item (`.2`) when it is inside one."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return kind_problem(get_args(annotation)[0], value)
    if annotation in SCALARS:
        return scalar_problem(annotation, value)
    if origin is Literal:
        return None  # pydantic compares literals exactly: "1" is not 1
    if origin in (Union, types.UnionType):
        options = [arg for arg in get_args(annotation) if arg is not type(None)]
        if value is None:
            return None
        scalars = [arg for arg in options if arg in SCALARS]
        if scalars and len(scalars) == len(options):
            # int | float: the wider kind; bool | int does not occur in the spec
            kind = float if float in scalars else scalars[0]
            return scalar_problem(kind, value)
        if any(isinstance(option, type) and option not in SCALARS and isinstance(value, option) for option in options):
            return None  # `str | int` given text: the text option takes it
        if scalars and isinstance(value, (*SCALARS, str)):
            return (
                None
                if any(scalar_problem(kind, value) is None for kind in scalars)
                else scalar_problem(scalars[0], value)
            )
        for option in options:
            problem = kind_problem(option, value)
            if problem is not None and _container_matches(option, value):
                return problem
        return None
    if origin in (list, tuple, set, frozenset) and isinstance(value, list | tuple):
        arguments = get_args(annotation)
        for index, item in enumerate(value):
            if origin is tuple and arguments and arguments[-1] is not Ellipsis:
                item_type = arguments[index] if index < len(arguments) else None
            else:
                item_type = arguments[0] if arguments else None
            problem = kind_problem(item_type, item) if item_type is not None else None
            if problem is not None:
                return f"item {index}: {problem}"
        return None
    if origin in (dict, Mapping) and isinstance(value, Mapping):
        arguments = get_args(annotation)
        for key, item in value.items():
            problem = kind_problem(arguments[1], item) if len(arguments) == 2 else None
            if problem is not None:
                return f"{key}: {problem}"
    return None


def _container_matches(annotation: Any, value: object) -> bool:
    origin = get_origin(annotation)
    if origin in (list, tuple, set, frozenset):
        return isinstance(value, list | tuple)
    if origin in (dict, Mapping):
        return isinstance(value, Mapping)
    return False
