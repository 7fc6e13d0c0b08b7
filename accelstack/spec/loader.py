"""Config -> StackSpec: from a stack file, Pulumi config values, and `--set` overrides.

Every failure becomes a `SpecError` listing `Problem`s with config paths; nothing here raises
anything else for bad input, so callers never show a traceback for a user's mistake.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from accelstack.clouds import registry
from accelstack.spec.accounts import Account, account_model
from accelstack.spec.base import UNSAFE_TEXT_ERROR, UNSAFE_TEXT_ITEM
from accelstack.spec.input_files import InputFileError, read_text
from accelstack.spec.json_input import JsonInputError, JsonSyntaxError, load_json
from accelstack.spec.landing import (
    AWS_PARENT_ID,
    AZURE_PARENT_ID,
    GCP_PARENT_ID,
    OCI_COMPARTMENT_PATH,
    OCI_PARENT_ID,
    LandingStack,
)
from accelstack.spec.models import (
    ADAPTER_NAME_PATTERN,
    PARTITION_NAME_PATTERN,
    STACK_NAME_PATTERN,
    URI_PATTERN,
    WORKLOAD_MODELS,
    StackSpec,
    validate_stack,
)
from accelstack.spec.problems import Level, Problem, SpecError, did_you_mean
from accelstack.spec.yaml_input import MAX_DOCUMENT_BYTES, YamlSyntaxError, load_yaml

NAMESPACE = "accelstack"
# `landing`: a workload stack's landing stack; `organization`: a landing stack's accounts (accelstack.spec.landing).
TOP_KEYS = ("cloud", "workload", "account", "separation", "training", "serving", "landing", "organization")
WORKLOADS = (*WORKLOAD_MODELS, "landing")
MAX_INDEX_DIGITS = 6  # no list in a stack has a million items; int() of 4,300+ digits raises instead
# The AWS provider's Region in the same stack file; accelstack deploys to account.region. Checked for the
# clouds whose stacks use the `aws` provider package (Cloud.pulumi_packages).
# Keys that were renamed: the old spelling gets an error saying the new one, not "unknown key".
RENAMED_KEYS: dict[tuple[str | int, ...], str] = {
    ("training", "storage", "lustre", "deploymentType"): (
        "renamed: the parallel file system's tier has the same key on every cloud; write tier (same values, "
        "e.g. tier: PERSISTENT_2)"
    ),
    ("serving", "loadBalancer", "certificateArn"): (
        "renamed: the HTTPS certificate has the same key on every cloud; write certificate (same value, "
        "e.g. certificate: arn:aws:acm:us-east-1:222222222222:certificate/...)"
    ),
}


def stack_name_of(path: Path) -> str:
    """`stacks/Pulumi.aws-training.yaml` -> `aws-training`."""
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        return name[len("Pulumi.") :].rsplit(".", 1)[0]
    return path.stem


def read_stack_file(path: Path) -> dict[str, Any]:
    """The `accelstack:*` keys of a Pulumi stack file, namespace stripped."""
    return _read_stack_config(path)[0]


def read_stack_config(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the `accelstack:*` keys, namespace stripped; the file's other keys, e.g. `oci:region`)."""
    return _read_stack_config(path)


def _read_stack_config(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the `accelstack:*` keys, namespace stripped; the file's other namespaced keys, e.g. `aws:region`)."""
    try:
        # The size limit applies before reading: a 200 MB file or /dev/zero is refused, not loaded.
        text = read_text(path, str(path), MAX_DOCUMENT_BYTES)
    except InputFileError as error:
        raise SpecError([Problem(error.source, error.message)]) from None
    doc = load_yaml(text, str(path), config_paths=True)
    if not isinstance(doc, dict) or not isinstance(doc.get("config", {}), dict):
        raise SpecError([Problem(str(path), "a stack file is a mapping with a `config:` mapping")])
    raw: dict[str, Any] = {}
    problems = []
    config = doc.get("config") or {}
    for key, value in config.items():
        namespace, _, name = str(key).partition(":")
        if namespace != NAMESPACE:
            continue  # provider and pulumi keys belong to Pulumi
        if name not in TOP_KEYS:
            problems.append(
                Problem(
                    f"{NAMESPACE}:{name}", f"unknown key{did_you_mean(name, TOP_KEYS)}; allowed: {', '.join(TOP_KEYS)}"
                )
            )
            continue
        raw[name] = value
    if problems:
        raise SpecError(problems)
    settings = {
        str(key): value for key, value in config.items() if ":" in str(key) and not str(key).startswith(f"{NAMESPACE}:")
    }
    return raw, settings


def parse_override(text: str) -> tuple[str, Any]:
    """`training.nodes.count=64` -> ("training.nodes.count", 64); the value is read as YAML (text
    that is not valid YAML, like `[1, 2`, stays a string), with a stack file's limits."""
    path, sep, value = text.partition("=")
    if not sep or not path.strip():
        raise SpecError([Problem("--set", f"expected path=value, got {text!r}")])
    try:
        parsed = load_yaml(value, path.strip(), base_path=path.strip()) if value.strip() else ""
    except YamlSyntaxError:
        parsed = value
    return path.strip(), parsed


def override_key_problem(path: str) -> Problem | None:
    """Why a `--set` path does not start at an accelstack key, or None: a stack file's other keys (aws:region,
    azure-native:location) are Pulumi provider config, which accelstack neither reads as a spec key nor writes, and
    the stack's name is its file's."""
    head = path.split(".", 1)[0]
    allowed = ", ".join(TOP_KEYS)
    if "" in path.split("."):  # `.`, `training..count`, `serving.`: no key to name, so the problem names --set
        return Problem("--set", f"{path!r} has an empty key; write keys joined by '.', starting at one of: {allowed}")
    if ":" in head:
        return Problem(
            head,
            f"Pulumi provider config, not an accelstack key: --set changes the accelstack: keys ({allowed}); set "
            f"{head} in the stack file's config block or with `pulumi config set {head} VALUE`",
        )
    if head not in TOP_KEYS:
        return Problem(head, f"unknown key{did_you_mean(head, TOP_KEYS)}; allowed: {allowed}")
    return None


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `--set` overrides; a numeric key indexes a list (`training.scheduler.partitions.0.maxTime`). A path
    may start with the namespace (`accelstack:training.nodes.count`), as the stack file spells the key."""
    result = copy.deepcopy(raw)
    for text in overrides:
        path, value = parse_override(text)
        path = path.removeprefix(f"{NAMESPACE}:")
        problem = override_key_problem(path)
        if problem is not None:
            raise SpecError([problem])
        keys = path.split(".")
        node: Any = result
        for depth, key in enumerate(keys):
            where = ".".join([*keys[:depth], key if len(key) <= 20 else f"{key[:17]}..."])
            last = depth == len(keys) - 1
            if isinstance(node, list):
                # ASCII digits only: str.isdigit() is true for `٣` and `²` too, and int() reads the first as 3.
                if not (key.isascii() and key.isdigit()) or len(key) > MAX_INDEX_DIGITS or int(key) >= len(node):
                    raise SpecError([Problem(where, f"is not an index of this list; allowed: 0 to {len(node) - 1}")])
                index: Any = int(key)
            elif isinstance(node, dict):
                index = key
                if not last and node.get(key) is None:
                    node[key] = {}
            else:
                parent = ".".join(keys[:depth])
                raise SpecError([Problem(parent, "is not a mapping or list; cannot --set below it")])
            if last:
                node[index] = value
            else:
                node = node[index]
    return result


def _path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "accelstack"


# Regex patterns in the models, said in words with an example (a raw regex helps nobody).
PATTERN_HINTS = {
    URI_PATTERN: "is not a URI; write scheme://bucket[/prefix], e.g. {example}",
    PARTITION_NAME_PATTERN: (
        "is not a Slurm partition name: a letter, then up to 30 letters, digits, '_' or '-' (e.g. gpu, long-runs)"
    ),
    ADAPTER_NAME_PATTERN: "is not an adapter name: lowercase letters, digits and '-', at most 63, e.g. support-v2",
    STACK_NAME_PATTERN: "is not a stack name: lowercase letters, digits and '-', at most 40, e.g. prod-training",
    # A landing stack's organization.parentId, per cloud (accelstack.spec.landing.ORGANIZATION_MODELS).
    AWS_PARENT_ID: "is not an AWS parent: aws takes a root (r-...) or an OU (ou-...)",
    GCP_PARENT_ID: "is not a GCP parent: gcp takes organizations/<number> or folders/<number>",
    AZURE_PARENT_ID: (
        "is not a management group id: azure takes up to 90 letters, digits, '-', '_', '(', ')' or '.' (not last)"
    ),
    OCI_PARENT_ID: "is not an OCI parent: oci takes the tenancy or a compartment OCID (ocid1.compartment.oc1..<id>)",
    OCI_COMPARTMENT_PATH: "is not a compartment path: names of letters, digits, '.', '-' or '_' joined by ':' (Parent:Child)",
}
# Types whose pydantic message does not repeat the value.
ECHO_INPUT_TYPES = {
    "int_parsing": "is not a whole number",
    "int_type": "is not a whole number",
    "int_from_float": "is not a whole number",
    "float_parsing": "is not a number",
    "float_type": "is not a number",
    "finite_number": "is not a finite number",
    "bool_parsing": "is not true or false",
    "bool_type": "is not true or false",
    "string_type": "is not text",
    "list_type": "is not a list",
    "model_type": "is not a mapping",
    "model_attributes_type": "is not a mapping",
    "dict_type": "is not a mapping",
}


def _shown(value: Any, limit: int = 60) -> str:
    """A value as the user wrote it, shortened: messages must stay one readable line."""
    written = getattr(value, "written", None)  # accelstack.spec.yaml_input.WrittenInt
    text = written if written is not None else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _keys_at(loc: tuple[Any, ...], root: type[BaseModel], account: type[Account] | None = None) -> list[str] | None:
    """The config keys allowed in the mapping at `loc` (a model's camelCase aliases), or None; `account`
    is the model of the cloud's account block (the field's own type is only the base)."""
    if account is not None and loc == ("account",):
        return account.keys()
    annotation: Any = root
    for part in loc:
        annotation = _model_in(annotation)
        if annotation is None:
            return None
        if isinstance(part, int):
            continue  # list item: _model_in unwrapped list[...] already
        fields = {field.alias or name: field for name, field in annotation.model_fields.items()}
        if part not in fields:
            return None
        annotation = fields[part].annotation
    model = _model_in(annotation)
    return [field.alias or name for name, field in model.model_fields.items()] if model else None


def _model_in(annotation: Any) -> Any:
    """The pydantic model inside `X`, `X | None` or `list[X]`, or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _account_of(data: dict[str, Any] | None) -> type[Account] | None:
    cloud = (data or {}).get("cloud")
    if not isinstance(cloud, str) or cloud not in registry.names():
        return None
    try:
        return account_model(cloud)
    except (ValueError, TypeError, ImportError, AttributeError):
        return None


def problems_from_validation(exc: ValidationError, data: dict[str, Any] | None = None) -> list[Problem]:
    """Config-path problems from pydantic's errors; `data` (the raw config) names the cloud, whose
    account block's keys the messages list."""
    errors = exc.errors(include_url=False)
    workload = (data or {}).get("workload")
    root = WORKLOAD_MODELS.get(workload) if isinstance(workload, str) else None
    account = _account_of(data)
    cloud = (data or {}).get("cloud")
    # A misspelt key is reported once, as "unknown key (did you mean ...)", not also as its missing original.
    suggested: set[tuple[Any, ...]] = set()
    messages: list[tuple[tuple[Any, ...], str]] = []
    for error in errors:
        loc = tuple(error["loc"])
        if root is not None and loc[:1] == (workload,):
            loc = loc[1:]  # the union's tag: the workload's model, not a config key
        value = error.get("input")
        message = error["msg"].removeprefix("Value error, ")
        pattern = (error.get("ctx") or {}).get("pattern")
        if error["type"] == UNSAFE_TEXT_ERROR:
            item = (error.get("ctx") or {}).get(UNSAFE_TEXT_ITEM)
            loc = loc if item is None else (*loc, item)  # the list item or mapping key that holds the text
        elif error["type"] in ("union_tag_not_found", "union_tag_invalid"):
            loc = ("workload",)
            if error["type"] == "union_tag_invalid":
                tag = str(error["ctx"]["tag"])
                hint = did_you_mean(tag, WORKLOADS) if isinstance(workload, str) else ""  # a list is no misspelling
                message = f"{tag} is not allowed{hint}; allowed: {', '.join(WORKLOADS)}"
            else:
                message = f"required; allowed: {', '.join(WORKLOADS)}"
        elif error["type"] == "extra_forbidden" and len(loc) == 1 and loc[0] in WORKLOADS:
            message = (
                f"workload is {workload!r}: a {workload} stack has no {loc[0]} block (one workload per stack); "
                f"remove accelstack:{loc[0]}"
            )
        elif error["type"] == "extra_forbidden" and loc in RENAMED_KEYS:
            message = RENAMED_KEYS[loc]
        elif error["type"] == "extra_forbidden":
            allowed = (_keys_at(loc[:-1], root, account) if root else None) or []
            if not loc[:-1]:  # the stack's name comes from its file, not a key
                allowed = [key for key in allowed if key in TOP_KEYS]
            hint = did_you_mean(str(loc[-1]), allowed)
            message = f"unknown key{hint}" + (f"; allowed: {', '.join(allowed)}" if allowed and not hint else "")
            if loc[:-1] == ("account",) and account is not None and not hint:
                message = f"unknown key: the {cloud} account block has {', '.join(allowed)}"
            if hint:
                suggested.add((*loc[:-1], hint.split("'")[1]))
        elif error["type"] == "missing":
            message = "required"
            if loc[:-1] == ("account",) and account is not None:
                message = f"required: the {cloud} account block has {', '.join(account.keys())}"
        elif error["type"] == "literal_error":
            expected = error["ctx"]["expected"]
            choices = re.findall(r"'([^']*)'", expected) or [part.strip() for part in re.split(r",| or ", expected)]
            message = f"{_shown(value)} is not allowed{did_you_mean(str(value), choices)}; allowed: {expected}"
        elif error["type"] == "string_pattern_mismatch" and pattern in PATTERN_HINTS:
            # The example keeps the scheme the user wrote (gs://, s3://); without one, s3:// (the first cloud's).
            scheme, separator, rest = str(value).partition("://")
            if not (separator and re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme)):
                scheme, rest = "s3", str(value)
            bucket = re.sub(r"[^a-z0-9.-]", "-", rest.lower()).strip("-.")[:40] or "bucket"
            message = f"{_shown(value)} " + PATTERN_HINTS[pattern].format(example=f"{scheme}://{bucket}/")
        elif error["type"] in ECHO_INPUT_TYPES:
            message = f"{_shown(value)} {ECHO_INPUT_TYPES[error['type']]}"
        else:
            expected = (error.get("ctx") or {}).get("expected")
            if expected and str(expected) not in message:
                message += f"; allowed: {expected}"
            if error["type"].startswith(("greater_than", "less_than", "too_long", "too_short", "string_too")):
                message = f"{_shown(value)}: {message[0].lower()}{message[1:]}"
        messages.append((loc, message))
    return [
        Problem(_path(loc), message)
        for loc, message in messages
        if not (message.startswith("required") and loc in suggested)
    ]


def not_deployable_problem(spec: StackSpec) -> Problem | None:
    """The problem with deploying (or previewing) a stack of a cloud that has no components (for its workload) yet."""
    cloud = registry.get(spec.cloud)
    if cloud.deploys(spec.workload):
        return None
    if cloud.deployable:
        return Problem(
            "workload",
            f"{spec.workload!r} stacks are not deployable on {spec.cloud} yet (its components build "
            f"{', '.join(sorted(cloud.workloads))}): validate, size and cost work, preview and deploy do not",
        )
    return Problem(
        "cloud",
        f"{spec.cloud!r} is described (catalog, prices) but not deployable yet: validate, size and cost work, "
        f"preview and deploy do not; deployable: {', '.join(registry.deployable()) or 'none'}",
    )


def provider_region_problem(
    spec: StackSpec | LandingStack, provider_settings: Callable[[str], Any] | None
) -> Problem | None:
    """The stack's provider region setting (aws:region, azure-native:location, ...) against account.region: the
    provider deploys wherever its own setting says, a landing stack's groups, policies and budgets included."""
    key = registry.get(spec.cloud).provider_region_key
    setting = provider_settings(key) if key and provider_settings else None
    if not isinstance(setting, str) or setting == spec.account.region:
        return None
    field = type(spec.account).region_key()
    return Problem(
        f"account.{field}",
        f"{spec.account.region!r} but the same stack file sets {key}: {setting!r}; accelstack deploys to "
        f"account.{field} and ignores {key}, so make them equal (or remove {key})",
    )


def parse_spec(
    raw: dict[str, Any],
    stack: str = "dev",
    *,
    strict_warnings: bool = False,
    provider_settings: Callable[[str], Any] | None = None,
    deploy: bool = False,
) -> StackSpec:
    """Validate raw config (namespace stripped) into a StackSpec, then run the rule validators.

    Raises SpecError with every ERROR-level problem (and WARNINGs too with `strict_warnings`);
    `spec_warnings(spec)` lists the WARNINGs, which are not raised. `provider_settings` looks up the stack's
    other config keys ("aws:region" -> value or None): the cloud's provider region setting
    (`Cloud.provider_region_key`) must not disagree with account.region. `deploy`: the caller previews or
    deploys the stack, which a cloud without components cannot do (`not_deployable_problem`).
    """
    from accelstack.spec.validators import run_validators  # tables import models; avoid a cycle

    data = {key: _decode(key, value) for key, value in raw.items()}
    data.setdefault("stack", stack)
    if data.get("workload") == "landing":
        # Landing stacks have their own model (accelstack.spec.landing); this caller reads workload stacks.
        raise SpecError([Problem("workload", LANDING_ELSEWHERE)])
    try:
        spec = validate_stack(data)
    except ValidationError as exc:
        raise SpecError(problems_from_validation(exc, data)) from None
    undeployable = not_deployable_problem(spec) if deploy else None
    problems = ([undeployable] if undeployable else []) + run_validators(spec)
    region_problem = provider_region_problem(spec, provider_settings)
    if region_problem is not None:
        problems.append(region_problem)
    errors = [p for p in problems if p.level is Level.ERROR or strict_warnings]
    if errors:
        raise SpecError(errors)
    return spec


def spec_warnings(spec: StackSpec) -> list[Problem]:
    from accelstack.spec.validators import run_validators

    return [p for p in run_validators(spec) if p.level is Level.WARNING]


LANDING_ELSEWHERE = (
    "landing: a landing stack makes accounts, not a workload; validate, preview and plan quotas read it, "
    "this command reads training and serving stacks"
)


def decoded(key: str, value: Any) -> Any:
    """A config value as the program reads it (structured values arrive as JSON text): `_decode`."""
    return _decode(key, value)


def _decode(key: str, value: Any) -> Any:
    """Pulumi hands structured config to programs as JSON strings (and a user may write a block as one): read with
    the same limits as any JSON a user hands over (depth, duplicate keys, NaN, integer digits); text that is not
    JSON at all stays a string, for the schema to refuse."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return load_json(value, key)
        except JsonSyntaxError:
            return value
        except JsonInputError as error:
            raise SpecError([Problem(key, f"written as JSON: {error.message}")]) from None
    return value


def load_stack(path: Path, overrides: list[str] | None = None, *, deploy: bool = False) -> StackSpec:
    raw, settings = _read_stack_config(path)
    try:
        return parse_spec(
            apply_overrides(raw, overrides or []), stack_name_of(path), provider_settings=settings.get, deploy=deploy
        )
    except SpecError as error:
        raise SpecError(blame_overrides(error.problems, overrides or [])) from None


def _clipped(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def blame_overrides(problems: list[Problem], overrides: list[str]) -> list[Problem]:
    """Say which problems a `--set` caused: its path is the problem's, or above or below it (min > max
    is reported on `serving.replicas` when `--set serving.replicas.min=40` set it)."""
    blamed = []
    for problem in problems:
        last = {text.partition("=")[0].strip(): _clipped(text.strip()) for text in overrides}  # a later --set wins
        causes = [
            text
            for path, text in last.items()
            if path
            and (problem.path == path or problem.path.startswith(path + ".") or path.startswith(problem.path + "."))
        ]
        if causes:
            problem = replace(problem, message=f"{problem.message} (from --set {'; --set '.join(causes)})")
        blamed.append(problem)
    return blamed
