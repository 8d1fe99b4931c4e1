r"""How PGPS questions are phrased: the forms textbooks use, and one canonical form per question.

A question is a *frame* around an *object*: ``What is the measure of {o}?`` around ``\angle ABC``,
``Find {o}.`` around ``the area of the parallelogram``. Each kind of question has its frames and its
objects, the first of each being the one the generator wrote before it varied its phrasing
(:func:`goal_text`; ``Find x.``, ``Find m \angle ABC.``, ``Find the area of \triangle ABC.``).
:func:`question_text` draws a frame and an object. The forms are general English forms of geometry
textbooks, written here; none is taken from a problem of a test split. (No rounding instruction is
added: the texts of the PGPS9K and Geometry3K test splits carry none.)

Every frame keeps the question's first word among the words that start the question part of a PGPS text
(``find``, ``what``, ``solve``, ``determine``, ``express``, ``how``) and puts no number and no lone
lowercase letter outside it, so the N list of the problem is the same whatever the phrasing.
:func:`canonical_question` maps every frame back to the first one, so that two problems that differ only in phrasing are the same question to the deduplication and to the
check against test splits.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from functools import cache

from geosynth.synth._pgps_figure import Q
from geosynth.synth._text import point_label
from geosynth.synth.errors import SynthError

__all__ = ("canonical_question", "goal_text", "question_text")

VALUE_FRAMES = (
    "Find {o}.",
    "Find the value of {o}.",
    "Solve for {o}.",
    "What is the value of {o}?",
    "Find the value of the variable {o}.",
    "Determine the value of {o}.",
    "Find {o} in the figure.",
    "Use the figure to find {o}.",
)
"""Questions asking for a letter (``x``)."""
ANGLE_FRAMES = (
    "Find m {o}.",
    "Find the measure of {o}.",
    "What is the measure of {o}?",
    "Find the degree measure of {o}.",
    "Determine m {o}.",
    "What is m {o}?",
)
r"""Questions asking for an angle or an arc measure (``\angle ABC``, ``\widehat BC``)."""
LENGTH_FRAMES = (
    "Find {o}.",
    "Find the length of {o}.",
    "What is the length of {o}?",
    "Find the measure of {o}.",
    "Determine the length of {o}.",
    "How long is {o}?",
)
"""Questions asking for the length of a segment (``AB``)."""
MEASURE_FRAMES = ("Find {o}.", "What is {o}?", "Determine {o}.")
"""Questions asking for a measure of a shape (``the area of \\triangle ABC``)."""
RATIO_FRAMES = (
    "Express the ratio of {o} as a decimal.",
    "Find {o}.",
    "What is {o}?",
    "Express {o} as a decimal.",
)
r"""Questions asking for a trigonometric ratio (``\sin \angle ABC``)."""

_REGULAR_WORDS = {
    3: "equilateral triangle",
    4: "square",
    5: "regular pentagon",
    6: "regular hexagon",
    8: "regular octagon",
}
_MEASURE_WORDS = {"area": "area", "perim": "perimeter", "carea": "area", "circ": "circumference"}


def _name(pts: Sequence[str]) -> str:
    return "".join(point_label(p) for p in pts)


def _polygon_name(pts: Sequence[str]) -> str:
    name = _name(pts)
    return {3: f"\\triangle {name}", 4: f"quadrilateral {name}"}.get(len(pts), f"polygon {name}")


def _polygon_objects(pts: Sequence[str], shape: str | None, whole: bool) -> list[str]:
    """What a polygon is called: its plain name first, then what the problem's statement allows."""
    name = _name(pts)
    out = [_polygon_name(pts)]
    if shape is not None:
        out += [f"{shape} {name}", f"the {shape}"]
    elif len(pts) == 4:
        out.append(name)
    if whole:
        out += ["the figure", {3: "the triangle", 4: "the quadrilateral"}.get(len(pts), "the polygon")]
    return out


def _frames_objects(
    q: Q, angle_name: str | None, shape: str | None, whole: bool, one_circle: bool
) -> tuple[tuple[str, ...], list[str]]:
    r"""The frames and the objects of a question about ``q`` (first of each: the plain question)."""
    kind, pts = q.kind, q.pts
    if kind == "seg":
        return LENGTH_FRAMES, [_name(pts)]
    if kind == "ang":
        return ANGLE_FRAMES, [angle_name if angle_name is not None else f"\\angle {_name(pts)}"]
    if kind == "arc":
        return ANGLE_FRAMES, [f"\\widehat {_name(pts[1:])}"]
    if kind in ("area", "perim"):
        word = _MEASURE_WORDS[kind]
        return MEASURE_FRAMES, [f"the {word} of {o}" for o in _polygon_objects(pts, shape, whole)]
    if kind == "asum":
        polygon = f"polygon {_name(pts)}"
        return MEASURE_FRAMES, [
            f"the sum of the interior angles of {polygon}",
            f"the sum of the measures of the interior angles of {polygon}",
            f"the interior angle sum of {polygon}",
        ]
    if kind in ("carea", "circ"):
        word = _MEASURE_WORDS[kind]
        circles = [f"\\odot {_name(pts)}", *(["the circle"] if one_circle else [])]
        return MEASURE_FRAMES, [f"the {word} of {c}" for c in circles]
    if kind in ("sector", "arclen", "segarea"):
        o, a, b = (point_label(p) for p in pts)
        objects = {
            "sector": [f"the area of sector {a}{o}{b}"],
            "arclen": [f"the length of \\widehat {a}{b}", f"the length of arc {a}{b}"],
            "segarea": [
                f"the area of the shaded region between chord {a}{b} and \\widehat {a}{b}",
                f"the area of the circular segment between chord {a}{b} and \\widehat {a}{b}",
            ],
        }[kind]
        return MEASURE_FRAMES, objects
    if kind in ("sin", "cos", "tan"):
        return RATIO_FRAMES, [f"\\{kind} \\angle {_name(pts)}"]
    raise SynthError(f"no question for quantity kind {kind!r}")


def goal_text(q: Q, letter: str | None, *, angle_name: str | None = None) -> str:
    r"""The plain question: ``Find x.``, ``Find m \angle ABC.``, ``Find the area of \triangle ABC.``.

    ``angle_name`` is the angle's name when it is numbered (``\angle 1``).
    """
    if letter is not None:
        return VALUE_FRAMES[0].format(o=letter)
    frames, objects = _frames_objects(q, angle_name, None, False, False)
    return frames[0].format(o=objects[0])


def question_text(
    q: Q,
    letter: str | None,
    rng: random.Random,
    *,
    angle_name: str | None = None,
    shape: str | None = None,
    whole: bool = False,
    one_circle: bool = False,
) -> str:
    r"""A textbook phrasing of the question, drawn with ``rng``.

    Args:
        q: The quantity asked for.
        letter: The letter it is asked as (``x``), if any.
        rng: The source of the choices.
        angle_name: The angle's name when it is numbered (``\angle 1``).
        shape: What the problem's statement calls the polygon ``q`` is about (``parallelogram``).
        whole: Whether that polygon is the whole figure (so ``the figure`` names it).
        one_circle: Whether the figure has one circle (so ``the circle`` names it).
    """
    if letter is not None:
        frames, objects = VALUE_FRAMES, [letter]
    else:
        frames, objects = _frames_objects(q, angle_name, shape, whole, one_circle)
    return rng.choice(frames).format(o=rng.choice(objects))


# --- the canonical form ---------------------------------------------------------------------------

_START = r"(?:^|(?<=\. )|(?<=\? )|(?<=, ))"
_SLOTS = {
    "value": r"[a-z]",
    "length": r"[a-z]",
    "angle": r"\\angle \S+|\\widehat \S+",
    "measure": r"the (?:area|perimeter|circumference|length|sum|interior angle sum) of [^.?]+?",
    "ratio": r"\\(?:sin|cos|tan) \\angle \S+",
}
"""What a question's object looks like once its point names are blanked and it is lower-cased."""


@cache
def _rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    families = (
        ("value", VALUE_FRAMES),
        ("length", LENGTH_FRAMES),
        ("angle", ANGLE_FRAMES),
        ("measure", MEASURE_FRAMES),
        ("ratio", RATIO_FRAMES),
    )
    rules: list[tuple[str, re.Pattern[str], str]] = []
    for slot, frames in families:
        canonical = frames[0].lower().replace("{o}", r"\g<o>")
        for frame in frames[1:]:
            head, tail = (re.escape(part) for part in frame.lower().split("{o}"))
            pattern = re.compile(f"{_START}{head}(?P<o>{_SLOTS[slot]}){tail}")
            rules.append((frame, pattern, canonical))
    rules.sort(key=lambda rule: -len(rule[0]))  # a longer frame before one it contains
    return (
        *((pattern, canonical) for _, pattern, canonical in rules),
        *_OBJECT_RULES,
    )


_SHAPES = r"(?:square|rectangle|rhombus|parallelogram|trapezoid|kite|equilateral triangle|regular \w+)"
_OBJECT_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (  # a shape measured: whatever the question calls it, by its (blanked) name
        re.compile(
            r"\b(area|perimeter|circumference) of "
            rf"(?:\\triangle p|quadrilateral p|polygon p|\\odot p|{_SHAPES} p|"
            rf"the (?:{_SHAPES}|figure|triangle|quadrilateral|polygon|circle))(?=[.?])"
        ),
        r"\1 of p",
    ),
    (re.compile(r"the length of arc p(?=[.?])"), r"the length of \\widehat p"),
    (re.compile(r"the area of the circular segment between"), "the area of the shaded region between"),
    (
        re.compile(r"the (?:sum of the measures of the interior angles|interior angle sum) of polygon p"),
        "the sum of the interior angles of polygon p",
    ),
)
"""Objects that name one thing in several ways, each put in one form (after the frames)."""


def canonical_question(text: str) -> str:
    r"""A problem text, lower-cased, with every question frame replaced by its kind's first frame.

    ``what is the measure of \angle p?`` becomes ``find m \angle p.``, ``solve for x.`` becomes
    ``find x.``, and a measured shape is named by its name alone
    (``the area of the kite``, ``the area of quadrilateral p``: ``the area of p``). Meant for texts whose
    point names are already blanked (:func:`geosynth.synth._pgps_out.question_key`).
    """
    out = text.lower()
    for pattern, canonical in _rules():
        out = pattern.sub(canonical, out)
    return out
