"""``geo tts``: pool commands, live run (backend patched to a scripted sampler), and reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import geo_cli.tts as tts
from geo_cli.main import app
from geotts import GenerationRequest, Problem
from geotts.testing import ScriptedSampler

runner = CliRunner()
DATA = Path(__file__).resolve().parents[1] / "geotts" / "data"

POOLS = [
    {
        "id": "agree",
        "traces": {"program": [3.0, 4], "pal": [3.0004, None], "cot_program": [5, 3], "cot_pal": [2, 3]},
    },
    {"id": "split", "traces": {"program": [1, 2], "pal": [3, 4], "cot_program": [5, 6], "cot_pal": [7, 8]}},
    {"id": "deep", "traces": {"program": [1, 2], "pal": [2, 1], "cot_program": [None, 9], "cot_pal": [4, 2]}},
]


def _write(tmp_path: Path, rows: list[Any]) -> Path:
    path = tmp_path / "pools.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in output.splitlines() if x.strip()]


def test_cg_mte_one_decision_per_pool(tmp_path: Path) -> None:
    result = runner.invoke(app, ["tts", "cg-mte", str(_write(tmp_path, POOLS))])
    assert result.exit_code == 0, result.output
    assert _lines(result.output) == [
        {"id": "agree", "answer": 3.0, "depth": 1, "samples": 4},
        {"id": "split", "answer": 7, "depth": 2, "samples": 8, "fallback": True},
        {"id": "deep", "answer": 2, "depth": 2, "samples": 8},
    ]


def test_cg_mte_options_and_stdin(tmp_path: Path) -> None:
    data = "".join(json.dumps(r) + "\n" for r in POOLS[1:2])
    result = runner.invoke(
        app,
        ["tts", "cg-mte", "-", "--order", "pal,program", "--fallback", "program", "--depth", "1"],
        input=data,
    )
    assert _lines(result.output) == [{"id": "split", "answer": 1, "depth": 1, "samples": 2, "fallback": True}]


def test_mte_and_sc(tmp_path: Path) -> None:
    pools = _write(tmp_path, POOLS)
    assert [d["answer"] for d in _lines(runner.invoke(app, ["tts", "mte", str(pools)]).output)] == [3.0, 1, 2]
    result = runner.invoke(app, ["tts", "sc", str(pools), "--k", "2", "--trace", "pal"])
    assert _lines(result.output)[2] == {"id": "deep", "answer": 2, "depth": 2, "samples": 2}
    unified = _write(tmp_path, [{"id": "u", "traces": {"pal": [1]}, "unified": [4, 5, 5, 4]}])
    assert _lines(runner.invoke(app, ["tts", "sc", str(unified), "--k", "3"]).output) == [
        {"id": "u", "answer": 5, "depth": 3, "samples": 3}
    ]


def test_bad_lines_are_reported_and_the_batch_continues(tmp_path: Path) -> None:
    pools = _write(tmp_path, [POOLS[0], "not json", {"id": "x", "traces": {"pal": "seven"}}, POOLS[1]])
    result = runner.invoke(app, ["tts", "cg-mte", str(pools)])
    out = _lines(result.output)
    assert result.exit_code == 1
    assert [d.get("id") for d in out] == ["agree", None, "x", "split"]
    assert "not JSON" in out[1]["error"] and "traces.pal must be a list" in out[2]["error"]
    result = runner.invoke(app, ["tts", "sc", str(_write(tmp_path, POOLS[:1])), "--k", "2"])
    assert "no 'unified' list; pass --trace" in _lines(result.output)[0]["error"]


def test_missing_input_is_a_one_line_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["tts", "cg-mte", str(tmp_path / "absent.jsonl")])
    assert result.exit_code == 1 and "does not exist" in result.output


def test_run_drives_the_configured_backend_and_strategy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "problems.jsonl").write_text(
        json.dumps({"id": "p1", "question": "Find x.", "gold": 5})
        + "\n"
        + json.dumps({"id": "p2", "question": "Find y."})
        + "\n"
    )
    config = tmp_path / "run.yaml"
    config.write_text(
        "backend: {kind: openai, model: tiny, base_url: 'http://127.0.0.1:9/v1', options: {max_concurrency: 2}}\n"
        "strategy: {cg_mte: {depth: 3, params: {mode: sample, temperature: 0.7, seed: 1}}}\n"
        "problems: problems.jsonl\nextractor: last-number\n"
    )
    seen: dict[str, Any] = {}

    def script(req: GenerationRequest) -> list[str]:
        answer = (
            "5"
            if "Find x." in req.messages[-1].content
            else {"program": "1", "pal": "2"}.get(req.trace_type or "", "3")
        )
        return [f"x = {answer}"] * 3

    def fake_build(spec: tts.BackendSpec, base: Path) -> ScriptedSampler:
        seen["spec"], seen["base"] = spec, base
        return ScriptedSampler(script)

    monkeypatch.setattr(tts, "build_sampler", fake_build)
    result = runner.invoke(app, ["tts", "run", str(config), "--pools", str(tmp_path / "pools.jsonl")])
    assert result.exit_code == 0, result.output
    assert (
        seen["spec"].kind == "openai"
        and seen["spec"].options == {"max_concurrency": 2}
        and seen["base"] == tmp_path
    )
    first, second = _lines(result.output)
    assert first == {
        "id": "p1",
        "answer": 5.0,
        "depth": 1,
        "samples": 4,
        "tokens": 16,
        "traces": {"program": [5.0], "pal": [5.0], "cot_program": [5.0], "cot_pal": [5.0]},
        "gold": 5,
        "correct": True,
    }
    assert (second["answer"], second["depth"], second["samples"]) == (3.0, 1, 4)
    # The recorded pools feed the report machinery.
    from geotts.report import load_pools

    recorded = load_pools(tmp_path / "pools.jsonl")
    assert [(p.id, p.gold, p.traces["pal"]) for p in recorded] == [("p1", 5.0, (5.0,)), ("p2", None, (2.0,))]


def test_run_rejects_a_bad_config(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("backend: {kind: tpu, model: m}\nstrategy: {cg_mte: {}}\nproblems: p.jsonl\n")
    result = runner.invoke(app, ["tts", "run", str(config)])
    assert result.exit_code == 1 and "backend.kind" in result.output


def test_geodsl_answer_extractor_reads_final_answers() -> None:
    pytest.importorskip("geodsl.answers")
    from geotts import Completion

    extract = tts.build_extractor("geodsl-answer")
    problem = Problem(id="p", question="q")
    assert (
        extract(Completion(text="so the answer is \\frac{3}{4}.", num_tokens=5), "cot_pal", problem) == 0.75
    )
    assert extract(Completion(text="no idea", num_tokens=2), "cot_pal", problem) is None


def test_report_writes_pngs(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    result = runner.invoke(
        app, ["tts", "report", str(DATA / "pools.jsonl"), "--out", str(tmp_path / "r"), "--depths", "1,4,10"]
    )
    assert result.exit_code == 0, result.output
    written = json.loads(result.output)["written"]
    assert any(w.endswith("accuracy_vs_samples.png") for w in written)
    assert (tmp_path / "r" / "termination_depth.png").stat().st_size > 5000
    bad = runner.invoke(
        app, ["tts", "report", str(DATA / "pools.jsonl"), "--out", str(tmp_path / "r"), "--depths", "1,x"]
    )
    assert bad.exit_code == 1 and "--depths must be comma-separated integers" in bad.output


# --- geodsl-trace: candidates executed by trace type ----------------------------------------------

PROGRAM = "Gougu N0 N1 V0 Get V0"  # symbolic: the answer depends on the problem's N list


def _pal(legs: tuple[int, int]) -> str:
    return f"```python\nimport math\nprint(math.hypot({legs[0]}, {legs[1]}))\n```"


def _cot_program() -> str:
    return (
        "1. The two legs are known, so the hypotenuse follows from Pythagoras. **Op:** `Gougu N0 N1 V0`\n"
        "2. It is what is asked. **Op:** `Get V0`\n"
        f"The final program is {PROGRAM}"
    )


def _cot_pal(legs: tuple[int, int]) -> str:
    return (
        "The triangle is right-angled, so the hypotenuse is the square root of the sum of the squares "
        "of the two legs. We compute it with sympy.\n"
        f"```python\nfrom sympy import sqrt\nc = sqrt({legs[0]}**2 + {legs[1]}**2)\nprint(float(c))\n```"
    )


def _trace_script(req: GenerationRequest) -> list[str]:
    legs = (3, 4) if "3 and 4" in req.messages[-1].content else (6, 8)
    canned = {
        "program": [PROGRAM, "Frobnicate N0 Get V0"],  # the second is no program: no vote
        "pal": [_pal(legs), "```python\nprint(1 / 0)\n```"],  # the second script fails: no vote
        "cot_program": [_cot_program(), _cot_program()],
        "cot_pal": [_cot_pal(legs), "I cannot solve this."],
    }
    return canned[req.trace_type or ""]


def test_run_with_geodsl_trace_executes_each_trace_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from geodsl import sandbox as sandbox_module

    (tmp_path / "problems.jsonl").write_text(
        json.dumps(
            {"id": "small", "question": "Legs 3 and 4; find the hypotenuse.", "numbers": ["3", 4], "gold": 5}
        )
        + "\n"
        + json.dumps({"id": "large", "question": "Legs 6 and 8; find the hypotenuse.", "numbers": ["6", "8"]})
        + "\n"
    )
    config = tmp_path / "run.yaml"
    config.write_text(
        "backend: {kind: openai, model: tiny, base_url: 'http://127.0.0.1:9/v1'}\n"
        "strategy: {mte: {depth: 2, params: {mode: sample, temperature: 0.7, seed: 1}}}\n"
        "problems: problems.jsonl\nextractor: geodsl-trace\nsandbox_workers: 1\n"
    )
    sampler = ScriptedSampler(_trace_script)

    def fake_build(spec: tts.BackendSpec, base: Path) -> ScriptedSampler:
        return sampler

    monkeypatch.setattr(tts, "build_sampler", fake_build)
    closed: list[bool] = []

    class RecordingSandbox(sandbox_module.Sandbox):
        def close(self) -> None:
            closed.append(bool(self._pool))
            super().close()

    monkeypatch.setattr(sandbox_module, "Sandbox", RecordingSandbox)
    result = runner.invoke(app, ["tts", "run", str(config)])
    assert result.exit_code == 0, result.output
    small, large = _lines(result.output)
    assert small["traces"] == {
        "program": [5.0, None],
        "pal": [5.0, None],
        "cot_program": [5.0, 5.0],
        "cot_pal": [5.0, None],
    }
    assert (small["answer"], small["correct"]) == (5.0, True)
    # the same symbolic program text answers 10 on the problem whose N list is [6, 8]
    assert large["traces"]["program"] == [10.0, None] and large["traces"]["cot_program"] == [10.0, 10.0]
    assert large["answer"] == 10.0 and "gold" not in large
    # both problems (different N lists) went to the sampler in one batch: 2 problems x 4 trace types x
    # depth 2, one request per sampled candidate
    assert [len(call) for call in sampler.calls] == [16]
    assert closed == [True]  # one sandbox, started by the scripts and closed at the end of the run


def test_trace_extractor_detects_untyped_traces_and_rejects_cut_ones() -> None:
    from geotts import Completion

    extract = tts.build_extractor("geodsl-trace")
    legs = Problem(id="p", question="q", metadata={"numbers": ["3", "4"]})
    assert extract(Completion(text=PROGRAM, num_tokens=5), None, legs) == 5.0
    assert extract(Completion(text=_cot_program(), num_tokens=40), "custom", legs) == 5.0
    assert extract(Completion(text=PROGRAM, num_tokens=5, finish_reason="length"), "program", legs) is None
    assert extract(Completion(text="no program here", num_tokens=3), None, legs) is None
    # the same extractor reads another problem's N list
    other = Problem(id="o", question="q", metadata={"numbers": ["6", "8"]})
    assert extract(Completion(text=PROGRAM, num_tokens=5), "program", other) == 10.0
    # symbolic program without an N list: the binding fails, which is no vote rather than a crash
    bare = Problem(id="b", question="q")
    assert extract(Completion(text=PROGRAM, num_tokens=5), "program", bare) is None


def test_trace_extractor_rejects_a_malformed_number_list() -> None:
    from geotts import Completion, StrategyConfigError

    bad = Problem(id="b", question="q", metadata={"numbers": "3 4"})
    with pytest.raises(
        StrategyConfigError, match="problem 'b': metadata 'numbers' must be a list of strings"
    ):
        tts.build_extractor("geodsl-trace")(Completion(text=PROGRAM, num_tokens=5), "program", bad)


def test_run_rejects_a_bad_numbers_field(tmp_path: Path) -> None:
    (tmp_path / "problems.jsonl").write_text(
        json.dumps({"id": "p", "question": "q", "numbers": "3 4"}) + "\n"
    )
    config = tmp_path / "run.yaml"
    config.write_text(
        "backend: {kind: openai, model: m, base_url: 'http://127.0.0.1:9/v1'}\n"
        "strategy: {mte: {depth: 1}}\nproblems: problems.jsonl\nextractor: geodsl-trace\n"
    )
    result = runner.invoke(app, ["tts", "run", str(config)])
    assert result.exit_code == 1 and "line 1: 'numbers' must be a list" in result.output
