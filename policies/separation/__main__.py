"""Entry point the Pulumi CLI runs (`pulumi preview --policy-pack policies/separation`).

`PolicyPack(...)` starts the analyzer's gRPC server and never returns, so it lives here only;
accelstack's offline runner executes this file with `PolicyPack` swapped for a recorder.
"""

import importlib
import sys
from pathlib import Path

# The Pulumi CLI runs this file from the pack directory, in the pack's own virtualenv (which does not
# install accelstack): import the packs' package by its folder, `policies` in a checkout and inside an
# installed accelstack alike. The pack modules import each other relatively, so either way works.
_PACKS = Path(__file__).resolve().parents[1]
if str(_PACKS.parent) not in sys.path:
    sys.path.insert(0, str(_PACKS.parent))

from pulumi_policy import PolicyPack  # noqa: E402

rules = importlib.import_module(f"{_PACKS.name}.separation.rules")

PolicyPack(
    name=rules.PACK_NAME,
    description=rules.PACK_DESCRIPTION,
    policies=rules.POLICIES,
    enforcement_level=rules.ENFORCEMENT_LEVEL,
)
