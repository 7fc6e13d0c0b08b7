"""Names a cloud's services take, as data: one `NameRule` per service (its characters, length and reserved
words, from the service's documentation), and the two ways a stack gets a name from its stack name.

- Derived by accelstack (`fitted`): the name is kept when the service takes it, so the shipped stacks' names
  (and every name a deployed stack already has) never change; otherwise it is lowercased, stripped of what the
  service refuses, given a letter first where one is required, and cut to fit with a short digest of the whole
  name so two long stack names cannot collide.
- Auto-named by Pulumi (the logical name and a random suffix): accelstack cannot shorten it without changing
  the resource's URN, so the stack name is refused at validate instead (`accelstack.spec.catalog_rules`,
  `derived_names_fit_the_clouds_rules`), with the service and its rule.

Each cloud's `names.py` holds its rules and derivations in one place, and lists what a stack's name becomes
(`@stack_names`) for that rule.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

# Pulumi's auto-names: the logical name, then random characters ("-" and 7 hex for the Terraform-bridged
# providers, 8 hex for azure-native): what a name must leave room for (pulumi.com/docs/iac/concepts/resources/names).
AUTONAME_SUFFIX = "-0a1b2c3"


@dataclass(frozen=True)
class NameRule:
    """What a service accepts as a name. `pattern` is matched in full; the rest are the documented exceptions
    a pattern says badly (reserved prefixes and suffixes, consecutive hyphens)."""

    service: str  # "Key Vault name", "Cloud Storage bucket"
    pattern: str  # a regular expression the whole name matches
    max_length: int
    min_length: int = 1
    source: str = ""  # the documentation page the rule is from
    summary: str = ""  # the rule in words, for the error
    forbidden_prefixes: tuple[str, ...] = ()
    forbidden_suffixes: tuple[str, ...] = ()
    forbidden_words: tuple[str, ...] = ()
    no_consecutive_hyphens: bool = False
    lowercase: bool = True  # whether `fitted` lowercases (the service takes lowercase only, or is case-blind)

    def problem(self, name: str) -> str | None:
        """Why the service refuses `name`, in words; None if it takes it."""
        if not self.min_length <= len(name) <= self.max_length:
            return f"{len(name)} characters; {self.service} takes {self.min_length} to {self.max_length}"
        if not re.fullmatch(self.pattern, name):
            return f"{self.service}: {self.summary or 'must match ' + self.pattern}"
        lowered = name.lower()
        for prefix in self.forbidden_prefixes:
            if lowered.startswith(prefix):
                return f"{self.service} may not start with {prefix!r}"
        for suffix in self.forbidden_suffixes:
            if lowered.endswith(suffix):
                return f"{self.service} may not end with {suffix!r}"
        for word in self.forbidden_words:
            if word in lowered:
                return f"{self.service} may not contain {word!r}"
        if self.no_consecutive_hyphens and "--" in name:
            return f"{self.service} may not contain consecutive hyphens"
        return None


@dataclass(frozen=True)
class DerivedName:
    """A name the stack's name becomes on its cloud. `autonamed`: Pulumi appends its random suffix to it."""

    resource: str  # what it names, in the cloud's words: "the Service Bus namespace"
    name: str
    rule: NameRule
    autonamed: bool = False

    @property
    def deployed(self) -> str:
        """The name as the cloud receives it (an auto-name with a representative suffix)."""
        return self.name + AUTONAME_SUFFIX if self.autonamed else self.name

    def problem(self) -> str | None:
        return self.rule.problem(self.deployed)


def digest(text: str, length: int = 6) -> str:
    """A short, stable hex digest of `text`: the same stack always gets the same name."""
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def fitted(name: str, rule: NameRule, *, letter: str = "a", separator: str = "-") -> str:
    """`name` if `rule` takes it; otherwise a name it takes: lowercased (where the service is lowercase),
    characters it refuses dropped, `letter` put first where a letter must lead or a reserved prefix would,
    consecutive hyphens joined, then cut so that `separator` and a 6-character digest of the original fit."""
    if rule.problem(name) is None:
        return name
    text = name.lower() if rule.lowercase else name
    allowed_hyphen = re.fullmatch(rule.pattern, "a-a") is not None
    text = re.sub(r"[^a-z0-9-]" if allowed_hyphen else r"[^a-z0-9]", "", text)
    if rule.no_consecutive_hyphens or allowed_hyphen:
        text = re.sub(r"-{2,}", "-", text)
    separator = separator if allowed_hyphen else ""
    tail = f"{separator}{digest(name)}"
    if not text[:1].isalpha() or any(text.startswith(p) for p in rule.forbidden_prefixes):
        text = letter + text
    text = text[: rule.max_length - len(tail)].rstrip("-")
    for word in rule.forbidden_words:
        text = text.replace(word, "x")
    result = f"{text}{tail}"
    problem = rule.problem(result)
    if problem is not None:  # a rule this cannot satisfy is a bug in the rule's data, not the user's input
        raise ValueError(f"cannot derive a {rule.service} from {name!r}: {problem}")
    return result
