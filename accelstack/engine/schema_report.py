"""What the packs read of each guarded kind's schema, and what is left to classify.

    python -m accelstack.engine.schema_report            # per vendor: unclassified, stale, unknown rules, unjudged counts
    python -m accelstack.engine.schema_report --unjudged # also every unjudged property, with why it matters
    python -m accelstack.engine.schema_report --trace    # also run both packs over the example stacks and one
                                                # resource per kind with every input set, recording which
                                                # policy reads which input; lists judged claims no trace
                                                # confirms and traced reads classified as inert or unjudged
    python -m accelstack.engine.schema_report --draft aws  # rows for unclassified properties, traced rules filled in

The trace wraps pulumi-policy's property proxy (`unknown_checking_proxy`) so each top-level key a policy
reads is recorded with the policy's name and the resource's kind; reads through iteration (a scan of
every input, e.g. for secrets) are recorded as a scan, not as a judgement of each key.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from accelstack.examples import LANDING_EXAMPLES
from accelstack.policies import schema

Reads = dict[tuple[str, str], set[str]]  # (kind, wire name) -> policies that read it


@contextmanager
def recording() -> Iterator[tuple[Reads, Reads]]:
    """While open, every top-level property read by a policy of a pack run in this process is recorded:
    (direct reads, reads by scanning every input)."""
    import pulumi_policy.policy as policy_module
    from pulumi_policy import proxy

    from accelstack.engine import policy_runner

    direct: Reads = defaultdict(set)
    scanned: Reads = defaultdict(set)
    current = {"policy": ""}
    original_proxy = policy_module.unknown_checking_proxy
    original_report = policy_module._PolicyAnalyzerServicer._create_report_violation

    class ScannedKey(str):
        """A key a policy got by iterating the props: indexing with it is a scan; comparing it with a name the
        policy looks for (`key in KEY_PROPS`, `key == "kmsKeyId"`) singles the property out, a read like any other."""

        __hash__ = str.__hash__
        kind = ""

        def __eq__(self, other: object) -> bool:
            equal = str.__eq__(self, other)
            if equal is True and current["policy"]:
                direct[(self.kind, str.__str__(self))].add(current["policy"])
            return equal

        def __ne__(self, other: object) -> bool:
            equal = self.__eq__(other)
            return equal if equal is NotImplemented else not equal

    class Recorded(proxy._DictProxy):
        def __init__(self, target: dict[str, Any], kind: str) -> None:
            super().__init__(target, [])
            self._kind = kind

        def __getitem__(self, key: Any) -> Any:
            if isinstance(key, ScannedKey):
                plain = str.__str__(key)
                scanned[(self._kind, plain)].add(current["policy"])
                return super().__getitem__(plain)  # type: ignore[no-untyped-call]
            if key != "__target":
                direct[(self._kind, str(key))].add(current["policy"])
            return super().__getitem__(key)  # type: ignore[no-untyped-call]

        def __iter__(self) -> Iterator[Any]:
            # Mapping.items()/values() and list(props) iterate, then index: a scan of every input.
            for key in super().__iter__():  # type: ignore[no-untyped-call]
                found = ScannedKey(key)
                found.kind = self._kind
                yield found

    def wrapped_proxy(props: dict[str, Any]) -> Any:
        # pulumi-policy builds a provider's props from `prov`, a stack resource's from `r`, else the request's; the
        # offline runner calls this through its decode-once wrapper, so the servicer's frame is a few levels up.
        kind, frame = "", sys._getframe(1)
        while frame is not None and not kind:
            locals_ = frame.f_locals
            request = locals_.get("prov") or locals_.get("r") or locals_.get("request")
            kind = getattr(request, "type", "") or ""
            frame = frame.f_back  # type: ignore[assignment]
        return Recorded(dict(original_proxy(props)["__target"]), kind)

    def wrapped_report(self: Any, response: Any, name: str, *args: Any) -> Any:
        if name != current["policy"]:
            _forget_stack_caches()
        current["policy"] = name
        return original_report(self, response, name, *args)

    # The runner swaps the servicer's proxy for its decode-once wrapper of the name it imported: patch that name too.
    policy_module.unknown_checking_proxy = wrapped_proxy
    policy_runner.unknown_checking_proxy = wrapped_proxy  # type: ignore[attr-defined]
    policy_module._PolicyAnalyzerServicer._create_report_violation = wrapped_report  # type: ignore[method-assign,assignment]
    try:
        yield direct, scanned
    finally:
        policy_module.unknown_checking_proxy = original_proxy
        policy_runner.unknown_checking_proxy = original_proxy  # type: ignore[attr-defined]
        policy_module._PolicyAnalyzerServicer._create_report_violation = original_report  # type: ignore[method-assign]


# Caches the packs keep per stack or per shared view (the access graph, the reachability view, provider and stack
# facts): the first policy to ask reads the props, later ones reuse what it read. A trace forgets them whenever the
# policy changes, so each policy's own reads are recorded.
_STACK_CACHES = {
    "access": ("_cache",),
    "reachability": ("_cache",),
    "common": ("_facts_seen", "_contexts", "_last_stack_providers"),
    "places": ("_facts",),
    "links": ("_indexes", "_of_type", "_of_kind"),
    "store_access": ("_last_integrations",),
}


_cache_module_names: tuple[int, tuple[str, ...]] = (-1, ())


def _pack_cache_module_names() -> tuple[str, ...]:
    """Names of the loaded pack modules that keep stack caches, found again only when modules were imported: a
    trace forgets the caches at every change of policy (tens of thousands of times), and scanning every loaded
    module each time (the provider SDKs bring thousands) took most of the trace's time."""
    global _cache_module_names
    loaded, names = _cache_module_names
    if loaded != len(sys.modules):
        names = tuple(
            name
            for name in list(sys.modules)
            if name.startswith(("policies.", "accelstack.policies.")) and name.rsplit(".", 1)[-1] in _STACK_CACHES
        )
        _cache_module_names = (len(sys.modules), names)
    return names


def _forget_stack_caches() -> None:
    for name in _pack_cache_module_names():
        module = sys.modules.get(name)  # looked up each time: a pack loaded again is a new module object
        for attribute in _STACK_CACHES[name.rsplit(".", 1)[-1]] if module is not None else ():
            held = getattr(module, attribute, None)
            if isinstance(held, (list, dict)):
                held.clear()


def sample_value(prop: schema.Prop) -> Any:
    """A value of the input's shape (the trace only needs readers to take the path that reads it)."""
    return {
        "bool": True,
        "number": 1,
        "enum": prop.choices[0] if prop.choices else "x",
        "list": [],
        "list-of-objects": [],
        "map": {},
        "object": {},
    }.get(prop.shape, "sample")


def with_resource(doc: dict[str, Any], kind: str, inputs: dict[str, Any], name: str = "schema-probe") -> dict[str, Any]:
    """A copy of an export with one more resource of `kind` (same provider as the export's first resource of the
    kind's package, parent the stack)."""
    changed = copy.deepcopy(doc)
    resources = changed["deployment"]["resources"]
    stack_urn = resources[0]["urn"]
    package = kind.split(":")[0]
    provider = next((r["provider"] for r in resources if r["type"].split(":")[0] == package and r.get("provider")), "")
    prefix = stack_urn.rsplit("::", 2)[0]
    resources.append(
        {
            "urn": f"{prefix}::{kind}::{name}",
            "custom": True,
            "type": kind,
            "inputs": inputs,
            "outputs": copy.deepcopy(inputs),
            "parent": stack_urn,
            "provider": provider,
            "protect": True,
        }
    )
    return changed


def minimal(doc: dict[str, Any]) -> dict[str, Any]:
    """An export with only its stack and providers."""
    kept = [r for r in doc["deployment"]["resources"] if r["type"].startswith("pulumi:")]
    return {**doc, "deployment": {**doc["deployment"], "resources": kept}}


EXAMPLES = (
    "aws-training",
    "aws-serving",
    "aws-finetune",
    "azure-training",
    "azure-serving",
    "gcp-training",
    "gcp-serving",
    "oci-training",
    "vultr-serving",
)
CLOUD_OF_STACK = {"aws": "aws", "azure": "azure-native", "gcp": "gcp", "oci": "oci", "vultr": "vultr"}


@cache
def example_previews() -> dict[str, Any]:
    """stack name -> PreviewResult of every shipped example stack."""
    from pathlib import Path

    from accelstack.engine.preview import preview_stack

    repo = Path(__file__).resolve().parents[2]
    return {name: preview_stack(repo / "stacks" / f"Pulumi.{name}.yaml", [], repo) for name in EXAMPLES}


@cache
def landing_previews() -> tuple[Any, ...]:
    """PreviewResult of each landing example (read by the trace with its plan as the packs' context)."""
    from pathlib import Path

    from accelstack.engine.preview import preview_stack

    repo = Path(__file__).resolve().parents[2]
    return tuple(preview_stack(repo / "stacks" / f"Pulumi.{name}.yaml", [], repo) for name in LANDING_EXAMPLES)


def trace(
    previews: dict[str, Any],
    probe: Callable[[str], bool] = lambda kind: True,
    all_tokens: bool = True,
    alone: bool = False,
) -> tuple[Reads, Reads, list[str]]:
    """Both packs over every example export, and over each cloud's training export (`alone`: only its stack and
    providers, faster) plus one resource of each security kind with every input set: (direct reads, scans,
    kinds whose probe crashed a pack)."""
    from accelstack.engine.pack_context import landing_context
    from accelstack.engine.policy_runner import policy_verdicts

    crashed: list[str] = []
    with recording() as (direct, scanned):
        for result in previews.values():
            policy_verdicts(result.export, result.spec)
        for result in landing_previews():
            policy_verdicts(result.export, None, context=landing_context(result.spec, result.landing_plan))
        for package in schema.SDK_MODULES:
            base = next(r for n, r in previews.items() if CLOUD_OF_STACK[n.split("-")[0]] == package)
            doc = minimal(base.export) if alone else base.export
            for kind, tokens in schema.security_kinds(package).items():
                if not probe(kind):
                    continue
                inputs = {p.wire: sample_value(p) for p in schema.properties(kind).values()}
                for token in tokens if all_tokens else tokens[:1]:
                    try:
                        policy_verdicts(with_resource(doc, token, inputs), base.spec)
                    except Exception as error:  # noqa: BLE001  # a reader crashing on a shape the SDK accepts (issue 28, item 7)
                        crashed.append(f"{token}: {type(error).__name__}: {error}"[:300])
    return direct, scanned, crashed


def traced_rules(reads: Reads, kind: str, wire: str) -> set[str]:
    """Policies that read `wire` of `kind` or of any tabled token of the same class."""
    tokens = {kind, *schema.security_kinds(kind.split(":")[0]).get(kind, ())}
    return {p for token in tokens for p in reads.get((token, wire), set()) if p}


def untraced_claims(package: str, reads: Reads) -> list[str]:
    """Judged classifications whose rule the trace never saw read the property."""
    found = []
    for kind, props in schema.classified(package).items():
        for wire, verdict in props.items():
            for rule in schema.rules_of(verdict):
                if rule not in traced_rules(reads, kind, wire):
                    found.append(f"{kind} {wire}: {rule} (read by {sorted(traced_rules(reads, kind, wire)) or 'none'})")
    return found


def read_but_not_judged(package: str, reads: Reads) -> list[str]:
    """Traced reads of a property classified as inert or unjudged (a reader was added: classify it)."""
    found = []
    judged, open_ = schema.classified(package), schema.unjudged(package)
    for kind in schema.security_kinds(package):
        for wire in schema.properties(kind):
            rules = traced_rules(reads, kind, wire)
            verdict = judged.get(kind, {}).get(wire, "")
            if rules and (verdict.startswith(schema.INERT) or wire in open_.get(kind, {})):
                found.append(f"{kind} {wire}: read by {sorted(rules)}")
    return found


def draft(package: str, reads: Reads) -> Iterable[str]:
    """Rows for the classification file: every unclassified property, its traced rules or a placeholder."""
    judged, open_ = schema.classified(package), schema.unjudged(package)
    for kind in schema.security_kinds(package):
        missing = [w for w in schema.properties(kind) if w not in judged.get(kind, {}) and w not in open_.get(kind, {})]
        if missing:
            yield f'    "{kind}": {{'
            for wire in missing:
                rules = ", ".join(sorted(traced_rules(reads, kind, wire)))
                yield f'        "{wire}": "{rules or "TODO"}",  # {schema.properties(kind)[wire].shape}'
            yield "    },"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m accelstack.engine.schema_report", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--unjudged", action="store_true", help="list every unjudged property")
    parser.add_argument("--trace", action="store_true", help="check judged claims against traced reads")
    parser.add_argument("--draft", choices=sorted(schema.SDK_MODULES), help="print rows for unclassified properties")
    args = parser.parse_args(argv)
    reads: Reads = {}
    if args.trace or args.draft:
        reads, _, crashed = trace(example_previews())
        for line in crashed:
            print(f"CRASH {line}")
    if args.draft:
        print("\n".join(draft(args.draft, reads)))
        return 0
    failed = False
    for package in schema.SDK_MODULES:
        found = schema.problems(package)
        open_ = schema.unjudged(package)
        kinds = schema.security_kinds(package)
        total = sum(len(schema.properties(k)) for k in kinds)
        count = sum(len(v) for k, v in open_.items() if k in kinds)
        print(f"{package}: {len(kinds)} kinds, {total} properties, {count} unjudged")
        for title, table in (
            ("unclassified", found.unclassified),
            ("stale", found.stale),
            ("unknown rule", found.unknown_rules),
            ("both judged and unjudged", found.both),
        ):
            for kind, names in table.items():
                failed = True
                print(f"  {title}: {kind}: {', '.join(names)}")
        for kind in found.unlisted_kinds:
            print(f"  no table: {kind}")
        if args.unjudged:
            for kind, props in open_.items():
                for wire, why in props.items():
                    print(f"  unjudged: {kind} {wire}: {why}")
        if args.trace:
            for line in untraced_claims(package, reads):
                failed = True
                print(f"  claimed, never read: {line}")
            for line in read_but_not_judged(package, reads):
                print(f"  read, classified inert/unjudged: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
