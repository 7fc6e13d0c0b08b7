"""The inference server's command line, the same on every cloud's replica (not shipped: rendered into
each cloud's user data)."""

from __future__ import annotations

from accelstack.components.node_syntax import shell_word, unit_command
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

__all__ = ["health_url", "health_wait_command", "server_arguments"]


def health_url(serving: ServingSpec, plan: ServingPlan) -> str:
    """The server's own health endpoint on the replica (loopback, the server's port)."""
    return f"http://127.0.0.1:{plan.server_port}{serving.load_balancer.health_path}"


def health_wait_command(serving: ServingSpec, plan: ServingPlan) -> str:
    """An ExecStartPre= line's command: wait until the server answers its health path (bash quoting inside,
    systemd's outside)."""
    return unit_command(
        ["/bin/bash", "-c", f"until curl -fs {shell_word(health_url(serving, plan))}; do sleep 5; done"]
    )


def server_arguments(serving: ServingSpec, plan: ServingPlan) -> list[str]:
    """vLLM OpenAI-compatible server flags: one base model, every LoRA adapter served beside it; on the load
    balancer's port, or on loopback behind the replica's admission proxy."""
    model = serving.model
    args = [
        "--model", "/models/base",
        "--served-model-name", model.name,
        "--port", str(plan.server_port),
        "--max-model-len", str(model.context_length),
        "--tensor-parallel-size", str(plan.tensor_parallel),
    ]  # fmt: skip
    if serving.admission.kind == "replica":
        args += ["--host", "127.0.0.1"]  # behind the admission proxy only: the load balancer cannot go around it
    dtype = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}.get(model.precision)
    if dtype:
        args += ["--dtype", dtype]
    elif model.precision == "fp8":
        args += ["--quantization", "fp8"]  # dynamic FP8 on Ada/Hopper; pre-quantized checkpoints load as-is
    # int8/int4: the checkpoint itself is quantized (AWQ/GPTQ); vLLM reads the method from its config.
    if model.adapters:
        args += [
            "--enable-lora",
            "--max-loras", str(len(model.adapters)),
            "--max-lora-rank", str(max(a.rank for a in model.adapters)),
            "--lora-modules", *(f"{a.name}=/models/adapters/{a.name}" for a in model.adapters),
        ]  # fmt: skip
    return args
