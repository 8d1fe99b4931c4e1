"""``geo pipeline run`` on synthesized PGPS-format splits, a bundled split and a from-scratch text-only model.

One small run through the real CLI (about 35 s on 2 cores): a ``pgps`` training split of 3 engine figures, a
``pgps`` held-out split of 2 other figures, 3 bundled Geometry3K records, MTS in the clauses setting with the
template teacher, a 24k-parameter Qwen2 trained from scratch for 2 steps, and evaluation of both evaluation
splits. Then the data stage alone with ``exclude`` files, and the config errors a user meets first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from geo_cli.main import app
from geodsl.data import PGPSRecord, check_dataset, load_pgps, load_sample
from geosynth.synth import find_leaks, question_key, statement_key

from .conftest import write_config

for _extra in ("torch", "transformers", "tokenizers", "accelerate"):
    pytest.importorskip(_extra, reason=f"the train stage needs {_extra} (geotrain[train])")

runner = CliRunner()

SCRATCH = {"hidden_size": 32, "num_layers": 1, "num_heads": 4, "num_kv_heads": 2, "intermediate_size": 64,
           "vocab_size": 400}  # fmt: skip
CONFIG: dict[str, Any] = {
    "name": "pgps-splits",
    "hardware": {"summary": "2 CPU cores", "gpus": 0, "cpu_cores": 2},
    "workdir": "work",
    "data": {
        "train": {"source": "synthesize", "synth_kind": "pgps", "synth_count": 3, "synth_seed": 0},
        "splits": {
            "heldout": {"source": "synthesize", "synth_kind": "pgps", "synth_count": 2, "synth_seed": 1},
            "sample": {"source": "bundled_sample", "sample": "geometry3k_test", "limit": 3},
        },
        "draw_missing_diagrams": False,
    },
    "mts": {"jobs": 1, "shard_size": 50, "setting": "clauses", "llm": {"backend": "template"}},
    "train": {
        "base_model": "scratch:qwen2",
        "scratch": SCRATCH,
        "settings": {
            "use_cpu": True,
            "max_steps": 2,
            "save_steps": 2,
            "logging_steps": 1,
            "per_device_batch_size": 2,
            "max_length": 512,
            "learning_rate": 0.002,
        },
    },
    "evaluate": {
        "setting": "clauses",
        "depth": 1,
        "beam": False,
        "max_tokens": 16,
        "temperature": 1.0,
        "sandbox_workers": 1,
    },
    "report": {"gallery": 1},
}


def _write(folder: Path, changes: dict[str, Any] | None = None, name: str = "pipeline.yaml") -> Path:
    """CONFIG deep-updated with ``changes`` (a None value deletes the key), as YAML in ``folder``."""
    return write_config(folder, changes, name, base=CONFIG)


def _error(result: Result) -> str:
    """The one ``error:`` line of a failed command; fails unless stderr is exactly that line."""
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0].removeprefix("error: ")


def _keys(records: list[PGPSRecord]) -> set[str]:
    return {k for r in records for k in (f"s{statement_key(r)}", f"q{question_key(r)}")}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config folder after one full ``geo pipeline run`` (work folder ``work/`` inside it)."""
    folder = tmp_path_factory.mktemp("pgps_splits")
    result = runner.invoke(app, ["pipeline", "run", str(_write(folder))])
    assert result.exit_code == 0, result.output
    return folder


def _split(folder: Path, name: str) -> list[PGPSRecord]:
    return load_pgps(folder / "work" / "data" / f"{name}.json")


def test_the_data_stage_writes_every_split_in_pgps_format(finished: Path) -> None:
    data = finished / "work" / "data"
    assert {p.name for p in data.glob("*.json")} >= {"train.json", "heldout.json", "sample.json"}
    train, heldout = _split(finished, "train"), _split(finished, "heldout")
    assert 3 <= len(train) <= 12 and 2 <= len(heldout) <= 8  # up to 4 problems on each figure
    for records in (train, heldout):  # every synthesized program executes to its stored answer
        report = check_dataset(records)
        assert report.agree == len(records), report.misses
    assert _split(finished, "sample") == load_sample("geometry3k_test")[:3]


def test_no_heldout_problem_poses_a_training_problem(finished: Path) -> None:
    train, heldout = _split(finished, "train"), _split(finished, "heldout")
    assert find_leaks(heldout, train) == []
    assert not _keys(heldout) & _keys(train)
    assert not {r.id for r in heldout} & {r.id for r in train}


def test_mts_writes_clause_records_and_train_builds_the_scratch_shape(finished: Path) -> None:
    work = finished / "work"
    mixture = [json.loads(x) for x in (work / "mts" / "mixtures" / "mts_all.jsonl").read_text().splitlines()]
    assert mixture and all(r["images"] == [] and r["perception_span"] == [0, 0] for r in mixture)
    assert all(r["messages"][0]["content"][0]["text"].startswith("Diagram relations:\n") for r in mixture)
    base = json.loads((work / "train" / "base_model" / "config.json").read_text())
    assert (base["model_type"], base["hidden_size"], base["num_hidden_layers"]) == ("qwen2", 32, 1)
    assert json.loads((work / "train" / "stage.json").read_text())["summary"]["global_step"] == 2


def test_results_score_every_evaluation_split_with_the_trained_model(finished: Path) -> None:
    work = finished / "work"
    results = json.loads((work / "evaluate" / "results.json").read_text())
    splits = results["splits"]
    assert set(splits) == {"heldout", "sample"} and results["primary"] == "heldout"
    for name, entry in splits.items():
        records = _split(finished, name)
        assert entry["problems"] == len(records)
        candidates = work / "evaluate" / entry["folder"] / "candidates.jsonl"
        ids = [json.loads(x)["id"] for x in candidates.read_text().splitlines()]
        assert sorted(ids) == sorted(r.id for r in records)
    assert results["problems"] == splits["heldout"]["problems"]
    model = results["model"]
    assert (model["setting"], model["base_model"], model["architecture"]) == (
        "clauses",
        "scratch:qwen2",
        "qwen2",
    )
    # 448 embedding rows (413 tokens rounded up to 64, tied) + one layer + the final norm
    assert (
        model["parameters"]
        == 448 * 32 + (32 * 32 + 32 + 2 * (32 * 16 + 16) + 32 * 32 + 3 * 32 * 64 + 64) + 32
    )


def test_exclude_files_and_the_training_split_are_left_out(finished: Path, tmp_path: Path) -> None:
    first = _split(finished, "train")
    dropped = first[0]
    exclude = tmp_path / "exclude.json"
    exclude.write_text(json.dumps({dropped.id: json.loads((finished / "work" / "data" / "train.json")
                                   .read_text())[dropped.id]}), encoding="utf-8")  # fmt: skip
    # The same seed again, now excluding one of its problems, and an evaluation split drawing the same
    # three figures (seed 0): of its problems only the excluded one is not a training problem.
    config = _write(tmp_path, {
        "data": {"train": {"exclude": ["exclude.json"]},
                 "splits": {"heldout": None, "sample": None,
                            "overlap": {"source": "synthesize", "synth_kind": "pgps", "synth_count": 3}}},
    })  # fmt: skip
    result = runner.invoke(app, ["pipeline", "run", str(config), "--until", "data"])
    assert result.exit_code == 0, result.output
    train = load_pgps(tmp_path / "work" / "data" / "train.json")
    assert statement_key(dropped) not in {statement_key(r) for r in train}
    assert [r.id for r in train] == [r.id for r in first[1:]]  # nothing else changed
    overlap = load_pgps(tmp_path / "work" / "data" / "overlap.json")
    assert overlap == [dropped] and find_leaks(overlap, train) == []


def test_a_missing_exclude_file_is_one_line_naming_it(tmp_path: Path) -> None:
    config = _write(tmp_path, {"data": {"train": {"exclude": ["nope/pgps9k_test.json"]}}})
    missing = tmp_path / "nope" / "pgps9k_test.json"
    message = _error(runner.invoke(app, ["pipeline", "run", str(config)]))
    assert message == f"data.train.exclude: PGPS file {missing} does not exist"
    check = runner.invoke(app, ["pipeline", "check", str(config)])
    assert check.exit_code == 1 and f"missing input: {missing}" in check.output
    assert "data: not available (inputs missing here: nope/pgps9k_test.json)" in " ".join(
        check.output.split()
    )


@pytest.mark.parametrize(
    ("scratch", "message"),
    [
        ({"hidden_size": 50, "num_heads": 6}, "train.scratch: Value error, hidden_size 50 is not a multiple of num_heads 6"),
        ({"num_layer": 2}, "train.scratch.num_layer: Extra inputs are not permitted"),
        ({"vocab_size": 100}, "train.scratch.vocab_size: Input should be greater than or equal to 300"),
    ],
)  # fmt: skip
def test_a_bad_scratch_field_is_one_line_naming_train_scratch(
    tmp_path: Path, scratch: dict[str, Any], message: str
) -> None:
    config = _write(tmp_path, {"train": {"scratch": scratch}})
    for command in ("check", "run"):
        assert _error(runner.invoke(app, ["pipeline", command, str(config)])) == message
    assert not (tmp_path / "work" / "data").exists()  # rejected before any stage ran


def test_training_in_one_setting_and_evaluating_in_the_other_is_rejected_naming_both(tmp_path: Path) -> None:
    config = _write(tmp_path, {"mts": {"setting": "image"}})
    for command in ("check", "run"):
        message = _error(runner.invoke(app, ["pipeline", command, str(config)]))
        assert "evaluate.setting 'clauses' differs from mts.setting 'image'" in message
    assert not (tmp_path / "work").exists()


def test_a_split_record_with_an_unknown_operator_is_one_line_naming_it(tmp_path: Path) -> None:
    records = load_sample("geometry3k_test")[:3]
    raw = {r.id: {"text": r.text, "parsing_stru_seqs": list(r.stru_clauses), "parsing_sem_seqs": list(r.sem_clauses),
                  "expression": r.expression, "answer": r.answer, "type": r.type, "choices": list(r.choices)}
           for r in records}  # fmt: skip
    bad = records[1].id
    raw[bad]["expression"] = "Foo N0 N1 Get V0"
    (tmp_path / "bad.json").write_text(json.dumps(raw), encoding="utf-8")
    config = _write(tmp_path, {"data": {"train": None, "splits": {"heldout": None, "sample": {"source": "pgps_file", "path": "bad.json", "limit": None}}},
                               "mts": {"enabled": False}, "train": {"enabled": False},
                               "evaluate": {"model": str(tmp_path / "unused")}})  # fmt: skip
    message = _error(runner.invoke(app, ["pipeline", "run", str(config)]))
    assert message.startswith(
        f"data: bad.json: record {bad}: its expression 'Foo N0 N1 Get V0' does not parse: "
    )
    assert "unknown operator 'Foo'" in message
    assert not (tmp_path / "work" / "data" / "sample.json").exists()  # nothing half-written


def test_synth_config_chooses_the_generator_preset_and_keys_the_data_stage(
    finished: Path, tmp_path: Path
) -> None:
    from geosynth.synth import load_config, write_dataset

    plain = {"data": {"train": {"synth_config": "pgps-v1"}}}
    config = _write(tmp_path, plain)
    result = runner.invoke(app, ["pipeline", "run", str(config), "--until", "data"])
    assert result.exit_code == 0, result.output
    # the split is what the named generator preset writes for the same figures, not the default's
    write_dataset(
        load_config("pgps-v1"), 3, 0, tmp_path / "direct", task="calculation", shard_size=50, pgps=4
    )
    direct = load_pgps(tmp_path / "direct" / "pgps" / "pgps.json")
    assert _split(tmp_path, "train") == direct
    assert _split(finished, "train") != direct  # the default (`pgps`) writes textbook conventions
    # a different generator config is a different data stage: the finished run's data would be stale
    status = runner.invoke(app, ["pipeline", "status", str(_write(finished, plain, name="plain.yaml"))])
    assert status.exit_code == 0, status.output
    assert "data" in status.output and "stale" in status.output


def test_an_unknown_generator_preset_is_one_line_naming_the_split(tmp_path: Path) -> None:
    config = _write(tmp_path, {"data": {"train": {"synth_config": "nope"}}})
    message = _error(runner.invoke(app, ["pipeline", "run", str(config)]))
    assert message.startswith("data.train.synth_config: no bundled synthesis config named 'nope'")
    check = runner.invoke(app, ["pipeline", "check", str(config)])
    assert check.exit_code == 1 and "data: not available (inputs missing here: nope)" in " ".join(
        check.output.split()
    )
    assert not (tmp_path / "work" / "data" / "train.json").exists()


def test_trace_weights_repeat_each_trace_types_records_per_epoch(finished: Path, tmp_path: Path) -> None:
    import shutil

    import geotrain

    # The finished run's data and mts stages are reused (same inputs, so cached); only train runs again.
    for stage in ("data", "mts"):
        shutil.copytree(finished / "work" / stage, tmp_path / "work" / stage)
    config = _write(tmp_path, {"train": {"trace_weights": {"program": 3, "cot_pal": 0.5}}})
    result = runner.invoke(app, ["pipeline", "run", str(config), "--until", "train"])
    assert result.exit_code == 0, result.output
    mixture = (finished / "work" / "mts" / "mixtures" / "mts_all.jsonl").read_text().splitlines()
    counts: dict[str, int] = {}
    for line in mixture:
        trace = json.loads(line)["trace_type"]
        counts[trace] = counts.get(trace, 0) + 1
    data = tmp_path / "work" / "train" / "data"
    weights = {"program": 3.0, "pal": 1.0, "cot_program": 1.0, "cot_pal": 0.5}
    sources = []
    for trace, weight in weights.items():
        part = data / f"mts_all.{trace}.jsonl"
        lines = part.read_text().splitlines()
        assert len(lines) == counts[trace] and all(json.loads(x)["trace_type"] == trace for x in lines)
        sources.append(geotrain.DataSource(path=str(part), weight=weight))
    examples = geotrain.load_examples(sources, seed=0)
    expected = 3 * counts["program"] + counts["pal"] + counts["cot_program"] + round(0.5 * counts["cot_pal"])
    assert len(examples) == expected
    summary = json.loads((tmp_path / "work" / "train" / "stage.json").read_text())["summary"]
    assert summary["examples_per_epoch"] == expected and summary["global_step"] == 2


def test_trace_weights_without_an_mts_mixture_is_one_line(tmp_path: Path) -> None:
    config = _write(tmp_path, {"train": {"records": "given.jsonl", "trace_weights": {"program": 2}}})
    message = _error(runner.invoke(app, ["pipeline", "check", str(config)]))
    assert (
        "train.trace_weights weighs the trace types of an MTS mixture; this train stage reads none" in message
    )
