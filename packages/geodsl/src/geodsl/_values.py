r"""Reader for N values written in the dataset's LaTeX-ish algebra, producing exact sympy expressions.

Accepted forms include ``24``, ``9.4``, ``-3``, ``x``, ``6x-7``, ``3\sqrt{2}``, ``\frac{x}{4}``,
``\frac{1}{2}a+8``, ``3\frac{3}{5}`` (a mixed number: 3 + 3/5), ``(y-3)\pi``, ``c^{2}+6``,
``3(n+4)`` and ``x^{2}-4x``. Juxtaposition multiplies; decimals become exact rationals;
``\pi`` becomes :data:`sympy.pi` (the executors decide which value it takes).
"""

from __future__ import annotations

import re
from functools import lru_cache

import sympy

from geodsl.errors import ValueSyntaxError

__all__ = ("parse_value", "symbol")

_TOKEN = re.compile(
    r"\s*(?:(?P<num>[0-9]+(?:\.[0-9]+)?|\.[0-9]+)|(?P<cmd>\\[A-Za-z]+)|(?P<letter>[a-z])|(?P<sym>[-+*/^(){}\[\]]))"
)
_MULTIPLY = frozenset({"*", "\\cdot", "\\times"})
_IGNORED = frozenset({"\\left", "\\right", "\\,", "\\!"})
_FRACS = frozenset({"\\frac", "\\dfrac", "\\tfrac"})


@lru_cache(maxsize=256)
def symbol(name: str) -> sympy.Symbol:
    """The sympy symbol geodsl uses for an unknown (a letter or a V name)."""
    return sympy.Symbol(name)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, int]] = []
        pos = 0
        while pos < len(text):
            if text[pos].isspace():
                pos += 1
                continue
            m = _TOKEN.match(text, pos)
            if m is None:
                raise ValueSyntaxError(
                    f"unexpected character {text[pos]!r} at column {pos} in value {text!r}",
                    text=text,
                    column=pos,
                )
            token = m.group().strip()
            if token not in _IGNORED:
                self.tokens.append((token, m.start() + (len(m.group()) - len(m.group().lstrip()))))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def fail(self, problem: str) -> ValueSyntaxError:
        column = self.tokens[self.i][1] if self.i < len(self.tokens) else len(self.text)
        found = repr(self.peek()) if self.peek() is not None else "end of text"
        return ValueSyntaxError(
            f"{problem} at column {column} (found {found}) in value {self.text!r}",
            text=self.text,
            column=column,
        )

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise self.fail(f"expected {expected!r}" if expected else "unexpected end")
        self.i += 1
        return token

    def expr(self) -> sympy.Expr:
        sign = 1
        if self.peek() in ("+", "-"):
            sign = -1 if self.take() == "-" else 1
        out = sign * self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            rhs = self.term()
            out = out + rhs if op == "+" else out - rhs
        return out

    def _starts_atom(self) -> bool:
        token = self.peek()
        if token is None:
            return False
        return (
            token[0].isdigit()
            or token[0] == "."
            or token.isalpha()
            or token in ("(", "{")
            or token in _FRACS
            or token in ("\\sqrt", "\\pi")
        )

    def term(self) -> sympy.Expr:
        first_token = self.peek()
        out = self.power()
        if first_token is not None and first_token.isdigit() and self.peek() in _FRACS:
            out = self._maybe_mixed(out)
        while True:
            token = self.peek()
            if token in _MULTIPLY:
                self.take()
                out = out * self.power()
            elif token == "/":
                self.take()
                out = out / self.power()
            elif self._starts_atom():
                out = out * self.power()
            else:
                return out

    def _maybe_mixed(self, whole: sympy.Expr) -> sympy.Expr:
        start = self.i
        frac = self.power()
        if isinstance(frac, sympy.Rational) and frac.p > 0 and self.peek() not in ("^",):
            return whole + frac
        self.i = start
        return whole

    def power(self) -> sympy.Expr:
        base = self.atom()
        if self.peek() == "^":
            self.take()
            exponent = self.group() if self.peek() == "{" else self.atom()
            return sympy.Pow(base, exponent)
        return base

    def group(self) -> sympy.Expr:
        if self.peek() == "{":
            self.take("{")
            inner = self.expr()
            self.take("}")
            return inner
        return self.atom()

    def atom(self) -> sympy.Expr:
        token = self.peek()
        if token is None:
            raise self.fail("expected a number, a letter or a group")
        if token[0].isdigit() or token[0] == ".":
            self.take()
            return sympy.Rational(token)
        if token.isalpha():
            self.take()
            return symbol(token)
        if token in ("(", "{"):
            close = ")" if token == "(" else "}"
            self.take()
            inner = self.expr()
            self.take(close)
            return inner
        if token in _FRACS:
            self.take()
            num = self.group()
            den = self.group()
            if den == 0:
                raise self.fail("division by zero in \\frac")
            return num / den
        if token == "\\sqrt":
            return self._sqrt()
        if token == "\\pi":
            self.take()
            return sympy.pi
        raise self.fail("unexpected token")

    def _sqrt(self) -> sympy.Expr:
        self.take("\\sqrt")
        index: sympy.Expr = sympy.Integer(2)
        if self.peek() == "[":
            self.take("[")
            index = self.expr()
            self.take("]")
        return sympy.Pow(self.group(), 1 / index)


@lru_cache(maxsize=4096)
def parse_value(text: str) -> sympy.Expr:
    r"""Read one N value into an exact sympy expression.

    Args:
        text: the value as it appears in the dataset (``"3\sqrt{2}"``, ``"6x-7"``, ...).

    Returns:
        The expression; letters become :func:`symbol` symbols, ``\pi`` becomes ``sympy.pi``.

    Raises:
        ValueSyntaxError: naming the value and the column of the problem.
    """
    reader = _Reader(text)
    if not reader.tokens:
        raise ValueSyntaxError(f"empty value {text!r}", text=text, column=0)
    out = reader.expr()
    if reader.peek() is not None:
        raise reader.fail("unexpected trailing input")
    return out
