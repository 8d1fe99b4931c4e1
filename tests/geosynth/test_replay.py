"""Replaying proofs: every step re-derived from its own premises, on a diagram realised by the checker."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from geosynth import deduce, load_problems, parse_problem, realise, solve_all, solve_one
from geosynth.engine import Proof, ProofLine, proof_data, proof_steps, replay

MIDLINE = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? para d e b c"
ROTATED = "a b c = triangle a b c; d = on_tline d a a b; e = on_tline e a a c ? eqangle a d a e a b a c"


def _proof(line: str, name: str = "p") -> Proof:
    problem = parse_problem(line, name=name)
    _, deduction = solve_one(problem, time_limit=30)
    assert deduction.proved
    return proof_data(problem, proof_steps(problem, deduction))


@pytest.fixture(scope="module")
def midline() -> Proof:
    return _proof(MIDLINE, "midline")


def _replace(proof: Proof, number: int, **changes: object) -> Proof:
    steps = [s.model_copy(update=changes) if s.number == number else s for s in proof.steps]
    return proof.model_copy(update={"steps": tuple(steps)})


def _last_rule_step(proof: Proof, rule: str | None = None) -> ProofLine:
    return next(s for s in reversed(proof.steps) if s.premises and (rule is None or s.rule == rule))


def test_a_proof_replays_step_by_step(midline: Proof) -> None:
    report = replay(midline)
    assert report.ok and report.failed is None
    assert [c.number for c in report.steps] == [s.number for s in midline.steps]
    assert all(c.ok and not c.reason for c in report.steps)


def test_a_proof_survives_json_and_replays_the_same(midline: Proof) -> None:
    again = Proof.model_validate_json(midline.model_dump_json())
    assert again == midline and replay(again).ok


def test_removing_a_premise_fails_at_that_step(midline: Proof) -> None:
    step = _last_rule_step(midline)  # r07 from the two midpoints
    report = replay(_replace(midline, step.number, premises=step.premises[:-1]))
    assert not report.ok and report.failed is not None and report.failed.number == step.number
    assert "does not give it" in report.failed.reason


def test_changing_a_conclusion_fails_at_that_step(midline: Proof) -> None:
    step = _last_rule_step(midline)
    report = replay(_replace(midline, step.number, fact="para b d c e"))
    assert report.failed is not None and report.failed.number == step.number


def test_renaming_a_rule_fails_at_that_step(midline: Proof) -> None:
    step = _last_rule_step(midline)
    for rule in ("r26", "angle chasing", "r99"):
        report = replay(_replace(midline, step.number, rule=rule))
        assert report.failed is not None and report.failed.number == step.number, rule
    report = replay(_replace(midline, step.number, rule="r99"))
    assert report.failed is not None and "unknown rule 'r99'" in report.failed.reason


def test_a_fact_claimed_as_given_must_be_a_construction_fact(midline: Proof) -> None:
    first = midline.steps[0]
    report = replay(_replace(midline, first.number, fact="para a b a c"))
    assert report.failed is not None and report.failed.number == first.number
    assert "construction" in report.failed.reason or "read" in report.failed.reason


def test_premises_must_be_earlier_steps_and_the_proof_must_end_at_the_goal(midline: Proof) -> None:
    step = _last_rule_step(midline)
    forward = replay(_replace(midline, step.number, premises=(*step.premises, step.number)))
    assert forward.failed is not None and "not an earlier step" in forward.failed.reason
    short = midline.model_copy(update={"steps": midline.steps[:-1]})
    report = replay(short)
    assert report.failed is not None and report.failed.number == len(short.steps)
    assert "not at para" in report.failed.reason


def test_tampering_with_an_angle_chasing_step_is_caught() -> None:
    problem = parse_problem(ROTATED, name="rotated")
    deduction = deduce(problem, realise(problem, np.random.default_rng(0), 50, check_goal=True), rules=())
    proof = proof_data(problem, proof_steps(problem, deduction))  # no rules: pure angle chasing
    assert replay(proof).ok
    step = _last_rule_step(proof, "angle chasing")
    dropped = replay(_replace(proof, step.number, premises=step.premises[1:]))
    assert dropped.failed is not None and dropped.failed.number == step.number
    assert "angle chasing does not derive it" in dropped.failed.reason


def test_a_diagram_step_must_hold_on_the_replay_diagram(midline: Proof) -> None:
    lines = (
        *midline.steps[:-1],
        ProofLine(number=len(midline.steps), fact="ncoll a b d", rule="diagram", premises=()),
    )
    report = replay(midline.model_copy(update={"steps": lines}))
    assert report.failed is not None and "false on the replay diagram" in report.failed.reason


def test_engine_proofs_of_sample_problems_replay(data_dir: Path) -> None:
    for problem in load_problems(data_dir / "jgex_sample.txt")[:4]:
        result, deduction = solve_one(problem, time_limit=30)
        if not result.solved:
            continue
        proof = proof_data(problem, proof_steps(problem, deduction))
        report = replay(proof)
        assert report.ok, (problem.name, report.failed)


@pytest.mark.slow
def test_every_solved_jgex_proof_replays(alphageometry_dir: Path) -> None:
    problems = load_problems(alphageometry_dir / "jgex_ag_231.txt")
    proofs = [r.proof for r in solve_all(problems, timeout=60, jobs=2) if r.proof is not None]
    assert len(proofs) >= 180
    failures = [(p.name, report.failed) for p in proofs if not (report := replay(p)).ok]
    assert failures == []


# The circle of a b d is given through f, g and h, and e joins it by a derived fact (two right angles
# on a b): each of the four facts shares at most two points with the goal, so only their chain implies it.
CIRCLE_CHAIN = (
    "a b c = triangle a b c; d = foot d a b c; e = foot e b a c; f = on_circum f a b d; "
    "g = on_circum g a b d; h = on_circum h a b d ? cyclic e f g h"
)


def test_a_concyclicity_of_merged_circles_cites_the_facts_that_merged_them() -> None:
    proof = _proof(CIRCLE_CHAIN, "circle-chain")
    last = proof.steps[-1]
    assert last.rule == "same line or circle" and len(last.premises) >= 2
    report = replay(proof)
    assert report.ok, report.failed


def test_a_rule_step_whose_premises_imply_its_fact_at_once_replays() -> None:
    from geosynth.engine.language.predicates import build_relation
    from geosynth.engine.proofs.replay import StepContext, check_step

    # r03 (eqangle A B P Q C D P Q => para A B C D) on an angle equality with a common side: the store of
    # the premise alone already merges the two directions, so the search's join (which leaves out rows
    # whose conclusion is implied) has no row; the step check still finds the rule's instance.
    problem = parse_problem("a b c = triangle a b c; d = midpoint d b c", name="collinear")
    diagram = realise(problem, np.random.default_rng(0), 50)
    ctx = StepContext(frozenset(), tuple(diagram.points), diagram.coords())
    premise = build_relation("eqangle", ("b", "d", "a", "d", "d", "c", "a", "d"))
    assert check_step("r03", build_relation("para", ("b", "d", "d", "c")), (premise,), ctx) is None
    wrong = build_relation("para", ("b", "d", "a", "c"))  # not an instance of the rule's conclusion
    assert check_step("r03", wrong, (premise,), ctx) is not None
