"""How the planner writes quantities for people: one unit per quantity, singular for one."""

from __future__ import annotations

# Countable units the planner prints, singular -> plural.
_PLURALS = {
    "replica": "replicas",
    "GPU": "GPUs",
    "node": "nodes",
    "request in flight": "requests in flight",
    "message/replica": "messages/replica",
    "sequence": "sequences",
    "checkpoint": "checkpoints",
    "adapter": "adapters",
    "LoRA adapter": "LoRA adapters",
}
_SINGULARS = {plural: singular for singular, plural in _PLURALS.items()}


def counted(count: float, unit: str) -> str:
    """`1 replica`, `2 replicas`, `1 GPU`; a unit that is not a countable noun (GiB, s) is left as it is."""
    singular = _SINGULARS.get(unit, unit)
    plural = _PLURALS.get(singular, unit)
    return f"{count:g} {singular if count == 1 else plural}"


def duration(seconds: float) -> str:
    """A duration in the one unit that reads best: s below 2 min, min below 2 h, h below 2 days, else days."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
