"""Cost lines a cloud's price table leaves out, said only for the stacks they concern.

`Prices.not_priced` lists them; a plain string concerns every stack (data transfer, logs), a `NotPriced` names the
workload (Managed Lustre concerns training stacks, the load balancer serving stacks) or the instance types (a
machine type with no on-demand price concerns only a stack running it), so `accelstack cost` for a serving stack
does not list the training cluster's file system (issue 29, friction 30). A line about the parallel file system's
price (`parallel_fs`) is moot for a stack whose file system got a price (from `--prices`) or that deploys none.
"""

from __future__ import annotations

from collections.abc import Iterable


class NotPriced(str):
    """A not-priced line (the text `cost` prints) that concerns only the stacks `concerns` says."""

    workload: str | None  # "training" or "serving"; None: either
    instance_types: tuple[str, ...]  # empty: any stack of the workload; else only one running one of these
    parallel_fs: bool  # the parallel file system's own price: said only while the stack's file system has none

    def __new__(
        cls, text: str, *, workload: str | None = None, instance_types: tuple[str, ...] = (), parallel_fs: bool = False
    ) -> NotPriced:
        line = super().__new__(cls, text)
        line.workload = workload
        line.instance_types = instance_types
        line.parallel_fs = parallel_fs
        return line

    def __reduce__(self) -> tuple[object, ...]:  # copy, pickle: keep the scope
        return _rebuilt, (str(self), self.workload, self.instance_types, self.parallel_fs)

    def concerns(self, workload: str, instance_types: Iterable[str]) -> bool:
        if self.workload is not None and self.workload != workload:
            return False
        return not self.instance_types or bool(set(self.instance_types) & set(instance_types))


def _rebuilt(text: str, workload: str | None, instance_types: tuple[str, ...], parallel_fs: bool) -> NotPriced:
    return NotPriced(text, workload=workload, instance_types=instance_types, parallel_fs=parallel_fs)


def training_only(text: str) -> NotPriced:
    return NotPriced(text, workload="training")


def parallel_fs_price(text: str) -> NotPriced:
    """The training file system's price, when the cloud's table has none."""
    return NotPriced(text, workload="training", parallel_fs=True)


def serving_only(text: str) -> NotPriced:
    return NotPriced(text, workload="serving")


def not_priced_for(
    lines: Iterable[str], workload: str, instance_types: Iterable[str], *, parallel_fs_priced: bool = False
) -> list[str]:
    """The lines (as plain text) that concern a stack of `workload` running `instance_types`; with
    `parallel_fs_priced` (its file system has a price, or it deploys none), not the file system's price line."""
    types = tuple(instance_types)
    return [
        str(line)
        for line in lines
        if not isinstance(line, NotPriced)
        or (line.concerns(workload, types) and not (parallel_fs_priced and line.parallel_fs))
    ]
