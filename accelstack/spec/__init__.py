"""The spec layer: pydantic models of a stack's config plus cloud constraint tables. No Pulumi here."""

from accelstack.spec.loader import load_stack, parse_spec, spec_warnings
from accelstack.spec.models import ServingStack, StackSpec, TrainingStack, validate_stack
from accelstack.spec.problems import Level, Problem, SpecError

__all__ = [
    "Level",
    "Problem",
    "ServingStack",
    "SpecError",
    "StackSpec",
    "TrainingStack",
    "load_stack",
    "parse_spec",
    "spec_warnings",
    "validate_stack",
]
