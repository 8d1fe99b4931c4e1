"""Reference preprocessing of PGPS problem text: tokeniser, tagger and the N list.

This module reimplements, from the description in ``PGPS_DSL.md`` section 3 and
a reading of the public PGPS loader, the steps that decide what ``N0, N1, ...``
and the argument letters of a solution program refer to:

1. :func:`tokenize` splits a sentence or clause into tokens (single spaces,
   trailing punctuation split off, runs of capital letters split into points,
   everything else lower-cased).
2. :func:`prob_span` finds the question part (``[PROB]``) of the text; the rest
   of the text is the condition (``[COND]``).
3. :func:`sem_value` picks the value of a semantic clause (the last token after
   the last ``=``).
4. :func:`tag_text` marks the text tokens that are numbers (``[NUM]``) and the
   ones that are argument letters (``[ARG]``). The rules are tables of small
   named predicates (:data:`NUM_EXCLUSIONS`, :data:`ARG_EXCLUSIONS`), checked in
   order.
5. :func:`build_number_list` assembles the raw N list (text numbers in text
   order, then every semantic value), the de-duplicated list (semantic values
   whose string equals a text number are dropped) and the letters.

Where the reference crashes (an empty token from a double space, an index past
the end of the text), this module either raises :class:`~geodsl.errors.DataError`
with the position (empty tokens) or treats the missing neighbour as absent (the
look-ahead past the last text token), and says so at the rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from geodsl.errors import DataError

__all__ = [
    "ARG_EXCLUSIONS",
    "BEGIN_WORDS",
    "END_WORDS",
    "NUM_EXCLUSIONS",
    "SPECIAL_MARKERS",
    "UNIT_TOKENS",
    "ClassTag",
    "NumberListParts",
    "SectionTag",
    "build_number_list",
    "letters_of",
    "prob_span",
    "sem_value",
    "tag_text",
    "tokenize",
]

SectionTag = Literal["COND", "PROB", "STRU"]
"""Section of a token: text condition, text question, or structural clause."""
ClassTag = Literal["GEN", "POINT", "NUM", "ARG", "ANGID"]
"""Class of a token: generic word, point name, number, argument letter, angle id."""

SPLIT_PUNCTUATION = frozenset({".", "?", ","})
"""Characters split off the end of a token as a token of their own."""
BEGIN_WORDS = frozenset({"find", "what", "solve", "determine", "express", "how"})
"""The first of these tokens starts the question span of the text."""
END_WORDS = frozenset(
    {".", ",", "?", "if", "so", "given", "with", "on", "in", "must", "for", "that", "formed"}
)
"""Tokens that end the question span (searched from two tokens after its start).

The reference list also holds the two-word entry "for which", which can never
equal a single token; it is left out here without changing behaviour.
"""
UNIT_TOKENS = frozenset(
    {"mm^{2}", "cm^{2}", "in^{2}", "ft^{2}", "yd^{2}", "km^{2}", "units^{2}", "mi^{2}", "m^{2}"}
)
"""Area units: never numbers although they contain ``^`` and a digit."""
SPECIAL_MARKERS = ("\\frac", "\\pi", "\\sqrt", "+", "-", "^")
"""Markers that make a token a number when the token is more than the marker itself.

They are also removed from a value before its letters are read (:func:`letters_of`).
"""
ANGLE_WORDS = frozenset({"\\angle", "\\widehat"})
"""Words after which a lone ``m`` means "measure of", not a variable."""
_DIGITS = "0123456789"
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


# --------------------------------------------------------------------------- tokeniser


def _split_points(token: str) -> list[str] | None:
    """Split a token made only of point names (``ABCD``, ``B'C``, ``C0``) into points.

    Returns None when the token is not made only of point names. A point name is
    one capital letter followed by any number of primes and digits.
    """
    points: list[str] = []
    for char in token:
        if char in _UPPER:
            points.append(char)
        elif points and (char == "'" or char in _DIGITS):
            points[-1] += char
        else:
            return None
    return points


def tokenize(sentence: str) -> list[str]:
    """Split a problem text or a clause into the reference tokens.

    Args:
        sentence: the text or one clause, single-spaced.

    Returns:
        The tokens: point names upper-case (one per point), everything else
        lower-cased, a trailing ``.``, ``?`` or ``,`` as its own token.

    Raises:
        DataError: the sentence holds two spaces in a row (the reference crashes
            on the empty token this creates).
    """
    tokens: list[str] = []
    words = sentence.strip().split(" ")
    if words == [""]:
        return tokens
    for index, word in enumerate(words):
        if not word:
            column = len(" ".join(words[:index]))
            raise DataError(f"double space at column {column} in {sentence!r} (single spacing is required)")
        pieces = [word[:-1], word[-1]] if word[-1] in SPLIT_PUNCTUATION else [word]
        for piece in pieces:
            points = _split_points(piece)
            # An empty piece (a lone "." split into "" and ".") yields no token.
            tokens.extend(points if points is not None else [piece.lower()])
    return tokens


def prob_span(tokens: Sequence[str]) -> tuple[int, int]:
    """Return the ``[start, end)`` token span of the question in a tokenised text.

    The span starts at the first begin word (position 0 if none) and ends before
    the first end word found from ``start + 2`` on; an end word that is
    punctuation belongs to the span. Without an end word the span runs to the end.
    """
    start = next((i for i, token in enumerate(tokens) if token in BEGIN_WORDS), 0)
    for i in range(start + 2, len(tokens)):
        if tokens[i] in END_WORDS:
            return start, (i + 1 if tokens[i] in SPLIT_PUNCTUATION else i)
    return start, len(tokens)


def sem_value(clause_tokens: Sequence[str]) -> str | None:
    """Return the value of a tokenised semantic clause, or None if it has none.

    ``clause_tokens`` are the tokens of the clause *with* the extra trailing
    ``,`` the reference appends to every clause. The value is the last real
    token when the token before it is ``=`` (``XY = XZ = 8`` gives ``8``).
    """
    if len(clause_tokens) >= 3 and clause_tokens[-3] == "=":
        return clause_tokens[-2]
    return None


def letters_of(value: str) -> list[str]:
    r"""Return the distinct lowercase ASCII letters of a value, in order of appearance.

    The markers of :data:`SPECIAL_MARKERS` are removed first, so ``\frac{x}{4}``
    gives ``["x"]`` and ``\sqrt{3}`` gives ``[]``.
    """
    for marker in SPECIAL_MARKERS:
        value = value.replace(marker, "")
    letters: list[str] = []
    for char in value:
        if char in _LOWER and char not in letters:
            letters.append(char)
    return letters


# --------------------------------------------------------------------------- tagging rules


@dataclass(frozen=True)
class _Site:
    """One text token seen with its neighbours, for the tagging predicates."""

    tokens: Sequence[str]
    index: int
    section: SectionTag
    sem_letters: frozenset[str]

    @property
    def token(self) -> str:
        return self.tokens[self.index]

    @property
    def prev(self) -> str | None:
        return self.tokens[self.index - 1] if self.index > 0 else None

    @property
    def next(self) -> str | None:
        # The reference indexes past the end here (an IndexError); absent is safer.
        return self.tokens[self.index + 1] if self.index + 1 < len(self.tokens) else None


def _before_equals(site: _Site) -> bool:
    return site.next == "="


def _measure_m(site: _Site) -> bool:
    return site.token == "m" and site.next in ANGLE_WORDS


def _article_a(site: _Site) -> bool:
    return site.token == "a" and site.prev != "="


def _article_a_in_cond(site: _Site) -> bool:
    return _article_a(site) and site.section == "COND"


def _names_a_line_or_listed(site: _Site) -> bool:
    prev = site.prev
    if prev is None:
        return False
    return "line" in prev or prev == "and" or (prev == "," and site.next == ",")


def _listed_and_not_a_sem_letter(site: _Site) -> bool:
    return site.token not in site.sem_letters and _names_a_line_or_listed(site)


Rule = Callable[[_Site], bool]

NUM_EXCLUSIONS: tuple[tuple[str, Rule], ...] = (
    ("letter named by an equation (x = ...)", _before_equals),
    ("'m' meaning measure (m \\angle)", _measure_m),
    ("article 'a' (not after '=')", _article_a),
    ("line name or list item, not a semantic-value letter", _listed_and_not_a_sem_letter),
)
"""Reasons a lone lowercase letter of the condition text is *not* a number."""

ARG_EXCLUSIONS: tuple[tuple[str, Rule], ...] = (
    ("'m' meaning measure (m \\angle)", _measure_m),
    ("article 'a' in the condition (not after '=')", _article_a_in_cond),
    ("line name or list item", _names_a_line_or_listed),
)
"""Reasons a letter token that occurs in some value is *not* an argument letter.

A letter directly before ``=`` is an argument regardless (checked first).
"""


def _is_text_number(site: _Site) -> bool:
    token = site.token
    if token in UNIT_TOKENS:
        return False
    if any(digit in token for digit in _DIGITS):
        return True
    if any(marker in token and marker != token for marker in SPECIAL_MARKERS):
        return True
    if token in _LOWER:
        return not any(rule(site) for _, rule in NUM_EXCLUSIONS)
    return False


def _is_argument(site: _Site, value_letters: frozenset[str]) -> bool:
    if site.token not in value_letters:
        return False
    if _before_equals(site):
        return True
    return not any(rule(site) for _, rule in ARG_EXCLUSIONS)


def _base_class(tokens: Sequence[str], index: int) -> ClassTag:
    token = tokens[index]
    if token[0] in _UPPER:
        return "POINT"
    if token.isdigit() and index > 0 and tokens[index - 1] == "\\angle":
        return "ANGID"
    return "GEN"


def tag_text(tokens: Sequence[str], span: tuple[int, int], sem_values: Sequence[str]) -> list[ClassTag]:
    """Class-tag the tokens of a problem text.

    Args:
        tokens: the tokenised text (:func:`tokenize`).
        span: the question span (:func:`prob_span`).
        sem_values: the values of the semantic clauses (:func:`sem_value`), all of them.

    Returns:
        One tag per token. Numbers are only found in the condition part;
        argument letters in both parts.
    """
    start, end = span
    sections: list[SectionTag] = ["PROB" if start <= i < end else "COND" for i in range(len(tokens))]
    sem_letters = [letter for value in sem_values for letter in letters_of(value)]
    sites = [_Site(tokens, i, sections[i], frozenset(sem_letters)) for i in range(len(tokens))]
    classes: list[ClassTag] = [_base_class(tokens, i) for i in range(len(tokens))]
    for site in sites:
        if site.section == "COND" and classes[site.index] == "GEN" and _is_text_number(site):
            classes[site.index] = "NUM"
    text_letters = [letter for s in sites if classes[s.index] == "NUM" for letter in letters_of(s.token)]
    value_letters = frozenset(text_letters + sem_letters)
    for site in sites:
        if classes[site.index] == "GEN" and _is_argument(site, value_letters):
            classes[site.index] = "ARG"
    return classes


# --------------------------------------------------------------------------- the N list


@dataclass(frozen=True)
class NumberListParts:
    """Raw result of the reference preprocessing (the public model is ``geodsl.data.NumberList``)."""

    numbers: tuple[str, ...]
    text_count: int
    letters: tuple[str, ...]
    dedup_numbers: tuple[str, ...]
    dedup_index: tuple[int, ...]


def _tokenize_field(value: str, field: str) -> list[str]:
    try:
        return tokenize(value)
    except DataError as exc:
        raise DataError(f"{field}: {exc}") from None


def build_number_list(text: str, stru_clauses: Sequence[str], sem_clauses: Sequence[str]) -> NumberListParts:
    """Build the raw and de-duplicated N lists and the argument letters of a problem.

    Structural clauses never contribute numbers or letters; they are tokenised
    only so that malformed spacing is reported as the reference would fail on it.

    Raises:
        DataError: a field with a double space, or an empty text.
    """
    tokens = _tokenize_field(text, "text")
    if not tokens:
        raise DataError("text: empty problem text")
    for k, clause in enumerate(stru_clauses):
        _tokenize_field(clause, f"structural clause {k}")
    sem_values: list[str] = []
    for k, clause in enumerate(sem_clauses):
        value = sem_value([*_tokenize_field(clause, f"semantic clause {k}"), ","])
        if value is not None:
            sem_values.append(value)
    span = prob_span(tokens)
    classes = tag_text(tokens, span, sem_values)
    text_numbers = [t for t, c in zip(tokens, classes, strict=True) if c == "NUM"]
    outside = [i for i in range(len(tokens)) if not span[0] <= i < span[1]]
    inside = list(range(span[0], span[1]))
    letters = tuple(tokens[i] for i in outside + inside if classes[i] == "ARG")
    dedup = list(text_numbers)
    index = list(range(len(text_numbers)))
    for value in sem_values:
        if value in text_numbers:
            index.append(text_numbers.index(value))
        else:
            index.append(len(dedup))
            dedup.append(value)
    return NumberListParts(
        numbers=(*text_numbers, *sem_values),
        text_count=len(text_numbers),
        letters=letters,
        dedup_numbers=tuple(dedup),
        dedup_index=tuple(index),
    )
