"""What a deploy sends holds a user's values only as data (issue 29, inputs 1), beyond the files `render` writes.

For each shipped stack, and the variants that boot another way (AWS Batch, Azure ML, Cluster Director, nodes without
a scheduler, replicas that admit requests themselves), the preview's boot documents are read out of the resource
inputs (tests/spec/boot_documents.py). Every spec string whose value shows in one of them takes the most hostile
value its key accepts: its value, then every punctuation character and the space the key allows, then padding to the
longest the key allows (in the room the other keys leave), then a marker of its own. All keys at once, one preview:
the documents must keep the baseline's structure (YAML and JSON shapes, MIME parts, line counts), the scripts must
parse (`bash -n`), and each marker must sit where its reader takes it as data (bash quoting, unit specifiers,
environment file syntax).
"""

from __future__ import annotations

import json
import re
import string
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.engine.preview import PROGRAM, stack_config
from accelstack.examples import LANDING_EXAMPLES, WORKLOAD_EXAMPLES, example_file
from accelstack.spec.landing import parse_landing
from accelstack.spec.loader import load_stack, parse_spec, read_stack_file
from accelstack.spec.problems import SpecError
from tests.spec import boot_documents as boot
from tests.spec.test_injection import PAYLOADS, _set, _shape, strings_of

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_DIRECTOR = (
    "training.scheduler.kind=managed",
    'training.scheduler.partitions=[{"name": "gpu", "default": true}]',
)
DIRECT = ("serving.admission.kind=replica", "serving.replicas.min=1")
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    **{name: (name, ()) for name in WORKLOAD_EXAMPLES},
    "aws-batch": ("aws-training", ("training.scheduler.kind=managed",)),
    "azure-ml": ("azure-training", ("training.scheduler.kind=managed", "training.storage.lustre=null")),
    "cluster-director": ("gcp-training", CLUSTER_DIRECTOR),
    "gcp-no-scheduler": ("gcp-training", ("training.scheduler.kind=none",)),
    "aws-direct": ("aws-serving", DIRECT),
    "azure-direct": ("azure-serving", DIRECT),
    "gcp-direct": ("gcp-serving", DIRECT),
}
PUNCTUATION = string.punctuation + " "
LONGEST = 2048  # padding tried at most (the spec's longest strings are 1024 or 2048 characters)
# A value reaches a document when it shows there; shorter ones (a zone "1", "gpu") show by chance.
SHORTEST_TRACED = 4


def marker(index: int) -> str:
    return f"mk{index:03d}q"  # lowercase and digits: every grammar takes it; fixed width: no marker holds another


@cache
def stack(case: str) -> tuple[dict[str, Any], dict[str, str], str]:
    """(the spec in full, as config, with the variant applied; the Pulumi config beside it; the stack name)."""
    name, overrides = CASES[case]
    path = ROOT / "stacks" / f"Pulumi.{name}.yaml"
    _, config = stack_config(path, list(overrides))
    raw = load_stack(path, list(overrides)).model_dump(by_alias=True, mode="json")
    raw.pop("stack")
    return raw, config, name


def boot_documents(raw: dict[str, Any], config: dict[str, str], name: str) -> dict[str, boot.Document]:
    captured = capture(ROOT / PROGRAM, {**config, **config_for_pulumi(raw)}, stack=name)
    found: dict[str, boot.Document] = {}
    for resource in captured.resources:
        found |= boot.documents(resource.inputs, f"{resource.type}::{resource.name}")
    return found


def _get(raw: dict[str, Any], path: str) -> Any:
    node: Any = raw
    for key in path.split("."):
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def renamed(raw: dict[str, Any], paths: list[str], old: str, new: str) -> dict[str, Any]:
    """`raw` with `old` changed to `new` at each of `paths`, where it is the value itself or a directory above it
    (a checkpoint path under the mount path, an account named in two places: the rules that tie them hold)."""
    for path in paths:
        value = _get(raw, path)
        if value == old or value.startswith(old.rstrip("/") + "/"):
            raw = _set(raw, path, new + value[len(old) :])
    return raw


def punctuated(valid: Callable[[str], bool], value: str, mark: str) -> str | None:
    """The value with every punctuation character (and the space) the key takes after it, then `mark`; None if the
    key takes no suffix at all."""
    if not valid(value + mark):
        return None
    allowed = [char for char in PUNCTUATION if valid(value + char + mark)]
    while allowed and not valid(value + "".join(char + "a" for char in allowed) + mark):
        allowed.pop()
    return value + "".join(char + "a" for char in allowed) + mark


def padded(valid: Callable[[str], bool], value: str, mark: str) -> str:
    """The value padded before its `mark` as long as the key takes (validity is monotone in length)."""
    stem = value[: -len(mark)]
    low, high = 0, LONGEST
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if valid(stem + "a" * middle + mark) else (low, middle - 1)
    return stem + "a" * low + mark


def injected(
    raw: dict[str, Any], name: str, keys: list[str], parse: Callable[[dict[str, Any], str], Any] = parse_spec
) -> tuple[dict[str, Any], dict[str, str]]:
    """The spec with each key's hostile value, and marker -> the value it ends. Chosen one key after another on the
    spec the earlier ones left, so that together they validate (boot data limits, paths under paths): first every
    key's punctuation, then each key's padding in what room is left. `parse`: the model's reader (a landing
    stack's is `parse_landing`)."""
    every_string = [path for path, _ in strings_of(parse(raw, name), "") if path not in ("stack", "cloud")]
    edited = raw

    def change(path: str, make: Callable[[Callable[[str], bool], str, str], str | None], mark: str) -> str | None:
        nonlocal edited
        value, here = _get(edited, path), edited

        def valid(text: str) -> bool:
            try:
                parse(renamed(here, every_string, value, text), name)
            except SpecError:
                return False
            return True

        new = make(valid, value, mark)
        if new is not None:
            edited = renamed(edited, every_string, value, new)
        return new

    marks = {path: marker(index) for index, path in enumerate(keys)}
    hostile = [path for path in keys if change(path, punctuated, marks[path])]
    payloads = {marks[path]: change(path, padded, marks[path]) for path in hostile}
    return edited, {mark: value for mark, value in payloads.items() if value is not None}


def where_markers_sit(documents: dict[str, boot.Document], payloads: dict[str, str]) -> tuple[set[str], list[str]]:
    """(the markers found, each place one is not data)."""
    seen: set[str] = set()
    problems: list[str] = []
    for where, document in documents.items():
        present = [mark for mark in payloads if mark in document.text]
        seen.update(present)
        if not present:
            continue
        if document.kind == boot.SCRIPT:
            contexts = boot.shell_contexts(document.text)
            for mark in present:
                start = document.text.find(mark)
                while start >= 0:
                    problem = boot.shell_problem(payloads[mark], contexts[start])
                    if problem:
                        line = document.text[: start + len(mark)].rsplit("\n", 1)[-1]
                        problems.append(f"{where}: {problem}: {line[-200:]}")
                    start = document.text.find(mark, start + 1)
        for line in document.text.splitlines():
            for mark in (m for m in present if m in line):
                if document.kind == boot.UNIT:
                    problem = boot.unit_problem(payloads[mark], line)
                elif document.kind == boot.ENVIRONMENT:
                    problem = boot.environment_problem(line)
                else:
                    problem = None
                if problem:
                    problems.append(f"{where}: {problem}: {line[:200]}")
    return seen, problems


@pytest.mark.parametrize("case", CASES)
def test_boot_documents_keep_their_structure_and_hold_values_as_data(case: str) -> None:
    raw, config, name = stack(case)
    baseline = boot_documents(raw, config, name)
    assert baseline, "no boot document found in the preview"
    every_text = "\n".join(document.text for document in baseline.values())
    keys = [
        path
        for path, value in strings_of(parse_spec(raw, name), "")
        if path not in ("stack", "cloud", "workload") and len(value) >= SHORTEST_TRACED and value in every_text
    ]
    edited, payloads = injected(raw, name, keys)
    documents = boot_documents(edited, config, name)

    assert documents.keys() == baseline.keys()
    for where, document in documents.items():
        assert boot.structure(document) == boot.structure(baseline[where]), where
    for where, document in documents.items():
        if document.kind == boot.SCRIPT:
            checked = subprocess.run(["bash", "-n"], input=document.text, capture_output=True, text=True, check=False)
            assert checked.returncode == 0, (where, checked.stderr)
    seen, problems = where_markers_sit(documents, payloads)
    assert not problems, problems
    # A key whose value shows in a document and takes a hostile value shows it there (or the walk lost it).
    assert not keys or seen, f"no injected value reached a boot document (keys tried: {keys})"


# --- landing stacks: what they send is policy text, not boot data -------------------------------------------------
# A landing stack's strings reach guardrail documents: OCI policy and quota statements (a small language of words
# and quoted literals: docs.oracle.com/iaas/Content/Identity/policysgrammar/policy_syntax.htm and
# Quotas/Concepts/quota_policy_syntax.htm) and JSON policy documents (AWS service control policies, Azure policy
# rules). Keys that are file names of other stacks (organization.<side>.stacks) are checked against those files.
LANDING_SKIPPED = re.compile(r"^(stack|cloud|workload|organization\.(training|serving)\.stacks\.\d+)$")


@cache
def landing(name: str) -> tuple[dict[str, Any], dict[str, str]]:
    path = example_file(name, ROOT / "stacks")
    raw = parse_landing(read_stack_file(path), name).model_dump(by_alias=True, mode="json", serialize_as_any=True)
    raw.pop("stack")
    return raw, stack_config(path, [])[1]


def policy_documents(raw: dict[str, Any], config: dict[str, str], name: str) -> dict[str, tuple[str, Any]]:
    """(kind, value) of every statement list and JSON document (as text or as structured input) in the preview's
    resource inputs."""
    captured = capture(ROOT / PROGRAM, {**config, **config_for_pulumi(raw)}, stack=name)
    found: dict[str, tuple[str, Any]] = {}
    for resource in captured.resources:
        for key, value in resource.inputs.items():
            where = f"{resource.type}::{resource.name}.{key}"
            if key == "statements" and isinstance(value, list):
                found[where] = ("statements", value)
            elif isinstance(value, str) and value[:1] == "{":
                found[where] = ("json", value)
            elif isinstance(value, dict) and value:  # a policy rule, a constraint: a document as structured input
                found[where] = ("json", json.dumps(value))
    return found


def policy_structure(kind: str, value: Any) -> Any:
    """Statements: each one's words and quotes (a value that adds a word or closes a quote changes them); JSON:
    its keys and list lengths."""
    if kind == "statements":
        return [(len(statement.split()), statement.count("'"), statement.count('"')) for statement in value]
    return _shape(json.loads(value))


@pytest.mark.parametrize("name", LANDING_EXAMPLES)
def test_landing_strings_refuse_every_payload(name: str) -> None:
    """Every string key of a landing stack refuses each of test_injection's payloads (a line break, $(...),
    backticks, ';', quotes, U+2028, NEL, NUL, CR, systemd specifiers, a space, 5,000 characters), alone and after
    the key's own value."""
    raw, _ = landing(name)
    keys = [path for path, _ in strings_of(parse_landing(raw, name), "") if not LANDING_SKIPPED.match(path)]
    assert keys
    accepted = []
    for key in keys:
        value = _get(raw, key)
        for payload_name, payload in PAYLOADS.items():
            for text in (payload, value + payload):
                try:
                    parse_landing(_set(raw, key, text), name)
                except SpecError:
                    continue
                accepted.append(f"{key}: {payload_name}")
    assert not accepted, accepted


@pytest.mark.parametrize("name", LANDING_EXAMPLES)
def test_landing_policy_documents_keep_their_structure(name: str) -> None:
    """Each key whose value shows in a policy document takes the most hostile value it accepts (its punctuation,
    then its longest): every statement keeps its words and quotes, every JSON document parses to the same shape."""
    raw, config = landing(name)
    baseline = policy_documents(raw, config, name)
    assert baseline, "no policy document found in the preview"
    every_text = "\n".join(json.dumps(value) for _, value in baseline.values())
    keys = [
        path
        for path, value in strings_of(parse_landing(raw, name), "")
        if not LANDING_SKIPPED.match(path) and len(value) >= SHORTEST_TRACED and value in every_text
    ]
    edited, payloads = injected(raw, name, keys, parse_landing)
    documents = policy_documents(edited, config, name)

    assert documents.keys() == baseline.keys()
    for where, (kind, value) in documents.items():
        assert policy_structure(kind, value) == policy_structure(*baseline[where]), where
    shown = "\n".join(json.dumps(value) for _, value in documents.values())
    assert not payloads or any(mark in shown for mark in payloads), f"no injected value reached a document ({keys})"
