"""Object-store URIs (`s3://bucket/prefix`), split the same way by the spec rules, the training
storage and the serving replica's read grant."""

from __future__ import annotations


def split_bucket_uri(uri: str) -> tuple[str, str]:
    """`s3://bucket/models/x/` -> ("bucket", "models/x/"): the bucket and the key prefix as written.

    Not `urllib.parse.urlsplit`: it would cut `?...` and `#...` off as query and fragment, while the
    AWS CLI passes the whole string to S3, so a grant and a sync of the same URI would disagree. Here
    such a URI yields a bucket name the spec's bucket-name rule refuses.
    """
    _, _, rest = uri.partition("://")
    bucket, _, prefix = rest.partition("/")
    return bucket, prefix
