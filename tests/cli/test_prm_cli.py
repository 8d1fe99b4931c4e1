"""``geo prm``: critique and score JSON Lines, build-data against a real local HTTP server, eval reports."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from geo_cli.main import app
from geoprm import Critique, StepCritique, format_critique

runner = CliRunner()


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def _flat(output: str) -> str:
    """Console output with rich's line wrapping and table rules taken out."""
    return " ".join(output.replace("│", " ").split())


def _lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in output.splitlines() if x.strip()]


def _review(steps: list[str]) -> str:
    """The scripted teacher: a step that mentions a slip is wrong; the review stops there."""
    parts: list[StepCritique] = []
    for index, step in enumerate(steps, start=1):
        wrong = "slip" in step
        verdict = "Incorrect" if wrong else "Correct"
        parts.append(
            StepCritique(
                index=index,
                intent=f"Carry out step {index}.",
                image_analysis="The figure agrees.",
                image_judgement="Correct",
                logic_analysis="This does not follow." if wrong else "This follows.",
                logic_judgement=verdict,
                judgement=verdict,
            )
        )
        if wrong:
            break
    return format_critique(
        Critique(steps=tuple(parts), correction="Redo it." if parts[-1].judgement == "Incorrect" else None)
    )


def test_help_texts_name_every_command_and_its_formats() -> None:
    result = runner.invoke(app, ["prm", "--help"])
    assert result.exit_code == 0
    for command in ("critique", "score", "build-data", "eval"):
        assert command in result.output
    critique_help = runner.invoke(app, ["prm", "critique", "--help"]).output
    assert (
        "--model" in critique_help and "--max-new-tokens" in critique_help and "first_wrong" in critique_help
    )
    assert "--strict" in runner.invoke(app, ["prm", "score", "--help"]).output
    assert "--out" in runner.invoke(app, ["prm", "eval", "--help"]).output


# --- score without a model ------------------------------------------------------------------------------

SOLUTION = "Step 1: Write 3 + 4.\nStep 2: It is 8, a slip.\nAnswer: 8"
CRITIQUE = _review(["Write 3 + 4.", "It is 8, a slip."])


def test_score_reads_judgements_and_recorded_logprobs_and_reports_bad_lines(tmp_path: Path) -> None:
    logprobs = [
        {"step": 1, "top_logprobs": {" Correct": -0.1, " Incorrect": -2.5}},
        {"step": 2, "top_logprobs": {" Correct": -1.2, " Incorrect": -0.4}},
    ]
    rows: list[Any] = [
        {
            "id": "scored",
            "critique": CRITIQUE,
            "question": "Compute 3 + 4.",
            "solution": SOLUTION,
            "logprobs": logprobs,
        },
        {"id": "cut", "critique": CRITIQUE.split("[Step 2]")[0]},
        "{broken",
        {"id": "badlp", "critique": CRITIQUE, "logprobs": [{"step": 1, "top_logprobs": {" Correct": 0.7}}]},
        {"id": "nocrit", "question": "q"},
    ]
    result = runner.invoke(app, ["prm", "score", str(_jsonl(tmp_path / "c.jsonl", rows))])
    assert result.exit_code == 1
    scored, cut, broken, badlp, nocrit = _lines(result.stdout)
    assert (
        scored["verdict"] == "has_incorrect"
        and scored["first_wrong"] == 2
        and scored["correction"] == "Redo it."
    )
    p1 = 1 / (1 + pow(2.718281828459045, -2.4))  # P(Correct) / (P(Correct) + P(Incorrect)) at step 1
    assert scored["scores"][0] == pytest.approx(p1, rel=1e-6) and scored["scores"][1] < 0.5
    assert scored["problems"] == [] and scored["error"] is None
    # a critique cut after step 1: readable verdict, no score without log-probs, the cut reported
    assert cut["verdict"] == "undetermined" and cut["scores"] == [None] and cut["first_wrong"] is None
    assert [s["judgement"] for s in cut["steps"]] == ["Correct"]
    assert {p["kind"] for p in cut["problems"]} == {"truncated"}
    assert broken == {
        "id": None,
        "error": "line 3 is not JSON: Expecting property name enclosed in double quotes at column 2",
    }
    assert badlp["id"] == "badlp" and "logprobs.0.top_logprobs" in badlp["error"] and "<= 0" in badlp["error"]
    assert "'critique' must be a string" in nocrit["error"]
    strict = runner.invoke(app, ["prm", "score", "--strict", str(_jsonl(tmp_path / "s.jsonl", rows[:2]))])
    first, second = _lines(strict.stdout)
    assert first["error"] is None and second["error"].startswith("CritiqueParseError:")


def test_score_reads_blocks_by_position_against_the_solutions_steps(tmp_path: Path) -> None:
    """first_wrong is the solution step refinement rewrites: blocks count by position, and an Incorrect
    block past the solution's last step makes it the step after the last."""
    renumbered = CRITIQUE.replace("[Step 2]", "[Step 5]").replace("of step 2]", "of step 5]")
    extra = _review(["Write 3 + 4.", "Add them.", "Check them.", "It is 8, a slip."])
    rows = [
        {"id": "renumbered", "critique": renumbered, "solution": SOLUTION},
        {"id": "extra", "critique": extra, "solution": "Step 1: Write 3 + 4.\nStep 2: Add them.\nAnswer: 7"},
    ]
    result = runner.invoke(app, ["prm", "score", str(_jsonl(tmp_path / "c.jsonl", rows))])
    assert result.exit_code == 0, result.output
    renumbered_out, extra_out = _lines(result.stdout)
    assert renumbered_out["verdict"] == "has_incorrect" and renumbered_out["first_wrong"] == 2
    assert "numbering" in {p["kind"] for p in renumbered_out["problems"]}
    assert extra_out["verdict"] == "has_incorrect" and extra_out["first_wrong"] == 3
    assert [s["judgement"] for s in extra_out["steps"]] == ["Correct", "Correct", "Correct", "Incorrect"]


def test_missing_input_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["prm", "critique", str(tmp_path / "absent.jsonl"), "--model", str(tmp_path)])
    assert result.exit_code == 1 and "does not exist" in result.output


def test_critique_reports_bad_lines_without_loading_a_model(tmp_path: Path) -> None:
    rows: list[Any] = [
        {"id": "nosteps", "question": "Find x."},
        {"id": "noimage", "question": "Find x.", "steps": ["x = 2."], "images": ["missing.png"]},
        {"id": "emptystep", "question": "Find x.", "steps": ["x = 2.", " "]},
    ]
    # the model folder does not exist: it is never loaded because no line is good
    result = runner.invoke(
        app, ["prm", "critique", str(_jsonl(tmp_path / "in.jsonl", rows)), "--model", "nowhere"]
    )
    assert result.exit_code == 1
    errors = [line["error"] for line in _lines(result.stdout)]
    assert "give 'steps' (a list of strings) or 'solution'" in errors[0]
    assert "image files not found" in errors[1] and "missing.png" in errors[1]
    assert "'steps'[1] must be a non-empty string" in errors[2]


# --- a real tiny reward model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from geotts.testing import tiny_qwen_vl

    return tiny_qwen_vl(tmp_path_factory.mktemp("tiny") / "qwen2_vl", seed=0)


def test_critique_and_forced_scoring_run_a_tiny_model(tiny_model: Path, tmp_path: Path) -> None:
    from PIL import Image

    from geoprm.backends.transformers import TransformersCritic
    from geotts import StepScoreRequest

    Image.new("RGB", (56, 56), (200, 30, 30)).save(tmp_path / "fig.png")
    rows: list[Any] = [
        {"id": 1, "question": "Compute 3 + 4.", "solution": SOLUTION, "images": ["fig.png"]},
        "[1, 2]",
        {"id": 2, "question": "Find x.", "steps": ["x + 1 = 3.", "So x = 2."]},
    ]
    path = _jsonl(tmp_path / "in.jsonl", rows)
    args = ["prm", "critique", str(path), "--model", str(tiny_model), "--max-new-tokens", "12", "-b", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output  # the second line is not an object
    first, bad, second = _lines(result.stdout)
    assert bad == {"id": None, "error": "line 2 is a JSON list, not an object"}
    critic = TransformersCritic.from_pretrained(tiny_model, max_new_tokens=12)
    expected = critic.critique(
        [
            StepScoreRequest(
                question="Compute 3 + 4.",
                images=(tmp_path / "fig.png",),
                steps=("Write 3 + 4.", "It is 8, a slip."),
            ),
            StepScoreRequest(question="Find x.", steps=("x + 1 = 3.", "So x = 2.")),
        ]
    )
    for out, want in zip((first, second), expected, strict=True):
        assert out["critique"] == want.text and out["finish_reason"] == want.finish_reason == "length"
        assert out["verdict"] == want.scores.verdict and out["error"] is None
    # teacher forcing of a given critique scores every verdict it contains
    forced_in = _jsonl(
        tmp_path / "forced.jsonl",
        [{"id": "f", "critique": CRITIQUE, "question": "Compute 3 + 4.", "solution": SOLUTION}],
    )
    result = runner.invoke(app, ["prm", "score", str(forced_in), "--model", str(tiny_model)])
    assert result.exit_code == 0, result.output
    (forced,) = _lines(result.stdout)
    want_scores = critic.score_critiques(
        [StepScoreRequest(question="Compute 3 + 4.", steps=("Write 3 + 4.", "It is 8, a slip."))], [CRITIQUE]
    )[0]
    assert forced["scores"] == pytest.approx([s.score for s in want_scores.steps])
    assert len(forced["scores"]) == 2 and all(0.0 < s < 1.0 for s in forced["scores"])


# --- build-data against a real OpenAI-compatible server -------------------------------------------------

GOLD = {"UB": 25, "Find y.": 48}  # question marker -> answer of the two PGPS records below
PGPS = {
    "prob_13": {
        "diagram": "img_3909.png",
        "text": "In \\triangle QRS, T, U, and B are midpoints. What is the length of UB?",
        "parsing_stru_seqs": ["line Q U R", "line R B S", "line Q T S", "line U B", "line T B", "line U T"],
        "parsing_sem_seqs": ["BT = 30", "RS = 40", "SQ = 50"],
        "expression": "Multiple V0 C2 N2 Get V0",
        "answer": "25.000",
        "type": "Midsegment of Triangle ",
        "choices": [25.0, 30.0, 40.0, 80.0],
    },
    "prob_27": {
        "diagram": "img_423.png",
        "text": "Find y.",
        "parsing_stru_seqs": ["line A B", "line C B", "line C A"],
        "parsing_sem_seqs": ["CB \\perp CA on C", "AC = 24", "BC = x", "AB = y", "m \\angle CBA = 30"],
        "expression": "Gsin N0 N2 N3 Get y",
        "answer": "48.000",
        "type": "Trigonometry",
        "choices": [24.0, 33.9, 41.6, 48.0],
    },
}
SOLUTIONS = [
    {"problem": "prob_13", "solution": "Step 1: UB is half of SQ.\nStep 2: UB = 50 / 2 = 25.\nAnswer: 25"},
    {"problem": "prob_13", "solution": "Step 1: UB equals SQ, a slip.\nStep 2: So UB = 50.\nAnswer: 50"},
    {"problem": "prob_27", "solution": "Step 1: sin 30 = 24 / y.\nStep 2: y = 48.\nAnswer: 48"},
    {
        "problem": "prob_27",
        "id": "y-slip",
        "solution": "Step 1: sin 30 = 24 / y.\nStep 2: y = 12, a slip.\nAnswer: 12",
    },
    # the teacher passes it, but no continuation from its first step reaches the answer: dropped as disagree
    {"problem": "prob_13", "solution": "Step 1: UB is half of SQ, a detour.\nStep 2: UB = 25.\nAnswer: 25"},
]


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    return "".join(p.get("text", "") for p in content) if isinstance(content, list) else content


def _reply(body: dict[str, Any]) -> list[str]:
    """Teacher: review the listed steps. Completer: reach the answer unless the prefix went astray."""
    messages = body["messages"]
    if body["model"] == "teacher":
        listed = _text(messages[-1]).split("Solution steps:")[1]
        return [_review(re.findall(r"^Step \d+: (.*)$", listed, flags=re.MULTILINE))]
    question, prefix = _text(messages[0]), _text(messages[-1])
    gold = next(v for k, v in GOLD.items() if k in question)
    astray = "slip" in prefix or "detour" in prefix
    return [f"\nStep 9: Conclude.\nAnswer: {0 if astray else gold}"] * body.get("n", 1)


class _Handler(BaseHTTPRequestHandler):
    bodies: list[dict[str, Any]] = []  # noqa: RUF012 - shared by the server's handler instances

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.bodies.append(body)
        choices = [
            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
            for i, t in enumerate(_reply(body))
        ]
        data = json.dumps({"id": "x", "object": "chat.completion", "choices": choices}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def server_url() -> Iterator[str]:
    pytest.importorskip("httpx")
    _Handler.bodies.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _backend(url: str, name: str) -> str:
    return f"{{kind: openai, model: {name}, base_url: '{url}', options: {{logprobs: false, max_retries: 0}}}}"


def test_build_data_labels_pgps_solutions_through_an_http_teacher_and_completer(
    server_url: str, tmp_path: Path
) -> None:
    (tmp_path / "pgps.json").write_text(json.dumps(PGPS), encoding="utf-8")
    _jsonl(tmp_path / "solutions.jsonl", SOLUTIONS)
    config = tmp_path / "build.yaml"
    config.write_text(
        "items: {kind: pgps, path: pgps.json, solutions: solutions.jsonl}\n"
        f"teacher: {_backend(server_url, 'teacher')}\n"
        f"completer: {_backend(server_url, 'completer')}\n"
        "monte_carlo: {completions: 2, temperature: 0.8, max_tokens: 16}\n"
        "seed: 3\nout: out/prm.jsonl\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["prm", "build-data", str(config)])
    assert result.exit_code == 0, result.output
    teacher_calls = [b for b in _Handler.bodies if b["model"] == "teacher"]
    completer_calls = [b for b in _Handler.bodies if b["model"] == "completer"]
    assert len(teacher_calls) == 5 and all(b["temperature"] == 0.0 for b in teacher_calls)
    # step prefixes judged by the teacher: 2 + 1 + 2 + 2 + 2, each asked for m = 2 continuations
    assert len(completer_calls) == 9 and {b["n"] for b in completer_calls} == {2}
    records = [
        json.loads(x) for x in (tmp_path / "out" / "prm.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert sorted((r["id"], r["has_error"], r["first_error"]) for r in records) == [
        ("prob_13/1", False, None),
        ("prob_13/2", True, 1),
        ("prob_27/1", False, None),
        ("y-slip", True, 2),
    ]
    assert all(r["source"] == "pgps" and "Step 1:" in r["prompt"] for r in records)
    out = _flat(result.stdout)
    assert "agreement 80.0%" in out and "dropped: disagree 1" in out and "completions generated 18" in out


def test_build_data_from_visualprm_needs_no_completer(server_url: str, tmp_path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (28, 28), (0, 0, 0)).save(tmp_path / "sq.png")
    steps = [
        {"step": "AB = 6, so each side is 6.", "score": 0.8, "num_mc_correct": 4, "num_mc_total": 5},
        {"step": "The area is 6 * 2 = 12, a slip.", "score": 0.0, "num_mc_correct": 0, "num_mc_total": 5},
    ]
    record = {
        "image": "sq.png",
        "question": "ABCD is a square with AB = 6. Find its area.",
        "answer": "36",
        "steps_with_score": steps,
    }
    _jsonl(tmp_path / "vprm.jsonl", [record])
    config = tmp_path / "build.yaml"
    config.write_text(
        f"items: {{kind: visualprm, path: vprm.jsonl, images: .}}\nteacher: {_backend(server_url, 'teacher')}\n"
        "balanced: false\nout: prm.jsonl\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["prm", "build-data", str(config)])
    assert result.exit_code == 0, result.output
    (sent,) = _Handler.bodies  # only the teacher was asked, with the figure attached
    assert any(part.get("type") == "image_url" for part in sent["messages"][-1]["content"])
    (written,) = [json.loads(x) for x in (tmp_path / "prm.jsonl").read_text(encoding="utf-8").splitlines()]
    assert written["first_error"] == 2 and written["images"] == [str(tmp_path / "sq.png")]


def test_build_data_rejects_bad_configs(tmp_path: Path) -> None:
    config = tmp_path / "build.yaml"
    config.write_text(
        "items: {kind: pgps, path: p.json}\nteacher: {kind: openai, model: t}\n", encoding="utf-8"
    )
    result = runner.invoke(app, ["prm", "build-data", str(config)])
    assert result.exit_code == 1 and "out: Field required" in _flat(result.output)
    config.write_text(
        "items: {kind: pgps, path: p.json}\nteacher: {kind: openai, model: t, base_url: 'http://127.0.0.1:9/v1'}\n"
        "out: o.jsonl\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["prm", "build-data", str(config)])
    assert result.exit_code == 1 and "items.solutions is required for kind 'pgps'" in _flat(result.output)
    (tmp_path / "p.json").write_text(json.dumps(PGPS), encoding="utf-8")
    _jsonl(tmp_path / "s.jsonl", [{"problem": "prob_99", "solution": "Step 1: x.\nAnswer: 1"}])
    config.write_text(
        config.read_text().replace("path: p.json", "path: p.json, solutions: s.jsonl"), encoding="utf-8"
    )
    result = runner.invoke(app, ["prm", "build-data", str(config)])
    assert result.exit_code == 1 and "line 1: problem 'prob_99' is not in p.json" in _flat(result.output)
    _jsonl(tmp_path / "s.jsonl", [{"problem": "prob_13", "solution": "Step 1: x.\nAnswer: 1"}])
    result = runner.invoke(app, ["prm", "build-data", str(config)])
    assert result.exit_code == 1 and "completer is required" in _flat(result.output)


# --- eval -----------------------------------------------------------------------------------------------


def _candidate(answer: float | None, scores: list[float], verdict: str) -> dict[str, Any]:
    return {"answer": answer, "step_scores": scores, "verdict": verdict}


RUNS = [
    {
        "id": "p1",
        "kind": "plane_geometry",
        "answer": 5.0,
        "sampled": [
            _candidate(5.0, [0.9, 0.8], "all_correct"),
            _candidate(3.0, [0.9, 0.2], "has_incorrect"),
            _candidate(5.0, [0.7], "all_correct"),
            _candidate(2.0, [0.4], "has_incorrect"),
        ],
        "refined": [_candidate(5.0, [0.9, 0.9], "all_correct"), _candidate(5.0, [0.8], "all_correct")],
    },
    {
        "id": "p2",
        "kind": "functions",
        "answer": 7.0,
        "sampled": [
            _candidate(1.0, [0.3], "has_incorrect"),
            _candidate(7.0, [0.9], "all_correct"),
            _candidate(1.0, [0.2], "has_incorrect"),
            _candidate(1.0, [0.1], "has_incorrect"),
        ],
        "refined": [_candidate(7.0, [0.95], "all_correct"), _candidate(None, [0.5], "undetermined")],
    },
]


def test_eval_writes_tables_and_the_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    runs = _jsonl(tmp_path / "runs.jsonl", RUNS)
    result = runner.invoke(app, ["prm", "eval", str(runs), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["problems"] == 2 and summary["bad_lines"] == 0
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    # N = 1: p1's first sample is right, p2's is wrong; refined best-of-N needs an even N
    assert "| 1 | 0.500 | 0.500 | - | 0.500 |" in report
    # N = 4: mean accuracy 3/8; best-of-N picks 5 and 7; the vote gets p1 only; refined pools pick right too
    assert "| 4 | 0.375 | 1.000 | 1.000 | 0.500 |" in report
    assert "## Pass@k, sampled vs refined pool (N=4)" in report and "| plane_geometry | 1 |" in report
    assert (tmp_path / "r" / "accuracy_vs_n.png").stat().st_size > 5000


def test_eval_reports_bad_lines_and_bad_options(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    runs = _jsonl(tmp_path / "runs.jsonl", [RUNS[0], {"id": "x", "answer": 1.0, "sampled": []}, "nope"])
    result = runner.invoke(app, ["prm", "eval", str(runs), "--out", str(tmp_path / "r"), "--ns", "1,2"])
    assert result.exit_code == 1
    assert "line 2: sampled: Tuple should have at least 1 item" in _flat(result.output)
    assert "line 3 is not JSON" in _flat(result.output)
    assert (tmp_path / "r" / "report.md").is_file()  # the readable problems are still evaluated
    too_far = runner.invoke(app, ["prm", "eval", str(runs), "--out", str(tmp_path / "r"), "--ns", "1,8"])
    assert too_far.exit_code == 1 and "only 4 sampled candidates" in _flat(too_far.output)
    odd = runner.invoke(app, ["prm", "eval", str(runs), "--out", str(tmp_path / "r"), "--n", "3"])
    assert odd.exit_code == 1 and "--n must be even and at most 4" in _flat(odd.output)
    too_many = runner.invoke(app, ["prm", "eval", str(runs), "--out", str(tmp_path / "r"), "--ks", "1,8"])
    assert too_many.exit_code == 1 and "--ks goes up to 8" in _flat(too_many.output)
