"""`geo synth leaks`: a corpus that poses a test problem is found, by statement or relabelled question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from geo_cli.main import app

runner = CliRunner()


def _record(text: str, sem: list[str], answer: str) -> dict[str, Any]:
    return {"text": text, "parsing_stru_seqs": ["line A B C"], "parsing_sem_seqs": sem,
            "expression": "Sum N0 N1 V0 Get V0", "answer": answer, "type": "Line Segment", "choices": [1.0, 2.0, 3.0, float(answer)]}  # fmt: skip


def _write(path: Path, records: dict[str, dict[str, Any]]) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_a_relabelled_test_problem_in_the_corpus_is_reported_and_exits_1(tmp_path: Path) -> None:
    test = _write(tmp_path / "test.json", {"prob_7": _record("Find AC.", ["AB = 3", "BC = 4"], "7")})
    corpus = _write(tmp_path / "corpus.json", {
        "c0": _record("Find XZ.", ["XY = 3", "YZ = 4"], "7"),   # the same question with other point names
        "c1": _record("Find AC.", ["AB = 5", "BC = 4"], "9"),   # other values: a different problem
    })  # fmt: skip
    result = runner.invoke(app, ["synth", "leaks", str(corpus), "--test", str(test)])
    assert result.exit_code == 1
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert lines == [{"corpus_id": "c0", "test_id": "prob_7", "test_file": str(test)}]
    assert "1 corpus problems pose a test problem" in result.stderr


def test_a_clean_corpus_passes_and_an_unreadable_split_is_one_line(tmp_path: Path) -> None:
    test = _write(tmp_path / "test.json", {"prob_7": _record("Find AC.", ["AB = 3", "BC = 4"], "7")})
    corpus = _write(tmp_path / "corpus.json", {"c1": _record("Find AC.", ["AB = 5", "BC = 4"], "9")})
    result = runner.invoke(app, ["synth", "leaks", str(corpus), "--test", str(test)])
    assert result.exit_code == 0 and result.stdout == ""
    assert "no leaks: 1 corpus problems against 1 test file(s)" in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe not json")
    result = runner.invoke(app, ["synth", "leaks", str(corpus), "--test", str(bad)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1 and "bad.json" in result.stderr
