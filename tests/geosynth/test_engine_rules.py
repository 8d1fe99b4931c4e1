"""The engine's own rules (``rules/engine_rules.txt``): data, soundness and the problems they prove."""

from __future__ import annotations

import numpy as np
import pytest

from geosynth import DefinitionError, parse_problem, realise, replay, solve_one
from geosynth.engine import compile_rule, deduce, engine_rules, load_rules, parse_named_rules
from geosynth.engine.algebra.proportions import POWER_OF_A_POINT
from geosynth.engine.proofs.proof import RULE_NAMES
from geosynth.engine.proofs.replay import rule_table

# Problems of JGEX-AG-231 and IMO-AG-30 that the engine proves only with its own rules, each with the
# rule its proof must use.
GAINED = {
    "isosceles-trapezoid": ("a b c d = eq_trapezoid a b c d ? eqangle a d a b b a b c", "e01"),
    "trapezoid-midpoints": (
        "b c d = triangle b c d; e = midpoint e c d; a = eqdistance a d c b, on_pline a b d c; "
        "f = midpoint f b a ? perp a b e f",
        "e01",
    ),
    "trapezoid-diagonals": (
        "c d = segment c d; e = midpoint e c d; b = free b; f = midpoint f b c; "
        "a = eqdistance a d c b, on_pline a b d c; g = midpoint g a b; h = midpoint h d a ? cong h e e f",
        "e01",
    ),
    "incentre": (
        "d b a = triangle d b a; c = angle_bisector c d a b, angle_bisector c d b a; "
        "e = on_line e b c, on_tline e d b c; f = on_line f a c, on_tline f d a c ? para e f a b",
        "e07",
    ),
    "imo-2004-p1": (
        "a b c = triangle a b c; o = midpoint o b c; m = on_circle m o b, on_line m a b; "
        "n = on_circle n o b, on_line n a c; r = angle_bisector r b a c, angle_bisector r m o n; "
        "o1 = circle o1 b m r; o2 = circle o2 c n r; p = on_circle p o1 r, on_circle p o2 r ? coll p b c",
        "e05",
    ),
    "imo-2009-p2": (
        "m l k = triangle m l k; w = circle w m l k; q = on_tline q m w m; p = mirror p q m; "
        "b = mirror b p k; c = mirror c q l; a = on_line a b q, on_line a c p; o = circle o a b c "
        "? cong o p o q",
        POWER_OF_A_POINT,
    ),
    "imo-2014-p4": (
        "a b c = triangle a b c; p = on_line p b c, on_aline p a b b c a; "
        "q = on_line q b c, on_aline q a c c b a; m = mirror m a p; n = mirror n a q; "
        "x = on_line x b m, on_line x c n; o = circle o a b c ? cong o x o a",
        "e03",
    ),
}


def test_engine_rules_are_data_with_names_and_readings() -> None:
    rules = engine_rules()
    names = [rule.name for rule in rules]
    assert names == [f"e{i:02d}" for i in range(1, len(rules) + 1)]
    assert not set(names) & {rule.name for rule in load_rules()}
    assert set(names) <= set(RULE_NAMES) and set(names) <= set(rule_table())
    compiled = {rule.name for rule in rules if compile_rule(rule) is not None}
    assert compiled == set(names) - {POWER_OF_A_POINT}  # its ratio premise is the algebra's


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cong A B C D => cong C D A B", "NAME"),
        ("e01: cong A B C D => cong C D A B\ne01: coll A B C => coll B C A", "twice"),
        ("e01: cong A B C D", "=>"),
    ],
)
def test_malformed_named_rules_are_rejected(text: str, message: str) -> None:
    with pytest.raises(DefinitionError, match=message):
        parse_named_rules(text)


@pytest.mark.parametrize("key", sorted(GAINED))
def test_engine_rules_prove_soundly_and_the_proof_replays(key: str) -> None:
    text, rule = GAINED[key]
    problem = parse_problem(text, key)
    result, deduction = solve_one(problem, time_limit=60)
    assert result.solved and result.proof is not None, key
    assert rule in {step.rule for step in result.proof.steps}
    report = replay(result.proof)
    assert report.ok, report.failed
    other = realise(problem, np.random.default_rng(1000), 200, check_goal=True)
    assert all(other.holds(d.fact) for d in deduction.derivations)


@pytest.mark.parametrize("key", ["imo-2009-p2", "isosceles-trapezoid", "incentre"])
def test_renaming_points_keeps_the_verdict(key: str) -> None:
    problem = parse_problem(GAINED[key][0], key)
    renamed = problem.renamed({p: f"z{(5 * i) % 23}" for i, p in enumerate(problem.points)})
    assert solve_one(renamed, time_limit=60)[0].solved


def test_a_parallelogram_is_no_isosceles_trapezoid() -> None:
    # Equal legs and parallel bases: a parallelogram has them too, and its diagonals make unequal angles
    # with a base. The rule's npara side condition, read off the figure, keeps it from firing there.
    problem = parse_problem("a b c = triangle a b c; d = parallelogram a b c d")
    deduction = deduce(problem, realise(problem, np.random.default_rng(0), 100))
    assert "e01" not in {d.rule for d in deduction.derivations}
