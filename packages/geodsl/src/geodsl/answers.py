r"""Numeric answers: read them from text, find them in model output, compare and vote on them.

Everything here is pure Python. :func:`parse_answer` evaluates a small, closed grammar
(numbers, ``+ - * / ^``, parentheses and braces, ``\frac``/``\dfrac``/``\tfrac``,
``\sqrt``/``sqrt()``/``√`` including ``\sqrt[n]{}``, ``\pi``/``π``/``pi``, implicit
multiplication) with its own recursive-descent reader; it never calls ``eval`` or
``sympy.sympify`` (which evaluates Python), so it is safe on untrusted model text.

Comparison rule (:func:`answers_match`): two answers match when
``|a - b| <= max(rel_tol * max(|a|, |b|), abs_tol)`` with ``rel_tol = 1e-3`` (the
relative tolerance used to verify PAL scripts) and ``abs_tol = 5e-4`` (half a unit in the
third decimal, the precision PGPS answers are stored with), so answers near zero are
compared absolutely. Non-finite values never match.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from geodsl.errors import AnswerParseError

__all__ = (
    "DEFAULT_ABS_TOL",
    "DEFAULT_REL_TOL",
    "answer_from_output",
    "answer_key",
    "answers_match",
    "extract_final_answer",
    "match_choice",
    "parse_answer",
)

DEFAULT_REL_TOL = 1e-3
"""Relative tolerance of :func:`answers_match` and :func:`match_choice`."""
DEFAULT_ABS_TOL = 5e-4
"""Absolute tolerance floor (matters only for answers of magnitude below 0.5)."""

_UNIT = (
    r"(?:\\(?:text|mathrm|mbox|textrm)\{[^{}]*\}|"
    r"(?:(?:square|sq\.?|cubic)\s+)?"
    r"(?:units?|cm|mm|km|m|in|inch(?:es)?|ft|feet|foot|yd|yards?|mi|miles?|"
    r"(?:centi|milli|kilo)?met(?:er|re)s?|degrees?|deg|radians?|rad))"
    r"(?:\s*\^\s*\{?\s*[23]\s*\}?|[²³])?"
)
_TRAILING_UNIT = re.compile(rf"(?<=[\d}}).)π\s])\s*{_UNIT}\s*$", re.I)
_SHORT_FRAC = re.compile(r"(\\[dt]?frac)\s*(\d)\s*(\d)")
_DEGREE = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|°")
_NOISE = re.compile(r"\$|\\[()\[\]]|\\left|\\right|\\[,;:! ]|\\displaystyle|\\quad|\\qquad|~")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_MIXED = re.compile(r"(?<![\d.}])(\d+)\s*\\[dt]?frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}")
_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|(?P<cmd>\\[a-zA-Z]+)|(?P<word>sqrt|pi)"
    r"|(?P<sym>\*\*|[-+*/^(){}\[\]√π×·÷]))"
)
_LAST_NUMBER = re.compile(r"[-+]?(?:\d+(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")
_ANSWER_PHRASE = re.compile(
    r"(?:final\s+answer|the\s+answer|answer)\s*(?:is|:|=|should\s+be|would\s+be)\s*:?\s*(?P<rest>[^\n]+)",
    re.I,
)


# --- parsing --------------------------------------------------------------------------------------


def _balanced(text: str, open_at: int) -> tuple[str, int] | None:
    """Content of the brace group opening at ``open_at`` and the index after it."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : i], i + 1
    return None


def _last_boxed(text: str) -> str | None:
    start = max(text.rfind("\\boxed{"), text.rfind("\\fbox{"))
    if start < 0:
        return None
    group = _balanced(text, text.index("{", start))
    return None if group is None else group[0]


def _normalise(text: str) -> str:
    """Strip decoration (boxes, math delimiters, ``x =``, degrees, units, thousand separators)."""
    boxed = _last_boxed(text)
    cleaned = boxed if boxed is not None else text
    cleaned = _NOISE.sub(" ", cleaned.replace("\\%", "%").replace("\u2212", "-")).strip()
    for sep in ("=", "≈", "\\approx"):
        if sep in cleaned:
            cleaned = cleaned.rsplit(sep, 1)[1]
    cleaned = _DEGREE.sub(" ", cleaned).strip().rstrip(".,;").strip()
    previous = None
    while previous != cleaned:
        previous, cleaned = cleaned, _TRAILING_UNIT.sub("", cleaned).strip()
    cleaned = _SHORT_FRAC.sub(r"\1{\2}{\3}", _THOUSANDS.sub("", cleaned))
    return _MIXED.sub(lambda m: f"({m[1]}+{m[2]}/{m[3]})", cleaned)


def _tokenise(text: str, source: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise AnswerParseError(f"cannot read {text[pos : pos + 20].strip()!r} in answer {source!r}")
        tokens.append(match[match.lastgroup or "sym"])
        pos = match.end()
    return tokens


_PRIMARY_START = frozenset(
    {"(", "{", "\\frac", "\\dfrac", "\\tfrac", "\\sqrt", "\\pi", "sqrt", "pi", "√", "π"}
)
_MULTIPLY: dict[str, Callable[[float, float], float]] = {
    "*": lambda a, b: a * b,
    "\\cdot": lambda a, b: a * b,
    "\\times": lambda a, b: a * b,
    "×": lambda a, b: a * b,
    "·": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "÷": lambda a, b: a / b,
    "\\div": lambda a, b: a / b,
}
_CLOSERS = {"(": ")", "{": "}", "[": "]"}


def _is_number(token: str) -> bool:
    return token[0].isdigit() or token[0] == "."


class _Reader:
    """Recursive-descent evaluator over the token list (floats all the way)."""

    def __init__(self, tokens: list[str], source: str) -> None:
        self.tokens, self.source, self.pos = tokens, source, 0

    def fail(self, problem: str) -> AnswerParseError:
        return AnswerParseError(f"{problem} in answer {self.source!r}")

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise self.fail(f"expected {expected or 'more'}, found {token or 'the end'}")
        self.pos += 1
        return token

    def expr(self) -> float:
        value = self.term()
        while self.peek() in ("+", "-"):
            sign = self.take()
            value = value + self.term() if sign == "+" else value - self.term()
        return value

    def term(self) -> float:
        value = self.unary()
        while True:
            token = self.peek()
            if token in _MULTIPLY:
                self.take()
                value = _MULTIPLY[token](value, self.unary())
            elif token is not None and (
                token in _PRIMARY_START or (_is_number(token) and not self.after_number())
            ):
                value *= self.power()
            else:
                return value

    def after_number(self) -> bool:
        """Whether the previous token was a plain number (``2 3`` is not read as a product)."""
        return self.pos > 0 and _is_number(self.tokens[self.pos - 1])

    def unary(self) -> float:
        if self.peek() in ("-", "+"):
            return -self.unary() if self.take() == "-" else self.unary()
        return self.power()

    def power(self) -> float:
        base = self.primary()
        if self.peek() in ("^", "**"):
            self.take()
            return base ** self.unary()
        return base

    def group(self, opener: str) -> float:
        self.take(opener)
        value = self.expr()
        self.take(_CLOSERS[opener])
        return value

    def primary(self) -> float:
        token = self.take()
        if _is_number(token):
            return float(token)
        if token in _CLOSERS:
            self.pos -= 1
            return self.group(token)
        if token in ("\\pi", "pi", "π"):
            return math.pi
        if token in ("\\frac", "\\dfrac", "\\tfrac"):
            numerator = self.group("{") if self.peek() == "{" else self.primary()
            return numerator / (self.group("{") if self.peek() == "{" else self.primary())
        if token in ("\\sqrt", "sqrt", "√"):
            index = self.group("[") if token == "\\sqrt" and self.peek() == "[" else 2.0
            radicand = self.primary()
            if radicand < 0 and index == 2.0:
                raise self.fail("square root of a negative number")
            return math.copysign(abs(radicand) ** (1.0 / index), radicand)
        raise self.fail(f"unexpected {token!r}")


def parse_answer(text: str) -> float:
    r"""Read a numeric answer written as a number or a simple closed form.

    Accepts ``12``, ``-3.5``, ``1,234.5``, ``3/4``, ``\frac{3}{4}``, ``\dfrac``,
    ``2\sqrt{3}``, ``sqrt(3)``, ``√3``, ``\sqrt[3]{8}``, ``4\pi``, ``4π``, ``4*pi``,
    ``12 + 4\sqrt{3}``, ``60^\circ``, ``60°``, ``12 cm``, ``5 \text{ units}^2``,
    ``\boxed{...}``, ``$...$``, and a leading ``x =`` (the value after the last ``=`` is read).
    A whole number directly before an integer ``\frac`` is a mixed number
    (``3\frac{1}{2}`` is 3.5).

    Args:
        text: the answer text.

    Returns:
        The value as a float.

    Raises:
        AnswerParseError: naming the text, if it is not such a number (or is not finite).
    """
    if not isinstance(text, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AnswerParseError(f"answer must be a string, got {type(text).__name__}")
    cleaned = _normalise(text)
    if not cleaned:
        raise AnswerParseError(f"no number in answer {text!r}")
    reader = _Reader(_tokenise(cleaned, text), text)
    try:
        value = reader.expr()
    except (ZeroDivisionError, OverflowError, TypeError) as exc:
        raise AnswerParseError(f"cannot evaluate answer {text!r}: {exc}") from exc
    if reader.peek() is not None:
        raise reader.fail(f"unexpected {reader.peek()!r}")
    if isinstance(value, complex) or not math.isfinite(value):
        raise AnswerParseError(f"answer {text!r} is not a finite real number")
    return float(value)


# --- finding answers in free text ------------------------------------------------------------------


def _last_number_text(text: str) -> str | None:
    matches = _LAST_NUMBER.findall(text)
    return matches[-1] if matches else None


def extract_final_answer(text: str) -> str | None:
    r"""Find the final answer in a model's free text.

    Tried in order: the last ``\boxed{...}``; the last phrase ``answer is ...`` /
    ``Answer: ...`` / ``final answer = ...`` (up to the end of its line, without a
    trailing period); otherwise the last number in the text.

    Args:
        text: the model output.

    Returns:
        The answer text (feed it to :func:`parse_answer`), or ``None`` if the text has no number.
    """
    boxed = _last_boxed(text)
    if boxed is not None and boxed.strip():
        return boxed.strip()
    phrases = list(_ANSWER_PHRASE.finditer(text))
    if phrases:
        rest = phrases[-1]["rest"].replace("**", "").strip()
        rest = re.split(r"\.(?:\s|$)", rest, maxsplit=1)[0].strip().rstrip(".,;").strip()
        if any(ch.isdigit() for ch in rest) or "π" in rest or "\\pi" in rest:
            return rest
    return _last_number_text(text)


def answer_from_output(stdout: str) -> float | None:
    """The answer a script printed: its last non-empty line if that reads as a number, else the last number.

    Args:
        stdout: the script's standard output.

    Returns:
        The value, or ``None`` if the output contains no number.
    """
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        return parse_answer(lines[-1])
    except AnswerParseError:
        pass
    number = _last_number_text(stdout)
    if number is None:
        return None
    value = float(number.replace(",", ""))
    return value if math.isfinite(value) else None


# --- comparing and voting -------------------------------------------------------------------------


def _as_value(x: float | str, name: str) -> float:
    if isinstance(x, str):
        return parse_answer(x)
    if isinstance(x, bool) or not isinstance(x, (int, float)):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AnswerParseError(f"{name} must be a number or a string, got {type(x).__name__}")
    return float(x)


def answers_match(
    a: float | str, b: float | str, *, rel_tol: float = DEFAULT_REL_TOL, abs_tol: float = DEFAULT_ABS_TOL
) -> bool:
    """Whether two answers agree: ``|a - b| <= max(rel_tol * max(|a|, |b|), abs_tol)``.

    Args:
        a: an answer (number, or text read with :func:`parse_answer`).
        b: the other answer.
        rel_tol: relative tolerance (default 1e-3).
        abs_tol: absolute floor, so that answers at or near zero compare sensibly (default 5e-4).

    Returns:
        ``True`` if they agree; ``False`` if not or if either is not finite.

    Raises:
        AnswerParseError: if a text answer cannot be read.
    """
    x, y = _as_value(a, "a"), _as_value(b, "b")
    if not (math.isfinite(x) and math.isfinite(y)):
        return False
    return math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol)


def match_choice(
    value: float | str,
    choices: Sequence[float | str],
    *,
    rel_tol: float = DEFAULT_REL_TOL,
    abs_tol: float = DEFAULT_ABS_TOL,
) -> int | None:
    """The index of the choice an answer selects in a multiple-choice problem.

    Among the choices that match ``value`` under :func:`answers_match`, the nearest one
    wins (so two close choices are told apart by distance); an exact tie (duplicate
    choices) goes to the lowest index.

    Args:
        value: the answer.
        choices: the options (numbers or texts).
        rel_tol: relative tolerance, as in :func:`answers_match`.
        abs_tol: absolute tolerance, as in :func:`answers_match`.

    Returns:
        The 0-based index of the selected choice, or ``None`` if no choice matches.

    Raises:
        AnswerParseError: if the value or a choice cannot be read.
    """
    x = _as_value(value, "value")
    best: tuple[float, int] | None = None
    for i, choice in enumerate(choices):
        c = _as_value(choice, f"choices[{i}]")
        if answers_match(x, c, rel_tol=rel_tol, abs_tol=abs_tol) and (best is None or abs(x - c) < best[0]):
            best = (abs(x - c), i)
    return None if best is None else best[1]


def answer_key(x: float | str, decimals: int = 3) -> str:
    """A hashable voting key: the value rounded to ``decimals`` places, as text (``-0`` becomes ``0``).

    Args:
        x: the answer.
        decimals: places kept (default 3, the precision PGPS answers are stored with).

    Returns:
        For example ``"12.500"``.

    Raises:
        AnswerParseError: if the answer cannot be read or is not finite.
    """
    value = _as_value(x, "x")
    if not math.isfinite(value):
        raise AnswerParseError(f"answer {x!r} is not finite and has no voting key")
    if decimals < 0:
        raise AnswerParseError(f"decimals must be >= 0, got {decimals}")
    text = f"{value:.{decimals}f}"
    return text[1:] if text.lstrip("-").strip("0.") == "" and text.startswith("-") else text
