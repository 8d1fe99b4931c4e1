"""``geo pipeline check`` on every preset, config errors, and ``geo pipeline status`` output."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from geo_cli.pipeline import STAGES, available_presets, check_pipeline, load_pipeline_config, stage_keys
from geo_cli.pipeline._state import StageState, write_state

MakeConfig = Callable[..., Path]
runner = CliRunner()


def test_presets_are_shipped() -> None:
    assert {"cpu", "paper-pa-sft-qwen3vl8b", "paper-gm-prm", "paper-euclid-omni-10k",
            "paper-aux-construction-100k-ray"} <= set(available_presets())  # fmt: skip


@pytest.mark.parametrize("preset", available_presets())
def test_every_preset_validates_and_states_its_hardware(cli: typer.Typer, preset: str) -> None:
    result = runner.invoke(cli, ["pipeline", "check", preset])
    config, base = load_pipeline_config(preset)
    runnable = check_pipeline(config, base).runnable_here
    assert result.exit_code == (0 if runnable else 1), result.output  # 1: the run cannot start here
    out = " ".join(result.output.split())
    assert f"{preset}: config valid" in out
    assert " ".join(config.hardware.summary.split()) in out
    for stage in ("data", "mts", "train", "evaluate", "report"):
        assert f"{stage}: " in out


def test_the_cpu_preset_is_runnable_here(cli: typer.Typer) -> None:
    result = runner.invoke(cli, ["pipeline", "check", "cpu"])
    assert "runnable here" in result.output and "not available" not in result.output


def test_the_aux_construction_presets_mine_their_data_and_search_with_the_proposer(cli: typer.Typer) -> None:
    paper = " ".join(
        runner.invoke(cli, ["pipeline", "check", "paper-aux-construction-100k-ray"]).output.split()
    )
    assert "data: ready" in paper and "mts: disabled" in paper
    assert "aux_search: blocked (needs train" in paper and "not runnable here as is" in paper
    twin = " ".join(runner.invoke(cli, ["pipeline", "check", "cpu-aux"]).output.split())
    assert "data: ready" in twin and "train: ready" in twin and "aux_search: ready" in twin
    assert "runnable here" in twin and "not available" not in twin


def test_the_euclid_omni_preset_synthesizes_its_data(cli: typer.Typer) -> None:
    out = " ".join(runner.invoke(cli, ["pipeline", "check", "paper-euclid-omni-10k"]).output.split())
    assert "data: ready" in out and "mts: ready" in out and "not runnable here as is" in out


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"evaluate": {"depht": 3}}, "evaluate.depht: Extra inputs are not permitted"),
        ({"evaluate": {"depth": "3"}}, "evaluate.depth: Input should be a valid integer"),
        ({"data": {"train": {"source": "pgps_file"}}}, "source 'pgps_file' needs path"),
        ({"train": {"settings": {"learning_rat": 0.1}}}, "learning_rat"),
        ({"evaluate": {"enabled": True}, "data": {"test": None}}, "neither data.test nor data.splits is set"),
    ],
)
def test_bad_configs_fail_naming_the_field(
    cli: typer.Typer, make_config: MakeConfig, changes: dict[str, object], message: str
) -> None:
    result = runner.invoke(cli, ["pipeline", "check", str(make_config(changes))])
    assert result.exit_code == 1
    assert message in " ".join(result.output.split())


def test_missing_config_and_unknown_preset(cli: typer.Typer, tmp_path: Path) -> None:
    missing = runner.invoke(cli, ["pipeline", "status", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 1 and "does not exist" in missing.output
    unknown = runner.invoke(cli, ["pipeline", "check", "no-such-preset"])
    assert unknown.exit_code == 1 and "shipped presets: cpu" in " ".join(unknown.output.split())


def test_run_rejects_an_unknown_stage(cli: typer.Typer, make_config: MakeConfig, tmp_path: Path) -> None:
    result = runner.invoke(
        cli, ["pipeline", "run", str(make_config()), "--until", "trian", "-w", str(tmp_path / "w")]
    )
    assert result.exit_code == 1 and "--until 'trian': no such stage" in result.output


def test_status_shows_done_interrupted_stale_and_missing(
    cli: typer.Typer, make_config: MakeConfig, tmp_path: Path
) -> None:
    path = make_config()
    config, base = load_pipeline_config(path)
    keys = stage_keys(config, base, STAGES)
    work = tmp_path / "w"
    write_state(work / "data", StageState(key=keys["data"][0], status="done", inputs={}, seconds=2.5))
    write_state(work / "mts", StageState(key=keys["mts"][0], status="running", inputs={}))
    write_state(work / "train", StageState(key="0" * 64, status="done", inputs={}))
    result = runner.invoke(cli, ["pipeline", "status", str(path), "--workdir", str(work)])
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in result.output.splitlines()
            if line.count("│") >= 4 and line.split("│")[1].strip()}  # fmt: skip
    assert rows == {
        "data": "done",
        "mts": "interrupted",
        "train": "stale",
        "aux_search": "disabled",
        "evaluate": "missing",
        "report": "missing",
    }


def test_a_failing_stage_exits_3_and_is_left_interrupted(
    cli: typer.Typer, make_config: MakeConfig, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"prob_1": {"text": "Find x."}}')
    path = make_config({"data": {"train": {"source": "pgps_file", "path": str(bad)}}})
    work = tmp_path / "w"
    result = runner.invoke(cli, ["pipeline", "run", str(path), "--workdir", str(work)])
    assert result.exit_code == 3
    out = " ".join(result.output.split())
    assert "stage data failed: DataError" in out and "bad.json" in out and "rerun to resume" in out
    status = runner.invoke(cli, ["pipeline", "status", str(path), "--workdir", str(work)])
    assert "interrupted" in status.output
