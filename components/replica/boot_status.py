"""A serving replica's boot status, the same on every cloud: which stage its boot reached and, if one failed, why,
in a file a status command, a health check or a person on the serial console can read without a log search.

Stages in order: `prepare` (weights and the server image onto the VM's disk), `prepared` (a warm-pool or standby
VM stops here, ready), `server` (the inference server's container), `health` (waiting for the server to answer
its health path), `serving` (the queue worker or admission proxy in front has started). Each is recorded with a
state: `running`, `ok` or `failed` (with the reason: the failing command and its exit status, or the unit's
result as systemd reports it to ExecStopPost: SERVICE_RESULT, EXIT_CODE, EXIT_STATUS, systemd.exec(5)).

The recorder is a small Python program (python3 is on every replica image: cloud-init runs on it) so the file is
JSON whatever a reason holds. Each record also goes to /dev/console, which each cloud keeps for the operator
without a login (EC2 get-console-output, Compute Engine's serial port output, Azure boot diagnostics).

`accelstack-replica-status` alone prints the file (JSON) and exits 0 (booting or serving), 1 (a stage failed) or 2
(no record yet); `accelstack-replica-status STAGE STATE [REASON]` records (STAGE one of STAGES, STATE running, ok
or failed: the callers are generated, record_command checks them); `--unit-result UNIT` (a unit's
ExecStopPost) records the current stage failed when systemd says the unit did not succeed.
"""

from __future__ import annotations

STATUS_PATH = "/var/lib/accelstack/replica-boot.status"
STATUS_COMMAND = "/usr/local/bin/accelstack-replica-status"
STAGES = ("prepare", "prepared", "server", "health", "serving")

# Kept short: it travels in every replica's user data (EC2 caps that at 16 KiB); this docstring is its manual.
STATUS_SCRIPT = f'''\
#!/usr/bin/python3
# components/replica/boot_status.py
import json, os, sys, time
P, args, env = "{STATUS_PATH}", sys.argv[1:], os.environ
try:
    status = json.load(open(P))
except (OSError, ValueError):
    status = {{}}
if not args:
    print(json.dumps(status))
    sys.exit(2 if not status else 1 if status["state"] == "failed" else 0)
if args[0] == "--unit-result":
    if env.get("SERVICE_RESULT", "success") == "success" or status.get("state") == "failed":
        sys.exit(0)
    result = f"{{env['SERVICE_RESULT']}} ({{env.get('EXIT_CODE')}} {{env.get('EXIT_STATUS')}})"
    args = [status.get("stage", "server"), "failed", f"{{args[1]}}: {{result}}"]
stage, state, reason = args[0], args[1], " ".join(args[2:])
os.makedirs(os.path.dirname(P), exist_ok=True)
with open(P + ".new", "w") as out:
    json.dump({{"stage": stage, "state": state, "reason": reason, "at": time.strftime("%FT%TZ", time.gmtime())}}, out)
os.replace(P + ".new", P)
line = f"accelstack-replica: {{stage}} {{state}}{{': ' + reason if reason else ''}}\\n"
try:
    open("/dev/console", "a").write(line)
except OSError:
    sys.stderr.write(line)
'''

# For a bash script under `set -e`: mark `stage` failed with the command that failed and its status, then exit.
# Installed as an ERR trap (`trap 'status_failed prepare' ERR`).
STATUS_FUNCTION = f"""\
status_failed() {{
    local rc=$? command=$BASH_COMMAND
    {STATUS_COMMAND} "$1" failed "exit $rc: $command" || true
}}
"""


def record_command(stage: str, state: str) -> str:
    """The command recording `stage` in `state` (a unit's Exec line or a script's line: no quoting needed)."""
    if stage not in STAGES:
        raise ValueError(f"unknown replica boot stage {stage!r}")
    return f"{STATUS_COMMAND} {stage} {state}"


# A unit's ExecStopPost line: the current stage failed when the unit did not succeed (systemd expands %n to the
# unit's name, systemd.unit(5) "Specifiers").
UNIT_RESULT_COMMAND = f"{STATUS_COMMAND} --unit-result %n"
