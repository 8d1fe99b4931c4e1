"""The evaluate stage over several splits: results.json's contract, batching, resume, model loading errors.

A scripted sampler that answers from the prompt checks what reaches the model and how outputs go back
to their problems; a tiny random causal LM checks batched greedy decoding against one problem at a time.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from geo_cli.pipeline import EvaluateSettings, PipelineConfig
from geo_cli.pipeline import _stage_evaluate as stage
from geo_cli.pipeline._context import StageContext
from geo_cli.pipeline._stages_prep import run_data
from geo_cli.pipeline.errors import PipelineConfigError, StageFailedError
from geodsl.data import PGPSRecord, load_pgps, load_sample
from geotts import Completion, GenerationRequest
from geotts.testing import FunctionSampler

ORDER = ("program", "pal")
#: Bundled PGPS9K records: 3 in the split ``test`` (prob_13, prob_27, prob_31), 2 in ``heldout``
#: (prob_92, prob_111).
TEST, HELDOUT = (0, 3), (10, 2)


def _config(changes: dict[str, Any] | None = None) -> PipelineConfig:
    evaluate: dict[str, Any] = {
        "model": "scripted", "setting": "clauses", "depth": 1, "max_tokens": 6, "order": list(ORDER),
        "sandbox_workers": 1, "batch_size": 2, **(changes or {}),
    }  # fmt: skip
    return PipelineConfig.model_validate_json(
        json.dumps(
            {
                "name": "splits",
                "hardware": {"summary": "2 CPU cores"},
                "data": {
                    "test": {"source": "bundled_sample", "offset": TEST[0], "limit": TEST[1]},
                    "splits": {
                        "heldout": {"source": "bundled_sample", "offset": HELDOUT[0], "limit": HELDOUT[1]}
                    },
                    "draw_missing_diagrams": False,
                },
                "evaluate": evaluate,
            }
        )
    )


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data stage's folder for the two splits (the real data stage)."""
    work = tmp_path_factory.mktemp("data") / "work"
    folder = work / "data"
    folder.mkdir(parents=True)
    run_data(StageContext(config=_config(), base=work, workdir=work, folder=folder, resumed=False))
    return folder


def _context(config: PipelineConfig, data: Path, work: Path) -> StageContext:
    (work / "evaluate").mkdir(parents=True, exist_ok=True)
    return StageContext(config=config, base=work, workdir=work, folder=work / "evaluate", resumed=False,
                        upstream={"data": data})  # fmt: skip


def _records() -> dict[str, PGPSRecord]:
    sample = load_sample()
    chosen = [*sample[TEST[0] : sum(TEST)], *sample[HELDOUT[0] : sum(HELDOUT)]]
    return {r.id: r for r in chosen}


SOLVED = {"prob_27", "prob_92"}
"""Problems whose greedy program request the scripted model answers with the gold program."""


def _scripted(seen: list[GenerationRequest]) -> FunctionSampler:
    """A model that finds the problem in the prompt: gold program for greedy program requests of SOLVED."""
    records = _records()

    def answer(req: GenerationRequest) -> list[Completion]:
        seen.append(req)
        text = str(req.messages[-1].content)
        rec = next(r for r in records.values() if r.text in text)
        greedy = req.n == 1 and req.trace_type == "program"
        body = rec.expression if greedy and rec.id in SOLVED else "no answer here"
        return [Completion(text=f"Solution:\n{body}", num_tokens=5) for _ in range(req.n)]

    return FunctionSampler(answer)


def _patch_sampler(monkeypatch: pytest.MonkeyPatch, sampler: Any) -> None:
    def scripted(ctx: StageContext, settings: EvaluateSettings) -> tuple[Any, str]:
        return sampler, "scripted"

    monkeypatch.setattr(stage, "_sampler", scripted)


def test_results_json_holds_every_split_with_percent_greedy(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[GenerationRequest] = []
    sampler = _scripted(seen)
    _patch_sampler(monkeypatch, sampler)
    summary = stage.run_evaluate(_context(_config(), data_dir, tmp_path))
    evaluate = tmp_path / "evaluate"
    res = json.loads((evaluate / "results.json").read_text())
    assert list(res["splits"]) == ["test", "heldout"] and res["primary"] == "test"
    test, heldout = res["splits"]["test"], res["splits"]["heldout"]
    # greedy program: 1 of 3 test problems (prob_27), 1 of 2 held-out ones (prob_92)
    assert test["problems"] == 3 and heldout["problems"] == 2
    assert (
        math.isclose(test["greedy"]["program"], 100 / 3) and heldout["greedy"]["program"] == 50.0
    )  # percent
    assert math.isclose(res["greedy"]["program"], 1 / 3)  # a fraction at the top level, as before
    assert test["greedy"]["pal"] == 0.0 and test["best_trace"] == "program"
    for entry in (test, heldout):
        assert set(entry["greedy"]) == set(ORDER)
        assert [p["budget"] for p in entry["sc_sample"]] == [1, 2]
        assert {"curves", "baselines", "termination"} <= set(entry["tts"])
    assert res["tts"] == test["tts"] and res["sc_sample"] == test["sc_sample"]
    by_type = test["by_type"]
    assert sum(v["problems"] for v in by_type.values()) == 3
    assert sum(v["correct"] for v in by_type.values()) == 1
    records = _records()
    assert stage._operators(records["prob_27"].expression) == ["Gsin"]  # Gsin N0 N2 N3 Get y
    assert test["by_operator"]["Gsin"]["correct"] == 1 and test["by_operator"]["Gsin"]["accuracy"] > 0
    assert "Get" not in test["by_operator"]
    assert res["model"]["setting"] == "clauses" and {
        "path",
        "parameters",
        "architecture",
        "vocab_size",
    } <= set(res["model"])
    # one candidates file per split; every prompt states the clauses and carries no image
    assert len((evaluate / "candidates.jsonl").read_text().splitlines()) == 3
    assert len((evaluate / "splits" / "heldout" / "candidates.jsonl").read_text().splitlines()) == 2
    assert all(str(r.messages[-1].content).startswith("Diagram relations:") and not r.images for r in seen)
    # batch_size 2: test in 2 calls (2 + 1 problems), heldout in 1; 6 requests per problem
    assert [len(call) for call in sampler.calls] == [12, 6, 12]
    assert summary["splits"]["heldout"]["problems"] == 2


def test_a_rerun_continues_after_a_torn_last_line(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config()
    _patch_sampler(monkeypatch, _scripted([]))
    stage.run_evaluate(_context(config, data_dir, tmp_path))
    candidates = tmp_path / "evaluate" / "candidates.jsonl"
    first, second, _ = candidates.read_text().splitlines()
    candidates.write_text(first + "\n" + second[: len(second) // 2])  # a crash in the middle of line 2
    seen: list[GenerationRequest] = []
    _patch_sampler(monkeypatch, _scripted(seen))
    stage.run_evaluate(_context(config, data_dir, tmp_path))
    rows = [json.loads(x) for x in candidates.read_text().splitlines()]
    assert [r["id"] for r in rows] == [r.id for r in load_pgps(data_dir / "test.json")]
    asked = {next(r.id for r in _records().values() if r.text in str(q.messages[-1].content)) for q in seen}
    assert asked == {rows[1]["id"], rows[2]["id"]}  # only the torn and the missing problem; heldout was done


def test_a_bundled_model_that_is_not_shipped_is_a_config_error(data_dir: Path, tmp_path: Path) -> None:
    ctx = _context(_config({"model": "bundled:no/such/model"}), data_dir, tmp_path)
    with pytest.raises(PipelineConfigError, match="bundled:no/such/model") as caught:
        stage.run_evaluate(ctx)
    assert "\n" not in str(caught.value)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers", reason="the tiny model needs transformers (geotrain[train])")
    import geotrain

    return geotrain.build_tiny_model("causal_lm", tmp_path_factory.mktemp("tiny") / "model", seed=0)


def test_a_truncated_checkpoint_is_one_error_naming_the_folder(
    data_dir: Path, tmp_path: Path, tiny_model: Path
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model, broken)
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    ctx = _context(_config({"model": str(broken)}), data_dir, tmp_path)
    with pytest.raises(StageFailedError) as caught:
        stage.run_evaluate(ctx)
    message = str(caught.value)
    assert str(broken) in message and "cannot load the model" in message and "\n" not in message


Run = Callable[[int], list[dict[str, Any]]]


def test_batched_greedy_decoding_gives_the_rows_of_one_problem_at_a_time(
    data_dir: Path, tmp_path: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stage, "_KEEP_TEXTS", 1)  # sampled texts for the gallery: the first problem only

    def rows(batch_size: int) -> list[dict[str, Any]]:
        work = tmp_path / f"batch{batch_size}"
        config = _config({"model": str(tiny_model), "batch_size": batch_size, "beam": False})
        res = stage.run_evaluate(_context(config, data_dir, work))
        assert res["splits"]["test"]["problems"] == 3
        return [json.loads(x) for x in (work / "evaluate" / "candidates.jsonl").read_text().splitlines()]

    alone, batched = rows(1), rows(3)
    greedy = [{k: r[k] for k in ("id", "greedy", "greedy_texts")} for r in alone]
    assert greedy == [{k: r[k] for k in ("id", "greedy", "greedy_texts")} for r in batched]
    texts = [r["greedy_texts"]["program"] for r in alone]
    assert len(set(texts)) > 1 and all(texts)  # the problems' outputs differ, so a swap would show
    assert ["texts" in r for r in alone] == [
        True,
        False,
        False,
    ]  # every greedy text is kept, for reading failures
    res = json.loads((tmp_path / "batch3" / "evaluate" / "results.json").read_text())
    model = res["model"]
    config = json.loads((tiny_model / "config.json").read_text())
    assert model["architecture"] == config["model_type"] == "qwen2"
    assert model["vocab_size"] == config["vocab_size"]
    import transformers

    loaded = transformers.AutoModelForCausalLM.from_pretrained(tiny_model)
    assert model["parameters"] == sum(p.numel() for p in loaded.parameters()) > 0
    assert stage._safetensors_parameters(tiny_model) == model["parameters"]  # what other backends report
