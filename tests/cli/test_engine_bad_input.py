"""`geo engine solve` on hard input: bad problems are reported one per line and the batch goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from geo_cli.engine import app as engine_app

runner = CliRunner()
app = typer.Typer()
app.add_typer(engine_app, name="engine")
DATA = Path(__file__).resolve().parents[1] / "geosynth" / "data"

GOOD = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? para d e b c"
COINCIDE = "a b = segment a b; c = midpoint c a b; d = midpoint d a b ? cong a d b d"
DISJOINT = "a b = segment a b; c d = trisegment c d a b; e = on_circle e a c, on_circle e b d ? cong a e a c"
MALFORMED = "a b c = triangle a b c; d midpoint d a b ? para d e b c"
UNKNOWN_CONSTRUCTION = "a b c = triangle a b c; d = zigzag d a b ? coll a b d"
UNKNOWN_GOAL = "a b c = triangle a b c; d = midpoint d a b ? sparkles a b d"
LIMIT = "1"
"""Seconds per problem: the small problems finish far inside it; IMO 2000 P6 is still deducing at the
limit. The engine's own soft limit (0.9 of it, checked between rules) usually ends its search first, else
the worker is killed at the limit; either way the problem is reported as timed out."""


def _slow() -> tuple[str, str]:
    name, line = (DATA / "imo_sample.txt").read_text(encoding="utf-8").splitlines()[2:4]
    assert name.endswith("2000_p6"), name
    return name, line


def _solve(tmp_path: Path, problems: list[tuple[str, str]]) -> tuple[int, list[dict[str, Any]], str]:
    path = tmp_path / "batch.txt"
    path.write_text("".join(f"{name}\n{line}\n" for name, line in problems), encoding="utf-8")
    result = runner.invoke(app, ["engine", "solve", str(path), "--timeout", LIMIT, "--jobs", "2"])
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result.exit_code, rows, result.output


def test_impossible_constructions_and_timeouts_are_reported_and_the_batch_goes_on(tmp_path: Path) -> None:
    slow = _slow()
    batch = [("good", GOOD), ("coincide", COINCIDE), slow, ("disjoint", DISJOINT), ("good again", GOOD)]
    code, rows, output = _solve(tmp_path, batch)
    assert code == 0, output
    assert [r["name"] for r in rows] == [name for name, _ in batch]
    assert rows[0]["solved"] and rows[4]["solved"]
    # Two different points forced to be one: the error names the clause and the reason.
    assert not rows[1]["solved"]
    assert "'d = midpoint d a b'" in rows[1]["error"] and "coincides" in rows[1]["error"]
    # A circle intersection of two disjoint circles.
    assert "'e = on_circle e a c, on_circle e b d'" in rows[3]["error"]
    assert "do not meet" in rows[3]["error"]
    assert rows[2]["timed_out"] and not rows[2]["solved"] and "error" not in rows[2]
    assert all("\n" not in r.get("error", "") for r in rows)


def test_a_batch_mixing_every_kind_of_bad_problem_gives_one_line_per_problem(tmp_path: Path) -> None:
    batch = [
        ("good", GOOD),
        ("malformed", MALFORMED),
        ("unknown construction", UNKNOWN_CONSTRUCTION),
        ("impossible", COINCIDE),
        ("unknown goal predicate", UNKNOWN_GOAL),
        _slow(),
        ("good again", GOOD),
    ]
    code, rows, output = _solve(tmp_path, batch)
    assert code == 0, output
    assert [r["name"] for r in rows] == [name for name, _ in batch]
    assert [r["solved"] for r in rows] == [True, False, False, False, False, False, True]
    errors = [r.get("error", "") for r in rows]
    assert "'d midpoint d a b'" in errors[1]
    assert "unknown construction 'zigzag'" in errors[2] and "'d = zigzag d a b'" in errors[2]
    assert "'d = midpoint d a b'" in errors[3] and "coincides" in errors[3]
    assert "unknown predicate 'sparkles'" in errors[4] and "'sparkles a b d'" in errors[4]
    assert rows[5].get("timed_out") is True
    assert all("\n" not in e for e in errors)


def test_a_file_whose_names_and_problems_do_not_pair_fails_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "shifted.txt"
    path.write_text(f"first\n{GOOD}\n{GOOD}\nthird\n", encoding="utf-8")
    result = runner.invoke(app, ["engine", "solve", str(path)])
    assert result.exit_code == 1
    assert result.stdout == ""
    message = " ".join(result.output.split())
    assert "shifted.txt line 3" in message and "expected a name line" in message


def test_a_line_that_is_not_utf8_and_a_megabyte_line_get_a_row_each(tmp_path: Path) -> None:
    # one problem line with two bytes that are not UTF-8, one of 1.2 MB (58,000 free points, which the
    # engine cannot finish in the limit): each gets its own row, and the problems around them are solved
    broken = GOOD.encode()[:20] + b"\xff\xfe" + GOOD.encode()[20:]
    huge = "; ".join(f"p{i} = free p{i}" for i in range(58_000)) + " ? coll p0 p1 p2"
    path = tmp_path / "batch.txt"
    path.write_bytes(
        b"good\n%s\nbroken\n%s\nhuge\n%s\ngood again\n%s\n"
        % (GOOD.encode(), broken, huge.encode(), GOOD.encode())
    )
    result = runner.invoke(app, ["engine", "solve", str(path), "--timeout", LIMIT, "--jobs", "2"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["name"] for r in rows] == ["good", "broken", "huge", "good again"]
    assert [r["solved"] for r in rows] == [True, False, False, True]
    assert rows[1]["error"] == "InputError: batch.txt line 4 is not UTF-8 (invalid start byte at byte 20)"
    assert rows[2].get("timed_out") is True and "error" not in rows[2]


def test_a_file_whose_every_problem_line_is_not_utf8_fails_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"first\n\xff\xfe\n")
    result = runner.invoke(app, ["engine", "solve", str(path)])
    assert result.exit_code == 1 and result.stdout == ""
    message = " ".join(result.output.split())
    assert "bad.txt is not UTF-8 text (invalid start byte at line 2, byte 6)" in message
