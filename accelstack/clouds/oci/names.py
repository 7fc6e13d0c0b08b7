"""OCI names the components give, pure so the rules check them before anything exists.

Display names are free text; the names below are the ones OCI constrains: bucket names (1-256 letters, digits,
'-', '_' and '.': docs.oracle.com/iaas/Content/Object/Tasks/managingbuckets.htm), IAM policy and dynamic group
names (1-100 characters, letters, digits, '-', '_' and '.'; unique in the tenancy for dynamic groups:
docs.oracle.com/iaas/Content/Identity/dynamicgroups), the Lustre file system name (at most 8 characters) and DNS
labels (letters and digits, starting with a letter, at most 15).
"""

from __future__ import annotations

import hashlib
import re

from accelstack.clouds.oci.catalog import LUSTRE_NAME_MAX

BUCKET_NAME = r"[A-Za-z0-9._-]{1,256}"
IAM_NAME_MAX = 100
DNS_LABEL_MAX = 15


def iam_name(stack: str, role: str) -> str:
    """A policy or dynamic group name: `<stack>-<role>`, kept to OCI's characters and length (a digest keeps two
    long stack names apart)."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", f"{stack}-{role}")
    if len(name) <= IAM_NAME_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: IAM_NAME_MAX - 9]}-{digest}"


def dns_label(stack: str, role: str) -> str:
    """A VCN or subnet DNS label: letters and digits, a letter first, at most 15."""
    letters = re.sub(r"[^a-z0-9]", "", f"{stack}{role}".lower()).lstrip("0123456789") or "accelstack"
    if len(letters) <= DNS_LABEL_MAX:
        return letters
    return letters[: DNS_LABEL_MAX - 4] + hashlib.sha256(letters.encode()).hexdigest()[:4]


def lustre_name(stack: str) -> str:
    """The Lustre file system name (the `<address>@tcp:/<name>` the clients mount): at most 8 letters and digits."""
    letters = re.sub(r"[^a-z0-9]", "", stack.lower()) or "lustre"
    return letters[:LUSTRE_NAME_MAX]
