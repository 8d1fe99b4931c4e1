"""A rule premise that a repeated point makes vacuous does not fire (r25's cyclic kite with A = B)."""

from __future__ import annotations

import json
from pathlib import Path

from geosynth import parse_problem, solve_one
from geosynth.engine import Proof, replay

DATA = Path(__file__).resolve().parent / "data"


def test_a_proof_through_a_degenerate_cyclic_kite_fails_replay_at_that_step() -> None:
    # JGEX-AG-231 E028-3 as the engine once proved it: step 21 fired r25 ("cong A P B P, cong A Q B Q,
    # cyclic A B P Q => perp P A A Q") with A = B = g, so its premises were two segments equal to
    # themselves and three points on a circle, true of any point g of any circle.
    proof = Proof.model_validate_json((DATA / "degenerate_r25_proof.json").read_text(encoding="utf-8"))
    step = proof.steps[20]
    assert (step.rule, step.fact, step.premises) == ("r25", "perp a g c g", (1, 2, 20))
    report = replay(proof)
    assert not report.ok and report.failed is not None
    assert report.failed.number == 21 and "r25" in report.failed.reason


def test_the_engine_proves_that_problem_another_way() -> None:
    problem = parse_problem(json.loads((DATA / "degenerate_r25_proof.json").read_text())["problem"], "E028-3")
    result, _ = solve_one(problem, time_limit=30)
    assert result.solved and result.proof is not None
    steps = {s.number: s for s in result.proof.steps}
    for s in result.proof.steps:
        if s.rule == "r25":  # every cyclic kite it uses has two distinct ends
            assert all(steps[k].rule != "same segment" for k in s.premises), s
    assert replay(result.proof).ok
