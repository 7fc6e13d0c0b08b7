"""A large stack export for `accelstack policy --file`, made from a shipped stack's pinned export (tests/golden).

A 20,000-resource stack is many of the same parts: the golden's resources are copied whole, each copy renaming
every name the stack derives from its own name (`aws-training-head` -> `aws-training-r7-head`: URNs, ids, ARNs,
resource-group paths, parents, dependencies and property dependencies, in one consistent rewrite) so that no two
resources share a URN, id or ARN. The Stack, its top components and the providers stay one each, as in a real
stack; the copies use them. Every copy is as legitimate as the golden (which gets no verdict), so the export gets
none either, unless violations are planted: `PLANTS` are realistic PR edits (a stateful store unprotected, an
internet-open ingress), each the same rule's mandatory verdict on the small export and on the large one.

`python tests/bench/large_export.py aws-training 20000 OUT.json [--plant]` writes one.
"""

from __future__ import annotations

import copy
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
STACK_TYPE = "pulumi:pulumi:Stack"
PROVIDER_PREFIX = "pulumi:providers:"

Doc = dict[str, Any]
# The mocks give every Azure managed identity one principal/client id; deployed, each identity has its own. Each
# copy gets its own, so that a copy's role assignments name its identities, not the golden's.
MOCKED_PRINCIPAL_IDS = ("22222222-2222-2222-2222-222222222222",)


def golden(stack: str) -> Doc:
    return json.loads((GOLDEN / f"{stack}.json").read_text())


def _name(resource: Doc) -> str:
    return str(resource["urn"]).rsplit("::", 1)[-1]


def _shared(resource: Doc, stack: str) -> bool:
    """One per stack however large: the Stack, the providers, and the components named the stack itself."""
    kind = resource["type"]
    return kind == STACK_TYPE or kind.startswith(PROVIDER_PREFIX) or _name(resource) == stack


def replicate(document: Doc, stack: str, resources: int) -> Doc:
    """An export of at least `resources` resources: whole copies of `document`'s own, each renamed."""
    every = document["deployment"]["resources"]
    shared = [r for r in every if _shared(r, stack)]
    parts = [r for r in every if not _shared(r, stack)]
    # Provider references (`URN::id`) keep naming the one provider: masked while a copy is renamed.
    masks = {f"{r['urn']}::{r.get('id', '')}": f"\x00provider{i}\x00" for i, r in enumerate(shared) if r.get("id")}
    text = json.dumps(parts)
    for reference, mask in masks.items():
        text = text.replace(json.dumps(reference)[1:-1], mask)
    copies = max(1, math.ceil((resources - len(shared)) / len(parts)))  # as copies_for
    out: list[Doc] = []
    for index in range(copies):
        renamed = text if index == 0 else text.replace(f"{stack}-", f"{stack}-r{index}-")
        for shared_id in MOCKED_PRINCIPAL_IDS if index else ():
            renamed = renamed.replace(shared_id, f"{shared_id[:-12]}{index:012x}")
        for reference, mask in masks.items():
            renamed = renamed.replace(mask, json.dumps(reference)[1:-1])
        out += json.loads(renamed)
    large = {key: value for key, value in document.items() if key != "deployment"}
    large["deployment"] = {**document["deployment"], "resources": shared + out}
    return large


def copy_name(stack: str, name: str, index: int) -> str:
    """What `replicate` calls the resource `name` in copy `index`."""
    return name if index == 0 else name.replace(f"{stack}-", f"{stack}-r{index}-", 1)


def find(document: Doc, name: str, type_token: str) -> Doc:
    found = [r for r in document["deployment"]["resources"] if r["type"] == type_token and _name(r) == name]
    assert len(found) == 1, f"{type_token} {name}: {len(found)} resources"
    return found[0]


def _sides(resource: Doc) -> list[Doc]:
    return [resource[side] for side in ("inputs", "outputs") if isinstance(resource.get(side), dict)]


def _unprotect(resource: Doc) -> None:
    assert resource["protect"], f"{resource['urn']} was not protected to begin with"
    resource["protect"] = False


def _setting(**values: Any) -> Callable[[Doc], None]:
    def apply(resource: Doc) -> None:
        for props in _sides(resource):
            props.update(copy.deepcopy(values))

    return apply


def _nsg_rule_from_internet(rule_name: str) -> Callable[[Doc], None]:
    def apply(resource: Doc) -> None:
        for props in _sides(resource):
            (rule,) = [r for r in props["securityRules"] if r["name"] == rule_name]
            rule.update(sourceAddressPrefix="Internet")

    return apply


@dataclass(frozen=True)
class Plant:
    """A realistic PR edit of one resource (named as in the golden) that `policy` must catch, mandatory."""

    name: str
    type_token: str
    edit: Callable[[Doc], None]
    policy: str


PLANTS: dict[str, list[Plant]] = {
    "aws-training": [
        Plant("aws-training-storage-checkpoints", "aws:s3/bucket:Bucket", _unprotect, "protect-stateful"),
        Plant(
            "aws-training-net-cluster",
            "aws:ec2/securityGroup:SecurityGroup",
            _setting(ingress=[{"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}]),
            "no-internet-ingress",
        ),
    ],
    "azure-training": [
        Plant("azure-training-slurmctld-state", "azure-native:compute:Disk", _unprotect, "protect-stateful"),
        Plant(
            "azure-training-net-lustre-nsg",
            "azure-native:network:NetworkSecurityGroup",
            _nsg_rule_from_internet("lustre-988"),
            "no-internet-ingress",
        ),
    ],
    "gcp-training": [
        Plant("gcp-training-checkpoints", "gcp:storage/bucket:Bucket", _unprotect, "protect-stateful"),
        Plant(
            "gcp-training-net-iap-ssh",
            "gcp:compute/firewall:Firewall",
            _setting(sourceRanges=["0.0.0.0/1", "128.0.0.0/1"]),
            "no-internet-ingress",
        ),
    ],
}


def plant(document: Doc, stack: str, copies: list[int]) -> list[tuple[str, str]]:
    """Each of the stack's plants in each of `copies` (in place); the (policy, URN) pairs a run must report."""
    expected = []
    for index in copies:
        for item in PLANTS[stack]:
            resource = find(document, copy_name(stack, item.name, index), item.type_token)
            item.edit(resource)
            expected.append((item.policy, resource["urn"]))
    return sorted(expected)


def copies_for(stack: str, resources: int) -> int:
    """How many copies of the golden `replicate(golden(stack), stack, resources)` makes (the golden's own is 0)."""
    every = golden(stack)["deployment"]["resources"]
    shared = sum(1 for r in every if _shared(r, stack))
    return max(1, math.ceil((resources - shared) / (len(every) - shared)))


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        sys.stderr.write(__doc__.rsplit("\n\n", 1)[-1])
        return 2
    stack, count, out = argv[0], int(argv[1]), Path(argv[2])
    document = replicate(golden(stack), stack, count)
    if "--plant" in argv:
        total = copies_for(stack, count)
        plant(document, stack, sorted({0, total // 2, total - 1}))
    out.write_text(json.dumps(document))
    sys.stdout.write(f"{out}: {len(document['deployment']['resources'])} resources\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
