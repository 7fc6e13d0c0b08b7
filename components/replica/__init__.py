"""What runs on a serving replica, whatever the cloud: the admission-queue worker, or the admission proxy where
the replicas admit requests themselves (both shipped in user data), and what each reads from its environment."""

from __future__ import annotations

import base64
from importlib import resources

from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

ADMISSION_PROXY = "admission_proxy.py"


def worker_files(client_package: str, client_module: str) -> dict[str, str]:
    """File name on the replica -> base64 of its source (cloud-init write_files, encoding b64): the neutral
    queue worker and the cloud's queue client (`<client_package>.<client_module>`)."""
    sources = {
        "queue_worker.py": resources.files("accelstack.components.replica").joinpath("queue_worker.py"),
        f"{client_module}.py": resources.files(client_package).joinpath(f"{client_module}.py"),
    }
    return {name: base64.b64encode(path.read_bytes()).decode() for name, path in sources.items()}


def admission_proxy_source() -> bytes:
    return resources.files("accelstack.components.replica").joinpath(ADMISSION_PROXY).read_bytes()


def proxy_files() -> dict[str, str]:
    """The admission proxy as cloud-init write_files content (file name -> base64 of its source)."""
    return {ADMISSION_PROXY: base64.b64encode(admission_proxy_source()).decode()}


def admission_proxy_environment(serving: ServingSpec, plan: ServingPlan, *, client_hop: int) -> dict[str, str]:
    """What the admission proxy reads (`admission_proxy.Config.from_env`), from the plan: the load balancer's
    port in front, the inference server on loopback behind, the plan's concurrency in flight, the waiting
    share and wait bound of serving.admission, its per-client limit again (the load balancer's WAF rule, kept
    where a request reaches the replica another way), and the X-Forwarded-For entry the cloud's load balancer
    writes (`client_hop`, from the right)."""
    admission = serving.admission
    values = {
        "LISTEN_PORT": serving.load_balancer.port,
        "SERVER_PORT": plan.server_port,
        "HEALTH_PATH": serving.load_balancer.health_path,
        "CONCURRENCY": plan.concurrency,
        "MAX_WAITING": plan.replica_waiting,
        "TTL_SECONDS": plan.replica_wait_seconds,
        "PER_CLIENT_RATE": admission.per_client_rate,
        "RATE_WINDOW_SECONDS": admission.rate_window_seconds,
        "CLIENT_HOP": client_hop,
        "GENERATION_TIMEOUT_SECONDS": plan.generation_timeout_seconds,
        "DRAIN_SECONDS": plan.worker_drain_seconds,
    }
    return {f"ACCELSTACK_ADMISSION_{key}": str(value) for key, value in values.items()}
