"""The base of every spec model, and input checks several models share (no cloud, no Pulumi)."""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import re
import textwrap
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from accelstack.spec.scalar_kinds import kind_problem
from accelstack.spec.text_grammar import strings_in, text_problem

MAX_STRING_CHARS = 2048


@functools.cache
def attribute_docstrings(cls: type) -> dict[str, str]:
    """Field name -> the string literal under its annotation in the class body (PEP 257's attribute
    docstrings), cleaned as `inspect.cleandoc` does; inherited fields from the base classes' bodies."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or klass.__module__.startswith("pydantic"):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        body = next(node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)).body
        for annotated, following in itertools.pairwise(body):
            if (
                isinstance(annotated, ast.AnnAssign)
                and isinstance(annotated.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                found[annotated.target.id] = inspect.cleandoc(following.value.value)
    return found


def _describe_fields(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """JSON Schema hook: a property without a description takes its field's attribute docstring.

    pydantic's `use_attribute_docstrings` would do this at class creation, reading every model's source at
    import, which cost each preview ~0.1 s; the descriptions are read only when a schema is generated
    (`accelstack schema`: docs/spec-reference.md and the editor schema)."""
    docstrings = attribute_docstrings(model)
    properties = schema.get("properties", {})
    for name, field in model.model_fields.items():
        key = field.alias if field.alias in properties else name
        if key in properties and name in docstrings and "description" not in properties[key]:
            properties[key]["description"] = docstrings[name]


# Field (Python name) -> a function saying why a text is not of the key's grammar, or None.
Grammars = dict[str, Callable[[str], str | None]]
UNSAFE_TEXT_ERROR = "unsafe_text"
# The context key of an unsafe text error that names the list index (or mapping key) holding the text.
UNSAFE_TEXT_ITEM = "accelstack_item"


# A number as YAML 1.1 and 1.2 both read it.
DECIMAL = re.compile(r"[-+]?(0|[1-9][0-9]*)")


class Model(BaseModel):
    """Base for every spec model: camelCase keys, unknown keys rejected, values frozen, every string safe text."""

    # Fields (Python names) whose text may hold spaces; every other string is one word (accelstack.spec.text_grammar).
    FREE_TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset()
    # Field (Python name) -> its own grammar (a problem function), checked before the safe text every string keeps.
    TEXT_GRAMMARS: ClassVar[Grammars] = {}

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        str_strip_whitespace=True,
        # The string under a field is its description (JSON Schema, docs/spec-reference.md).
        json_schema_extra=_describe_fields,
        # NaN and infinity pass every `gt`/`le` bound check or crash the planner's arithmetic later.
        allow_inf_nan=False,
        # The longest legitimate value (an S3 URI: 63-character bucket + 1,024-byte key) is ~1.1 KB.
        str_max_length=MAX_STRING_CHARS,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: object, info: ValidationInfo) -> object:
        """Every number and switch as its field's kind (accelstack.spec.scalar_kinds): lax mode would take "120",
        120.0 and `yes` (true) as the integer 120 or 1, and "yes" as true."""
        if info.field_name is None:
            return value
        annotation = cls.model_fields[info.field_name].annotation
        problem = kind_problem(annotation, value)
        if problem is not None:
            raise ValueError(problem)
        if not (annotation in (int, float) or set(get_args(annotation)) & {int, float}):
            return value
        written = getattr(value, "written", None)  # accelstack.spec.yaml_input.WrittenInt: YAML 1.1 spelt it
        if isinstance(value, int) and isinstance(written, str) and not DECIMAL.fullmatch(written):
            # PyYAML reads YAML 1.1 (`1:30` is 90, `010` is 8); Pulumi reads the same file as YAML 1.2, where `1:30`
            # is text and `010` is 10: the stack would validate here as one number and deploy as another.
            raise ValueError(
                f"{written}: this reader (YAML 1.1) takes it as {int(value)}, Pulumi's (YAML 1.2) may not (`1:30` is "
                f"text there, `010` is 10); allowed: the number in decimal digits, e.g. {int(value)}"
            )
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _safe_text(cls, value: object, info: ValidationInfo) -> object:
        """Every string of the spec, whatever its key: nothing that splits a word or starts a line where it lands
        (a boot script, a cloud-config, a unit file, slurm.conf). Fails closed: a new key is checked unasked."""
        spaces = info.field_name in cls.FREE_TEXT_FIELDS
        grammar = cls.TEXT_GRAMMARS.get(info.field_name or "")
        for item, text in strings_in(value):
            shown = repr(text) if len(text) <= 60 else repr(text[:57]) + "..."
            problem = grammar(text) if grammar is not None else None
            if problem is None:
                unsafe = text_problem(text, spaces=spaces)
                problem = None if unsafe is None else f"{shown} {unsafe}"
            if problem is not None:
                raise PydanticCustomError(UNSAFE_TEXT_ERROR, problem, {UNSAFE_TEXT_ITEM: item})
        return value


GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def account_key(account_id: str) -> str:
    """An account id as its cloud compares it. A GUID (an Azure subscription id) names the same subscription in any
    case, so it compares lowercased: otherwise one subscription written in two cases would pass as two
    (trainingAccounts and servingAccounts "disjoint") and an id would not match itself. AWS ids are digits and GCP
    project ids lowercase by their own rules. Only comparisons use it: ids stay as written, because resource names
    derive from them (a storage account named from a changed spelling would be a new storage account)."""
    return account_id.lower() if GUID.fullmatch(account_id) else account_id


def account_keys(account_ids: Iterable[str]) -> set[str]:
    return {account_key(account_id) for account_id in account_ids}


def quoted_account_ids(value: object) -> object:
    """Unquoted YAML account ids become numbers and lose leading zeros (or turn octal): refuse them."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            written = getattr(item, "written", str(item))  # the text YAML read (accelstack.spec.yaml_input)
            if written != str(item):
                raise ValueError(
                    f'write {written} quoted ("{written}"): unquoted, YAML reads it as the number {int(item)}'
                )
            raise ValueError(f'write account ids quoted ("{written}"): unquoted, an id with leading zeros loses them')
    return value
