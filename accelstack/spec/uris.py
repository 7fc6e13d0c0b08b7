"""Object-store URIs (`s3://bucket/prefix`), split the same way by the spec rules, the training
storage and the serving replica's read grant."""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.spec.models import StackSpec, TrainingStack


def split_bucket_uri(uri: str) -> tuple[str, str]:
    """`s3://bucket/models/x/` -> ("bucket", "models/x/"): the bucket and the key prefix as written.

    Not `urllib.parse.urlsplit`: it would cut `?...` and `#...` off as query and fragment, while the
    AWS CLI passes the whole string to S3, so a grant and a sync of the same URI would disagree. Here
    such a URI yields a bucket name the spec's bucket-name rule refuses.
    """
    _, _, rest = uri.partition("://")
    bucket, _, prefix = rest.partition("/")
    return bucket, prefix


def object_uris(spec: StackSpec) -> Iterator[tuple[str, str]]:
    """(config path, uri) of every object-store URI in the spec: datasets, checkpoints, weights, adapters."""
    if isinstance(spec, TrainingStack):
        yield "training.storage.datasets.uri", spec.training.storage.datasets.uri
        if spec.training.storage.checkpoints is not None:
            yield "training.storage.checkpoints.uri", spec.training.storage.checkpoints.uri
    else:
        yield "serving.model.weightsUri", spec.serving.model.weights_uri
        for index, adapter in enumerate(spec.serving.model.adapters):
            yield f"serving.model.adapters.{index}.uri", adapter.uri
