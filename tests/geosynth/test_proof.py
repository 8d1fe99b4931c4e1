"""Proofs: traced in post-order, printed raw, merged and folded into a textbook form with symbols."""

from __future__ import annotations

from pathlib import Path

from geosynth import (
    PREDICATES,
    format_proof,
    load_problems,
    load_rules,
    parse_problem,
    proof_steps,
    realise,
    relation_text,
    solve_one,
)
from geosynth.engine import Proof, ProofLine
from geosynth.engine.proofs.proof import (
    RULE_NAMES,
    SYMBOLS,
    format_textbook,
    proof_data,
    symbolic,
    textbook_steps,
)

MIDLINES = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c; f = midpoint f b c ? eqangle d e d f c b c a"


def _line(number: int, fact: str, rule: str, *premises: int) -> ProofLine:
    return ProofLine(number=number, fact=fact, rule=rule, premises=premises)


def test_raw_steps_are_post_order_and_end_at_the_goal(data_dir: Path) -> None:
    for problem in [parse_problem(MIDLINES), *load_problems(data_dir / "jgex_sample.txt")[:4]]:
        _, deduction = solve_one(problem, time_limit=30)
        steps = proof_steps(problem, deduction)
        assert steps[-1].fact == problem.goal
        assert [s.number for s in steps] == list(range(1, len(steps) + 1))
        assert all(p < s.number for s in steps for p in s.premises)
        used = {p for s in steps for p in s.premises}
        assert used | {len(steps)} == set(range(1, len(steps) + 1))  # nothing left over
        assert format_proof(steps).splitlines()[-1].startswith(f"{len(steps)}. ")


def test_textbook_merges_same_premise_steps_and_folds_trivial_ones() -> None:
    proof = Proof(
        name="hand",
        problem="a b c = triangle a b c ? cong a b a b",
        steps=(
            _line(1, "cong a o b o", "given"),
            _line(2, "cong a o c o", "given"),
            _line(3, "ncoll a b o", "diagram"),
            _line(4, "eqangle a b a o b o a b", "r14", 1, 3),
            _line(5, "coll b c h", "given"),
            _line(6, "eqangle b h c h d h d h", "same line or circle", 5),
            _line(7, "perp a b c d", "r09", 4, 6),
            _line(8, "perp a c b d", "r09", 4, 6),
            _line(9, "para a b e f", "r01", 7, 8),
        ),
    )
    book = textbook_steps(proof)
    assert [s.rule for s in book] == ["given", "r14", "r09", "r01"]
    assert book[0].facts == ("cong a o b o", "cong a o c o", "coll b c h")  # every given in one step
    assert book[1].conditions == ("ncoll a b o",) and book[1].premises == (1,)
    assert book[2].facts == ("perp a b c d", "perp a c b d")  # one rule, same premises: merged
    assert book[2].via == ("eqangle b h c h d h d h",) and book[2].premises == (1, 2)
    assert book[3].premises == (3,)
    text = format_textbook(book).splitlines()
    assert text[0] == "1. Given: AO = BO; AO = CO; B, C, H are collinear."
    assert text[1] == (
        "2. ∠(AB, AO) = ∠(BO, AB) — base angles of an isosceles triangle, from 1, as A, B, O are not collinear."
    )
    assert text[2].startswith(
        "3. AB ⊥ CD; AC ⊥ BD — angles with perpendicular arms are equal, from 1, 2 (so ∠(BH, CH)"
    )
    assert text[3] == "4. AB ∥ EF — two lines perpendicular to one line are parallel, from 3."


def test_the_goal_stays_the_last_step_even_when_trivial() -> None:
    proof = Proof(
        name="hand",
        problem="a b c = triangle a b c ? coll a b c",
        steps=(_line(1, "coll a b c", "given"), _line(2, "coll a b c", "same line or circle", 1)),
    )
    book = textbook_steps(proof)
    assert len(book) == 2 and book[-1].facts == ("coll a b c",) and book[-1].premises == (1,)


def test_every_predicate_and_rule_has_a_reading() -> None:
    assert set(PREDICATES) <= set(SYMBOLS)
    assert {rule.name for rule in load_rules()} <= set(RULE_NAMES)
    assert symbolic("simtri a b c d e f") == "△ABC ∼ △DEF"
    assert symbolic("contri2 a b c d e f") == "△ABC ≅ △DEF (mirrored)"
    assert symbolic("perp p1 p2 q r") == "P1 P2 ⊥ QR"
    assert symbolic("s_angle a b c 30") == "∠(BA, BC) = 30°"


def test_an_engine_proof_reads_as_sentences() -> None:
    problem = parse_problem(MIDLINES)
    _, deduction = solve_one(problem, time_limit=30)
    data = proof_data(problem, proof_steps(problem, deduction))
    book = textbook_steps(data)
    assert len(book) < len(data.steps)
    assert problem.goal is not None
    assert book[0].rule == "given" and book[-1].facts[-1] == relation_text(problem.goal)
    text = format_textbook(book)
    assert "the midline of a triangle is parallel to its base" in text and "∥" in text and "∠" in text
    assert all(p < s.number for s in book for p in s.premises)


def test_the_searchs_own_store_gives_the_proof_a_new_store_gives(data_dir: Path) -> None:
    import numpy as np

    from geosynth.engine.deduction.deductive import search
    from geosynth.engine.proofs.proof import Tracer
    from geosynth.engine.store.factstore import FactStore

    # Tracing builds its final systems on the search's own store when given it, not on a new store
    # holding the same facts; the proofs are the same.
    for index, problem in enumerate(load_problems(data_dir / "jgex_sample.txt")[:6]):
        deduction, store = search(problem, realise(problem, np.random.default_rng(index), 50))
        assert deduction.proved, problem.name
        rebuilt = proof_steps(problem, deduction)
        assert proof_steps(problem, deduction, "l0", store) == rebuilt, problem.name
        assert Tracer(deduction, "l0", store).systems()[0].store is store
    problem = load_problems(data_dir / "jgex_sample.txt")[0]
    deduction, store = search(problem, realise(problem, np.random.default_rng(0), 50))
    other = FactStore(tuple(reversed(store.points)))  # another numbering of the points: not reused
    assert Tracer(deduction, "l0", other).systems()[0].store is not other
