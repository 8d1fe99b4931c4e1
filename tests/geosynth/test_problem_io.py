from __future__ import annotations

from pathlib import Path

import pytest

from geosynth import (
    Concyclic,
    EqualLength,
    Problem,
    ProblemSyntaxError,
    UnknownConstructionError,
    UnknownPredicateError,
    format_problem,
    load_problems,
    parse_problem,
)
from geosynth.engine import read_problem_entries, read_problem_lines

SAMPLES = ("jgex_sample.txt", "imo_sample.txt", "constructions_sample.txt")


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_files_parse_and_round_trip(data_dir: Path, name: str) -> None:
    problems = load_problems(data_dir / name)
    assert len(problems) >= 3
    for problem in problems:
        again = parse_problem(format_problem(problem), problem.name)
        assert again == problem
        assert format_problem(again) == format_problem(problem)
        assert Problem.model_validate_json(problem.model_dump_json()) == problem


def test_first_jgex_problem_reads_as_written(data_dir: Path) -> None:
    problem = load_problems(data_dir / "jgex_sample.txt")[0]
    assert problem.points == ("a", "b", "c", "o", "h", "d", "e")
    assert problem.goal == Concyclic.of("a", "o", "e", "d")
    clause = problem.clauses[3]
    assert [c.text() for c in clause.constructions] == ["on_line d o h", "on_line d a b"]


def test_a_problem_file_may_be_named_by_a_string(data_dir: Path) -> None:
    path = data_dir / "jgex_sample.txt"
    assert load_problems(str(path)) == load_problems(path)


def test_short_and_full_forms_parse_alike() -> None:
    short = parse_problem("a b c = triangle; d = on_line a b, on_circle c a; e = midpoint a d ? cong a e e d")
    full = parse_problem(
        "a b c = triangle a b c; d = on_line d a b, on_circle d c a; e = midpoint e a d ? cong a e e d"
    )
    assert short == full
    assert short.goal == EqualLength.of("d", "e", "e", "a")


def test_positions_are_kept() -> None:
    problem = parse_problem("a@1.5_-2 b = segment a b ? cong a b b a")
    assert problem.clauses[0].positions == (("a", 1.5, -2.0),)
    assert parse_problem(format_problem(problem)) == problem


@pytest.mark.parametrize(
    ("line", "error", "clause", "message"),
    [
        ("a b c = triangle a b c; d = foo d a b", UnknownConstructionError, "d = foo d a b", "foo"),
        ("a b c = triangle a b c; d = on_line d a e", ProblemSyntaxError, "d = on_line d a e", "undefined"),
        ("a b = segment a b ? bar a b", UnknownPredicateError, "bar a b", "bar"),
        ("a b c = triangle a b c ? cong a b", ProblemSyntaxError, "cong a b", "takes 4 points"),
        ("a b c = triangle a b c; a = midpoint a b c", ProblemSyntaxError, "a = midpoint a b c", "already"),
        ("a b c = triangle a b c; d on_line d a b", ProblemSyntaxError, "d on_line d a b", "="),
        (
            "a b c = triangle a b c; d = on_line d a b c d",
            ProblemSyntaxError,
            "d = on_line d a b c d",
            "arguments",
        ),
        ("a b = segment a b; c = s_angle a b c x", ProblemSyntaxError, "c = s_angle a b c x", "number"),
        ("a b c = triangle a b c; d = on_line e a b", ProblemSyntaxError, "d = on_line e a b", "create"),
        ("? coll a b c", ProblemSyntaxError, "? coll a b c", "no clauses"),
        # A stray ';' or a second '?' or '=' is named, not misread as some other mistake.
        (
            "a b = segment a b;; c = midpoint c a b",
            ProblemSyntaxError,
            "a b = segment a b;; c = midpoint c a b",
            "clause 2 is empty",
        ),
        (
            "a b = segment a b ? cong a b a b ? coll a b",
            ProblemSyntaxError,
            "? cong a b a b ? coll a b",
            "more than one '\\?'",
        ),
        ("a b = segment a b ?", ProblemSyntaxError, "a b = segment a b ?", "nothing after"),
        (
            "a b = segment a b c = midpoint c a b",
            ProblemSyntaxError,
            "a b = segment a b c = midpoint c a b",
            "more than one '='",
        ),
        # Degenerate arguments: the construction's facts cannot even be stated.
        (
            "a b c = triangle a b c; d = on_line d a a",
            ProblemSyntaxError,
            "d = on_line d a a",
            "degenerate construction on_line d a a: diff a a",
        ),
        (
            "a b c = triangle a b c; d = foot d a b b",
            ProblemSyntaxError,
            "d = foot d a b b",
            "degenerate construction foot",
        ),
        (
            "a b c = triangle a b c; d = on_tline d a b b",
            ProblemSyntaxError,
            "d = on_tline d a b b",
            "degenerate",
        ),
        ("a@nan_1 b = segment a b", ProblemSyntaxError, "a@nan_1 b = segment a b", "not finite"),
        ("a@1 b = segment a b", ProblemSyntaxError, "a@1 b = segment a b", "bad position"),
        ("a b c = triangle a b c ? eqangle a b c", ProblemSyntaxError, "eqangle a b c", "takes 8 points"),
        ("a b c = triangle a b c ? coll a b z", ProblemSyntaxError, "coll a b z", "undefined points z"),
        ("a b c = triangle a b c ? s_angle a b c x", ProblemSyntaxError, "s_angle a b c x", "s_angle"),
    ],
)
def test_malformed_lines_name_the_clause(
    line: str, error: type[Exception], clause: str, message: str
) -> None:
    with pytest.raises(error, match=message) as info:
        parse_problem(line)
    assert isinstance(info.value, ProblemSyntaxError)
    assert info.value.clause == clause
    assert clause in str(info.value)
    assert "\n" not in str(info.value)


def test_load_problems_names_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("good\na b = segment a b\nbroken\na b = segment a b; c = nope c a\n", encoding="utf-8")
    with pytest.raises(UnknownConstructionError, match=r"'broken'.*nope"):
        load_problems(path)


def test_problem_lines_are_paired_without_parsing(tmp_path: Path) -> None:
    path = tmp_path / "mixed.txt"
    path.write_text("good\na b = segment a b\n\nbroken\na b = segment a b; c = nope c a\n", encoding="utf-8")
    assert read_problem_lines(path) == [
        ("good", "a b = segment a b"),
        ("broken", "a b = segment a b; c = nope c a"),
    ]
    # Each line still parses (or fails) on its own: one bad problem does not hide the good one.
    assert parse_problem(read_problem_lines(path)[0][1]).points == ("a", "b")


@pytest.mark.parametrize(
    ("text", "message", "clause"),
    [
        ("one\na b = segment a b\n\ntwo\n", "line 4: a name line without its problem", "two"),
        (
            "one\na b = segment a b\na b c = triangle a b c\n",
            "line 3: expected a name line",
            "a b c = triangle a b c",
        ),
        ("a b = segment a b\ntwo\n", "line 1: expected a name line", "a b = segment a b"),
        (
            "one\na b = segment a b\nc d = segment c d\nthree\nx y = segment x y\n",
            "line 3: expected a name line",
            "c d = segment c d",
        ),
    ],
)
def test_a_file_that_does_not_pair_names_and_problems_says_where(
    tmp_path: Path, text: str, message: str, clause: str
) -> None:
    path = tmp_path / "unpaired.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProblemSyntaxError, match=message) as info:
        read_problem_lines(path)
    assert info.value.clause == clause
    assert "unpaired.txt" in str(info.value)
    with pytest.raises(ProblemSyntaxError, match=message):
        load_problems(path)


def test_renaming_a_problem_renames_everything(data_dir: Path) -> None:
    problem = load_problems(data_dir / "jgex_sample.txt")[0]
    mapping = {p: f"p{i}" for i, p in enumerate(reversed(problem.points))}
    renamed = problem.renamed(mapping)
    assert renamed.points == tuple(mapping[p] for p in problem.points)
    assert problem.goal is not None
    assert renamed.goal == problem.goal.renamed(mapping)
    assert parse_problem(format_problem(renamed), renamed.name) == renamed


@pytest.mark.slow
def test_every_benchmark_problem_parses_and_round_trips(alphageometry_dir: Path) -> None:
    folder = alphageometry_dir
    jgex = load_problems(folder / "jgex_ag_231.txt")
    imo = load_problems(folder / "imo_ag_30.txt")
    assert (len(jgex), len(imo)) == (231, 30)
    for problem in jgex + imo:
        assert parse_problem(format_problem(problem), problem.name) == problem


def test_a_problem_line_that_is_not_utf8_is_marked_and_the_others_read(tmp_path: Path) -> None:
    path = tmp_path / "mixed.txt"
    path.write_bytes(
        b"good\r\na b = segment a b\r\n\r\nbroken\r\na b = seg\xe9ment a b\r\nlast\r\nc d = segment c d\r\n"
    )
    entries = read_problem_entries(path)
    assert [(e.name, e.number, e.error) for e in entries] == [
        ("good", 2, None),
        ("broken", 5, "mixed.txt line 5 is not UTF-8 (invalid continuation byte at byte 9)"),
        ("last", 7, None),
    ]
    assert entries[0].line == "a b = segment a b" and entries[2].line == "c d = segment c d"
    assert entries[1].line == "a b = seg\ufffdment a b"
    # the strict reader refuses the file, naming the problem and the line
    with pytest.raises(ProblemSyntaxError, match=r"problem 'broken': mixed.txt line 5 is not UTF-8") as info:
        read_problem_lines(path)
    assert info.value.clause == "a b = seg\ufffdment a b"
