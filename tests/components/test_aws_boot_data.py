"""EC2 user data over 16 KB goes gzip-compressed (cloud-init decompresses it), what fits goes raw, and the size rule
measures what is sent: the same text gives the same bytes every time (a changed head user data replaces the head)."""

from __future__ import annotations

import base64
import gzip
import os

from accelstack.clouds import registry
from accelstack.clouds.aws.catalog import EC2_USER_DATA_MAX_BYTES
from accelstack.components.aws.boot_data import ec2_user_data, ec2_user_data_base64, is_compressed


def _script(size: int) -> str:
    lines, n = [], 0
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(f"echo step {n} $(date +%s) >> /var/log/accelstack-boot.log")
        n += 1
    return "#!/bin/bash\n" + "\n".join(lines) + "\n"


def test_user_data_that_fits_goes_raw() -> None:
    text = _script(EC2_USER_DATA_MAX_BYTES - 200)
    assert not is_compressed(text)
    assert ec2_user_data(text) == text.encode()
    assert base64.b64decode(ec2_user_data_base64(text)) == text.encode()


def test_user_data_over_the_limit_goes_gzipped_and_decompresses_to_the_text() -> None:
    text = _script(EC2_USER_DATA_MAX_BYTES + 4000)
    assert is_compressed(text)
    sent = ec2_user_data(text)
    assert sent[:2] == b"\x1f\x8b"  # the gzip magic cloud-init looks for
    assert len(sent) <= EC2_USER_DATA_MAX_BYTES
    assert gzip.decompress(sent) == text.encode()
    assert ec2_user_data(text) == sent  # deterministic: no timestamp in the header


def test_the_size_rule_measures_what_is_sent() -> None:
    limit = registry.get("aws").boot_data_limit
    assert limit is not None and limit.gzipped_when_over
    small, large = _script(1000), _script(EC2_USER_DATA_MAX_BYTES + 4000)
    assert limit.size(small) == len(small.encode())
    assert limit.size(large) == len(ec2_user_data(large)) < EC2_USER_DATA_MAX_BYTES
    # Text that compresses badly is still refused when even its gzip is over.
    noise = base64.b64encode(os.urandom(EC2_USER_DATA_MAX_BYTES)).decode()
    assert limit.size(noise) > EC2_USER_DATA_MAX_BYTES
