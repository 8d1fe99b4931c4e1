"""How evaluate reads candidates: PA answers have their clauses stripped, then run as their trace format."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from geo_cli.pipeline._stage_evaluate import _Executor, sc_curve
from geodsl import to_pal
from geodsl.data import load_sample
from geodsl.sandbox import Sandbox
from geodsl.traces import reasoning_part
from geotts import Completion, Problem

RECORD = load_sample()[1]  # prob_27: Gsin N0 N2 N3 Get y -> 48.000
CLAUSES = "Diagram relations:\n" + "\n".join([*RECORD.stru_clauses, *RECORD.sem_clauses]) + "\n\n"


def test_reasoning_part_drops_the_restated_clauses() -> None:
    assert reasoning_part(CLAUSES + "Solution:\nGsin N0 N2 N3 Get y") == "Gsin N0 N2 N3 Get y"
    assert reasoning_part("Gsin N0 N2 N3 Get y") == "Gsin N0 N2 N3 Get y"


@pytest.fixture(scope="module")
def executor() -> Iterator[_Executor]:
    box = Sandbox(1)
    yield _Executor(box)
    box.close()


def test_candidates_execute_as_their_trace_format(executor: _Executor) -> None:
    numbers = RECORD.numbers
    program = Completion(text=CLAUSES + "Solution:\n" + RECORD.expression, num_tokens=40)
    assert math.isclose(executor.answer(program, "program", numbers) or 0.0, 48.0, rel_tol=1e-3)
    script = to_pal(RECORD.expression, numbers)
    pal = Completion(text=CLAUSES + "Solution:\n" + script, num_tokens=200)
    assert math.isclose(executor.answer(pal, "pal", numbers) or 0.0, 48.0, rel_tol=1e-3)
    assert math.isclose(executor.answer(pal, None, numbers) or 0.0, 48.0, rel_tol=1e-3)  # format detected
    assert executor.pattern(pal.text) == "pal"
    problem = Problem(id=RECORD.id, question=RECORD.text, metadata={"numbers": list(numbers)})
    assert math.isclose(executor.extract(program, "program", problem) or 0.0, 48.0, rel_tol=1e-3)


def test_cut_off_or_unreadable_candidates_cast_no_vote(executor: _Executor) -> None:
    cut = Completion(text=CLAUSES + "Solution:\n" + RECORD.expression, num_tokens=128, finish_reason="length")
    assert executor.answer(cut, "program", RECORD.numbers) is None
    junk = Completion(text="reram:lt tion: Eqines 32:", num_tokens=10)
    assert executor.answer(junk, "program", RECORD.numbers) is None
    assert executor.answer(junk, None, RECORD.numbers) is None
    assert executor.pattern(junk.text) == "other"


def test_sc_curve_votes_over_the_first_k_sampled_answers() -> None:
    rows = [
        {"gold": 2.0, "sc_sample": [1.0, 2.0, 2.0, None]},
        {"gold": 5.0, "sc_sample": [None, 5.0, 3.0, 3.0]},
    ]
    curve = sc_curve(rows, [1, 2, 3, 4])
    assert [p["accuracy"] for p in curve] == [0.0, 0.5, 1.0, 0.5]
    assert [p["asn"] for p in curve] == [1.0, 2.0, 3.0, 4.0]
