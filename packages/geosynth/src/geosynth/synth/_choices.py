"""Multiple-choice options and boxed answers.

Each answer kind has a table row: the open interval its values live in, the display precision, and the
mistakes a solver plausibly makes (the supplement of an angle instead of the angle, half a length,
a factor of the square root of two...). Distractors come from those mistakes first and from small random
perturbations when the mistakes run out; every option stays inside the kind's interval, within a factor of
three of the answer (similar scale; angles: anywhere in (0, 180)), and all options differ once rounded to the display precision, so
exactly one option shows the correct value.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from geosynth.synth.errors import SynthError

__all__ = ("CHOICE_KINDS", "ChoiceError", "ChoiceKind", "boxed", "display", "multiple_choice")

_Mistake = Callable[[float], float]


class ChoiceError(SynthError, ValueError):
    """Options cannot be made: an unknown kind, an answer outside the kind's range, too few options."""


class ChoiceKind(BaseModel):
    """How the answers of one kind are shown and which wrong values look plausible."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, arbitrary_types_allowed=True)
    lower: float
    """Values are greater than this."""
    upper: float
    """Values are less than this (``inf`` for none)."""
    decimals: int
    """Display precision (trailing zeros dropped)."""
    mistakes: tuple[_Mistake, ...]
    """Plausible wrong values computed from the answer."""


_ROOT2, _ROOT3 = math.sqrt(2.0), math.sqrt(3.0)
_SCALE_MISTAKES: tuple[_Mistake, ...] = (
    lambda v: 2 * v,
    lambda v: v / 2,
    lambda v: v * _ROOT2,
    lambda v: v / _ROOT2,
    lambda v: v * _ROOT3,
    lambda v: v / _ROOT3,
    lambda v: 1.5 * v,
    lambda v: 2 * v / 3,
)

CHOICE_KINDS: dict[str, ChoiceKind] = {
    "angle": ChoiceKind(
        lower=0.0,
        upper=180.0,
        decimals=1,
        mistakes=(
            lambda v: 180 - v,
            lambda v: 90 - v,
            lambda v: v / 2,
            lambda v: 2 * v,
            lambda v: (180 - v) / 2,
            lambda v: 180 - 2 * v,
            lambda v: v + 10,
            lambda v: v - 10,
            lambda v: v + 20,
            lambda v: v - 20,
        ),
    ),
    "length": ChoiceKind(
        lower=0.0, upper=math.inf, decimals=2, mistakes=(*_SCALE_MISTAKES, lambda v: v + 1, lambda v: v - 1)
    ),
    "area": ChoiceKind(
        lower=0.0, upper=math.inf, decimals=2, mistakes=(*_SCALE_MISTAKES, lambda v: v * math.pi / 4)
    ),
    "perimeter": ChoiceKind(
        lower=0.0, upper=math.inf, decimals=2, mistakes=(*_SCALE_MISTAKES, lambda v: v + 2)
    ),
    "ratio": ChoiceKind(lower=0.0, upper=math.inf, decimals=3, mistakes=(lambda v: 1 / v, *_SCALE_MISTAKES)),
    "var": ChoiceKind(
        lower=-math.inf,
        upper=math.inf,
        decimals=2,
        mistakes=(
            lambda v: -v,
            lambda v: v + 1,
            lambda v: v - 1,
            lambda v: 2 * v,
            lambda v: v / 2,
            lambda v: v + 5,
        ),
    ),
}
"""Answer kinds: ``angle`` (degrees in (0, 180)), ``length``, ``area``, ``perimeter``, ``ratio`` (positive), ``var``."""

_SCALE = 3.0
"""Distractors of positive kinds stay within this factor of the answer."""


def _kind(kind: str) -> ChoiceKind:
    row = CHOICE_KINDS.get(kind)
    if row is None:
        raise ChoiceError(f"unknown answer kind {kind!r}; expected one of {', '.join(CHOICE_KINDS)}")
    return row


def display(value: float, kind: str) -> str:
    """The value as shown to a reader: rounded to the kind's precision, trailing zeros dropped.

    Raises:
        ChoiceError: Unknown kind or a value that is not finite.
    """
    row = _kind(kind)
    if not math.isfinite(value):
        raise ChoiceError(f"answer {value!r} is not a finite number")
    text = f"{value:.{row.decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def boxed(answer: float, kind: str) -> str:
    r"""The answer in ``\boxed{}`` at the kind's display precision (``\boxed{40}``, ``\boxed{3.46}``).

    Raises:
        ChoiceError: Unknown kind or a value that is not finite.
    """
    return f"\\boxed{{{display(answer, kind)}}}"


def _acceptable(value: float, answer: float, row: ChoiceKind) -> bool:
    if not (math.isfinite(value) and row.lower < value < row.upper):
        return False
    if math.isfinite(row.upper):  # a bounded kind (angles): the interval is the scale
        return True
    if row.lower >= 0.0:  # positive kinds: keep a similar scale
        return answer / _SCALE <= value <= answer * _SCALE
    return abs(value - answer) <= _SCALE * max(abs(answer), 1.0)


def _perturbed(answer: float, row: ChoiceKind, rng: random.Random) -> float:
    spread = rng.uniform(0.1, 0.6) * rng.choice((-1.0, 1.0))
    if row.lower >= 0.0:
        return answer * (1.0 + spread)
    return answer + 2.0 * spread * max(
        abs(answer), 1.0
    )  # kinds of any sign: steps of the answer's size, at least 1


def multiple_choice(
    answer: float, *, kind: str, rng: random.Random, n: int = 4
) -> tuple[tuple[str, ...], int]:
    """Options with exactly one correct value, and the index of that option.

    Args:
        answer: The correct value (degrees for angles).
        kind: A key of :data:`CHOICE_KINDS`.
        rng: Chooses the distractors and the position of the correct option.
        n: Number of options (at least 2).

    Returns:
        The options as display strings, all distinct, and the index of the correct one.

    Raises:
        ChoiceError: Unknown kind, ``n < 2``, or an answer outside the kind's range.
    """
    row = _kind(kind)
    if n < 2:
        raise ChoiceError(f"multiple choice needs at least 2 options, got n={n}")
    if not (math.isfinite(answer) and row.lower < answer < row.upper):
        raise ChoiceError(f"{kind} answer {answer!r} is outside ({row.lower}, {row.upper})")
    correct = display(answer, kind)
    if not row.lower < float(correct) < row.upper:
        raise ChoiceError(
            f"{kind} answer {answer!r} shows as {correct}, outside the range at display precision"
        )
    shown = {correct}
    mistakes = list(row.mistakes)
    rng.shuffle(mistakes)
    candidates = [m(answer) for m in mistakes]
    distractors: list[str] = []
    tries = 0
    while len(distractors) < n - 1:
        if candidates:
            value = candidates.pop(0)
        elif tries < 1000:
            value, tries = _perturbed(answer, row, rng), tries + 1
        else:
            raise ChoiceError(f"could not find {n - 1} distinct distractors for {kind} answer {answer!r}")
        if not _acceptable(value, answer, row):
            continue
        text = display(value, kind)
        if text not in shown and row.lower < float(text) < row.upper:
            shown.add(text)
            distractors.append(text)
    index = rng.randrange(n)
    options = (*distractors[:index], correct, *distractors[index:])
    return options, index
