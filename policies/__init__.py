"""accelstack's pulumi-policy packs: `separation` (training vs serving accounts) and `guardrails`.

Each pack directory is runnable by the Pulumi CLI (`--policy-pack policies/<pack>`) and importable
by accelstack's offline runner (`accelstack.engine.policy_runner`). Nothing here imports accelstack:
a pack's virtualenv holds only pulumi and pulumi-policy.
"""
