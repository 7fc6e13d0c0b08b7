"""The Vultr pack admits an STS session's temporary credentials in user data only in their one root-only file
(policies/vultr/readers.py): any other shape of the cloud-config is judged as text, and none crashes the pack."""

from __future__ import annotations

import pytest

from accelstack.policies.vultr.readers import SESSION_FILE, _boot_text_findings

SESSION = (
    "AWS_ACCESS_KEY_ID=ASIAABCDEFGHIJKLMNOP\n"
    "AWS_SECRET_ACCESS_KEY=" + "a" * 40 + "\n"
    "AWS_SESSION_TOKEN=" + "T" * 64 + "\n"
)


def cloud_config(files: object) -> str:
    import yaml

    return "#cloud-config\n" + yaml.safe_dump({"write_files": files})


def test_a_session_in_its_file_is_admitted():
    assert list(_boot_text_findings("r", cloud_config([{"path": SESSION_FILE, "content": SESSION}]))) == []


@pytest.mark.parametrize(
    "files",
    [
        [{"path": "/etc/other.env", "content": SESSION}],  # another file
        [{"path": SESSION_FILE, "content": SESSION.replace("ASIA", "AKIA")}],  # a long-lived key
        [SESSION_FILE, {"path": "/etc/other.env", "content": SESSION}],  # an entry that is not a mapping
        [None, 3, {"path": ["not", "a", "path"], "content": SESSION}],
    ],
    ids=["other-file", "long-lived-key", "string-entry", "odd-entries"],
)
def test_any_other_shape_is_judged_as_text_without_crashing(files):
    assert list(_boot_text_findings("r", cloud_config(files)))
