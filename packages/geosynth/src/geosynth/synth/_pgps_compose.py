r"""Composing PGPS problems on a figure: a goal, the givens that determine it, and the program.

A problem is designed around one theorem of the figure (chosen with weights that follow the operator
mix of PGPS9K, so rare operators still come up): one of its quantities is the unknown; the others are
given, or derived by one more theorem; optionally the unknown feeds one more theorem whose remaining
quantity becomes the goal. Every step of the resulting program has exactly one unknown when it runs.
Given values are the figure's own measures after rescaling it so that one given length is a whole
number; a value that is neither whole, a one-decimal number nor ``k\sqrt{m}`` is rounded (at most one
per problem), in which case the answer is what the program computes from the rounded value, checked
against the figure within 2%. No given may follow from the others, and no shorter program may exist.

The problem is then written in the PGPS annotation format (:func:`write_problem`): structural clauses
for the drawn lines and circles, semantic clauses for the given values and the facts the program's
theorems need, a text that names the goal, and the program in the raw N numbering of the reference
preprocessing. It is kept only when ``geodsl`` executes it to the figure's value. How it is written
follows :class:`~geosynth.synth._config.PGPSWriting`: the plain writing, or the conventions of textbook
problems (phrasings of the question, numbered angles, equality chains, only the lines the problem uses),
whose choices come from a source of their own so that they never change what is designed.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from geodsl import answers_match, execute
from geodsl.data import PGPSRecord
from geodsl.errors import GeoDSLError
from geosynth.synth._choices import multiple_choice
from geosynth.synth._config import PLAIN_WRITING, PGPSDesign, PGPSWriting
from geosynth.synth._pgps_figure import PGPSFigure, Q
from geosynth.synth._pgps_phrases import goal_text, question_text
from geosynth.synth._pgps_realised import RealisedFigure, realised_figure
from geosynth.synth._pgps_theorems import Fact, Theorem
from geosynth.synth._text import point_label
from geosynth.synth.errors import SynthError

__all__ = ("OP_WEIGHTS", "Design", "Written", "design_problem", "write_problem")

OP_WEIGHTS: dict[str, float] = {
    "Sum": 8.0,
    "Equal": 6.0,
    "Multiple": 3.5,
    "Gougu": 4.0,
    "Proportion": 6.0,
    "Iso_Tri_Ang": 1.5,
    "Gsin": 1.0,
    "Gcos": 1.0,
    "Gtan": 1.0,
    "Geo_Mean": 3.5,
    "Ratio": 1.0,
    "Circle_R_Area": 1.5,
    "Cos_Law": 0.6,
    "PRK_Perim": 3.0,
    "Sin_Law": 0.6,
    "TanSec_Ang": 3.0,
    "Circle_D_Area": 1.5,
    "Median": 3.0,
    "Circle_R_Circum": 1.2,
    "RNgon_B_Area": 1.5,
    "Tria_BH_Area": 1.5,
    "Ngon_Angsum": 4.0,
    "RNgon_L_Area": 2.0,
    "Chord2_Ang": 2.0,
    "Para_Area": 3.0,
    "Circle_D_Circum": 1.2,
    "Rect_Area": 3.0,
    "Trap_Area": 3.0,
    "Rhom_Area": 2.5,
    "RNgon_H_Area": 3.0,
    "Tria_SAS_Area": 1.0,
    "ArcSeg_Area": 1.0,
    "Kite_Area": 1.5,
}
"""How often a problem is built around each operator, relative to the others the figure offers: the
PGPS9K test mix flattened (Sum is 36% of its programs, most area operators under 1%) so that every
operator occurs in a corpus of a few thousand problems."""

KIND_RANK: tuple[str, ...] = (
    "Perimeter and Area of Polygon",
    "Circumference and Area of Circle",
    "Perimeter and Area of Quadrangle",
    "Perimeter and Area of Triangle",
    "Secant Angle",
    "Secant Segment",
    "Tangent",
    "Inscribed Angle",
    "Arc Angle",
    "Circle Chord",
    "Trapezoid and Kite",
    "Rhombus and Square",
    "Rectangle",
    "Parallelogram",
    "Geometric Mean",
    "Angle Bisector of Triangle",
    "Midsegment of Triangle",
    "Perpendicular Bisector of Triangle",
    "Median of Triangle",
    "Polygon Similarity",
    "Similarity in Parallel Line",
    "Polygon Congruence",
    "Trigonometry",
    "Pythagorean Theorem",
    "Polygon Angle",
    "Isosceles (Equilateral) Triangle",
    "Parallel Lines",
    "Angle Relation in Triangle",
    "Line Segment",
    "Angle",
)
"""PGPS knowledge types, most specific first: a problem's type is that of its most specific step."""

STATABLE = frozenset({"seg", "ang", "arc"})
"""Quantities a problem may give a value for (lengths, angle and arc measures)."""
_LETTERS = ("x", "y", "z")
_AREAS = frozenset({"area", "carea", "sector", "segarea"})
_LENGTHS = frozenset({"seg", "perim", "circ", "arclen"})
_MAX_GIVENS = 5


@dataclass
class Design:
    """A problem before it is written: the steps (theorem, unknown), the givens and the goal."""

    steps: list[tuple[Theorem, Q]]
    givens: list[Q]
    goal: Q
    kind: str
    scale: float = 1.0
    shown: dict[Q, str] = field(default_factory=lambda: {})
    """Given values as written (``5``, ``4\\sqrt{3}``, ``2x+10``)."""
    exact: bool = True
    letter: str | None = None
    """The letter the goal is asked as (``x``), when it is."""
    variable: float | None = None
    """The value of the letter when givens are written as expressions in it (``Find x.`` with ``2x+10``)."""

    @property
    def facts(self) -> list[Fact]:
        """The facts the steps need, each once, in order."""
        return list(dict.fromkeys(f for t, _ in self.steps for f in t.facts))

    @property
    def draw(self) -> list[tuple[str, str]]:
        """Segments to draw besides the figure's lines."""
        return list(dict.fromkeys(d for t, _ in self.steps for d in t.draw))


def _index(theorems: Sequence[Theorem]) -> dict[Q, list[Theorem]]:
    out: dict[Q, list[Theorem]] = {}
    for theorem in theorems:
        for q in theorem.quantities:
            out.setdefault(q, []).append(theorem)
    return out


def _pick(rng: random.Random, theorems: Sequence[Theorem], weights: dict[str, float]) -> Theorem | None:
    if not theorems:
        return None
    by_op: dict[str, list[Theorem]] = {}
    for theorem in theorems:
        by_op.setdefault(theorem.op, []).append(theorem)
    ops = sorted(by_op)
    op = rng.choices(ops, weights=[weights.get(o, 1.0) for o in ops], k=1)[0]
    return rng.choice(by_op[op])


def design_problem(
    theorems: Sequence[Theorem],
    rng: random.Random,
    weights: dict[str, float] | None = None,
    growth: PGPSDesign | None = None,
) -> Design | None:
    """One problem around a theorem of the figure, or ``None`` when the draw leads nowhere.

    Args:
        theorems: The figure's theorems (:func:`geosynth.synth._pgps_theorems.theorems`).
        rng: The only source of choices.
        weights: Relative weight of each operator as the problem's centre (:data:`OP_WEIGHTS`).
        growth: The odds of growing the problem forward and backward (``PGPSDesign()`` if ``None``).
    """
    index = _index(theorems)
    weights = OP_WEIGHTS if weights is None else weights
    growth = PGPSDesign() if growth is None else growth
    core = _pick(rng, theorems, weights)
    if core is None:
        return None
    target = rng.choice(core.quantities)
    steps: list[tuple[Theorem, Q]] = [(core, target)]
    goal = target
    if rng.random() < growth.forward:
        onward = [
            t
            for t in index[target]
            if t is not core and len([q for q in t.quantities if q not in core.quantities]) >= 1
        ]
        nxt = _pick(rng, onward, weights)
        if nxt is not None:
            fresh = [q for q in nxt.quantities if q not in core.quantities]
            goal = rng.choice(fresh)
            steps.append((nxt, goal))
    return _complete(steps, goal, index, rng, weights, growth.backward)


def _complete(
    steps: list[tuple[Theorem, Q]],
    goal: Q,
    index: dict[Q, list[Theorem]],
    rng: random.Random,
    weights: dict[str, float],
    backward: float,
) -> Design | None:
    """Decide for every other quantity of the steps: given, or derived by one more theorem."""
    derived = {q for _, q in steps}
    used = {t for t, _ in steps}
    givens: list[Q] = []
    for theorem, _ in list(steps):
        for q in theorem.quantities:
            if q in derived or q in givens:
                continue
            if q.kind in STATABLE and rng.random() >= backward:
                givens.append(q)
                continue
            source = _source(q, index, used, derived | {goal}, rng, weights)
            if source is None:
                if q.kind not in STATABLE:
                    return None
                givens.append(q)
                continue
            steps.insert(0, (source, q))
            used.add(source)
            derived.add(q)
            givens.extend(x for x in source.quantities if x != q and x not in givens and x not in derived)
    if not givens or len(givens) > _MAX_GIVENS or goal in givens:
        return None
    kinds = [t.kind for t, _ in steps]
    kind = min(kinds, key=lambda k: KIND_RANK.index(k) if k in KIND_RANK else len(KIND_RANK))
    design = Design(steps=steps, givens=givens, goal=goal, kind=kind)
    return design if _runs(design) else None


def _source(
    q: Q,
    index: dict[Q, list[Theorem]],
    used: set[Theorem],
    blocked: set[Q],
    rng: random.Random,
    weights: dict[str, float],
) -> Theorem | None:
    options = [
        t
        for t in index.get(q, [])
        if t not in used and all(x == q or (x.kind in STATABLE and x not in blocked) for x in t.quantities)
    ]
    return _pick(rng, options, weights)


def _runs(design: Design) -> bool:
    """Each step, in order, has exactly its own unknown open; the last one gives the goal."""
    known = set(design.givens)
    for theorem, target in design.steps:
        open_ = [q for q in theorem.quantities if q not in known]
        if open_ != [target]:
            return False
        known.add(target)
    return design.steps[-1][1] == design.goal


# --- given values -----------------------------------------------------------------------------


def _surd(value: float) -> str | None:
    square = value * value
    n = round(square)
    if n < 2 or abs(square - n) > 1e-7 * max(1.0, square) or n > 20000:
        return None
    outside, inside = 1, n
    for f in range(2, math.isqrt(n) + 1):
        while inside % (f * f) == 0:
            inside //= f * f
            outside *= f
    if inside == 1:
        return None
    return f"{outside}\\sqrt{{{inside}}}" if outside > 1 else f"\\sqrt{{{inside}}}"


def value_text(value: float, kind: str) -> tuple[str, bool]:
    r"""How a given value is written, and whether that is its exact value.

    Whole numbers and one-decimal numbers are written as such; a length that is ``k\sqrt{m}`` in that
    form; anything else rounded (lengths to one decimal, or two below 3; angles to one decimal).
    """
    if abs(value - round(value)) <= 1e-7 * max(1.0, abs(value)):
        return str(round(value)), True
    if abs(10 * value - round(10 * value)) <= 1e-6 * max(1.0, abs(value)):
        return f"{round(10 * value) / 10:.1f}", True
    if kind == "seg" and (surd := _surd(value)) is not None:
        return surd, True
    digits = 2 if kind == "seg" and value < 3 else 1
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return text, False


def _scaled(fig: PGPSFigure, q: Q, scale: float) -> float:
    value = fig.value(q)
    if q.kind in _AREAS:
        return value * scale * scale
    if q.kind in _LENGTHS:
        return value * scale
    return value


def choose_values(design: Design, fig: PGPSFigure, lengths: Sequence[int], rng: random.Random) -> bool:
    """Rescale the figure so one given length is whole, and write every given; ``False`` when it cannot."""
    anchors = [q for q in design.givens if q.kind == "seg"]
    design.scale = rng.choice(lengths) / fig.value(rng.choice(anchors)) if anchors else 1.0
    rounded = 0
    for q in design.givens:
        text, exact = value_text(_scaled(fig, q, design.scale), q.kind)
        design.shown[q] = text
        rounded += not exact
    design.exact = rounded == 0
    return rounded <= 1


def closure(known: set[Q], theorems: Sequence[Theorem]) -> dict[Q, int]:
    """What the theorems determine from ``known``, one step at a time: quantity to the step it needs.

    A theorem determines its one open quantity once all its others are known; ``known`` quantities
    are at step 0.
    """
    depth = dict.fromkeys(known, 0)
    frontier = set(known)
    level = 0
    while frontier:
        level += 1
        fresh: set[Q] = set()
        for theorem in theorems:
            open_ = [q for q in theorem.quantities if q not in depth]
            if len(open_) == 1 and any(q in frontier for q in theorem.quantities):
                fresh.add(open_[0])
        for q in fresh:
            depth[q] = level
        frontier = fresh
    return depth


def well_posed(design: Design, theorems: Sequence[Theorem]) -> bool:
    """No given follows from the others, and no shorter program reaches the goal.

    Only theorems whose facts the problem states count. A given the others determine would be
    redundant (and, rounded, inconsistent); a goal reachable in fewer steps means the designed
    program takes a detour.
    """
    stated = set(design.facts)
    usable = [t for t in theorems if set(t.facts) <= stated]
    if closure(set(design.givens), usable).get(design.goal, len(design.steps)) < len(design.steps):
        return False
    return all(g not in closure({q for q in design.givens if q != g}, usable) for g in design.givens)


def as_variable(design: Design, fig: PGPSFigure, rng: random.Random) -> bool:
    """Ask for ``x`` where the last step's unknown (and maybe one given) is written as ``a x + b``."""
    theorem, target = design.steps[-1]
    value = _scaled(fig, target, design.scale)
    if target.kind not in STATABLE or abs(value - round(value)) > 1e-7 * max(1.0, value) or value < 4:
        return False
    whole = round(value)
    a = rng.choice((1, 2, 3, 4, 5))
    top = max(2, whole // a - 1)
    x = rng.randint(max(1, top // 3), top)
    design.variable = float(x)
    design.shown[target] = _expression(a, whole - a * x)
    uses = {q: sum(q in t.quantities for t, _ in design.steps) for q in design.givens}
    partners = [q for q in theorem.quantities if q in design.givens and uses[q] == 1 and q.kind in STATABLE]
    if partners and rng.random() < 0.5:
        partner = rng.choice(partners)
        other = _scaled(fig, partner, design.scale)
        if abs(other - round(other)) <= 1e-7 * max(1.0, other):
            c = rng.choice((1, 2, 3))
            design.shown[partner] = _expression(c, round(other) - c * x)
            design.givens.remove(partner)
            design.givens.append(partner)
    design.letter = "x"
    return True


def _expression(a: int, b: int) -> str:
    head = "x" if a == 1 else f"{a}x"
    if b == 0:
        return head
    return f"{head}{'+' if b > 0 else '-'}{abs(b)}"


# --- writing ----------------------------------------------------------------------------------


def _name(q: Q) -> str:
    return "".join(point_label(p) for p in q.pts)


def quantity_text(q: Q) -> str:
    r"""A statable quantity in clause syntax: ``AB``, ``m \angle ABC``, ``m \widehat AB``."""
    if q.kind == "seg":
        return _name(q)
    if q.kind == "ang":
        return f"m \\angle {_name(q)}"
    if q.kind == "arc":
        return f"m \\widehat {point_label(q.pts[1])}{point_label(q.pts[2])}"
    raise SynthError(f"quantity {q.kind} {' '.join(q.pts)} has no clause form")


_SHAPE_WORDS = {
    "square": "ABCD is a square",
    "rectangle": "Quadrilateral ABCD is a rectangle",
    "rhombus": "ABCD is a rhombus",
    "parallelogram": "ABCD is a parallelogram",
    "trapezoid": "ABCD is a trapezoid",
    "kite": "ABCD is a kite",
}
_POLYGON_WORDS = {3: "equilateral triangle", 4: "square", 5: "regular pentagon", 6: "regular hexagon"}
_POLYGON_WORDS[8] = "regular octagon"


def fact_clause(fact: Fact) -> tuple[str, str] | None:
    r"""Where a fact is stated: ``("sem", "AB \perp CD on E")`` or ``("text", "ABCD is a kite.")``."""
    head, *pts = fact
    names = [point_label(p) for p in pts]
    if head == "perp":
        return "sem", f"{names[0]}{names[1]} \\perp {names[2]}{names[3]} on {names[4]}"
    if head == "para":
        return "sem", f"{names[0]}{names[1]} \\parallel {names[2]}{names[3]}"
    if head == "eq":
        return "sem", f"{names[0]}{names[1]} = {names[2]}{names[3]}"
    if head == "eqang":
        return "sem", f"m \\angle {''.join(names[:3])} = m \\angle {''.join(names[3:])}"
    if head in ("sim", "cong"):
        symbol = "\\sim" if head == "sim" else "\\cong"
        return "sem", f"\\triangle {''.join(names[:3])} {symbol} \\triangle {''.join(names[3:])}"
    if head == "shape":
        kind, *quad = pts
        return "text", _SHAPE_WORDS[kind].replace("ABCD", "".join(point_label(p) for p in quad)) + "."
    if head == "regular":
        if len(names) == 3:
            return "text", f"\\triangle {''.join(names)} is equilateral."
        return "text", f"{''.join(names)} is a {_POLYGON_WORDS[len(names)]}."
    if head == "tangent":
        return "text", "Assume that segments that appear to be tangent are tangent."
    return None


def answer_kind(q: Q, variable: float | None) -> str:
    """The multiple-choice kind of the answer."""
    if variable is not None:
        return "var"
    if q.kind in ("ang", "arc", "asum"):
        return "angle" if q.kind != "asum" else "var"
    if q.kind in _AREAS:
        return "area"
    if q.kind in ("perim", "circ"):
        return "perimeter"
    if q.kind in ("sin", "cos", "tan"):
        return "ratio"
    return "length"


@dataclass(frozen=True)
class Written:
    """A problem in the PGPS annotation format, executed and checked."""

    record: PGPSRecord
    """The annotation record (``geodsl.data.PGPSRecord``), without its diagram file name."""
    values: tuple[tuple[Q, str], ...]
    r"""What the diagram writes at quantities: given values, the goal's letter, an angle's number
    (``\angle 1``)."""
    draw: tuple[tuple[str, str], ...]
    """Segments drawn besides the figure's lines."""
    right: tuple[tuple[str, str, str, str], ...]
    """Perpendicular line pairs the problem states (``p q r s``: pq ⊥ rs), for right-angle marks."""
    expected: float
    """The figure's value of the goal (the letter's value for expression problems)."""
    figure: RealisedFigure | None = None
    """The figure in the problem's unit, with the values its question binds (``None`` when not known)."""
    lines: tuple[tuple[str, ...], ...] | None = None
    """The figure's lines the problem draws when it leaves some out (``None``: all of them)."""


@dataclass
class _Wording:
    """The choices of one problem's writing conventions (:class:`PGPSWriting`)."""

    names: dict[Q, str] = field(default_factory=lambda: {})
    r"""Numbered angles: quantity to its name (``\angle 1``)."""
    chains: dict[Q, list[Q]] = field(default_factory=lambda: {})
    """Value clauses written as chains: the given that owns the value to the quantities before it."""
    merged: set[Q] = field(default_factory=lambda: set())
    """Givens whose value another given's chain states."""
    dropped: set[Fact] = field(default_factory=lambda: set())
    """Stated equalities a chain states instead."""


def _said(q: Q, wording: _Wording) -> str:
    r"""A quantity as a clause names it: ``AB``, ``m \angle ABC``, or ``m \angle 1`` when numbered."""
    return f"m {wording.names[q]}" if q in wording.names else quantity_text(q)


def write_problem(
    design: Design,
    fig: PGPSFigure,
    rng: random.Random,
    record_id: str,
    *,
    writing: PGPSWriting = PLAIN_WRITING,
    style: random.Random | None = None,
) -> Written | None:
    """The PGPS record of a designed problem, or ``None`` when geodsl does not reproduce the figure's value.

    Args:
        design: The problem, its values chosen.
        fig: The figure it is about.
        rng: The choices the plain writing makes (clause order, givens in the text, the options).
        record_id: The record's id.
        writing: The conventions to write it with (:class:`PGPSWriting`); plain by default.
        style: The source of the conventions' choices (kept apart from ``rng``, so the plain choices are
            the same whatever the conventions); seeded from ``record_id`` when ``None``.
    """
    style = random.Random(record_id) if style is None else style
    texts: list[str] = []
    facts: list[tuple[Fact, str]] = []
    for fact in design.facts:
        placed = fact_clause(fact)
        if placed is not None:
            if placed[0] == "text":
                texts.append(placed[1])
            else:
                facts.append((fact, placed[1]))
    order = list(design.givens)
    rng.shuffle(order)
    in_text = _givens_in_text(design, order, rng)
    owners = [q for q in order if q not in in_text]
    if design.letter is not None:
        owners.append(design.goal)
    shown = {**design.shown}
    if design.letter is not None and design.variable is None:
        shown[design.goal] = design.letter
    wording = _Wording()
    angles = [q for q in [*in_text, *owners, design.goal] if q.kind == "ang"]
    if writing.numbered_angles and angles and style.random() < writing.numbered_angles:
        wording.names = _numbered(list(dict.fromkeys(angles)), style)
    if writing.equality_chains:
        _chain(design, fig, owners, facts, shown, wording, writing.equality_chains, style)
    slots = [[*wording.chains.get(q, []), q] for q in owners if q not in wording.merged]
    values = [" = ".join(_said(x, wording) for x in slot) + f" = {shown[slot[-1]]}" for slot in slots]
    naming = [f"{quantity_text(q)} = m {n}" for q, n in sorted(wording.names.items(), key=lambda kv: kv[1])]
    stated = [*naming, *(clause for fact, clause in facts if fact not in wording.dropped)]
    sem = values + stated if rng.random() < 0.5 else stated + values
    kept = _kept_lines(design, fig, writing, style)
    question = _question(design, fig, kept, wording, writing, style)
    if in_text:
        parts = [f"{_said(q, wording)} = {shown[q]}" for q in in_text]
        joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f", and {parts[-1]}"
        joined = joined.replace(", and", " and") if len(parts) == 2 else joined
        question = f"If {joined}, {question[0].lower()}{question[1:]}"
    tangent = [t for t in texts if t.startswith("Assume")]
    text = " ".join([*[t for t in texts if not t.startswith("Assume")], question, *tangent])
    try:
        draft = PGPSRecord.build(
            id=record_id,
            text=text,
            stru_clauses=_structure(fig, design.draw, kept),
            sem_clauses=sem,
            expression="Get V0",
            answer="0",
            type=design.kind,
            choices=(0.0, 0.0, 0.0, 0.0),
        )
    except GeoDSLError:
        return None
    numbered = [*([q] for q in in_text), *slots]
    if list(draft.numbers) != [shown[slot[-1]].lower() for slot in numbered]:
        return None  # the reference preprocessing read the text differently: not the N list intended
    # A chain's value is the N of its givens; a side that a stated equality makes equal to a given
    # (``AB = AC = 6`` for ``AB = AC``, ``AC = 6``) is still derived by the step that uses the equality.
    tokens = {
        q: f"N{i}" for i, slot in enumerate(numbered) for q in slot if q == slot[-1] or q in design.givens
    }
    return _checked(design, fig, rng, draft, _program(design, tokens), wording, kept)


def _numbered(angles: list[Q], style: random.Random) -> dict[Q, str]:
    r"""Name some of the angles by number (``\angle 1``, ``\angle 2``...), at least one."""
    chosen = [q for q in angles if style.random() < 0.6] or [style.choice(angles)]
    style.shuffle(chosen)
    return {q: f"\\angle {k}" for k, q in enumerate(chosen, start=1)}


def _equal_sides(fact: Fact, fig: PGPSFigure) -> tuple[Q, Q] | None:
    """The two quantities a stated equality makes equal (``AB = CD``, two angles)."""
    head, *pts = fact
    if head == "eq":
        return fig.seg(pts[0], pts[1]), fig.seg(pts[2], pts[3])
    if head == "eqang":
        return Q("ang", tuple(pts[:3])), Q("ang", tuple(pts[3:]))
    return None


def _chain(
    design: Design,
    fig: PGPSFigure,
    owners: list[Q],
    facts: list[tuple[Fact, str]],
    shown: dict[Q, str],
    wording: _Wording,
    chance: float,
    style: random.Random,
) -> None:
    """Write equal quantities as chains: a stated equality with a given side, two equal givens."""
    givens = [q for q in owners if q in design.givens]
    for fact, _ in facts:
        sides = _equal_sides(fact, fig)
        if sides is None:
            continue
        for given, other in (sides, sides[::-1]):
            if given not in givens or given in wording.chains or other in design.givens:
                continue
            if other == design.goal or other in wording.chains or style.random() >= chance:
                break
            wording.chains[given] = [other]
            wording.dropped.add(fact)
            break
    free = [q for q in givens if q not in wording.chains and "x" not in shown[q]]
    for first, second in itertools.combinations(free, 2):
        if first.kind != second.kind or shown[first] != shown[second] or first.kind not in ("seg", "ang"):
            continue
        if first in wording.merged or second in wording.merged or first in wording.chains:
            continue
        if style.random() < chance:
            wording.chains[first] = [second]
            wording.merged.add(second)


def _shape_word(design: Design, pts: tuple[str, ...]) -> str | None:
    """What the problem's statement calls a polygon (``parallelogram``, ``regular hexagon``), if anything."""
    for fact in design.facts:
        if fact[0] == "shape" and set(fact[2:]) == set(pts):
            return fact[1]
        if fact[0] == "regular" and set(fact[1:]) == set(pts):
            return _POLYGON_WORDS[len(pts)]
    return None


def _question(
    design: Design,
    fig: PGPSFigure,
    kept: list[tuple[str, ...]] | None,
    wording: _Wording,
    writing: PGPSWriting,
    style: random.Random,
) -> str:
    goal = design.goal
    angle_name = wording.names.get(goal)
    if not writing.phrasings:
        return goal_text(goal, design.letter, angle_name=angle_name)
    drawn = {p for line in (fig.lines if kept is None else kept) for p in line} | {
        p for d in design.draw for p in d
    }
    whole = not fig.circles and goal.kind in ("area", "perim") and set(goal.pts) == drawn
    return question_text(
        goal,
        design.letter,
        style,
        angle_name=angle_name,
        shape=_shape_word(design, goal.pts) if goal.kind in ("area", "perim") else None,
        whole=whole,
        one_circle=len(fig.circles) == 1,
    )


def _givens_in_text(design: Design, order: list[Q], rng: random.Random) -> list[Q]:
    numeric = [q for q in order if q.kind in ("seg", "ang") and "x" not in design.shown[q]]
    if len(numeric) != len(order) or len(order) > 3 or rng.random() >= 0.2:
        return []
    return numeric


def _pairs(q: Q) -> list[tuple[str, str]]:
    """The segments a quantity lies along (a polygon's sides, an angle's arms, a sector's radii)."""
    pts = q.pts
    if q.kind == "seg":
        return [(pts[0], pts[1])]
    if q.kind in ("ang", "sin", "cos", "tan"):
        return [(pts[0], pts[1]), (pts[1], pts[2])]
    if q.kind in ("area", "perim", "asum"):
        return list(zip(pts, (*pts[1:], pts[0]), strict=True))
    if q.kind == "sector":
        return [(pts[0], pts[1]), (pts[0], pts[2])]
    if q.kind == "segarea":
        return [(pts[1], pts[2])]
    return []


def _fact_pairs(fact: Fact) -> list[tuple[str, str]]:
    """The segments a stated fact names (both lines of a perpendicularity, both triangles of a similarity)."""
    head, *pts = fact
    if head in ("perp", "para", "eq"):
        return [(pts[0], pts[1]), (pts[2], pts[3])]
    if head == "eqang":
        return [(pts[0], pts[1]), (pts[1], pts[2]), (pts[3], pts[4]), (pts[4], pts[5])]
    if head in ("sim", "cong"):
        a, b, c, d, e, f = pts
        return [(a, b), (b, c), (a, c), (d, e), (e, f), (d, f)]
    polygon = pts[1:] if head == "shape" else pts if head == "regular" else []
    return list(zip(polygon, (*polygon[1:], polygon[0]), strict=True)) if polygon else []


def _kept_lines(
    design: Design, fig: PGPSFigure, writing: PGPSWriting, style: random.Random
) -> list[tuple[str, ...]] | None:
    """The lines a problem draws when it leaves out those nothing uses (``None``: it draws all)."""
    if not writing.drop_unused_lines or style.random() >= writing.drop_unused_lines:
        return None
    quantities = {q for t, _ in design.steps for q in t.quantities} | {*design.givens, design.goal}
    pairs = [pair for q in quantities for pair in _pairs(q)]
    pairs += [pair for fact in design.facts for pair in _fact_pairs(fact)]
    used = {i for p, q in pairs if (i := fig.line_of(p, q)) is not None}
    if len(used) == len(fig.lines):
        return None
    return [line for i, line in enumerate(fig.lines) if i in used]


def _structure(
    fig: PGPSFigure, draw: Sequence[tuple[str, str]], kept: Sequence[tuple[str, ...]] | None = None
) -> list[str]:
    lines = [
        f"line {' '.join(point_label(p) for p in line)}" for line in (fig.lines if kept is None else kept)
    ]
    lines += [f"line {point_label(p)} {point_label(q)}" for p, q in draw]
    circles = [
        f"\\odot {point_label(c.centre)} lieson {' '.join(point_label(p) for p in c.points)}"
        for c in fig.circles
        if c.centre is not None and c.points
    ]
    return lines + circles


def _program(design: Design, tokens: dict[Q, str]) -> str:
    """The program text: N tokens for the numbered quantities, V tokens for derived ones in order of use."""
    tokens = dict(tokens)
    fresh = 0
    steps: list[str] = []
    for theorem, target in design.steps:
        if target not in tokens:
            tokens[target] = f"V{fresh}"
            fresh += 1
        steps.append(" ".join([theorem.op, *(tokens[a] if isinstance(a, Q) else a for a in theorem.args)]))
    read = design.letter if design.letter is not None else tokens[design.goal]
    return " ".join([*steps, f"Get {read}"])


def _checked(
    design: Design,
    fig: PGPSFigure,
    rng: random.Random,
    draft: PGPSRecord,
    program: str,
    wording: _Wording,
    kept: list[tuple[str, ...]] | None,
) -> Written | None:
    expected = design.variable if design.variable is not None else _scaled(fig, design.goal, design.scale)
    try:
        executed = execute(program, draft.numbers).answer
    except GeoDSLError:
        return None
    tolerance = 1e-3 if design.exact else 2e-2
    if not answers_match(executed, expected, rel_tol=tolerance):
        return None
    kind = answer_kind(design.goal, design.variable)
    try:
        options, _ = multiple_choice(executed, kind=kind, rng=rng)
    except SynthError:
        return None
    record = PGPSRecord.build(
        id=draft.id,
        text=draft.text,
        stru_clauses=draft.stru_clauses,
        sem_clauses=draft.sem_clauses,
        expression=program,
        answer=f"{executed:.3f}",
        type=design.kind,
        choices=tuple(float(o) for o in options),
        book="geosynth",
        page="",
    )
    names = wording.names
    values = [(q, names.get(q, design.shown[q])) for q in design.givens]
    if design.letter is not None:
        values.append((design.goal, names.get(design.goal, design.shown.get(design.goal, design.letter))))
    elif design.goal in names:
        values.append((design.goal, names[design.goal]))
    right = tuple((f[1], f[2], f[3], f[4]) for f in design.facts if f[0] == "perp")
    letters: dict[str, float] = {}
    if design.letter is not None:
        letters[design.letter] = expected
    figure = realised_figure(
        fig,
        scale=design.scale,
        draw=design.draw,
        variables=letters,
        goal=expected,
        exact=design.exact,
        lines=kept,
    )
    return Written(
        record=record,
        values=tuple(values),
        draw=tuple(design.draw),
        right=right,
        expected=expected,
        figure=figure,
        lines=None if kept is None else tuple(kept),
    )
