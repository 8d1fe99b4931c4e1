r"""How PGPS problems are written: textbook phrasings, numbered angles, equality chains, smaller figures.

Every convention keeps the N list of the reference preprocessing the list of values the problem writes
(so ``\angle 1`` is never a number and a chain's value is one), and the program executes to the answer;
the plain writing (preset ``pgps-v1``) reproduces byte for byte what the generator wrote before them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from geodsl import execute
from geodsl.data import dedup_program, load_pgps
from geosynth.engine import parse_problem, realise
from geosynth.mts import LLMConfig, MTSConfig, run_mts
from geosynth.synth import config_from_mapping, figure_step_labels, load_config, write_dataset
from geosynth.synth._config import PLAIN_WRITING, PGPSWriting
from geosynth.synth._pgps_figure import Q
from geosynth.synth._pgps_out import (
    PGPSProblem,
    find_leaks,
    pgps_json,
    pgps_problems,
    problem_from_line,
    question_key,
    render_problem,
)
from geosynth.synth._pgps_phrases import canonical_question
from geosynth.synth._pgps_render import notes_for
from geosynth.synth._render import diagram_layout
from geosynth.synth._sample import Figure

GOLDEN = json.loads((Path(__file__).parents[1] / "data" / "pgps_v1_golden.json").read_text(encoding="utf-8"))
NUMBERED = re.compile(r"\\angle \d")
SHAPES = (  # the figures the golden digests were recorded on (those of test_pgps.py)
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


def _problems(writing: PGPSWriting, seeds: range = range(2)) -> Iterator[tuple[str, PGPSProblem]]:
    for i, text in enumerate(SHAPES):
        for seed in seeds:
            figure = _figure(text, seed)
            for problem in pgps_problems(figure, source=f"s{i}", seed=seed, count=4, writing=writing):
                yield f"shape {i} seed {seed} {problem.record.id}", problem


@pytest.fixture(scope="module")
def textbook() -> list[PGPSProblem]:
    """Problems written with every convention, numbered angles and chains more often than by default."""
    out: list[PGPSProblem] = []
    writing = PGPSWriting(numbered_angles=0.6, equality_chains=1.0)
    for k, (_, p) in enumerate(_problems(writing, range(3))):
        out.append(
            PGPSProblem(p.record.model_copy(update={"id": f"p{k}"}), p.source, p.figure, p.diagram, p.written)
        )
    return out


def _settled(value: object) -> object:
    """``value`` with every float to 9 significant digits: the last bits of numpy's trigonometry differ
    between processors (SIMD paths), the problem written does not."""
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return {key: _settled(item) for key, item in cast("dict[str, object]", value).items()}
    if isinstance(value, list | tuple):
        return [_settled(item) for item in cast("list[object]", value)]
    return value


def _digest(problem: PGPSProblem) -> str:
    line = json.dumps(_settled(problem.line(figure=True)), ensure_ascii=False)
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


def test_the_plain_writing_reproduces_the_problems_written_before_the_conventions() -> None:
    got = [[key, _digest(problem)] for key, problem in _problems(PLAIN_WRITING)]
    assert got == GOLDEN["shapes"]


def test_the_pgps_v1_preset_reproduces_a_corpus_written_before_the_conventions(tmp_path: Path) -> None:
    config = load_config("pgps-v1").model_copy(update={"time_limit": None})
    assert config.pgps_writing == PLAIN_WRITING
    write_dataset(config, 3, 0, tmp_path, task="calculation", shard_size=3, pgps=4)
    for name, digest in GOLDEN["dataset"].items():
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest, name
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert "pgps_writing" not in manifest["config"]  # as the manifests written before the setting
    assert config_from_mapping(manifest["config"]).pgps_writing == PLAIN_WRITING  # read back: plain


def test_new_corpora_use_the_conventions_and_record_them_in_the_manifest(tmp_path: Path) -> None:
    config = load_config("pgps")
    assert config.pgps_writing == PGPSWriting() != PLAIN_WRITING
    assert load_config("default").pgps_writing == PGPSWriting()
    write_dataset(config.model_copy(update={"time_limit": None}), 1, 0, tmp_path, task="calculation", pgps=2)
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert config_from_mapping(manifest["config"]).pgps_writing == PGPSWriting()  # a rerun writes the same
    proving = tmp_path / "proving"
    write_dataset(load_config("default"), 1, 0, proving)
    assert "pgps_writing" not in json.loads((proving / "manifest.json").read_text(encoding="utf-8"))["config"]


def _written_values(text: str, sem: tuple[str, ...]) -> list[str]:
    """The values a generated problem writes, in N order: the text's condition, then each value clause."""
    condition = re.search(r"\bIf (.*?), (?:find|what|solve|determine|express|how|use) ", text)
    values = re.findall(r"= ([^ ,]+)", condition.group(1)) if condition else []
    for clause in sem:
        if " = " not in clause or "\\perp" in clause or "\\parallel" in clause:
            continue
        value = clause.rsplit(" = ", 1)[1]
        if not value.startswith("m \\") and not re.fullmatch(r"[A-Z]+", value):
            values.append(value.lower())
    return values


def test_the_n_list_is_the_values_written_and_every_program_executes_to_its_answer(
    textbook: list[PGPSProblem], tmp_path: Path
) -> None:
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({p.record.id: pgps_json(p.record) for p in textbook}), encoding="utf-8")
    loaded = {r.id: r for r in load_pgps(path)}
    for problem in textbook:
        record = loaded[problem.record.id]
        assert list(record.numbers) == _written_values(record.text, record.sem_clauses), record
        answer = float(record.answer)
        assert execute(record.expression, record.numbers).answer == pytest.approx(answer, abs=5e-3)
        numbers = record.number_list()
        dedup = dedup_program(record.expression, numbers)
        assert execute(dedup, numbers.dedup_numbers).answer == pytest.approx(answer, abs=5e-3)


def test_each_convention_occurs(textbook: list[PGPSProblem]) -> None:
    records = [p.record for p in textbook]
    numbered = [r for r in records if any(NUMBERED.search(c) for c in r.sem_clauses)]
    assert len(numbered) >= 5
    for record in numbered:  # each numbered angle is named once by its letters, then used by number
        ids = set(re.findall(r"\\angle (\d+)", " ".join(record.sem_clauses) + record.text))
        naming = [c for c in record.sem_clauses if re.fullmatch(r"m \\angle [A-Z]{3} = m \\angle \d+", c)]
        assert {c.rsplit(" ", 1)[1] for c in naming} == ids
    assert any(re.search(r"Find m \\angle \d\.|measure of \\angle \d", r.text) for r in numbered)
    chains = [c for r in records for c in r.sem_clauses if c.count(" = ") == 2 and "m \\angle" not in c[2:]]
    assert len(chains) >= 5
    forms = {canonical_question(r.text) != r.text.lower() for r in records}
    assert forms == {True, False}  # some questions in the plain phrasing, some not
    questions = {re.sub(r"\b[A-Z]+\b|\\angle \d|\b[a-z]\b|\d+(\.\d+)?", "#", r.text) for r in records}
    assert len(questions) >= 40
    smaller = [p for p in textbook if p.written.lines is not None]
    assert len(smaller) >= len(textbook) // 4


def test_the_phrasing_changes_neither_the_program_nor_the_answer() -> None:
    plain = [p for _, p in _problems(PLAIN_WRITING)]
    phrased = [p for _, p in _problems(PLAIN_WRITING.model_copy(update={"phrasings": True}))]
    assert len(plain) == len(phrased)
    changed = 0
    for a, b in zip(plain, phrased, strict=True):
        assert (a.record.expression, a.record.answer) == (b.record.expression, b.record.answer)
        assert (a.record.sem_clauses, a.record.stru_clauses) == (b.record.sem_clauses, b.record.stru_clauses)
        assert question_key(a.record) == question_key(b.record)  # the same question to dedupe and leaks
        changed += a.record.text != b.record.text
    assert changed >= len(plain) // 2


def test_a_rephrased_test_problem_is_found_as_a_leak() -> None:
    (_, problem), *_ = _problems(PLAIN_WRITING)
    record = problem.record
    assert record.text.startswith("Find ")
    for text in (
        record.text.replace("Find ", "What is the length of ").replace(".", "?"),
        record.text.replace("Find ", "How long is ").replace(".", "?"),
    ):
        test = record.model_copy(update={"id": "test_1", "text": text})
        assert find_leaks([record], [test]) == [(record.id, "test_1")], text
        assert find_leaks([record], [test], as_written=True) == []  # the check the plain writing keeps
    other = record.model_copy(
        update={"id": "test_2", "text": record.text.replace("Find ", "Find the area of ")}
    )
    assert find_leaks([record], [other]) == []


def test_canonical_questions_undo_each_phrasing() -> None:
    assert canonical_question("Solve for x.") == "find x."
    assert (
        canonical_question("P is a kite. If p = 6, what is the value of x?")
        == "p is a kite. if p = 6, find x."
    )
    assert canonical_question("What is the measure of \\angle 1?") == "find m \\angle 1."
    assert canonical_question("How long is p?") == "find p."
    assert canonical_question("P is a kite. Determine the perimeter of the kite.") == (
        "p is a kite. find the perimeter of p."
    )
    assert (
        canonical_question("What is \\sin \\angle p?") == "express the ratio of \\sin \\angle p as a decimal."
    )
    assert canonical_question("Find the length of \\widehat p.") == "find the length of \\widehat p."


def test_smaller_figures_keep_what_the_problem_uses(textbook: list[PGPSProblem]) -> None:
    smaller = [p for p in textbook if p.written.lines is not None and p.written.figure is not None]
    assert smaller
    for problem in smaller:
        record, figure = problem.record, problem.written.figure
        assert figure is not None
        lines = [c.removeprefix("line ").split() for c in record.stru_clauses if c.startswith("line ")]
        assert [[p.upper() for p in line] for line in figure.lines] == lines
        labels = figure_step_labels(problem.figured(), record.expression)
        assert all(step.correct for step in labels.steps), (record, labels)
        named = {
            p
            for word in re.findall(r"\b[A-Z]+\b", " ".join([record.text, *record.sem_clauses]))
            for p in word
        }
        assert named <= {p.name.upper() for p in figure.points}  # every point the problem names is drawn
        entry = problem.line(figure=True)
        assert problem_from_line(entry).line(figure=True) == entry
    assert render_problem(smaller[0]).startswith(b"\x89PNG")


def test_a_numbered_angle_is_written_on_the_diagram_as_its_number() -> None:
    figure = _figure(SHAPES[0], 0)
    layout = diagram_layout(figure.problem, figure.diagram)
    notes, arcs = notes_for(
        layout, [(Q("ang", ("a", "b", "c")), "\\angle 1"), (Q("ang", ("b", "c", "a")), "35")]
    )
    assert [text for _, _, text in notes] == ["1", "35°"]
    assert len(arcs) == 2


def test_mts_verifies_every_trace_of_problems_written_with_the_conventions(
    textbook: list[PGPSProblem], tmp_path: Path
) -> None:
    chosen = [
        p.record
        for p in textbook
        if any(NUMBERED.search(c) or c.count(" = ") == 2 for c in p.record.sem_clauses)
    ]
    chosen = chosen[:8]
    assert len(chosen) == 8
    path = tmp_path / "conventions.json"
    path.write_text(json.dumps({r.id: pgps_json(r) for r in chosen}), encoding="utf-8")
    config = MTSConfig(
        jobs=1, llm=LLMConfig.model_validate({"backend": "template"}), setting="clauses", mixtures=False
    )
    run = run_mts(path, tmp_path / "mts", config)
    assert run.stats.traces == dict.fromkeys(("program", "pal", "cot_program", "cot_pal"), len(chosen))
