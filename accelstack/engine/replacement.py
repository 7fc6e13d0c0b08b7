"""What a config edit does to an existing stack: which resources `pulumi up` would update, replace (and
in which order) or delete, from the provider's replace-forcing properties.

Two captures of the same program: the stack as deployed, then the edited config under a mock cloud
that answers as the engine does for a stack that already exists (`ExistingStackCloud`): a property in
`ignoreChanges` keeps its deployed value, and a resource whose replace-forcing input changed gets a new
id, so a replacement upstream (a network, a subnet) reaches what references it downstream (a file
system in that subnet). `plan_changes` then compares the two registrations of each URN.

Where the replace-forcing lists come from: the installed Python SDKs do not carry which inputs force a
replacement, so each cloud declares them for every type token its components register, with the provider
source that says so (`Cloud.replace_rules`, in the cloud's own folder); the engine reads the union over the
registered clouds (`accelstack.engine.cloud_tables`). A type no registered cloud tables is reported as not
known (`Change.known`), never as a plain update.

Replacement order (pulumi-terraform-bridge pkg/tfbridge `Diff` and `nameRequiresDeleteBeforeReplace`):
create-first, unless the program sets `deleteBeforeReplace`, or it sets the resource's auto-name property
(`name`, or the one its cloud tables in `ReplaceRules.auto_name`) itself: the replacement would need the
name the old one still holds, so the old one is deleted first. A protected resource is never replaced nor
deleted: `pulumi up` stops with "resource is protected" (https://www.pulumi.com/docs/iac/concepts/options/protect/).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi

from accelstack.engine.capture import Capture, Registration, capture
from accelstack.engine.cloud_tables import replace_rules
from accelstack.engine.export import redact
from accelstack.testing import mocks_for_config

Props = dict[str, Any]  # a resource's inputs or outputs, as the engine passes them

PROVIDER_PREFIX = "pulumi:providers:"

CREATE, UPDATE, REPLACE, DELETE, SAME = "create", "update", "replace", "delete", "same"
CREATE_FIRST, DELETE_FIRST = "create-first", "delete-first"


def known_type(type_token: str) -> bool:
    """Whether a registered cloud tables the replace-forcing inputs of `type_token` (else a change to it is
    reported as not known rather than as an update)."""
    return type_token in replace_rules().forcing


def _at(props: dict[str, Any], path: str) -> Any:
    """The input at a dotted path (`properties.properties.vmSize`: a setting nested in an object whose other
    members update in place); None where the path ends early."""
    value: Any = props
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def replacing_changes(type_token: str, old: dict[str, Any], new: dict[str, Any], ignored: list[str]) -> list[str]:
    """The replace-forcing inputs that differ between two registrations of one resource."""
    rules = replace_rules()
    changed = [
        prop for prop in rules.forcing.get(type_token, ()) if prop not in ignored and _at(old, prop) != _at(new, prop)
    ]
    switch, props = rules.forcing_when.get(type_token, ("", ()))
    if new.get(switch) is True:
        changed += [prop for prop in props if prop not in ignored and old.get(prop) != new.get(prop)]
    for prop in rules.shrink.get(type_token, ()):
        before, after = old.get(prop), new.get(prop)
        if prop not in ignored and before is not None and after is not None and after < before:
            changed.append(prop)
    return changed


def auto_name_property(type_token: str) -> str:
    return replace_rules().auto_name.get(type_token, "name")


class ExistingStackCloud(pulumi.runtime.Mocks):
    """A cloud's mocks (`cloud`) answering as the engine does for a stack that already exists (`previous` =
    what the first deployment registered, by type and name): ignored properties keep their old values, and
    a resource whose replace-forcing input changed is a new physical resource (a new id)."""

    def __init__(
        self,
        cloud: pulumi.runtime.Mocks,
        previous: dict[tuple[str, str], tuple[Props, Props, list[str]]] | None = None,
    ) -> None:
        self.cloud = cloud
        self.previous = previous or {}
        self.answered: dict[tuple[str, str], tuple[Props, Props]] = {}  # (inputs, outputs) by type and name

    @classmethod
    def for_config(
        cls, config: dict[str, str], previous: dict[tuple[str, str], tuple[Props, Props, list[str]]] | None = None
    ) -> ExistingStackCloud:
        return cls(mocks_for_config(config), previous)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[Props, list[tuple[str, str]] | None]:
        answer: tuple[Props, list[tuple[str, str]] | None] = self.cloud.call(args)
        return answer

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, Props]:
        resource_id, outputs = self.cloud.new_resource(args)
        key = (args.typ, args.name)
        if key in self.previous:
            old_inputs, old_outputs, ignored = self.previous[key]
            for prop in ignored:
                if prop in old_outputs:
                    outputs[prop] = old_outputs[prop]
            # Inputs against inputs: an auto-named property (a bucket's name) is absent from both.
            if replacing_changes(args.typ, old_inputs, dict(args.inputs), ignored):
                resource_id = f"{args.name}-replacement-id"
        self.answered[key] = (dict(args.inputs), outputs)
        return resource_id, outputs

    def previous_for_edit(self, deployed: Capture) -> dict[tuple[str, str], tuple[Props, Props, list[str]]]:
        """What this cloud answered for `deployed`, as the `previous` of the next capture."""
        ignored = {(r.type, r.name): r.ignore_changes for r in deployed.resources}
        return {key: (inputs, outputs, ignored.get(key, [])) for key, (inputs, outputs) in self.answered.items()}


def capture_edit(
    program: Path, config: dict[str, str], edited_config: dict[str, str], *, stack: str, project: str = "accelstack"
) -> tuple[Capture, Capture]:
    """(the stack as deployed from `config`, the same stack after `pulumi up` with `edited_config`)."""
    cloud = ExistingStackCloud.for_config(config)
    deployed = capture(program, config, project=project, stack=stack, mocks=cloud)
    edited_cloud = ExistingStackCloud.for_config(edited_config, cloud.previous_for_edit(deployed))
    edited = capture(program, edited_config, project=project, stack=stack, mocks=edited_cloud)
    return deployed, edited


@dataclass
class Change:
    """What `pulumi up` does to one resource."""

    urn: str
    type: str
    name: str
    action: str  # create | update | replace | delete | same
    changed: list[str] = field(default_factory=list)  # input properties that differ
    replacing: list[str] = field(default_factory=list)  # of those, the replace-forcing ones ("provider" too)
    order: str | None = None  # replace: create-first | delete-first
    protect: bool = False
    retain_on_delete: bool = False
    known: bool = True  # the replace-forcing properties of this type are tabled
    before: dict[str, Any] = field(default_factory=dict)  # changed properties: deployed value
    after: dict[str, Any] = field(default_factory=dict)  # changed properties: edited value

    @property
    def blocked(self) -> bool:
        """`pulumi up` refuses to replace or delete a protected resource (and stops)."""
        return self.protect and self.action in (REPLACE, DELETE)

    @property
    def tags_only(self) -> bool:
        return self.action == UPDATE and set(self.changed) <= replace_rules().tag_properties

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"urn": self.urn, "type": self.type, "name": self.name, "action": self.action}
        if self.changed:
            document["changed"] = self.changed
            document["before"] = self.before
            document["after"] = self.after
        if self.action == REPLACE:
            document["replacing"] = self.replacing
            document["order"] = self.order
        document["protect"] = self.protect
        if self.retain_on_delete:
            document["retainOnDelete"] = True
        document["blocked"] = self.blocked
        if not self.known:
            document["replaceForcingKnown"] = False
        return document


def _replace_order(new: Registration) -> str:
    explicit_name = auto_name_property(new.type) in new.inputs
    return DELETE_FIRST if new.delete_before_replace or explicit_name else CREATE_FIRST


def plan_changes(deployed: list[Registration], edited: list[Registration]) -> list[Change]:
    """One Change per URN of either capture (custom resources and providers; components hold no
    cloud state), sorted by URN."""
    before = {r.urn: r for r in deployed if r.custom}
    after = {r.urn: r for r in edited if r.custom}
    replaced_providers: set[str] = set()
    changes: dict[str, Change] = {}
    # Providers first: a replaced provider replaces every resource it manages.
    for urn in sorted(set(before) | set(after), key=lambda u: (not (after.get(u) or before[u]).is_provider, u)):
        old, new = before.get(urn), after.get(urn)
        if old is None:
            assert new is not None  # the URN is in one capture or the other
            changes[urn] = Change(urn, new.type, new.name, CREATE, protect=new.protect, known=known_type(new.type))
            continue
        if new is None:
            changes[urn] = Change(
                urn,
                old.type,
                old.name,
                DELETE,
                protect=old.protect,
                retain_on_delete=old.retain_on_delete,
                known=known_type(old.type),
            )
            continue
        changed = sorted(
            prop
            for prop in set(old.inputs) | set(new.inputs)
            if prop not in new.ignore_changes and old.inputs.get(prop) != new.inputs.get(prop)
        )
        replacing = replacing_changes(new.type, old.inputs, new.inputs, new.ignore_changes)
        # The component's own replaceOnChanges (Pulumi: a diff under one of these paths is a replacement).
        replacing += [
            prop
            for prop in new.replace_on_changes
            if prop not in replacing
            and prop not in new.ignore_changes
            and _at(old.inputs, prop) != _at(new.inputs, prop)
        ]
        old_provider, new_provider = old.provider.rpartition("::")[0], new.provider.rpartition("::")[0]
        if old_provider != new_provider or new_provider in replaced_providers:
            replacing.append("provider")
        action = REPLACE if replacing else UPDATE if changed else SAME
        if action == REPLACE and new.is_provider:
            replaced_providers.add(urn)
        changes[urn] = Change(
            urn,
            new.type,
            new.name,
            action,
            changed=changed,
            replacing=replacing,
            order=_replace_order(new) if action == REPLACE else None,
            # Protection as deployed is what the engine checks before replacing.
            protect=old.protect,
            retain_on_delete=old.retain_on_delete,
            known=known_type(new.type),
            # Secrets never leave in clear (the same redaction as the export).
            before={prop: redact(old.inputs.get(prop)) for prop in changed},
            after={prop: redact(new.inputs.get(prop)) for prop in changed},
        )
    return [changes[urn] for urn in sorted(changes)]


def _plain(value: Any) -> Any:
    """Wire numbers are floats: 4.0 reads as 4."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def short(value: Any, limit: int = 60) -> str | None:
    """A value for one line of output (JSON), or None when it does not fit in `limit` characters."""
    text = json.dumps(_plain(value), sort_keys=True)
    return text if len(text) <= limit else None


def change_text(prop: str, before: Any, after: Any, limit: int = 40) -> str:
    """`prop 4 -> 8`, or `prop` alone when a value is too long to show on one line."""
    old, new = short(before, limit), short(after, limit)
    return f"{prop} {old} -> {new}" if old is not None and new is not None else prop
