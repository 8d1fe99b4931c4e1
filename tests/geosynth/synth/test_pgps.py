"""PGPS-format problems on synthesized figures: every record loads, executes to its answer, and is new."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

from geodsl import OPERATORS, execute
from geodsl.data import PGPSRecord, load_pgps
from geosynth.engine import parse_problem, realise
from geosynth.synth import load_config, read_records, write_dataset
from geosynth.synth._calculation import check_calculation
from geosynth.synth._pgps_compose import KIND_RANK, value_text
from geosynth.synth._pgps_figure import Q, pgps_figure
from geosynth.synth._pgps_out import (
    assemble_pgps,
    dedupe,
    find_leaks,
    operator_histogram,
    pgps_problems,
    problem_from_line,
    question_key,
    record_figure,
    render_problem,
    statement_key,
)
from geosynth.synth._pgps_render import notes_for
from geosynth.synth._pgps_theorems import theorems
from geosynth.synth._render import diagram_layout
from geosynth.synth._sample import Figure

PGPS = load_config("pgps").model_copy(update={"time_limit": None})  # rounds only: no clock
SAMPLE = Path(str(files("geodsl").joinpath("samples", "pgps9k_test_sample.json")))
EXCERPTS = sorted((Path(__file__).parents[2] / "geodsl" / "data").glob("pgps_*_test_excerpt.json"))
STRU = re.compile(r"^(line( [a-z])?( lieson)?( [A-Z]'?\d*)+|\\odot [A-Z] lieson( [A-Z])+)$")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pgps") / "ds"
    made, failed = write_dataset(PGPS, 6, 3, out, task="calculation", shard_size=3, pgps=4)
    assert (made, failed) == (2, ())
    return out


def test_every_record_loads_and_executes_to_its_stored_answer(corpus: Path) -> None:
    records = load_pgps(corpus / "pgps" / "pgps.json")
    assert len(records) >= 12  # 6 figures, up to 4 problems each
    for record in records:
        assert execute(record.expression, record.numbers).answer == pytest.approx(
            float(record.answer), abs=5e-3
        )
        assert re.fullmatch(r"-?\d+\.\d{3}", record.answer)
        assert record.out_of_range_n() == []
        assert record.knowledge_type in KIND_RANK
        assert all(STRU.match(c) for c in record.stru_clauses), record.stru_clauses
        assert min(abs(c - float(record.answer)) for c in record.choices) < 5e-2
        ops = [t for t in record.expression.split() if t in OPERATORS]
        assert ops[-1] == "Get" and ops.count("Get") == 1


def test_the_corpus_file_has_the_published_layout(corpus: Path) -> None:
    data = json.loads((corpus / "pgps" / "pgps.json").read_text(encoding="utf-8"))
    first = next(iter(data.values()))
    assert list(first) == [
        "text",
        "parsing_stru_seqs",
        "parsing_sem_seqs",
        "expression",
        "answer",
        "type",
        "book",
        "page",
        "choices",
    ]
    stats = json.loads((corpus / "pgps" / "stats.json").read_text(encoding="utf-8"))
    assert stats["problems"] == len(data)
    assert stats["operators"]["Get"] == len(data)
    steps = {
        k: sum(
            1
            for e in data.values()
            if sum(t in OPERATORS and t != "Get" for t in e["expression"].split()) == int(k)
        )
        for k in stats["steps"]
    }
    assert steps == stats["steps"] and sum(steps.values()) == len(data) and "0" not in steps


def test_a_shard_line_gives_back_its_problem_and_its_diagram(corpus: Path) -> None:
    line = (corpus / "pgps" / "data" / "shard-00000.jsonl").read_text(encoding="utf-8").splitlines()[0]
    entry = json.loads(line)
    problem = problem_from_line(entry)
    assert problem.line() == entry
    assert render_problem(problem).startswith(b"\x89PNG")


def test_problems_on_a_stored_record_figure_execute(corpus: Path) -> None:
    record = read_records(corpus)[0]
    problems = pgps_problems(record_figure(record), source=record.id, seed=record.seed, count=3)
    assert problems
    for problem in problems:
        got = execute(problem.record.expression, problem.record.numbers).answer
        assert got == pytest.approx(float(problem.record.answer), abs=5e-3)


def test_two_workers_write_the_same_corpus(corpus: Path, tmp_path: Path) -> None:
    other = tmp_path / "two"
    write_dataset(PGPS, 6, 3, other, task="calculation", shard_size=3, pgps=4, jobs=2)
    for name in ("pgps.json", "data/shard-00000.jsonl", "data/shard-00001.jsonl"):
        assert (other / "pgps" / name).read_bytes() == (corpus / "pgps" / name).read_bytes()


def test_a_rerun_resumes_to_the_same_corpus(corpus: Path, tmp_path: Path) -> None:
    before = (corpus / "pgps" / "pgps.json").read_bytes()
    (corpus / "pgps" / "data" / "shard-00001.jsonl").unlink()
    made, _ = write_dataset(PGPS, 6, 3, corpus, task="calculation", shard_size=3, pgps=4)
    assert made == 1  # only the shard whose PGPS file was missing
    assert (corpus / "pgps" / "pgps.json").read_bytes() == before


def test_duplicates_are_dropped_across_shards(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    (out / "pgps" / "data").mkdir(parents=True)
    lines = (corpus / "pgps" / "data" / "shard-00000.jsonl").read_text(encoding="utf-8").splitlines()
    twin = json.loads(lines[0])
    twin["id"] += "-twin"
    twin["parsing_sem_seqs"] = list(reversed(twin["parsing_sem_seqs"]))  # clause order does not matter
    (out / "pgps" / "data" / "shard-00000.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "pgps" / "data" / "shard-00001.jsonl").write_text(json.dumps(twin) + "\n", encoding="utf-8")
    stats = assemble_pgps(out, 2)
    assert stats["duplicates"] == 1
    assert stats["problems"] == len(lines)


def test_problems_a_test_split_poses_are_left_out_of_the_corpus(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    (out / "pgps" / "data").mkdir(parents=True)
    shard = corpus / "pgps" / "data" / "shard-00000.jsonl"
    (out / "pgps" / "data" / "shard-00000.jsonl").write_bytes(shard.read_bytes())
    first = load_pgps(shard)[0]
    test = first.model_copy(update={"id": "prob_1"})  # a test split holding the same problem
    stats = assemble_pgps(out, 1, [test, *_tests()])
    assert stats["test_matches"] == 1
    kept = load_pgps(out / "pgps" / "pgps.json")
    assert first.id not in {r.id for r in kept}
    assert len(kept) == len(load_pgps(shard)) - 1


def test_statement_key_ignores_case_spacing_and_clause_order() -> None:
    record = load_pgps(SAMPLE)[0]
    shuffled = record.model_copy(
        update={
            "id": "other",
            "sem_clauses": tuple(reversed(record.sem_clauses)),
            "text": record.text.upper(),
        }
    )
    assert statement_key(shuffled) == statement_key(record)
    changed = record.model_copy(update={"sem_clauses": (*record.sem_clauses, "AB = 99")})
    assert statement_key(changed) != statement_key(record)
    assert len(dedupe([record, shuffled, changed])) == 2
    swap = str.maketrans("ABCDEFGH", "HGFEDCBA")
    relabelled = PGPSRecord.build(
        id="relabelled",
        text=record.text.translate(swap),
        stru_clauses=[c.translate(swap) for c in record.stru_clauses],
        sem_clauses=[c.translate(swap) for c in record.sem_clauses],
        expression=record.expression,
        answer=record.answer,
        type=record.type,
        choices=record.choices,
    )
    assert statement_key(relabelled) != statement_key(record)
    assert question_key(relabelled) == question_key(record)
    assert dedupe([record, relabelled]) == [record]


def _tests() -> list[PGPSRecord]:
    return [r for path in (SAMPLE, *EXCERPTS) for r in load_pgps(path)]


def test_the_corpus_poses_no_test_problem_and_the_check_finds_one_that_does(corpus: Path) -> None:
    tests = _tests()
    records = load_pgps(corpus / "pgps" / "pgps.json")
    assert find_leaks(records, tests) == []
    planted = tests[5].model_copy(update={"id": "planted"})
    relabelled = PGPSRecord.build(
        id="relabelled",
        text=tests[7].text,
        stru_clauses=[
            re.sub(r"[A-Z]", lambda m: chr(155 - ord(m.group())), c) for c in tests[7].stru_clauses
        ],
        sem_clauses=[
            re.sub(r"\b[A-Z]+\b", lambda m: m.group()[::-1].lower().upper(), c) for c in tests[7].sem_clauses
        ],
        expression=tests[7].expression,
        answer=tests[7].answer,
        type=tests[7].type,
        choices=tests[7].choices,
    )
    leaks = find_leaks([*records, planted, relabelled], tests)
    assert ("planted", tests[5].id) in leaks
    assert ("relabelled", tests[7].id) in leaks
    assert len(leaks) == 2


@pytest.mark.slow
def test_the_corpus_poses_no_problem_of_the_full_test_splits(corpus: Path) -> None:
    import os

    folder = Path(os.environ.get("GEO_SHARED", Path(__file__).parents[3].parent / "shared")) / "data" / "pgps"
    splits = [folder / f"{name}_test.json" for name in ("pgps9k", "geometry3k")]
    if not all(p.is_file() for p in splits):
        pytest.skip(f"{folder} has no PGPS test splits (set GEO_SHARED)")
    tests = [r for p in splits for r in load_pgps(p)]
    assert find_leaks(load_pgps(corpus / "pgps" / "pgps.json"), tests) == []


SHAPES = (
    "a b = segment a b; c = on_tline c a a b, s_angle a b c 35; d = foot d a b c",
    "a b = segment a b; c = on_bline c a b, s_angle b a c 40; d = midpoint d a b; e = midpoint e a c",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = angle_bisector d c a b, on_line d c b",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = midpoint d a c; e = on_pline e d b c, on_line e a b",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = on_pline d c a b, on_tline d a a b",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = on_pline d c a b, on_tline d a a b; "
    "e = midpoint e a d; f = midpoint f b c",
    "a b = segment a b; c = on_tline c b b a, s_angle b a c 35; d = parallelogram a b c d",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = parallelogram a b c d; e = foot e d a b",
    "a b = segment a b; c = on_bline c a b, s_angle b a c 40; d = parallelogram a c b d; e = intersection_ll e a b c d",
    "a b = segment a b; c = s_angle b a c 40, s_angle a b c -60; d = s_angle b a d -40, s_angle a b d 60; "
    "e = intersection_ll e a b c d",
    "a b = segment a b; c = on_circle c a b, s_angle b a c 50; d = mirror d b a",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = circle d a b c; e = midpoint e a b; "
    "f = intersection_lc f e d c",
    "a b = segment a b; c = on_tline c b b a, s_angle b a c 50; d = on_circle d a b, s_angle b a d 40; "
    "e = intersection_lc e c a d",
    "a b c d = isquare a b c d; e = eq_triangle e d c",
    "a b = segment a b; c = eq_triangle c a b; d = circle d a b c; e = midpoint e a b",
)


def _figure(text: str, seed: int) -> Figure:
    problem = parse_problem(text)
    return Figure(problem, realise(problem, np.random.default_rng(seed)), ("a", "b"), 10)


def test_the_figures_of_the_preset_offer_every_operator() -> None:
    offered: set[str] = {"Get"}
    for text in SHAPES:
        for seed in range(3):
            figure = _figure(text, seed)
            offered |= {t.op for t in theorems(pgps_figure(figure.problem, figure.diagram, ("a", "b"), 10.0))}
    assert offered == set(OPERATORS)


def test_every_theorem_holds_on_its_figure_and_a_wrong_one_is_refused() -> None:
    figure = _figure(SHAPES[0], 0)  # right angle at A, the foot D of A on BC
    fig = pgps_figure(figure.problem, figure.diagram, ("a", "b"), 10.0)
    found = theorems(fig)
    gougu = [(*sorted(t.args[:2]), t.args[2]) for t in found if t.op == "Gougu"]  # legs in any order
    assert (fig.seg("a", "b"), fig.seg("a", "c"), fig.seg("b", "c")) in gougu  # right angle at A
    assert (fig.seg("a", "d"), fig.seg("b", "d"), fig.seg("a", "b")) in gougu  # at the foot D
    assert (fig.seg("a", "b"), fig.seg("b", "d"), fig.seg("a", "d")) not in gougu  # it would put it at B
    geo = [t for t in found if t.op == "Geo_Mean"]
    assert geo and all(t.kind == "Geometric Mean" for t in geo)
    assert all(
        ("perp" in (f[0] for f in t.facts)) for t in found if t.op in ("Gougu", "Gsin", "Gcos", "Gtan")
    )


def test_problems_state_what_their_steps_use() -> None:
    problems = [
        p
        for seed in range(4)
        for p in pgps_problems(_figure(SHAPES[4], seed), source="t", seed=seed, count=6)
    ]
    assert problems
    for problem in problems:
        record = problem.record
        if "Trap_Area" in record.expression:
            assert "trapezoid" in record.text
            assert any("\\perp" in c for c in record.sem_clauses)
        if any(op in record.expression for op in ("Gougu", "Gsin", "Gcos", "Gtan")):
            assert any("\\perp" in c for c in record.sem_clauses)


def test_value_text_writes_exact_values_and_rounds_the_rest() -> None:
    assert value_text(12.0, "seg") == ("12", True)
    assert value_text(7.5, "seg") == ("7.5", True)
    assert value_text(4 * 3**0.5, "seg") == ("4\\sqrt{3}", True)
    assert value_text(2**0.5, "seg") == ("\\sqrt{2}", True)
    assert value_text(4.1955, "seg") == ("4.2", False)
    assert value_text(1.23456, "seg") == ("1.23", False)
    assert value_text(37.5, "ang") == ("37.5", True)


def test_values_are_written_on_the_diagram() -> None:
    figure = _figure(SHAPES[0], 0)
    layout = diagram_layout(figure.problem, figure.diagram)
    values = [(Q("seg", ("a", "b")), "5"), (Q("ang", ("a", "b", "c")), "35"), (Q("seg", ("b", "c")), "x")]
    notes, arcs = notes_for(layout, values)
    assert [text for _, _, text in notes] == ["5", "35°", "x"]
    assert len(arcs) == 1
    boxes = [(x, y) for x, y, _ in notes]
    assert len(set(boxes)) == 3


def test_a_length_needing_pythagoras_or_the_law_of_cosines_is_determined() -> None:
    square = "a b c d = isquare a b c d; e = midpoint e c d"
    diagram = realise(parse_problem(square), np.random.default_rng(0))
    checked = check_calculation(square, ("length a b = 4",), "length a e", diagram, PGPS)
    assert checked is not None and checked[0] == "2*sqrt(5)"
    assert "Pythagorean theorem" in checked[3]
    triangle = "a b = segment a b; c = eq_triangle c a b; d = midpoint d a c"
    diagram = realise(parse_problem(triangle), np.random.default_rng(0))
    checked = check_calculation(triangle, ("length a b = 4",), "length b d", diagram, PGPS)
    assert checked is not None and checked[0] == "2*sqrt(3)"


def test_operator_histogram_counts_each_operator_once_per_program() -> None:
    records = load_pgps(SAMPLE)[:20]
    histogram = operator_histogram(records)
    assert histogram["Get"] == 20
    assert all(v <= 20 for v in histogram.values())
