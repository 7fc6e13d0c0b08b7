"""User data as EC2 receives it: the raw text where it fits EC2's 16 KB, else gzip-compressed.

cloud-init decompresses gzip user data (cloud-init docs, "User data formats"); EC2 counts the raw bytes it
receives, before base64 (EC2 User Guide, "Run commands when you launch an EC2 instance with user data input").
Only what would not fit raw is compressed, so the stacks' user data stays readable where it can; the size rule
(`BootDataLimit.gzipped_when_over`) measures what is sent."""

from __future__ import annotations

import base64

from accelstack.clouds.aws.catalog import EC2_USER_DATA_MAX_BYTES
from accelstack.clouds.base import gzipped


def is_compressed(text: str) -> bool:
    """Whether `text` goes to EC2 gzip-compressed (its raw bytes are over the limit)."""
    return len(text.encode()) > EC2_USER_DATA_MAX_BYTES


def ec2_user_data(text: str) -> bytes:
    """The bytes EC2 receives for `text`."""
    return gzipped(text.encode()) if is_compressed(text) else text.encode()


def ec2_user_data_base64(text: str) -> str:
    """`ec2_user_data` base64-encoded, as launch templates and `user_data_base64` take it."""
    return base64.b64encode(ec2_user_data(text)).decode()
