"""Reading a file a user named (a stack file, `--file`, `--policy-config`, `--prices`, `--trace`) without trusting it.

Every reader of a user's file goes through `read_bytes`/`read_text`, so each gets the same guarantees:

- The size limit is applied before reading: a regular file's size comes from `stat`, and every read is capped at
  the limit plus one byte, so `/dev/zero`, a pipe, stdin or a file growing while it is read cannot hold the
  command (or its memory) either.
- Only regular files (and stdin, `-`) are read: a FIFO with no writer would block `open` forever, a directory or a
  device is not a document.
- Text is UTF-8 (a leading byte order mark, as Windows editors write it, is dropped); any other encoding is refused
  with the line of the first byte that is not UTF-8, instead of a UnicodeDecodeError traceback.

`InputFileError` is a ValueError whose text names the source (the option and path) and, where known, the line.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

STDIN = "-"
BOM = b"\xef\xbb\xbf"


class InputFileError(ValueError):
    """A file (or stdin) a user named cannot be read as the document it should be."""

    def __init__(self, source: str, message: str):
        self.source = source
        self.message = message
        super().__init__(f"{source}: {message}")


def size_text(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit > 1024 * 1024 else f"{limit // 1024} KiB"


def read_bytes(path: Path | str, source: str, max_bytes: int) -> bytes:
    """The bytes of `path` (`-`: stdin), refused past `max_bytes` without reading further."""
    too_large = f"larger than {size_text(max_bytes)}; refused before reading it"
    if str(path) == STDIN:
        data = sys.stdin.buffer.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise InputFileError(source, too_large)
        return data
    try:
        # O_NONBLOCK: opening a FIFO with no writer returns at once (then refused below) instead of waiting forever.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise InputFileError(source, f"cannot read ({error.strerror or error})") from None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise InputFileError(source, "is a directory; give a file")
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(source, "not a regular file (a pipe, socket or device); give a file")
        if info.st_size > max_bytes:
            raise InputFileError(source, f"is {info.st_size:,} bytes, {too_large}")
        try:
            data = handle.read(max_bytes + 1)
        except OSError as error:
            raise InputFileError(source, f"cannot read ({error.strerror or error})") from None
    if len(data) > max_bytes:  # it grew since stat
        raise InputFileError(source, too_large)
    return data


def decode_utf8(data: bytes, source: str) -> str:
    """UTF-8 text of `data` (a leading BOM dropped); refused with the line of the first byte that is not UTF-8."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputFileError(
            source, f"line {line}: not UTF-8 text (byte 0x{data[error.start]:02x}); save the file as UTF-8"
        ) from None


def read_text(path: Path | str, source: str, max_bytes: int) -> str:
    """`read_bytes` then `decode_utf8`."""
    return decode_utf8(read_bytes(path, source, max_bytes), source)
