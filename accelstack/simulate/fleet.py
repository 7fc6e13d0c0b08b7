"""The fleet's bookkeeping in the serving simulator: replica states, the billing meter, the timeline samples."""

from __future__ import annotations

import math
from dataclasses import dataclass

INF = math.inf

# Replica states
STARTING, IN_SERVICE, FAILED, DRAINING, GONE = range(5)


@dataclass
class Replica:
    id: int
    launched: float
    warm: bool
    state: int = STARTING
    ready: float = INF


class Meter:
    """Seconds spent by instances in each billing state (integrated over simulated time)."""

    STATES = ("serving", "starting_warm", "starting_cold", "pool_preparing", "pool_stopped")

    def __init__(self) -> None:
        self.count = dict.fromkeys(self.STATES, 0)
        self.seconds = dict.fromkeys(self.STATES, 0.0)
        self.last = 0.0

    def add(self, now: float, state: str, delta: int) -> None:
        self.close(now)
        self.count[state] += delta

    def close(self, now: float) -> None:
        if now > self.last:
            for state, count in self.count.items():
                self.seconds[state] += count * (now - self.last)
            self.last = now


@dataclass
class Sample:
    time: float
    arrivals: int  # since the previous sample
    backlog: int
    in_flight: int
    in_service: int  # replicas InService (warm: serving)
    starting: int
    pool: int  # stopped warm-pool instances
    desired: int
