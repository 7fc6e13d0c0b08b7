"""What a cloud calls the serving concepts the neutral layers report: its load balancer, its admission queue and its
pool of stopped, pre-initialised replicas. `accelstack simulate serving` labels every row, note and cost line
with the stack's cloud's names (never another cloud's), and names admission on the replicas where the cloud has
no queue (Vultr) or the stack admits directly (serving.admission.kind replica)."""

from __future__ import annotations

from dataclasses import dataclass

# The words for admission without a queue (serving.admission.kind replica): each replica's own bounded wait.
REPLICA_ADMISSION = "replica admission"


@dataclass(frozen=True)
class ServingTerms:
    """A cloud's product names for the serving concepts (None: the cloud has no such thing)."""

    load_balancer: str = "the load balancer"
    queue: str | None = None  # the managed admission queue (serving.admission.kind queue)
    warm_pool: str | None = None  # stopped, pre-initialised replicas (serving.replicas.warmPool)

    def admission(self, direct: bool) -> str:
        """Where requests wait: the cloud's queue, or the replicas themselves (direct, or no queue to have)."""
        return REPLICA_ADMISSION if direct or self.queue is None else self.queue

    def names(self) -> tuple[str, ...]:
        """Every product name this cloud's terms give (a test forbids them in another cloud's reports)."""
        return tuple(n for n in (self.load_balancer, self.queue, self.warm_pool) if n is not None)
