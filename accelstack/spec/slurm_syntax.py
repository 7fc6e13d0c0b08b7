"""Slurm's own syntax, as slurm.conf(5) and slurmctld read it: partition time limits, reserved partition
names and node feature names (the spec's partition rules check against it)."""

from __future__ import annotations

import re

# Slurm accepts these for a partition's MaxTime (slurm.conf(5), "MaxTime"; sbatch(1), "--time").
SLURM_UNLIMITED = ("UNLIMITED", "INFINITE")
_SLURM_TIME = re.compile(
    r"^(?:(?P<minutes>\d+)"  # minutes
    r"|(?P<m>\d+):(?P<s>\d{1,2})"  # minutes:seconds
    r"|(?P<h>\d+):(?P<hm>\d{1,2}):(?P<hs>\d{1,2})"  # hours:minutes:seconds
    r"|(?P<d>\d+)-(?P<dh>\d{1,2})(?::(?P<dm>\d{1,2})(?::(?P<ds>\d{1,2}))?)?"  # days-hours[:minutes[:seconds]]
    r")$"
)
SLURM_TIME_FORMATS = "UNLIMITED, MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS"


# Slurm's time_str2secs (src/common/parse_time.c) adds days*86400 + hours*3600 + minutes*60 + seconds
# in a C int and time_str2mins rounds up with +59; read_config.c refuses a negative result ("Bad value
# ... for MaxTime") and slurmctld does not start. So a limit must stay below 2^31 - 60 seconds (~68 years).
SLURM_MAX_TIME_SECONDS = 2**31 - 1 - 59


def slurm_time_seconds(text: str) -> int | None:
    """Seconds of a Slurm time limit in one of SLURM_TIME_FORMATS (None: UNLIMITED or not a limit)."""
    match = _SLURM_TIME.match(text)
    if match is None:
        return None
    parts = {key: int(value) for key, value in match.groupdict().items() if value is not None}
    if "minutes" in parts:
        return parts["minutes"] * 60
    if "m" in parts:
        return parts["m"] * 60 + parts["s"]
    if "h" in parts:
        return parts["h"] * 3600 + parts["hm"] * 60 + parts["hs"]
    return parts["d"] * 86400 + parts["dh"] * 3600 + parts.get("dm", 0) * 60 + parts.get("ds", 0)


def slurm_time_problem(text: str) -> str | None:
    """None if `text` is a valid Slurm time limit, else why not."""
    if text.upper() in SLURM_UNLIMITED:
        return None
    match = _SLURM_TIME.match(text)
    if match is None:
        return f'{text!r} is not a Slurm time limit; allowed formats: {SLURM_TIME_FORMATS} (e.g. "7-00:00:00")'
    parts = match.groupdict()
    for key in ("s", "hm", "hs", "dm", "ds"):
        if parts[key] is not None and int(parts[key]) > 59:
            return f"{text!r}: minutes and seconds must be 0-59"
    if parts["dh"] is not None and int(parts["dh"]) > 23:
        return f"{text!r}: hours after the day count must be 0-23"
    seconds = slurm_time_seconds(text)
    assert seconds is not None
    if seconds > SLURM_MAX_TIME_SECONDS:
        return (
            f"{text!r} is longer than Slurm can count ({SLURM_MAX_TIME_SECONDS // 86400} days): slurmctld rejects "
            "the partition and does not start; use UNLIMITED for no limit"
        )
    if seconds == 0:
        return f"{text!r} is a zero time limit: no job could run in this partition; use UNLIMITED for no limit"
    return None


# slurm.conf(5): "PartitionName=DEFAULT" sets defaults for the following lines (compared without case,
# src/common/read_config.c), so a partition so named is never created and `sbatch` without -p fails.
SLURM_RESERVED_PARTITION_NAMES = ("DEFAULT",)
# Constraint expressions (sbatch -C) combine features with these; a feature containing one cannot be
# selected, and "," separates features in Feature=.
SLURM_FEATURE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
