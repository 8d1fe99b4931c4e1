"""The real stages end to end on a small config: caching, reruns, partial runs, resume after a kill, report.

Slow (about a minute and a half on 2 cores): every stage runs for real, with a tiny Qwen2-VL.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from geo_cli.pipeline import StageOutcome, load_pipeline_config, pipeline_status, run_pipeline
from geo_cli.pipeline._stages_prep import _root_cause

from .conftest import write_config

pytestmark = pytest.mark.slow
for _extra in ("torch", "transformers", "peft", "accelerate", "matplotlib"):
    pytest.importorskip(_extra, reason=f"the real stages need {_extra} (geotrain[train], geotts[report])")
MakeConfig = Callable[..., Path]


class Kill(BaseException):
    """Stands in for SIGKILL/Ctrl-C: not an Exception, so nothing on the way catches it."""


class KillAt:
    """Events that interrupt the run when ``stage`` reports ``at`` units done."""

    def __init__(self, stage: str, at: int) -> None:
        self.target = (stage, at)

    def stage(self, name: str, action: str, detail: str) -> None:
        """Ignore stage changes."""

    def progress(self, name: str, done: int, total: int, what: str) -> None:
        if (name, done) == self.target:
            raise Kill


def _actions(outcomes: list[StageOutcome]) -> dict[str, str]:
    return {o.name: o.action for o in outcomes}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[StageOutcome]]:
    """The small pipeline run once: (config file, work folder, outcomes)."""
    folder = tmp_path_factory.mktemp("e2e")
    path = write_config(folder)
    config, base = load_pipeline_config(path)
    outcomes = run_pipeline(config, base, folder / "work")
    return path, folder / "work", outcomes


def _copy(work: Path, tmp_path: Path) -> Path:
    target = tmp_path / "work"
    shutil.copytree(work, target, symlinks=True)
    return target


def test_every_stage_runs_then_a_second_run_skips_them_all(finished: Any, cli: typer.Typer) -> None:
    path, work, first = finished
    ran = dict.fromkeys(("data", "mts", "train", "evaluate", "report"), "ran")
    assert _actions(first) == {**ran, "aux_search": "disabled"}
    results = json.loads((work / "evaluate" / "results.json").read_text())
    assert results["problems"] == 2 and [p["budget"] for p in results["sc_sample"]] == [1, 2, 3, 4]
    state = json.loads((work / "train" / "stage.json").read_text())
    assert state["summary"]["global_step"] == 4 and (work / "train" / "model" / "config.json").is_file()
    assert json.loads((work / "mts" / "stats.json").read_text())["traces"]["pal"] > 0
    second = CliRunner().invoke(cli, ["pipeline", "run", str(path), "--workdir", str(work)])
    assert second.exit_code == 0, second.output
    assert second.output.count("cached (inputs unchanged)") == 5 and "report: " in second.output
    status = CliRunner().invoke(cli, ["pipeline", "status", str(path), "-w", str(work)])
    assert status.exit_code == 0 and status.output.count(" done ") == 5


def test_a_changed_evaluate_setting_reruns_evaluate_and_report_only(finished: Any, tmp_path: Path) -> None:
    path, work, _ = finished
    work = _copy(work, tmp_path)
    config, base = load_pipeline_config(
        write_config(path.parent, {"evaluate": {"max_tokens": 6}}, name="changed.yaml")
    )
    outcomes = run_pipeline(config, base, work)
    assert _actions(outcomes) == {"data": "cached", "mts": "cached", "train": "cached", "aux_search": "disabled",
                                  "evaluate": "ran", "report": "ran"}  # fmt: skip
    state = json.loads((work / "evaluate" / "stage.json").read_text())
    assert state["inputs"]["settings"]["max_tokens"] == 6
    for line in (work / "evaluate" / "candidates.jsonl").read_text().splitlines():
        # 4 greedy + 4 x D sampled + 4 x D unified sampled + 4 x D beam candidates, at most 6 tokens each
        assert json.loads(line)["tokens"] <= (4 + 3 * 4) * 6


def test_from_and_until_run_a_slice(finished: Any, tmp_path: Path) -> None:
    path, work, _ = finished
    work = _copy(work, tmp_path)
    config, base = load_pipeline_config(path)
    before = (work / "report" / "index.html").stat().st_mtime_ns
    outcomes = run_pipeline(config, base, work, start="evaluate", until="evaluate")
    assert _actions(outcomes) == {"data": "kept", "mts": "kept", "train": "kept", "aux_search": "disabled",
                                  "evaluate": "ran", "report": "not_requested"}  # fmt: skip
    assert (work / "report" / "index.html").stat().st_mtime_ns == before
    fresh = tmp_path / "fresh"
    partial = run_pipeline(config, base, fresh, until="mts")
    assert _actions(partial)["mts"] == "ran" and _actions(partial)["train"] == "not_requested"
    assert {s.name: s.status for s in pipeline_status(config, base, fresh)}["train"] == "missing"


def test_a_kill_during_training_and_evaluation_resumes(finished: Any, tmp_path: Path) -> None:
    path, work, _ = finished
    work = _copy(work, tmp_path)
    for stage in ("train", "evaluate", "report"):
        shutil.rmtree(work / stage)
    config, base = load_pipeline_config(path)
    with pytest.raises(Kill):
        run_pipeline(config, base, work, events=KillAt("train", 3))
    assert any((work / "train" / "run").glob("checkpoint-2"))
    assert {s.name: s.status for s in pipeline_status(config, base, work)}["train"] == "interrupted"
    with pytest.raises(Kill):
        run_pipeline(config, base, work, events=KillAt("evaluate", 1))
    assert len((work / "evaluate" / "candidates.jsonl").read_text().splitlines()) == 1
    outcomes = run_pipeline(config, base, work)
    assert _actions(outcomes) == {"data": "cached", "mts": "cached", "train": "cached", "aux_search": "disabled",
                                  "evaluate": "resumed", "report": "ran"}  # fmt: skip
    train = json.loads((work / "train" / "stage.json").read_text())
    assert train["summary"]["resumed_from_checkpoint"] is True and train["summary"]["global_step"] == 4
    assert train["attempts"] == 2
    ids = [json.loads(x)["id"] for x in (work / "evaluate" / "candidates.jsonl").read_text().splitlines()]
    assert len(ids) == 2 and len(set(ids)) == 2


class Steps(KillAt):
    """Events that record the train stage's progress (and interrupt it at ``at``, when given)."""

    def __init__(self, at: int = -1) -> None:
        super().__init__("train", at)
        self.done: list[tuple[int, int]] = []

    def progress(self, name: str, done: int, total: int, what: str) -> None:
        if name == "train":
            self.done.append((done, total))
        super().progress(name, done, total, what)


def test_the_accelerate_launcher_trains_on_two_processes_shows_steps_and_resumes(
    finished: Any, tmp_path: Path
) -> None:
    path, work, _ = finished
    work = _copy(work, tmp_path)
    for stage in ("train", "evaluate", "report"):
        shutil.rmtree(work / stage)
    launcher = {"kind": "accelerate", "accelerate_config": "ddp_cpu", "num_processes": 2}
    config, base = load_pipeline_config(
        write_config(path.parent, {"train": {"launcher": launcher}}, name="ddp.yaml")
    )
    first = Steps(at=3)  # checkpoint-2 is whole by then: step 3 needs both processes past their save
    with pytest.raises(Kill):  # an interrupt while the two processes train stops them
        run_pipeline(config, base, work, until="train", events=first)
    assert first.done[:3] == [(1, 4), (2, 4), (3, 4)]
    assert {s.name: s.status for s in pipeline_status(config, base, work)}["train"] == "interrupted"
    second = Steps()
    outcomes = run_pipeline(config, base, work, until="train", events=second)
    assert _actions(outcomes)["train"] == "resumed"
    # the steps left after the latest checkpoint (none when the interrupt came after the last one)
    assert all(total == 4 for _, total in second.done) and [d for d, _ in second.done] == sorted(
        {d for d, _ in second.done}
    )
    state = json.loads((work / "train" / "stage.json").read_text())
    assert state["summary"]["global_step"] == 4 and state["summary"]["resumed_from_checkpoint"] is True
    assert (work / "train" / "model" / "config.json").is_file()


def test_the_real_report_renders_in_chromium(finished: Any, chromium: str, tmp_path: Path) -> None:
    _, work, _ = finished
    page = work / "report" / "index.html"
    probe = page.with_name("probe.html")
    script = ("<script>window.addEventListener('load',()=>{const i=[...document.images];document.body.setAttribute("
              "'data-images',i.length+'/'+i.filter(x=>x.complete&&x.naturalWidth>0).length)});</script></body>")  # fmt: skip
    probe.write_text(page.read_text().replace("</body>", script))
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    probe.unlink()
    found = re.search(r'data-images="(\d+)/(\d+)"', dom)
    assert found is not None and int(found.group(1)) >= 5 and found.group(1) == found.group(2)


def test_a_failed_launch_reports_the_training_process_error_not_the_launcher_summary() -> None:
    log = "\n".join([
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/x/trainer.py", line 1555, in train',
        "/x/warnings.py:12: UserWarning: something harmless",
        "[rank1]: FileNotFoundError: [Errno 2] No such file or directory: 'run/checkpoint-4/trainer_state.json'",
        "Traceback (most recent call last):",
        "    raise ChildFailedError(",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "  rank      : 1 (local_rank: 1)",
    ])  # fmt: skip
    assert _root_cause(log) == (
        "FileNotFoundError: [Errno 2] No such file or directory: 'run/checkpoint-4/trainer_state.json'"
    )
    assert _root_cause("no exception here\n  exitcode  : -9") == "no exception here\n  exitcode  : -9"
