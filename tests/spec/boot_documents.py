"""The boot documents a deploy sends, read out of a preview's resource inputs, and where a value sits in each.

A deploy sends more than `accelstack render` writes: launch templates' user data (base64, MIME multi-part for AWS
Batch), Azure custom data, Compute Engine metadata (user-data, startup-script), Batch job definitions (JSON),
Cluster Director startup scripts, Azure ML command components. `documents` finds them all by their form, not by a
list of resource types, and unpacks what they carry (cloud-config write_files, runcmd's `bash -c`, heredocs written
to files, `bash -c` inside a unit's Exec line), so each text is judged by the reader that will read it.
"""

from __future__ import annotations

import base64
import binascii
import email
import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
SCRIPT, UNIT, ENVIRONMENT, YAML, JSON, MIME, TEXT = "script", "unit", "env", "yaml", "json", "mime", "text"


@dataclass(frozen=True)
class Document:
    kind: str
    text: str


def _decoded(text: str) -> str:
    """`text`, or what it encodes where it is base64 of UTF-8 text (user data, custom data)."""
    if len(text) % 4 or not _BASE64.fullmatch(text):
        return text
    try:
        raw = base64.b64decode(text, validate=True)
        # gzip, as cloud-init reads it (AWS sends user data over EC2's 16 KB compressed: components/aws/boot_data.py)
        return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()
    except (binascii.Error, UnicodeDecodeError, OSError):
        return text


def _is_bash_c(value: list[Any]) -> bool:
    return (
        len(value) >= 3
        and all(isinstance(item, str) for item in value[:3])
        and value[0].rsplit("/", 1)[-1] in ("bash", "sh")
        and value[1] == "-c"
    )


def documents(inputs: Any, where: str) -> dict[str, Document]:
    found: dict[str, Document] = {}
    _walk(inputs, where, found)
    return found


def _walk(value: Any, where: str, found: dict[str, Document]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "command" and isinstance(item, str):  # Azure ML: a component's command line
                found[f"{where}.command"] = Document(SCRIPT, item)
            else:
                # EC2's user data, raw (userData) or base64 of its gzip (userDataBase64), is one document.
                _walk(item, f"{where}.{'userData' if key == 'userDataBase64' else key}", found)
    elif isinstance(value, list):
        if _is_bash_c(value):
            found[f"{where}[bash -c]"] = Document(SCRIPT, value[2])
        for index, item in enumerate(value):
            _walk(item, f"{where}.{index}", found)
    elif isinstance(value, str):
        _text(value, where, found)


def _text(raw: str, where: str, found: dict[str, Document]) -> None:
    text = _decoded(raw)
    head = text.lstrip()[:64]
    if text.startswith("Content-Type: multipart/"):
        parts = [part for part in email.message_from_string(text).walk() if not part.is_multipart()]
        found[where] = Document(MIME, "\n".join(str(part.get_content_type()) for part in parts))
        for index, part in enumerate(parts):
            _text(str(part.get_payload()), f"{where}#part{index}", found)
    elif head.startswith("#cloud-config"):
        found[where] = Document(YAML, text)
        document = yaml.safe_load(text) or {}
        for entry in document.get("write_files", []):
            if entry.get("encoding") not in ("b64", "base64"):  # encoded files are the shipped sources
                _file(entry["path"], str(entry.get("content", "")), f"{where}:{entry['path']}", found)
        for key in ("runcmd", "bootcmd"):
            _walk(document.get(key, []), f"{where}:{key}", found)
    elif head.startswith(("#!/bin/bash", "#!/bin/sh", "#!/usr/bin/env bash", "#cloud-boothook")):
        _script(text, where, found)
    elif head[:1] in "{[":
        try:
            parsed = json.loads(text)
        except ValueError:
            return
        if isinstance(parsed, (dict, list)) and len(text) > 2:
            found[where] = Document(JSON, text)
            _walk(parsed, where, found)


def _file(path: str, content: str, where: str, found: dict[str, Document]) -> None:
    """A file a boot document writes, judged as its reader reads it."""
    if content.startswith("#!") and re.match(r"#!\S*(bash|/sh)\b", content):
        _script(content, where, found)
    elif re.search(r"\.(service|timer|mount|socket|path)$|/systemd/system/.*\.d/.*\.conf$", path):
        _unit(content, where, found)
    elif path.endswith(".env"):
        found[where] = Document(ENVIRONMENT, content)
    elif not content.startswith("#!"):  # another program's source (python) is shipped, not templated
        found[where] = Document(TEXT, content)


def _script(text: str, where: str, found: dict[str, Document]) -> None:
    found[where] = Document(SCRIPT, text)
    for path, body in heredoc_files(text):
        _file(path, body, f"{where}>{path}", found)


def _unit(text: str, where: str, found: dict[str, Document]) -> None:
    found[where] = Document(UNIT, text)
    for number, line in enumerate(text.splitlines()):
        if re.match(r"Exec\w*=", line):
            words = unit_words(line.split("=", 1)[1].lstrip("-@:+!"))
            if _is_bash_c(words):
                found[f"{where}@{number}[bash -c]"] = Document(SCRIPT, words[2])


def unit_words(command: str) -> list[str]:
    """An Exec*= command line split as systemd does (systemd.service, "Command lines": quotes with C escapes)."""
    words: list[str] = []
    for match in re.finditer(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(\S+)""", command):
        quoted = match.group(1) if match.group(1) is not None else match.group(2)
        word = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else match.group(3)
        words.append(word.replace("$$", "$").replace("%%", "%"))
    return words


_HEREDOC = re.compile(r"""<<-?\s*(?:'(\w+)'|"(\w+)"|\\?(\w+))""")


def heredoc_files(script: str) -> Iterator[tuple[str, str]]:
    """(path, body) of every `cat > PATH <<'WORD'` in a script: files it writes, to be read as their own kind."""
    lines = script.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        match = _HEREDOC.search(line)
        if not match or "<<<" in line:
            continue
        word = next(group for group in match.groups() if group)
        body: list[str] = []
        while index < len(lines) and lines[index].rstrip("\n") != word:
            body.append(lines[index])
            index += 1
        index += 1
        target = re.search(r">\s*(\S+)\s*<<", line)
        if target:
            yield target.group(1).strip("'\""), "".join(body)


# What a bash word may hold unquoted and mean only itself (shlex.quote's safe set).
_PLAIN = re.compile(r"[\w@%+=:,./-]*", re.ASCII)
NORMAL, SINGLE, DOUBLE, COMMENT, LITERAL_BODY, EXPANDING_BODY = "normal", "'", '"', "#", "<<'", "<<"


def shell_contexts(script: str) -> list[str]:
    """The quoting context of each character of a bash script, as bash reads it (quotes, comments, heredoc bodies;
    a command substitution inside double quotes is taken as double-quoted, which only makes the check stricter)."""
    contexts = [NORMAL] * len(script)
    state, position, pending = NORMAL, 0, []
    while position < len(script):
        char = script[position]
        contexts[position] = state
        if state == NORMAL:
            if char == "\\":
                position += 1
                if position < len(script):
                    contexts[position] = NORMAL
            elif char == "'":
                state = SINGLE
            elif char == '"':
                state = DOUBLE
            elif char == "#" and (position == 0 or script[position - 1] in " \t\n;&|("):
                state = COMMENT
            elif script.startswith("<<", position) and not script.startswith("<<<", position):
                match = _HEREDOC.match(script, position)
                if match:
                    quoted = match.group(1) or match.group(2) or script[match.start(3) - 1] == "\\"
                    pending.append((next(g for g in match.groups() if g), LITERAL_BODY if quoted else EXPANDING_BODY))
                    for inner in range(position, match.end()):
                        contexts[inner] = NORMAL
                    position = match.end()
                    continue
            elif char == "\n" and pending:
                position = _bodies(script, position + 1, pending, contexts)
                pending = []
                continue
        elif state == SINGLE and char == "'":
            state = NORMAL
        elif state == DOUBLE:
            if char == "\\":
                position += 1
                if position < len(script):
                    contexts[position] = DOUBLE
            elif char == '"':
                state = NORMAL
        elif state == COMMENT and char == "\n":
            state = NORMAL
            if pending:
                position = _bodies(script, position + 1, pending, contexts)
                pending = []
                continue
        position += 1
    return contexts


def _bodies(script: str, start: int, pending: list[tuple[str, str]], contexts: list[str]) -> int:
    position = start
    for word, kind in pending:
        while position < len(script):
            end = script.find("\n", position)
            end = len(script) if end < 0 else end + 1
            line = script[position:end]
            for inner in range(position, end):
                contexts[inner] = NORMAL if line.strip() == word else kind
            position = end
            if line.strip() == word:
                break
    return position


def shell_problem(payload: str, context: str) -> str | None:
    """Why `payload` is not data where bash reads it in `context`, or None."""
    if context in (SINGLE, COMMENT, LITERAL_BODY):
        return None
    if context in (DOUBLE, EXPANDING_BODY):
        live = set(payload) & set('$`\\"')
        return f"{sorted(live)} expand inside double quotes or an unquoted heredoc" if live else None
    return None if _PLAIN.fullmatch(payload) else "unquoted, with characters bash reads as syntax"


def unit_problem(payload: str, line: str) -> str | None:
    """Why a unit line holding `payload` does not hold it as data, or None: a lone `%` is a specifier, a lone `$`
    in an Exec line expands, and an Exec word must be quoted if it holds a space."""
    if "%" in payload and "%" in line.replace("%%", ""):
        return "an undoubled % (a specifier)"
    if re.match(r"Exec\w*=", line) and "$" in payload and "$" in line.replace("$$", ""):
        return "an undoubled $ in a command line"
    return None


_ENVIRONMENT_LINE = re.compile(r"""[A-Za-z_]\w*=(?:[\w@+=:,./~${}-]*|"(?:[^"\\`$]|\\.)*")""", re.ASCII)


def environment_problem(line: str) -> str | None:
    return None if _ENVIRONMENT_LINE.fullmatch(line) else 'not KEY=word or KEY="quoted"'


def shape(value: Any) -> Any:
    """A parsed document's structure: keys, list lengths, value types and written paths, not its text."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items() if key != "content"} | (
            {"path": value["path"]} if "path" in value else {}
        )
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__


def structure(document: Document) -> Any:
    """What must not change when a value does: a YAML or JSON document's shape, a MIME message's parts, and the
    number of lines of a text (values hold no line breaks)."""
    if document.kind == YAML:
        return shape(yaml.safe_load(document.text))
    if document.kind == JSON:
        return shape(json.loads(document.text))
    if document.kind == MIME:
        return document.text
    return len(document.text.splitlines())
