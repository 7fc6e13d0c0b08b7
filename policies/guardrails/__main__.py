"""Entry point the Pulumi CLI runs (`pulumi preview --policy-pack policies/guardrails`).

`PolicyPack(...)` starts the analyzer's gRPC server and never returns, so it lives here only;
accelstack's offline runner executes this file with `PolicyPack` swapped for a recorder.
"""

import sys
from pathlib import Path

# The CLI runs this file from the pack directory: make `policies.*` importable from the repo root.
_REPO_ROOT = str(Path(__file__).resolve().parents[2])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from pulumi_policy import PolicyPack  # noqa: E402

from policies.guardrails import observability, rules  # noqa: E402

PolicyPack(
    name=rules.PACK_NAME,
    description=rules.PACK_DESCRIPTION,
    policies=rules.POLICIES + observability.POLICIES,
    enforcement_level=rules.ENFORCEMENT_LEVEL,
)
