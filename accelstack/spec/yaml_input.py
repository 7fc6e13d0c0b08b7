"""Reading YAML a user wrote (stack files and `--set` values) without trusting its shape.

PyYAML's `safe_load` is safe from code execution, not from these, each of which either crashes
later with a traceback, hangs, or silently means something else:

- Duplicate keys: PyYAML keeps the last value without a word; Pulumi's own YAML parser refuses the
  file, so `accelstack validate` would pass a file `pulumi up` rejects (or validate a value the user
  did not mean). Refused at any depth, with the config path and both lines.
- Alias amplification ("billion laughs"): ten nested anchors of ten aliases make a 1 KB file
  describe 10^10 values. PyYAML shares the objects, but everything downstream (validation, deep
  copies, JSON for Pulumi) walks the expanded tree. The expanded size is counted before anything is
  constructed, and capped.
- Non-string keys: `on:`, `yes:`, `1:` or `null:` become booleans, numbers or None in YAML 1.1, so a
  key the user meant as a name silently becomes something no schema matches.
- Sheer size: a stack file is a few KB; a megabyte string or file is a mistake (or an attack) that
  would otherwise be copied into every error message and resource.
- Integers of thousands of digits: CPython's int() refuses more than 4,300 (a ValueError traceback); bounded in
  characters before conversion.
- YAML 1.1's `!!binary`, `!!set`, `!!omap` and `!!pairs`: bytes and sets no key means; refused with the line.
- Numbers YAML 1.1 reads from text that does not spell them: `011111111111` (octal), `1:30:00`
  (base 60), `0x1F`, `1_000`. They are kept as `WrittenInt`, an int that remembers its text, so a
  message can quote what the user wrote instead of the mangled value.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from accelstack.spec.problems import Problem, SpecError

MAX_DOCUMENT_BYTES = 1024 * 1024  # a stack file is a few KB; Pulumi secrets and comments included, far below this
MAX_SCALAR_CHARS = 16 * 1024  # the longest legitimate value (an S3 URI) is ~1.1 KB
MAX_EXPANDED_NODES = 100_000  # a large stack is ~1,000 values; aliases may not multiply past this
MAX_DEPTH = 64
MAX_INT_CHARS = 64

_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
# YAML 1.2's core schema: the only booleans (YAML 1.1 adds yes/no/on/off, which Pulumi's reader takes as text).
_YAML12_BOOLS = frozenset({"true", "True", "TRUE", "false", "False", "FALSE"})
_YAML12_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# YAML 1.1 types PyYAML constructs (bytes, a set, ordered pairs) that Pulumi's YAML 1.2 reader takes as plain
# text or mappings and no spec key means: `region: !!binary ZXdy` would validate as b'ewr' and break the preview.
_FOREIGN_TAGS = {f"tag:yaml.org,2002:{name}": name for name in ("binary", "set", "omap", "pairs")}


class YamlSyntaxError(SpecError):
    """The text is not YAML at all (as opposed to YAML this project refuses)."""


class WrittenInt(int):
    """An int YAML read from text that spells it differently (`011111111111` is octal 1227133513)."""

    written: str

    def __new__(cls, value: int, written: str) -> WrittenInt:
        number = super().__new__(cls, value)
        number.written = written
        return number

    def __reduce__(self) -> tuple[type[WrittenInt], tuple[int, str]]:  # copy.deepcopy, pickle
        return WrittenInt, (int(self), self.written)


class _Loader(yaml.SafeLoader):
    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        value = super().construct_yaml_int(node)
        text = str(node.value)
        return WrittenInt(value, text) if text != str(value) else value

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        """YAML 1.2 (Pulumi's reader) takes `2e12` and `1e-3` as numbers; YAML 1.1 wants a dot (`2.0e+12`) and reads
        them as text, which a number field would then refuse as quoted text. Read them as Pulumi does."""
        tag: str = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]  # PyYAML's, untyped
        if tag == _STR_TAG and implicit[0] and kind is yaml.ScalarNode and _YAML12_FLOAT.fullmatch(value):
            return _FLOAT_TAG
        return tag


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


class _Checker:
    """Walks the composed node tree once (shared alias targets once) before anything is constructed."""

    def __init__(self, source: str, config_paths: bool, base_path: str | None):
        self.source = source
        self.config_paths = config_paths
        self.base_path = base_path
        self.problems: list[Problem] = []
        self.sizes: dict[int, int] = {}  # id(node) -> expanded node count
        self.active: set[int] = set()  # nodes on the current path: an alias back to one is a cycle

    def where(self, keys: list[str]) -> str:
        """Config path of a node: `config.accelstack:training.nodes` -> `training.nodes`."""
        if self.config_paths and len(keys) >= 2 and keys[0] == "config":
            head = keys[1].removeprefix("accelstack:")
            return ".".join([head, *keys[2:]])
        if self.base_path:
            return ".".join([self.base_path, *keys])
        return ".".join(keys) or self.source

    def problem(self, keys: list[str], node: yaml.Node, message: str) -> None:
        self.problems.append(Problem(self.where(keys), f"line {node.start_mark.line + 1}: {message}"))

    def size(self, node: yaml.Node, keys: list[str]) -> int:
        """Expanded node count below `node`, checking keys and scalars of each distinct node once."""
        known = self.sizes.get(id(node))
        if known is not None:
            return known
        if id(node) in self.active:
            self.problem(keys, node, "an alias refers to a node that contains it (a cycle)")
            return MAX_EXPANDED_NODES + 1
        if len(keys) > MAX_DEPTH:
            self.problem(keys, node, f"nested deeper than {MAX_DEPTH} levels")
            return MAX_EXPANDED_NODES + 1
        if node.tag in _FOREIGN_TAGS:
            self.problem(keys, node, f"!!{_FOREIGN_TAGS[node.tag]} values are not config values; write plain text")
            return 1
        self.active.add(id(node))
        total = 1
        if isinstance(node, yaml.ScalarNode):
            if len(node.value) > MAX_SCALAR_CHARS:
                self.problem(
                    keys, node, f"value is {len(node.value):,} characters; at most {MAX_SCALAR_CHARS:,} allowed"
                )
            elif node.tag == _INT_TAG and len(node.value) > MAX_INT_CHARS:
                # Bounded before PyYAML calls int(): past 4,300 digits CPython raises ValueError (a traceback), and
                # no count, size or id in a stack needs more than a few digits.
                self.problem(
                    keys, node, f"a number written with {len(node.value):,} characters; at most {MAX_INT_CHARS}"
                )
            elif node.tag == _BOOL_TAG and node.value not in _YAML12_BOOLS:
                self.problem(
                    keys,
                    node,
                    f"{node.value}: this reader (YAML 1.1) takes it as "
                    f"{str(yaml.SafeLoader.bool_values[node.value.lower()]).lower()}, Pulumi's (YAML 1.2) as the text "
                    f"{node.value!r}; allowed: true or false for a switch (quote it for text)",
                )
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                total += self.size(item, [*keys, str(index)])
                if total > MAX_EXPANDED_NODES:
                    break
        elif isinstance(node, yaml.MappingNode):
            first_line: dict[str, int] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:  # `<<: *defaults` merges; later keys override it on purpose
                    total += self.size(value_node, keys)
                    continue
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR_TAG:
                    text = key_node.value if isinstance(key_node, yaml.ScalarNode) else "a mapping or list"
                    self.problem(
                        keys, key_node, f"key {text!r} is not a string (YAML reads it as {_kind(key_node)}); quote it"
                    )
                    continue
                name = key_node.value
                line = key_node.start_mark.line + 1
                if name in first_line:
                    self.problem(
                        [*keys, name],
                        key_node,
                        f"duplicate key (first on line {first_line[name]}): YAML would keep only the last value "
                        f"({value_node.value if isinstance(value_node, yaml.ScalarNode) else 'this one'!r}), "
                        "and Pulumi refuses the file; keep one",
                    )
                first_line.setdefault(name, line)
                total += 1 + self.size(value_node, [*keys, name])
                if total > MAX_EXPANDED_NODES:
                    break
        self.active.discard(id(node))
        self.sizes[id(node)] = total
        return total


def _kind(node: yaml.Node) -> str:
    names = {
        "tag:yaml.org,2002:bool": "a boolean",
        "tag:yaml.org,2002:int": "a number",
        "tag:yaml.org,2002:float": "a number",
        "tag:yaml.org,2002:null": "null",
        "tag:yaml.org,2002:timestamp": "a date",
    }
    return names.get(node.tag, "a mapping or list" if not isinstance(node, yaml.ScalarNode) else "not a string")


def load_yaml(text: str, source: str, *, config_paths: bool = False, base_path: str | None = None) -> Any:
    """Parse one YAML document after the checks above; every failure is a SpecError naming `source`
    or the config path of the offending key: with `config_paths` the document is a stack file
    (`config.accelstack:training.nodes` -> `training.nodes`); a `--set` value sits at `base_path`."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        raise SpecError(
            [Problem(source, f"is larger than {MAX_DOCUMENT_BYTES // 1024} KiB; a stack's config is a few KB")]
        )
    loader = None
    try:
        loader = _Loader(text)
        node = loader.get_single_node()
        if node is None:
            return None
        checker = _Checker(source, config_paths, base_path)
        expanded = checker.size(node, [])
        if checker.problems:
            raise SpecError(checker.problems)
        if expanded > MAX_EXPANDED_NODES:
            raise SpecError(
                [Problem(source, f"aliases expand to more than {MAX_EXPANDED_NODES:,} values; write the values out")]
            )
        return loader.construct_document(node)
    except RecursionError:
        raise YamlSyntaxError([Problem(source, "not valid YAML: nested too deeply")]) from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise YamlSyntaxError(
            [Problem(source, f"not valid YAML{line}: {getattr(exc, 'problem', None) or exc}")]
        ) from None
    finally:
        if loader is not None:
            loader.dispose()
