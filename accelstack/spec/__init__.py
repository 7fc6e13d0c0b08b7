"""The spec layer: pydantic models of a stack's config plus cloud constraint tables. No Pulumi here."""

from accelstack.spec.loader import load_stack, parse_spec, spec_warnings
from accelstack.spec.models import StackSpec
from accelstack.spec.problems import Level, Problem, SpecError

__all__ = ["Level", "Problem", "SpecError", "StackSpec", "load_stack", "parse_spec", "spec_warnings"]
