"""The shared template environment: its bytecode cache may speed a render up, never change or fail one."""

from __future__ import annotations

import pytest
from jinja2 import DictLoader, Environment, StrictUndefined, UndefinedError

from accelstack.components import templates
from accelstack.components.templates import _BestEffortBytecodeCache, template_environment

SOURCE = {"unit.j2": "[Service]\n{% if on %}\nExecStart={{ command }}\n{% endif %}\n"}


def _environment(cache: _BestEffortBytecodeCache | None) -> Environment:
    return Environment(loader=DictLoader(SOURCE), undefined=StrictUndefined, bytecode_cache=cache)


def test_a_render_from_the_cache_equals_a_fresh_compile(tmp_path):
    cache = _BestEffortBytecodeCache(str(tmp_path), "t-%s.cache")
    first = _environment(cache).get_template("unit.j2").render(on=True, command="/bin/true")
    assert list(tmp_path.iterdir()), "the compiled template was not stored"
    second = _environment(cache).get_template("unit.j2").render(on=True, command="/bin/true")
    assert first == second == _environment(None).get_template("unit.j2").render(on=True, command="/bin/true")


def test_an_edited_template_is_compiled_again_not_read_from_the_cache(tmp_path):
    cache = _BestEffortBytecodeCache(str(tmp_path), "t-%s.cache")
    _environment(cache).get_template("unit.j2").render(on=True, command="a")
    SOURCE["unit.j2"], original = "changed {{ command }}\n", SOURCE["unit.j2"]
    try:
        assert _environment(cache).get_template("unit.j2").render(command="a") == "changed a"
    finally:
        SOURCE["unit.j2"] = original


def test_an_unwritable_cache_location_does_not_fail_a_render(tmp_path):
    """A path under a regular file cannot be written by anyone, root included (mode bits would not stop root)."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    cache = _BestEffortBytecodeCache(str(blocker / "cache"), "t-%s.cache")
    assert _environment(cache).get_template("unit.j2").render(on=False) == "[Service]\n"


def test_a_vanished_cache_directory_does_not_fail_a_render(tmp_path):
    cache = _BestEffortBytecodeCache(str(tmp_path / "gone"), "t-%s.cache")
    assert _environment(cache).get_template("unit.j2").render(on=False) == "[Service]\n"


def test_a_truncated_cache_entry_is_compiled_again(tmp_path):
    cache = _BestEffortBytecodeCache(str(tmp_path), "t-%s.cache")
    _environment(cache).get_template("unit.j2").render(on=False)
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(entry.read_bytes()[:40])
    fresh = _environment(None).get_template("unit.j2").render(on=True, command="x")
    assert (
        _environment(cache).get_template("unit.j2").render(on=True, command="x")
        == fresh
        == "[Service]\n\nExecStart=x\n"
    )


def test_environments_with_other_settings_do_not_share_entries(monkeypatch):
    trimmed = templates._bytecode_cache(Environment(trim_blocks=True))
    literal = templates._bytecode_cache(Environment(trim_blocks=False))
    other_delimiters = templates._bytecode_cache(Environment(trim_blocks=True, variable_start_string="<<"))
    assert trimmed is not None and literal is not None and other_delimiters is not None
    assert len({trimmed.pattern, literal.pattern, other_delimiters.pattern}) == 3
    assert templates._bytecode_cache(Environment(trim_blocks=True)).pattern == trimmed.pattern  # stable
    monkeypatch.setenv("ACCELSTACK_NO_TEMPLATE_CACHE", "1")
    assert templates._bytecode_cache(Environment()) is None


def test_a_missing_value_is_an_error_not_an_empty_string():
    environment = template_environment("accelstack.components.slurm")
    with pytest.raises(UndefinedError):
        environment.from_string("{{ nothing }}").render()


def test_a_second_process_reads_the_compiled_template_instead_of_compiling(tmp_path, monkeypatch):
    cache = _BestEffortBytecodeCache(str(tmp_path), "t-%s.cache")
    _environment(cache).get_template("unit.j2")
    compiled: list[str] = []
    original = Environment.compile

    def counting_compile(self, source, name=None, filename=None, raw=False, defer_init=False):
        compiled.append(name)
        return original(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(Environment, "compile", counting_compile)
    assert _environment(cache).get_template("unit.j2").render(on=False) == "[Service]\n"
    assert compiled == []
    assert _environment(None).get_template("unit.j2").render(on=False) == "[Service]\n"
    assert compiled == ["unit.j2"]  # the spy sees compiles: without a cache there is one
