"""Where a run starts: at the steady state of its initial load, or at the design's minimum.

A deployed service does not begin each day at replicas.min under the day's first load; a simulation that does
judges every design on a start-up it never goes through (on the default day that start-up caused three quarters
of the SLO misses). So a run starts, by default, with the fleet its first minutes' load needs, the backlog empty
and the warm pool full.
"""

from __future__ import annotations

import math

import numpy as np

from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION
from accelstack.simulate.design import Design

# `Simulation(start=...)`: "steady", the fleet the initial load needs (the requests
# arriving in the first STEADY_WINDOW_SECONDS at the planner's target utilization, within the design's
# bounds), so a design is not judged on a start-up no deployed service goes through every day; "minimum",
# the design's initial replicas (replicas.min; a fixed fleet its size) whatever the load.
STARTS = ("steady", "minimum")
STEADY_WINDOW_SECONDS = 600.0


def steady_state_replicas(design: Design, arrivals: np.ndarray, service: np.ndarray, horizon: float) -> int:
    """Replicas for the load of the first minutes: ceil(rate x mean service / (concurrency x target
    utilization)) -- the requests in flight by Little's law over what a replica holds at the planner's target
    (`planner.serving.replicas_for_load`), clamped to the design's initial..max replicas."""
    if design.replicas_min == design.replicas_max:
        return design.initial_replicas
    window = min(STEADY_WINDOW_SECONDS, horizon)
    first = int(np.searchsorted(arrivals, window))
    if first == 0 or window <= 0:
        return design.initial_replicas
    in_flight = first / window * float(service[:first].mean())
    need = math.ceil(in_flight / (design.concurrency * DEFAULT_TARGET_UTILIZATION) - 1e-9)
    return min(design.replicas_max, max(design.initial_replicas, need))
