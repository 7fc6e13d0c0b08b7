"""The base of every spec model, and input checks several models share (no cloud, no Pulumi)."""

from __future__ import annotations

from typing import get_args

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

MAX_STRING_CHARS = 2048


class Model(BaseModel):
    """Base for every spec model: camelCase keys, unknown keys rejected, values frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        str_strip_whitespace=True,
        # The string under a field is its description (JSON Schema, docs/spec-reference.md).
        use_attribute_docstrings=True,
        # NaN and infinity pass every `gt`/`le` bound check or crash the planner's arithmetic later.
        allow_inf_nan=False,
        # The longest legitimate value (an S3 URI: 63-character bucket + 1,024-byte key) is ~1.1 KB.
        str_max_length=MAX_STRING_CHARS,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, value: object, info: ValidationInfo) -> object:
        """YAML reads `yes`, `on` and `true` as booleans, which pydantic would take as the number 1."""
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            if annotation in (int, float) or set(get_args(annotation)) & {int, float}:
                raise ValueError(f"{str(value).lower()} is true/false, not a number")
        return value


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
