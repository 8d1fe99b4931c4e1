"""``geo pipeline run`` on the auxiliary-construction branch: mining, a proposer trained from scratch, search.

One small run through the real CLI (about a minute on 2 cores): 4 examples mined from random construction
sequences and written as chat records, a 24k-parameter Qwen2 proposer trained from scratch on them for
4 steps, and the aux_search stage on two problems: one plain deduction proves, one it does not (JGEX-AG-231
L058-9, which the foot of a perpendicular opens). Then resumption and the config errors a user meets first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from geo_cli.main import app
from geosynth.engine import parse_problem, replay, solve
from geosynth.synth import AuxExample

from .conftest import write_config

for _extra in ("torch", "transformers", "tokenizers", "accelerate"):
    pytest.importorskip(_extra, reason=f"the train stage needs {_extra} (geotrain[train])")

runner = CliRunner()

L058_9 = "a b = segment a b; c = on_bline c a b; d = on_tline d b a b; e = intersection_lt e c d a a b ? cong e c c d"
MIDLINE = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? para d e b c"
PROBLEMS = f"L058-9\n{L058_9}\nmidline\n{MIDLINE}\n"

CONFIG: dict[str, Any] = {
    "name": "aux-small",
    "hardware": {"summary": "2 CPU cores", "gpus": 0, "cpu_cores": 2},
    "workdir": "work",
    "data": {"train": {"source": "synthesize", "synth_kind": "aux_construction", "synth_count": 4}},
    "mts": {"enabled": False, "jobs": 1},
    "train": {
        "base_model": "scratch:qwen2",
        "scratch": {
            "hidden_size": 32,
            "num_layers": 1,
            "num_heads": 4,
            "num_kv_heads": 2,
            "intermediate_size": 64,
            "vocab_size": 400,
        },
        "settings": {
            "use_cpu": True,
            "max_steps": 4,
            "save_steps": 4,
            "logging_steps": 1,
            "per_device_batch_size": 2,
            "max_length": 384,
            "learning_rate": 0.002,
        },
    },
    "aux": {
        "problems": "problems.txt",
        "plain_time_limit": 10,
        "budget": 8,
        "node_time_limit": 2,
        "branching": 2,
        "beam": 2,
        "depth": 1,
        "max_tokens": 16,
    },
    "evaluate": {"enabled": False},
}


def _write(folder: Path, changes: dict[str, Any] | None = None) -> Path:
    (folder / "problems.txt").write_text(PROBLEMS, encoding="utf-8")
    return write_config(folder, changes, base=CONFIG)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config folder after one full ``geo pipeline run`` (work folder ``work/`` inside it)."""
    folder = tmp_path_factory.mktemp("aux_pipeline")
    result = runner.invoke(app, ["pipeline", "run", str(_write(folder))])
    assert result.exit_code == 0, result.output
    return folder


def test_the_data_stage_mines_examples_the_engine_needs_their_clauses_for(finished: Path) -> None:
    mined = finished / "work" / "data" / "synth" / "train"
    examples = [
        json.loads(line) for line in (mined / "examples.jsonl").read_text().splitlines()
    ]  # name, problem, auxiliary
    assert len(examples) == 4
    records = [json.loads(line) for line in (mined / "aux_records.jsonl").read_text().splitlines()]
    assert len(records) == sum(len(e["auxiliary"]) for e in examples)
    # each record's answer is a clause its example's full problem contains, asked of the problem before it
    for record in records:
        prompt, answer = (turn["content"][0]["text"] for turn in record["messages"])
        example = next(e for e in examples if record["id"].startswith(f"{e['name']}:"))
        assert answer in example["auxiliary"] and "Problem: " in prompt
    # the reduced problem and its clauses are a well-formed example (the miner proved it with them)
    example = AuxExample.model_validate_json((mined / "examples.jsonl").read_text().splitlines()[0])
    assert example.full_problem().goal is not None and example.auxiliary


def test_the_proposer_is_trained_on_the_chat_records(finished: Path) -> None:
    state = json.loads((finished / "work" / "train" / "stage.json").read_text())
    assert state["status"] == "done"
    assert state["inputs"]["settings"]["base_model"] == "scratch:qwen2"
    assert (finished / "work" / "train" / "model" / "config.json").is_file()


def test_aux_search_searches_only_what_plain_deduction_misses_and_replays_its_proofs(finished: Path) -> None:
    out = finished / "work" / "aux_search"
    rows = {r["name"]: r for r in map(json.loads, (out / "problems.jsonl").read_text().splitlines())}
    assert rows["midline"]["plain"] is True and "proposer" not in rows["midline"]
    hard = rows["L058-9"]
    assert hard["plain"] is False
    assert hard["proposer"]["proposals"] > 0 and hard["proposer"]["nodes"] >= 1
    assert hard["heuristic"]["solved"] and hard["heuristic"]["aux"]
    for method in ("proposer", "heuristic"):  # whatever either found proves the goal again and replays
        if hard[method]["solved"]:
            grown = parse_problem(L058_9.replace(" ?", "".join(f"; {c}" for c in hard[method]["aux"]) + " ?"))
            result, _ = solve(grown, time_limit=30)
            assert result.solved and result.proof is not None and replay(result.proof).ok
    summary = json.loads((out / "stage.json").read_text())["summary"]
    assert summary["problems"] == 2 and summary["plain_proved"] == 1 and summary["searched"] == 1
    assert summary["heuristic"]["solved"] == 1
    report = (out / "report.md").read_text()
    assert "| L058-9 | not proved |" in report and f"`{'; '.join(hard['heuristic']['aux'])}`" in report


def test_a_second_run_is_cached_and_an_interrupted_search_resumes(finished: Path) -> None:
    config = finished / "pipeline.yaml"
    again = runner.invoke(app, ["pipeline", "run", str(config)])
    assert again.exit_code == 0 and "aux_search" in again.output and "cached" in again.output
    out = finished / "work" / "aux_search"
    state = json.loads((out / "stage.json").read_text())
    rows = (out / "problems.jsonl").read_text().splitlines()
    (out / "problems.jsonl").write_text(rows[0] + "\n")  # as if stopped after the first problem
    (out / "stage.json").write_text(json.dumps({**state, "status": "running"}))
    resumed = runner.invoke(app, ["pipeline", "run", str(config)])
    assert resumed.exit_code == 0, resumed.output
    assert (out / "problems.jsonl").read_text().splitlines()[0] == rows[0]
    assert len((out / "problems.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"mts": {"enabled": True}}, "set mts.enabled: false"),
        (
            {"evaluate": {"enabled": True}, "data": {"test": {"source": "bundled_sample", "limit": 2}}},
            "not a PGPS policy",
        ),
        (
            {
                "data": {
                    "splits": {
                        "more": {"source": "synthesize", "synth_kind": "aux_construction", "synth_count": 2}
                    }
                }
            },
            "only train a proposer",
        ),
        ({"train": None}, "needs an enabled train stage"),
    ],
)
def test_configs_that_cannot_work_fail_naming_the_field(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    result = runner.invoke(app, ["pipeline", "check", str(_write(tmp_path, changes))])
    assert result.exit_code == 1
    assert message in " ".join(result.output.split())
