"""The runner's caching rules on a small stage table of its own (fast; the real stages are in test_e2e)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from geo_cli.pipeline import (
    PipelineConfig,
    StageContext,
    StageOrderError,
    StageSpec,
    pipeline_status,
    run_pipeline,
)
from geo_cli.pipeline._config import load_pipeline_config

UNITS = 4


class Crash(BaseException):
    """Stands in for a kill: not an Exception, so the runner does not wrap it."""


class Table:
    """Three stages a -> b -> c; each does UNITS units of work, one line per unit, resuming after the last."""

    def __init__(self, crash: tuple[str, int] | None = None) -> None:
        self.calls: list[tuple[str, bool]] = []
        self.crash = crash

    def _run(self, name: str, ups: tuple[str, ...]) -> Any:
        def run(ctx: StageContext) -> dict[str, Any]:
            self.calls.append((name, ctx.resumed))
            units = ctx.folder / "units.txt"
            done = len(units.read_text().splitlines()) if units.exists() else 0
            for unit in range(done, UNITS):
                if self.crash == (name, unit):
                    raise Crash
                with units.open("a") as sink:
                    sink.write(f"{unit}\n")
            upstream = "".join((ctx.upstream[u] / "out.txt").read_text() for u in ups)
            (ctx.folder / "out.txt").write_text(upstream + f"{name}{self._setting(ctx.config, name)};")
            return {"units": UNITS}

        return run

    @staticmethod
    def _setting(config: PipelineConfig, name: str) -> Any:
        return {"a": config.mts.shard_size, "b": config.evaluate.depth, "c": config.report.gallery}[name]

    def specs(self) -> list[StageSpec]:
        out = []
        for name, ups in (("a", ()), ("b", ("a",)), ("c", ("b",))):
            out.append(StageSpec(
                name=name, upstream=lambda c, ups=ups: ups, enabled=lambda c: True,
                settings=lambda c, b, name=name: {"value": self._setting(c, name)},
                modules=lambda c: ("json",), run=self._run(name, ups),
            ))  # fmt: skip
        return out


MakeConfig = Callable[..., Path]


def _config(make: MakeConfig, changes: dict[str, Any] | None = None) -> tuple[PipelineConfig, Path]:
    return load_pipeline_config(make(changes))


def _actions(outcomes: Any) -> dict[str, str]:
    return {o.name: o.action for o in outcomes}


def test_second_run_skips_every_stage(tmp_path: Path, make_config: MakeConfig) -> None:
    config, base = _config(make_config)
    table = Table()
    first = run_pipeline(config, base, tmp_path / "w", stages=table.specs())
    assert _actions(first) == {"a": "ran", "b": "ran", "c": "ran"}
    table.calls.clear()
    second = run_pipeline(config, base, tmp_path / "w", stages=table.specs())
    assert _actions(second) == {"a": "cached", "b": "cached", "c": "cached"}
    assert table.calls == []
    assert (tmp_path / "w" / "c" / "out.txt").read_text() == "a4;b1;c2;"


def test_a_changed_stage_reruns_with_everything_downstream(tmp_path: Path, make_config: MakeConfig) -> None:
    config, base = _config(make_config)
    table = Table()
    run_pipeline(config, base, tmp_path / "w", stages=table.specs())
    changed, _ = _config(make_config, {"evaluate": {"depth": 3}})
    outcomes = run_pipeline(changed, base, tmp_path / "w", stages=table.specs())
    assert _actions(outcomes) == {"a": "cached", "b": "ran", "c": "ran"}
    assert (tmp_path / "w" / "c" / "out.txt").read_text() == "a4;b3;c2;"
    statuses = {s.name: s.status for s in pipeline_status(config, base, tmp_path / "w", table.specs())}
    assert statuses == {"a": "done", "b": "stale", "c": "stale"}  # the old config's view


def test_until_stops_and_from_reruns_a_suffix(tmp_path: Path, make_config: MakeConfig) -> None:
    config, base = _config(make_config)
    table = Table()
    partial = run_pipeline(config, base, tmp_path / "w", until="a", stages=table.specs())
    assert _actions(partial) == {"a": "ran", "b": "not_requested", "c": "not_requested"}
    assert not (tmp_path / "w" / "b").exists()
    run_pipeline(config, base, tmp_path / "w", stages=table.specs())
    table.calls.clear()
    again = run_pipeline(config, base, tmp_path / "w", start="b", until="b", stages=table.specs())
    assert _actions(again) == {"a": "kept", "b": "ran", "c": "not_requested"}
    assert table.calls == [("b", False)]


def test_from_needs_its_upstream_done(tmp_path: Path, make_config: MakeConfig) -> None:
    config, base = _config(make_config)
    with pytest.raises(StageOrderError, match="upstream stage a is missing"):
        run_pipeline(config, base, tmp_path / "w", start="b", stages=Table().specs())
    with pytest.raises(StageOrderError, match="no such stage"):
        run_pipeline(config, base, tmp_path / "w", until="trian", stages=Table().specs())
    with pytest.raises(StageOrderError, match="comes after"):
        run_pipeline(config, base, tmp_path / "w", start="c", until="a", stages=Table().specs())


def test_a_crashed_stage_resumes_where_it_stopped(tmp_path: Path, make_config: MakeConfig) -> None:
    config, base = _config(make_config)
    with pytest.raises(Crash):
        run_pipeline(config, base, tmp_path / "w", stages=Table(crash=("b", 2)).specs())
    statuses = {s.name: s.status for s in pipeline_status(config, base, tmp_path / "w", Table().specs())}
    assert statuses == {"a": "done", "b": "interrupted", "c": "missing"}
    table = Table()
    outcomes = run_pipeline(config, base, tmp_path / "w", stages=table.specs())
    assert _actions(outcomes) == {"a": "cached", "b": "resumed", "c": "ran"}
    assert table.calls == [("b", True), ("c", False)]
    assert (tmp_path / "w" / "b" / "units.txt").read_text().splitlines() == ["0", "1", "2", "3"]
    state = json.loads((tmp_path / "w" / "b" / "stage.json").read_text())
    assert state["status"] == "done" and state["attempts"] == 2


def test_an_interrupted_stage_with_other_inputs_starts_over(tmp_path: Path, make_config: MakeConfig) -> None:
    config, base = _config(make_config)
    with pytest.raises(Crash):
        run_pipeline(config, base, tmp_path / "w", stages=Table(crash=("b", 2)).specs())
    changed, _ = _config(make_config, {"evaluate": {"depth": 2}})
    table = Table()
    outcomes = run_pipeline(changed, base, tmp_path / "w", stages=table.specs())
    assert _actions(outcomes)["b"] == "ran"
    assert ("b", False) in table.calls


def test_unavailable_stage_blocks_what_depends_on_it(tmp_path: Path, make_config: MakeConfig) -> None:
    config, base = _config(make_config)
    specs = Table().specs()
    specs[1] = StageSpec(name="b", upstream=lambda c: ("a",), enabled=lambda c: True, settings=lambda c, b: {},
                         modules=lambda c: ("no_such_module_for_geo",), run=specs[1].run)  # fmt: skip
    outcomes = run_pipeline(config, base, tmp_path / "w", stages=specs)
    assert _actions(outcomes) == {"a": "ran", "b": "unavailable", "c": "blocked"}
    assert "no_such_module_for_geo" in outcomes[1].detail
    statuses = {s.name: s.status for s in pipeline_status(config, base, tmp_path / "w", specs)}
    assert statuses == {"a": "done", "b": "unavailable", "c": "blocked"}
