"""The discrete-event simulation of one serving design against one request stream.

SimPy runs the control plane: replicas launching from the warm pool or cold, becoming ready, failing
and being replaced after the health checks, draining on scale-in, the warm pool refilling, the
autoscaler's periodic decisions and the metric samples. Requests are far more numerous (a day at 50/s
is 4.3 million), so they are not SimPy processes: `RequestQueue` is an exact event loop over arrivals
and replica slot completions, advanced to the current time before any control event reads or changes
the fleet. Between control events the fleet is fixed, so nothing is lost by batching.

The admission queue (SQS): first come first served across all replicas' free slots; a request arriving
when `max_depth` wait is refused; one still waiting `ttl` seconds after it arrived is dropped (the
queue's retention period); a request on a replica that dies becomes visible again after the visibility
timeout and goes to the dead-letter queue on its `max_receive_count`-th receive.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import simpy

from accelstack.planner.service_time import stated_rate
from accelstack.simulate.autoscalers import Observation
from accelstack.simulate.design import Design
from accelstack.simulate.fleet import DRAINING, FAILED, GONE, IN_SERVICE, STARTING, Meter, Replica, Sample
from accelstack.simulate.service import BatchService
from accelstack.simulate.start import STARTS, steady_state_replicas
from accelstack.simulate.stats import RequestStats
from accelstack.simulate.workload import Workload

INF = math.inf
PENDING, REFUSED, EXPIRED, DEAD_LETTER = 0, 1, 2, 3


CHUNK = 1 << 16  # arrivals converted to Python floats at a time (the event loop reads floats, not numpy scalars)
FLUSH = 1 << 16  # starts buffered before they are added to the statistics in one numpy pass


class RequestQueue:
    """Requests through the admission queue onto replica slots (one slot = one sequence in flight).

    Memory per request is the stream itself (arrival and service time, shared numpy arrays) and two bytes of
    state (status, receives): outcomes go into `stats` (streaming, `accelstack.simulate.stats`) as requests
    start. `keep_starts` also keeps each request's start time (for per-request checks; -1 if never started)."""

    def __init__(
        self,
        arrivals: np.ndarray,
        service: np.ndarray,
        *,
        ttl: float,
        max_depth: int,
        visibility: float,
        max_receives: int,
        waiting_per_replica: int = 0,
        stats: RequestStats | None = None,
        keep_starts: bool = False,
        batched: BatchService | None = None,
    ):
        """`waiting_per_replica` > 0: admission on the replicas (the direct topology), where each live replica
        holds that many waiting requests, so the fleet's waiting limit moves with its size (`max_depth` unused);
        least-outstanding routing over bounded local queues is served as one queue in arrival order.

        `batched`: each request's service time is set as it starts, from the batch then running on its replica
        (`accelstack.simulate.service`), and written into `service`; without it `service` is fixed per request."""
        self.arrival = np.asarray(arrivals, dtype=float)
        self.service = np.asarray(service, dtype=float)
        self.n = len(self.arrival)
        horizon = float(self.arrival[-1]) + 1.0 if self.n else 1.0
        self.stats = stats or RequestStats(self.arrival, self.service, slo_target=INF, horizon=horizon, ttl=ttl)
        self.start: list[float] | None = [-1.0] * self.n if keep_starts else None
        self.status = bytearray(self.n)
        self.receives = bytearray(self.n)
        self.ttl, self.max_depth, self.visibility, self.max_receives = ttl, max_depth, visibility, max_receives
        self.next = 0  # next arrival to admit
        self.base = 0  # index of the first arrival in the current chunk
        self.batched = batched
        # service_j(b) = P_j + c0[b] + O_j s0[b] + X_j s1[b]; without `batched`: P = service, the rest 0 (b = 0).
        self.c0, self.s0, self.s1 = (batched.c0, batched.s0, batched.s1) if batched else ([0.0], [0.0], [0.0])
        self.ends: list[list[float]] = []  # per replica: when its requests in flight finish (a heap)
        self.chunk_arrival: list[float] = self.arrival[:CHUNK].tolist()
        self.chunk_terms = self._terms(0, CHUNK)
        self.waiting: deque[tuple[float, float, float, float, int]] = deque()  # (arrival, P, O, X, request)
        self.retries: list[tuple[float, int]] = []  # (visible again at, request)
        # (free at, replica, request or -1, started at): a slot's next free time; entries of a retired replica
        # are dropped when they surface.
        self.slots: list[tuple[float, int, int, float]] = []
        self.alive: list[bool] = []
        self.waiting_per_replica = waiting_per_replica
        self.live = 0  # replicas taking work
        self.started: list[int] = []  # buffered for `stats`: request, start time
        self.started_at: list[float] = []
        self.started_service: list[float] = []
        self.on_arrival: list[int] = []  # requests that started as they arrived (most: kept apart, one append each)
        self.on_arrival_service: list[float] = []

    def _terms(self, lo: int, hi: int) -> tuple[list[float], list[float], list[float]]:
        if self.batched is not None:
            return self.batched.terms(lo, min(hi, self.n))
        fixed = self.service[lo:hi].tolist()
        zeros = [0.0] * len(fixed)
        return fixed, zeros, zeros

    def _service_on(self, replica: int, now: float, p: float, o: float, x: float) -> float:
        """A request starting on `replica` at `now`: its service at the batch then running there, itself included."""
        running = self.ends[replica]
        while running and running[0] <= now:
            heapq.heappop(running)
        b = len(running) + 1
        s = p + self.c0[b] + o * self.s0[b] + x * self.s1[b]
        heapq.heappush(running, now + s)
        return s

    def _one(self, j: int) -> tuple[float, float, float]:
        return self.batched.one(j) if self.batched is not None else (float(self.service[j]), 0.0, 0.0)

    def depth_limit(self) -> int:
        return self.waiting_per_replica * self.live if self.waiting_per_replica else self.max_depth

    def _leave(self, replica: int) -> None:
        if self.alive[replica]:
            self.live -= 1
        self.alive[replica] = False

    def add_replica(self, replica: int, concurrency: int, now: float) -> None:
        while len(self.alive) <= replica:
            self.alive.append(False)
        while len(self.ends) <= replica:
            self.ends.append([])
        if not self.alive[replica]:
            self.live += 1
            self.ends[replica] = []
        self.alive[replica] = True
        for _ in range(concurrency):
            heapq.heappush(self.slots, (now, replica, -1, now))

    def retire(self, replica: int, now: float, drain: float) -> float:
        """Stop giving the replica work (scale-in); returns when it can stop. The queue worker lets
        requests in flight finish for `drain` seconds, then releases the rest (visibility 0), which
        other replicas receive at once (components/replica/queue_worker.py)."""
        self._leave(replica)
        deadline = now + drain
        running = [(free, request) for free, owner, request, _ in self.slots if owner == replica and request >= 0 and free > now]  # fmt: skip
        if any(free > deadline for free, _ in running):
            self._take_back(
                replica, [r for free, r in running if free > deadline], visible_at=deadline, keep_until=deadline
            )
        return max([now] + [min(free, deadline) for free, _ in running])

    def fail(self, replica: int, now: float) -> int:
        """The replica died: its requests in flight reappear after the visibility timeout."""
        self._leave(replica)
        lost = [request for free, owner, request, _ in self.slots if owner == replica and request >= 0 and free > now]
        self._take_back(replica, lost, visible_at=now + self.visibility, keep_until=None)
        return len(lost)

    def _take_back(self, replica: int, requests: list[int], *, visible_at: float, keep_until: float | None) -> None:
        """Requests a replica received but will not answer return to the queue at `visible_at`; each
        receive counts towards the dead-letter queue's maxReceiveCount. Their starts are un-counted."""
        taken = set(requests)
        started = {e[2]: e[3] for e in self.slots if e[1] == replica and e[2] in taken}
        self.slots[:] = [e for e in self.slots if e[1] != replica or (keep_until is not None and e[2] not in taken)]
        heapq.heapify(self.slots)
        self._flush()
        self.stats.record(requests, [started[r] for r in requests], weight=-1)
        for request in requests:
            if self.start is not None:
                self.start[request] = -1.0
            self.receives[request] += 1
            if self.receives[request] >= self.max_receives:
                self.status[request] = DEAD_LETTER
            else:
                heapq.heappush(self.retries, (visible_at, request))

    def _flush(self) -> None:
        if self.batched is not None and self.started:
            self.service[np.asarray(self.started, dtype=np.int64)] = self.started_service
        self.stats.record(self.started, self.started_at)
        self.started.clear()
        self.started_at.clear()
        self.started_service.clear()
        if self.on_arrival:
            ids = np.asarray(self.on_arrival, dtype=np.int64)
            if self.batched is not None:
                self.service[ids] = self.on_arrival_service
            self.on_arrival_service.clear()
            starts = self.arrival[ids]
            if self.start is not None:
                for j, t in zip(self.on_arrival, starts.tolist(), strict=True):
                    self.start[j] = t
            self.stats.record(ids, starts)
            self.on_arrival.clear()

    def _drop_expired_head(self, now: float) -> None:
        waiting, ttl, status = self.waiting, self.ttl, self.status
        while waiting and waiting[0][0] + ttl <= now:
            status[waiting.popleft()[4]] = EXPIRED

    def advance_to(self, until: float) -> None:
        """Process every arrival and slot completion before `until`, in time order."""
        status, keep = self.status, self.start
        slots, alive, waiting, retries = self.slots, self.alive, self.waiting, self.retries
        started, started_at, on_arrival = self.started.append, self.started_at.append, self.on_arrival.append
        started_service, on_arrival_service = self.started_service.append, self.on_arrival_service.append
        ttl, n, batched, ends = self.ttl, self.n, self.batched is not None, self.ends
        c0, s0, s1 = self.c0, self.s0, self.s1
        heappop, heappush, heapreplace = heapq.heappop, heapq.heappush, heapq.heapreplace
        arrival, base = self.chunk_arrival, self.base
        prefills, outputs, contexts = self.chunk_terms
        m = len(arrival)
        i = self.next - base
        b = 0  # the batch on the replica a request starts on (0: service fixed per request)
        while True:
            if i >= m and base + m < n:  # the next chunk of arrivals
                base += m
                arrival = self.chunk_arrival = self.arrival[base : base + CHUNK].tolist()
                prefills, outputs, contexts = self.chunk_terms = self._terms(base, base + CHUNK)
                m, i = len(arrival), 0
            # Fast path, most requests: nothing waits and a live slot is free on arrival.
            if not waiting and not retries:
                while i < m:
                    a = arrival[i]
                    if a >= until:
                        break
                    top = slots[0] if slots else None
                    if top is None or top[0] > a or not alive[top[1]]:
                        break
                    if batched:
                        running = ends[top[1]]
                        while running and running[0] <= a:
                            heappop(running)
                        b = len(running) + 1
                    s = prefills[i] + c0[b] + outputs[i] * s0[b] + contexts[i] * s1[b]
                    if batched:
                        heappush(running, a + s)
                    heapreplace(slots, (a + s, top[1], base + i, a))
                    on_arrival(base + i)
                    on_arrival_service(s)
                    i += 1
                if i >= m and base + m < n:
                    continue
            a = arrival[i] if i < m else INF
            retry = retries[0][0] < a if retries else False
            if retry:
                a = retries[0][0]
            if waiting:
                free = slots[0][0] if slots else INF
                if free <= a and free < until:
                    _, replica, _, _ = heappop(slots)
                    if not alive[replica]:
                        continue
                    while waiting:
                        aj, pj, oj, xj, j = waiting.popleft()
                        if aj + ttl <= free:
                            status[j] = EXPIRED
                            continue
                        s = self._service_on(replica, free, pj, oj, xj) if batched else pj
                        heappush(slots, (free + s, replica, j, free))
                        started(j)
                        started_at(free)
                        started_service(s)
                        if keep is not None:
                            keep[j] = free
                        break
                    else:
                        heappush(slots, (free, replica, -1, free))
                    continue
            if a >= until:
                break
            if retry:
                _, j = heappop(retries)
                aj = float(self.arrival[j])
                pj, oj, xj = self._one(j)
                if aj + ttl <= a:
                    status[j] = EXPIRED
                    continue
                depth_ok = True  # already in the queue: SQS made it visible again
            else:
                j, aj, pj, oj, xj = base + i, a, prefills[i], outputs[i], contexts[i]
                if waiting and waiting[0][0] + ttl <= a:
                    self._drop_expired_head(a)
                depth_ok = len(waiting) < self.depth_limit()
            if not waiting and slots and slots[0][0] <= a:
                replica = slots[0][1]
                if not alive[replica]:
                    heappop(slots)
                    if retry:
                        heappush(retries, (a, j))
                    continue
                s = self._service_on(replica, a, pj, oj, xj) if batched else pj
                heapreplace(slots, (a + s, replica, j, a))
                started(j)
                started_at(a)
                started_service(s)
                if keep is not None:
                    keep[j] = a
            elif depth_ok:
                waiting.append((aj, pj, oj, xj, j))
            else:
                status[j] = REFUSED
            if not retry:
                i += 1
        self.next, self.base = base + i, base
        if len(self.started) + len(self.on_arrival) >= FLUSH or self.start is not None:
            self._flush()

    def backlog(self, now: float) -> int:
        self._drop_expired_head(now)
        return len(self.waiting)

    def in_flight(self, now: float) -> int:
        return sum(1 for free, _, request, _ in self.slots if request >= 0 and free > now)

    def not_visible(self, now: float) -> int:
        """Received and not yet deleted: in flight (draining replicas included) and those waiting out
        a failed replica's visibility timeout -- SQS ApproximateNumberOfMessagesNotVisible."""
        return self.in_flight(now) + len(self.retries)

    def arrived_between(self, t0: float, t1: float) -> int:
        return int(np.searchsorted(self.arrival, t1) - np.searchsorted(self.arrival, t0))

    def finish(self) -> None:
        """After the horizon: serve what is queued with the fleet left running; the rest expires."""
        self.advance_to(INF)
        for *_, j in self.waiting:
            self.status[j] = EXPIRED
        self.waiting.clear()
        for _, j in self.retries:
            self.status[j] = EXPIRED
        self.retries.clear()
        self._flush()
        self.stats.finish(np.frombuffer(self.status, dtype=np.uint8), PENDING, EXPIRED)  # a view, no copy


@dataclass
class Run:
    design: Design
    workload: Workload
    queue: RequestQueue
    meter: Meter
    samples: list[Sample]
    scaling_events: list[tuple[float, int, int]]  # (time, old desired, new desired)
    ready_events: list[tuple[float, bool]]  # (time a replica became ready, from the warm pool?)
    failures: int
    sample_seconds: float
    start: str = "minimum"  # STARTS
    initial_replicas: int = 0
    extra: dict = field(default_factory=dict)


class Simulation:
    def __init__(
        self,
        design: Design,
        workload: Workload,
        *,
        tokens_per_second: float | None = None,
        failures_per_replica_day: float = 0.0,
        sample_seconds: float = 60.0,
        seed: int = 0,
        start: str = "steady",
        keep_starts: bool = False,
    ):
        if start not in STARTS:
            raise ValueError(f"start {start!r}: allowed: {', '.join(STARTS)}")
        self.design, self.workload = design, workload
        # A stated decode rate (--tokens-per-second, else serviceSeconds without the plan's model): service fixed
        # per request, whatever the batch. Else the plan's model, per request at the batch it starts in.
        rate = tokens_per_second or (None if design.service_time else workload.mean_tokens / design.service_seconds)
        batched = None
        if rate:
            service = workload.service_seconds(rate)
            self.service_model = stated_rate(rate, "--tokens-per-second" if tokens_per_second else "serviceSeconds")
        else:
            assert design.service_time is not None
            self.service_model = design.service_time
            inputs = workload.input_tokens if workload.input_tokens is not None else design.input_tokens
            batched = BatchService(design.service_time, inputs, workload.tokens, design.concurrency)
            service = batched.at_batch(batched.running_batch())  # the steady start's estimate; set as each starts
        stats = RequestStats(
            workload.arrivals,
            service,
            slo_target=design.slo_target_seconds,
            horizon=workload.horizon,
            ttl=design.ttl_seconds,
            interval_seconds=sample_seconds,
        )
        self.queue = RequestQueue(
            workload.arrivals,
            service,
            ttl=design.ttl_seconds,
            max_depth=design.max_depth,
            visibility=design.visibility_timeout_seconds,
            max_receives=design.max_receive_count,
            waiting_per_replica=design.waiting_per_replica,
            stats=stats,
            keep_starts=keep_starts,
            batched=batched,
        )
        self.start = start
        self.initial_replicas = (
            steady_state_replicas(design, workload.arrivals, service, workload.horizon)
            if start == "steady"
            else design.initial_replicas
        )
        self.env = simpy.Environment()
        self.meter = Meter()
        self.policy = design.policy()
        self.rng = np.random.default_rng(seed + 1)
        self.failure_rate = failures_per_replica_day / 86_400.0
        self.sample_seconds = sample_seconds
        self.replicas: list[Replica] = []
        self.launched_replicas = 0
        self.desired = self.initial_replicas
        self.pool = design.warm_pool
        self.pool_preparing = 0
        self.samples: list[Sample] = []
        self.scaling_events: list[tuple[float, int, int]] = []
        self.ready_events: list[tuple[float, bool]] = []
        self.failures = 0
        self.meter.add(0.0, "pool_stopped", self.pool)
        for _ in range(self.initial_replicas):  # `up` waited for these: in service from the start
            replica = Replica(self._new_id(), 0.0, False, IN_SERVICE, 0.0)
            self.replicas.append(replica)
            self.queue.add_replica(replica.id, design.concurrency, 0.0)
            self.meter.add(0.0, "serving", 1)
            self._watch_for_failure(replica)

    # --- fleet ---------------------------------------------------------------------------------

    def _new_id(self) -> int:
        """A replica id never used before in this run: the list of replicas is pruned of those gone, so its length
        would hand a live replica's id (and its slots) to a new one."""
        self.launched_replicas += 1
        return self.launched_replicas - 1

    def count(self, *states: int) -> int:
        return sum(1 for r in self.replicas if r.state in states)

    def _launch(self, now: float) -> None:
        warm = self.pool > 0
        if warm:
            self.pool -= 1
            self.meter.add(now, "pool_stopped", -1)
        replica = Replica(self._new_id(), now, warm)
        self.replicas.append(replica)
        self.meter.add(now, "starting_warm" if warm else "starting_cold", 1)
        delay = self.design.warm_start_seconds if warm else self.design.cold_start_seconds
        self.env.process(self._become_ready(replica, delay))

    def _become_ready(self, replica: Replica, delay: float):
        yield self.env.timeout(delay)
        if replica.state != STARTING:
            return
        now = self.env.now
        self.queue.advance_to(now)
        replica.state, replica.ready = IN_SERVICE, now
        self.meter.add(now, "starting_warm" if replica.warm else "starting_cold", -1)
        self.meter.add(now, "serving", 1)
        self.queue.add_replica(replica.id, self.design.concurrency, now)
        self.ready_events.append((now, replica.warm))
        self._watch_for_failure(replica)

    def _watch_for_failure(self, replica: Replica) -> None:
        if self.failure_rate > 0:
            self.env.process(self._fail_later(replica, float(self.rng.exponential(1 / self.failure_rate))))

    def _fail_later(self, replica: Replica, after: float):
        yield self.env.timeout(after)
        if replica.state != IN_SERVICE:
            return
        now = self.env.now
        self.queue.advance_to(now)
        self.queue.fail(replica.id, now)
        replica.state = FAILED  # still InService (and billed) until the health checks fail it
        self.failures += 1
        yield self.env.timeout(self.design.unhealthy_seconds)
        self.meter.add(self.env.now, "serving", -1)
        replica.state = GONE
        self._reconcile(self.env.now)  # the group replaces it

    def _drain(self, replica: Replica, now: float):
        replica.state = DRAINING
        done = self.queue.retire(replica.id, now, self.design.drain_seconds)
        yield self.env.timeout(max(0.0, done - now))
        replica.state = GONE
        self.meter.add(self.env.now, "serving", -1)
        if self.pool + self.pool_preparing < self.design.warm_pool:  # reuse_on_scale_in: back to the pool
            self.pool += 1
            self.meter.add(self.env.now, "pool_stopped", 1)

    def _prepare_pool_instance(self):
        # A new warm-pool instance runs its full cold start (pull image and weights), then stops.
        yield self.env.timeout(self.design.cold_start_seconds)
        self.pool_preparing -= 1
        self.pool += 1
        self.meter.add(self.env.now, "pool_preparing", -1)
        self.meter.add(self.env.now, "pool_stopped", 1)

    def _reconcile(self, now: float) -> None:
        active = [r for r in self.replicas if r.state in (STARTING, IN_SERVICE, FAILED)]
        for _ in range(self.desired - len(active)):
            self._launch(now)
        excess = len(active) - self.desired
        if excess > 0:
            self.queue.advance_to(now)
            # Launches not yet ready go first, then the newest in service.
            for replica in sorted(active, key=lambda r: (r.state != STARTING, -r.launched))[:excess]:
                if replica.state == STARTING:
                    replica.state = GONE
                    self.meter.add(now, "starting_warm" if replica.warm else "starting_cold", -1)
                elif replica.state == IN_SERVICE:
                    self.env.process(self._drain(replica, now))
        while self.pool + self.pool_preparing < self.design.warm_pool:
            self.pool_preparing += 1
            self.meter.add(now, "pool_preparing", 1)
            self.env.process(self._prepare_pool_instance())
        if len(self.replicas) > 64:
            self.replicas = [r for r in self.replicas if r.state != GONE]

    # --- control loops -------------------------------------------------------------------------

    def observe(self, now: float) -> Observation:
        in_service = self.count(IN_SERVICE, FAILED)
        busy = self.queue.in_flight(now)
        warmup = self.design.warm_start_seconds
        return Observation(
            now=now,
            backlog=self.queue.backlog(now),
            in_service=in_service,
            capacity=self.desired,
            busy_fraction=busy / max(1, in_service * self.design.concurrency),
            arrivals_last_minute=self.queue.arrived_between(now - 60.0, now),
            warming=any(r.state == IN_SERVICE and now - r.ready < warmup for r in self.replicas),
            not_visible=self.queue.not_visible(now),
        )

    def _autoscale(self):
        interval = self.policy.interval
        while True:
            yield self.env.timeout(interval)
            now = self.env.now
            self.queue.advance_to(now)
            desired = self.policy.decide(self.observe(now))
            if desired is not None and desired != self.desired:
                self.scaling_events.append((now, self.desired, desired))
                self.desired = desired
                self._reconcile(now)

    def _sample(self):
        previous = 0.0
        while True:
            yield self.env.timeout(self.sample_seconds)
            now = self.env.now
            self.queue.advance_to(now)
            self.samples.append(
                Sample(
                    now,
                    self.queue.arrived_between(previous, now),
                    self.queue.backlog(now),
                    self.queue.in_flight(now),
                    self.count(IN_SERVICE, FAILED, DRAINING),
                    self.count(STARTING),
                    self.pool,
                    self.desired,
                )
            )
            previous = now

    def run(self) -> Run:
        horizon = self.workload.horizon
        self._reconcile(0.0)
        self.env.process(self._autoscale())
        self.env.process(self._sample())
        self.env.run(until=horizon)
        self.queue.advance_to(horizon)
        self.meter.close(horizon)
        self.queue.finish()
        return Run(
            self.design,
            self.workload,
            self.queue,
            self.meter,
            self.samples,
            self.scaling_events,
            self.ready_events,
            self.failures,
            self.sample_seconds,
            self.start,
            self.initial_replicas,
        )
