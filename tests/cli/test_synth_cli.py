"""`geo synth mts` and `geo synth mts-stats`: thin commands over geosynth.mts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import geosynth.mts
from geo_cli.main import app

runner = CliRunner()
DATASET = Path(__file__).resolve().parents[1] / "geosynth" / "mts" / "data" / "mini_pgps.json"


def test_mts_without_llm_writes_program_and_pal_traces_and_says_cot_was_skipped(tmp_path: Path) -> None:
    data = tmp_path / "mini_train.json"
    shutil.copyfile(DATASET, data)
    result = runner.invoke(
        app, ["synth", "mts", str(data), "--out", str(tmp_path / "out"), "--jobs", "1", "--no-mixtures"]
    )
    assert result.exit_code == 0, result.output
    assert "mini_train.json (train): 8 of 12 records usable" in result.stdout
    assert "PAL verified 6, failed 2" in result.stdout
    assert "skipped: no LLM configured" in result.stderr.replace("\n", " ")
    assert not (tmp_path / "out" / "mixtures").exists()

    stats = runner.invoke(app, ["synth", "mts-stats", str(tmp_path / "out")])
    assert stats.exit_code == 0, stats.output
    assert "#MTS-All" in stats.stdout and "mini_train.json" in stats.stdout and "skipped" in stats.stdout
    as_json = runner.invoke(app, ["synth", "mts-stats", "--json", str(tmp_path / "out")])
    row = json.loads(as_json.stdout)
    assert (row["split"], row["mts"], row["mts_all"], row["records"]) == ("train", 6, 14, 12)

    again = runner.invoke(app, ["synth", "mts", str(data), "--out", str(tmp_path / "out"), "--no-mixtures"])
    assert again.exit_code == 0 and "resumed: 2 stage shards reused, 0 computed" in again.stdout


def test_options_become_the_config_the_pipeline_receives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received: dict[str, Any] = {}

    def fake_run(dataset: Path, out: Path, config: geosynth.mts.MTSConfig, **kw: Any) -> geosynth.mts.MTSRun:
        received.update(dataset=dataset, out=out, config=config)
        raise geosynth.mts.MTSLLMError("stop here")

    monkeypatch.setattr(geosynth.mts, "run_mts", fake_run)
    llm = tmp_path / "llm.json"
    llm.write_text(json.dumps({"model": "qwen", "base_url": "http://127.0.0.1:1/v1"}))
    result = runner.invoke(
        app,
        [
            "synth",
            "mts",
            str(DATASET),
            "-o",
            str(tmp_path / "o"),
            "--llm",
            str(llm),
            "-j",
            "3",
            "--shard-size",
            "7",
            "--split",
            "dev",
            "--timeout",
            "5",
            "--images",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 3  # a runtime failure of the work (the LLM), not a usage error
    assert "MTSLLMError: stop here" in result.stderr
    config = received["config"]
    assert (config.jobs, config.shard_size, config.split, config.script_timeout) == (3, 7, "dev", 5.0)
    assert config.llm.model == "qwen" and config.images_dir == tmp_path and not config.use_ray


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["synth", "mts", "MISSING.json", "--out", "o"], "dataset file MISSING.json does not exist"),
        (
            ["synth", "mts", str(DATASET), "--out", "o", "--llm", "MISSING.yaml"],
            "LLM config MISSING.yaml does not exist",
        ),
        (["synth", "mts-stats", "."], "not an MTS output folder"),
    ],
)
def test_bad_input_is_a_user_error_naming_the_input(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert message in result.stderr.replace("\n", " ")


def test_jobs_must_be_positive() -> None:
    result = runner.invoke(app, ["synth", "mts", str(DATASET), "--out", "o", "--jobs", "0"])
    assert result.exit_code == 2


def test_generate_then_stats_then_resume(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    args = [
        "synth",
        "generate",
        "--n",
        "2",
        "--task",
        "proving",
        "--seed",
        "4",
        "--shard-size",
        "1",
        "--out",
        str(out),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"2 proving records in {out} (2 shards made this run)" in result.stdout
    assert json.loads((out / "stats.json").read_text())["records"] == 2
    stats = runner.invoke(app, ["synth", "stats", str(out), "--json"])
    assert stats.exit_code == 0, stats.output
    row = json.loads(stats.stdout)
    assert (row["records"], row["checked"], row["check_rate"]) == (2, 2, 1.0)
    table = runner.invoke(app, ["synth", "stats", str(out), "--no-recheck"])
    assert "not re-checked" in table.stdout and "goal types" in table.stdout
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "(0 shards made this run)" in again.stdout
    other = runner.invoke(app, [*args[:-2], "--seed", "5", "--out", str(out)])
    assert other.exit_code == 1 and "different settings (seed)" in other.stderr.replace("\n", " ")


def test_generate_rejects_a_bad_task_and_a_bad_config(tmp_path: Path) -> None:
    bad_task = runner.invoke(app, ["synth", "generate", "--task", "tiling", "--out", str(tmp_path / "x")])
    assert bad_task.exit_code == 1 and "--task must be calculation or proving" in bad_task.stderr
    config = tmp_path / "c.yaml"
    config.write_text("start: []\nrules: [{clause: '{x} = midpoint {x} {q} {b}'}]\n")
    bad = runner.invoke(app, ["synth", "generate", "--config", str(config), "--out", str(tmp_path / "y")])
    assert bad.exit_code == 1 and "unknown placeholders" in bad.stderr.replace("\n", " ")


def test_generate_writes_a_pgps_corpus_with_its_step_counts_and_refuses_bad_design_odds(
    tmp_path: Path,
) -> None:
    from geosynth.synth import load_config

    data = json.loads(load_config("pgps").model_dump_json())
    data |= {"time_limit": None, "pgps_design": {"forward": 0.6, "backward": 0.5}}
    config = tmp_path / "steps.yaml"
    config.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
    out = tmp_path / "ds"
    args = ["synth", "generate", "--config", str(config), "--task", "calculation", "--n", "2", "--pgps", "3"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    corpus = json.loads((out / "pgps" / "pgps.json").read_text(encoding="utf-8"))
    steps = json.loads((out / "pgps" / "stats.json").read_text(encoding="utf-8"))["steps"]
    assert corpus and sum(steps.values()) == len(corpus)
    assert f"{len(corpus)} PGPS problems in" in result.stdout
    assert "operator steps per program: " + ", ".join(f"{k}={v}" for k, v in steps.items()) in result.stdout
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["pgps_design"] == {"forward": 0.6, "backward": 0.5}

    data["pgps_design"] = {"forward": 0.6, "backward": -0.1}
    config.write_text(json.dumps(data), encoding="utf-8")
    bad = runner.invoke(app, [*args, "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 1 and "pgps_design.backward" in bad.stderr.replace("\n", " ")
    assert "Traceback" not in bad.output and not (tmp_path / "bad" / "pgps").exists()


def test_stats_of_a_folder_without_records_is_a_user_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["synth", "stats", str(tmp_path)])
    assert result.exit_code != 0 and "no data/shard" in result.stderr.replace("\n", " ")
