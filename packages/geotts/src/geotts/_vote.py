"""Majority voting with the first-appearance tie rule, over answers compared by a key."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

__all__ = ("AnswerKey", "Tally", "numeric_key", "tally")

#: Maps an answer to the value answers are compared by (two answers agree when their keys are equal).
AnswerKey = Callable[[Hashable], Hashable]

_NUMERIC = (int, float, Fraction, Decimal)


def numeric_key(answer: Hashable, *, places: int = 3) -> Hashable:
    """Default answer key: numbers rounded to ``places`` decimals, everything else unchanged.

    Booleans are not numbers here; ``-0.0`` and ``0.0`` agree; NaN never agrees with anything
    but another NaN (it keys to the string ``"nan"``).

    Args:
        answer: An extracted answer (hashable, not None).
        places: Decimal places kept for numbers.

    Returns:
        The comparison key.
    """
    if isinstance(answer, bool) or not isinstance(answer, _NUMERIC):
        return answer
    value = float(answer)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return value
    return round(value, places) + 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Tally:
    """Vote counts of a pool, in first-appearance order of the keys."""

    counts: dict[Hashable, int]
    """Votes per key, keys in the order they first appeared."""
    first: dict[Hashable, Hashable]
    """The first answer seen with each key (the representative reported as the decision)."""

    @property
    def votes(self) -> int:
        """Number of valid votes (failed candidates excluded)."""
        return sum(self.counts.values())

    def winner(self) -> Hashable | None:
        """The answer with the most votes; ties go to the tied answer that appeared first; None if no votes."""
        best_key: Hashable | None = None
        best = 0
        for key, count in self.counts.items():
            if count > best:  # strict: an equal count later in read order never displaces an earlier one
                best_key, best = key, count
        return None if best == 0 else self.first[best_key]

    def unique_mode(self) -> Hashable | None:
        """The answer with strictly more votes than every other answer, or None when there is none."""
        if not self.counts:
            return None
        ranked = sorted(self.counts.values(), reverse=True)
        if len(ranked) > 1 and ranked[0] == ranked[1]:
            return None
        return self.winner()


def tally(answers: Iterable[Hashable | None], key: AnswerKey = numeric_key) -> Tally:
    """Count the votes of ``answers`` in read order; ``None`` (a failed candidate) is no vote.

    Args:
        answers: Answers in read order.
        key: Maps an answer to the value answers are compared by.

    Returns:
        The tally.
    """
    counts: dict[Hashable, int] = {}
    first: dict[Hashable, Hashable] = {}
    for answer in answers:
        if answer is None:
            continue
        k = key(answer)
        if k not in counts:
            counts[k] = 0
            first[k] = answer
        counts[k] += 1
    return Tally(counts=counts, first=first)
