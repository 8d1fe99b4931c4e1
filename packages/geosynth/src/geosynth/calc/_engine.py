"""The solving loop: equations into an exact linear system, nonlinear ones solved one unknown at a time.

Every equation gets an id and remembers its rule and premises (ids of equations or given facts). Linear
equations (rational coefficients after scaling) go into :class:`~geosynth.engine.LinearSystem`, whose
rows remember the ids combined into them. A nonlinear equation is rewritten with every quantity replaced
by its reduced form (a combination of the system's free unknowns); when that leaves it linear it joins
the system, and when it leaves one unknown it is solved numerically, keeping the roots that keep every
length positive and every angle inside (0°, 180°). Values found join the system as ``v = value``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import cast

import sympy

from geosynth.calc._algebra import ONE, linear_form, real_roots
from geosynth.calc._figure import Figure
from geosynth.calc._rules import Derived
from geosynth.engine import LinearSystem
from geosynth.errors import GeoSynthError

_DOMAIN: dict[str, tuple[float, float]] = {
    "length": (0.0, 1e7),
    "area": (0.0, 1e12),
    "ratio": (0.0, 1e6),
    "angle": (0.0, 180.0),
    "var": (-1e6, 1e6),
}
"""Symbol kind to the open interval its values lie in."""

_MAX_ROOTS = 8
"""An equation with more roots than this in range (a trigonometric tangle) is not used."""

_MAX_FREE = 3
"""Nonlinear equations with more free unknowns than this are not rewritten (too early to help)."""


def nice_number(value: float) -> sympy.Expr:
    """A short exact form of ``value`` (a small fraction or surd) when one matches it, else a float."""
    fraction = Fraction(value).limit_denominator(1000)
    if abs(float(fraction) - value) <= 1e-10 * max(1.0, abs(value)):
        return sympy.Rational(fraction.numerator, fraction.denominator)
    if abs(value) < 1e6:
        guess = sympy.nsimplify(value, tolerance=1e-11, full=False)
        if sympy.count_ops(guess) <= 8 and abs(float(guess) - value) <= 1e-10 * max(1.0, abs(value)):
            return guess
    return sympy.Float(value, 15)


def _inside(expr: sympy.Expr, var: sympy.Symbol, root: float, low: float, high: float) -> bool:
    try:
        value = complex(expr.subs(var, root))
    except (TypeError, ZeroDivisionError):
        return False
    return abs(value.imag) < 1e-9 and low < value.real < high


@dataclass
class EqRecord:
    """One equation (or given fact, when ``expr`` is ``None``) with its provenance."""

    id: int
    rule: str
    lhs: sympy.Expr | None
    rhs: sympy.Expr | None
    premises: tuple[int, ...]
    text: str = ""
    value: float | None = None
    """The value of ``symbol`` when the equation is ``symbol = value``."""
    symbol: sympy.Symbol | None = None


@dataclass
class _Candidate:
    eq: int
    var: sympy.Symbol
    roots: list[float]
    sources: frozenset[int]


@dataclass
class Engine:
    """The equations of one problem and the linear system built from them."""

    fig: Figure
    deadline: float | None = None
    eqs: list[EqRecord] = field(default_factory=list[EqRecord])
    _facts: dict[str, int] = field(default_factory=dict[str, int])
    _seen: set[sympy.Expr] = field(default_factory=set[sympy.Expr])
    _pending: list[int] = field(default_factory=list[int])
    _cache: dict[sympy.Symbol, tuple[sympy.Expr, frozenset[int]]] = field(default_factory=dict)
    _cache_rank: int = -1
    ambiguous: list[_Candidate] = field(default_factory=list[_Candidate])
    pairs: list[tuple[int, sympy.Expr, frozenset[int]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.system = LinearSystem(units={ONE})

    # --- adding equations -------------------------------------------------------------------------

    def fact(self, text: str) -> int:
        """The id of a given fact (created on first use)."""
        if text not in self._facts:
            self._facts[text] = len(self.eqs)
            self.eqs.append(EqRecord(len(self.eqs), "given", None, None, (), text=text))
        return self._facts[text]

    def add(self, derived: Derived) -> int | None:
        """Record an equation and feed it to the system; ``None`` when trivial or already known."""
        expr = sympy.expand(derived.lhs - derived.rhs)
        if expr == 0 or expr.is_number or expr in self._seen or -expr in self._seen:
            return None
        self._seen.add(expr)
        form = linear_form(expr)
        if form is not None and (not any(k != ONE for k in form) or not self._in_domain(form)):
            return None
        premises = tuple(self.fact(p) if isinstance(p, str) else p for p in derived.premises)
        record = EqRecord(
            len(self.eqs), derived.rule, derived.lhs, derived.rhs, tuple(dict.fromkeys(premises))
        )
        if isinstance(derived.lhs, sympy.Symbol) and derived.rhs.is_number:
            record.symbol, record.value = derived.lhs, float(derived.rhs)
        self.eqs.append(record)
        if form is not None:
            self.system.add(form, record.id)
        else:
            self._pending.append(record.id)
        return record.id

    def _sides(self, eq_id: int) -> tuple[sympy.Expr, sympy.Expr]:
        """Both sides of a pending equation (given facts, which have none, are never pending)."""
        record = self.eqs[eq_id]
        if record.lhs is None or record.rhs is None:
            raise GeoSynthError(f"equation {eq_id} ({record.rule}) has no sides to solve")
        return record.lhs, record.rhs

    def _order(self, eq_id: int) -> tuple[bool, int]:
        """Equations without trigonometry first (exact and closer to the textbook route)."""
        lhs, rhs = self._sides(eq_id)
        return (lhs.has(sympy.sin, sympy.cos) or rhs.has(sympy.sin, sympy.cos), eq_id)

    def _in_domain(self, form: dict[Hashable, Fraction]) -> bool:
        """False for ``symbol = value`` with the value outside the symbol's range (a length of 0...)."""
        symbols = [k for k in form if k != ONE]
        if len(symbols) != 1 or not isinstance(symbols[0], sympy.Symbol):
            return True
        kind = self.fig.kinds.get(symbols[0], "var")
        low, high = _DOMAIN[kind]
        value = float(-form.get(ONE, Fraction(0)) / form[symbols[0]])
        return low + 1e-9 < value < high - 1e-9 or (kind == "angle" and abs(value - 180) < 1e-9)

    def add_all(self, derived: Iterable[Derived]) -> int:
        """Add many; returns how many were new."""
        return sum(self.add(d) is not None for d in derived)

    # --- reading the system -----------------------------------------------------------------------

    def reduced(self, sym: sympy.Symbol) -> tuple[sympy.Expr, frozenset[int]]:
        """``sym`` as a combination of free unknowns and a constant, with the equations used."""
        if self._cache_rank != self.system.rank:
            self._cache.clear()
            self._cache_rank = self.system.rank
        hit = self._cache.get(sym)
        if hit is None:
            red = self.system.reduce({sym: Fraction(1)})
            terms = [
                sympy.Rational(c.numerator, c.denominator) * (1 if v == ONE else v)
                for v, c in red.expr.items()
            ]
            hit = (sympy.Add(*terms), red.sources)
            self._cache[sym] = hit
        return hit

    def substitute(self, expr: sympy.Expr) -> tuple[sympy.Expr, frozenset[int]]:
        """``expr`` with every quantity replaced by its reduced form, and the equations used."""
        mapping: dict[sympy.Symbol, sympy.Expr] = {}
        sources: set[int] = set()
        for sym in cast("set[sympy.Symbol]", expr.free_symbols):  # quantities are symbols
            red, src = self.reduced(sym)
            mapping[sym] = red
            sources |= src
        return cast(sympy.Expr, expr.xreplace(mapping)), frozenset(sources)

    def value(self, expr: sympy.Expr) -> tuple[float, frozenset[int]] | None:
        """The numeric value of ``expr`` if the system fixes it."""
        out, sources = self.substitute(expr)
        if out.free_symbols:
            out = sympy.simplify(out)
            if out.free_symbols:
                return None
        number = complex(sympy.N(out))
        if abs(number.imag) > 1e-9 * max(1.0, abs(number.real)):
            return None
        return number.real, sources

    # --- nonlinear step ---------------------------------------------------------------------------

    def _valid(self, var: sympy.Symbol, root: float) -> bool:
        for sym, kind in self.fig.kinds.items():
            red, _ = self.reduced(sym)
            if red.free_symbols and red.free_symbols <= {var}:
                low, high = _DOMAIN[kind]
                val = float(red.subs(var, root))
                if not low + 1e-9 < val < high - 1e-9:
                    return False
        return True

    def interval(self, var: sympy.Symbol) -> tuple[float, float]:
        """The open range of a free unknown: its own kind's, narrowed by every quantity fixed by it alone."""
        low, high = _DOMAIN[self.fig.kinds.get(var, "var")]
        for sym, kind in self.fig.kinds.items():
            red, _ = self.reduced(sym)
            if red.free_symbols != {var}:
                continue
            slope, offset = red.coeff(var), red.xreplace({var: sympy.Integer(0)})
            if not (isinstance(slope, sympy.Expr) and isinstance(offset, sympy.Expr)):
                continue
            if not (slope.is_number and offset.is_number) or slope == 0:
                continue
            a, b = float(slope), float(offset)
            q_low, q_high = _DOMAIN[kind]
            ends = sorted(((q_low - b) / a, (q_high - b) / a))
            low, high = max(low, ends[0]), min(high, ends[1])
        return low, high

    def _solve_one(
        self, record: EqRecord, expr: sympy.Expr, var: sympy.Symbol, sources: frozenset[int]
    ) -> bool:
        low, high = self.interval(var)
        candidates = real_roots(expr, var, low, high)
        if len(candidates) > _MAX_ROOTS:
            return False
        roots = [r for r in candidates if self._valid(var, r)]
        if len(roots) == 1:
            self.settle(var, roots[0], (record.id, *sorted(sources)))
            return True
        if len(roots) > 1:
            self.ambiguous.append(_Candidate(record.id, var, roots, sources))
        return False

    def settle(self, var: sympy.Symbol, root: float, premises: tuple[int, ...]) -> None:
        """Record ``var = root`` found by solving an equation (exact when a simple closed form fits)."""
        self.add(Derived(var, nice_number(root), "solve", premises))

    def step(self) -> bool:
        """One pass over the nonlinear equations; whether anything new was learned."""
        progress = False
        self.ambiguous = []
        self.pairs = []
        for eq_id in sorted(self._pending, key=self._order):
            if self.deadline is not None and time.perf_counter() > self.deadline:
                break
            record = self.eqs[eq_id]
            lhs, rhs = self._sides(eq_id)
            raw = lhs - rhs
            free = set[Hashable]()
            for sym in cast("set[sympy.Symbol]", raw.free_symbols):  # quantities are symbols
                free |= set(self.reduced(sym)[0].free_symbols)
            if not free:
                self._pending.remove(eq_id)
                continue
            if len(free) > _MAX_FREE:
                continue
            expr, sources = self.substitute(raw)
            expr = sympy.expand(expr)
            if not expr.free_symbols:
                self._pending.remove(eq_id)
                continue
            form = linear_form(expr)
            if form is not None and not any(k != ONE for k in form):
                self._pending.remove(eq_id)
            elif form is not None:
                self._pending.remove(eq_id)
                before = self.system.rank
                self.add(Derived(expr, sympy.Integer(0), "substitution", (eq_id, *sorted(sources))))
                progress |= self.system.rank > before
            elif len(expr.free_symbols) == 1:
                var = cast(sympy.Symbol, next(iter(expr.free_symbols)))
                if self._solve_one(record, expr, var, sources):
                    self._pending.remove(eq_id)
                    progress = True
            elif len(expr.free_symbols) == 2:
                self.pairs.append((eq_id, expr, sources))
        return progress

    def pair_step(self) -> bool:
        """Two equations in the same two unknowns: solve one for an unknown it is linear in, substitute."""
        for (id1, e1, s1), (id2, e2, s2) in itertools.permutations(self.pairs[:40], 2):
            if self.deadline is not None and time.perf_counter() > self.deadline:
                return False
            if not e2.free_symbols <= e1.free_symbols:
                continue
            for w in cast("list[sympy.Symbol]", sorted(e1.free_symbols, key=str)):  # quantities are symbols
                poly = sympy.Poly(e1, w) if e1.is_polynomial(w) else None
                if poly is None or poly.degree() != 1:
                    continue
                c1, c0 = poly.all_coeffs()
                other = cast(sympy.Symbol, next(iter(e1.free_symbols - {w})))
                single = sympy.numer(sympy.together(e2.xreplace({w: -c0 / c1})))
                if single.free_symbols != {other}:
                    continue
                low, high = self.interval(other)
                w_low, w_high = _DOMAIN[self.fig.kinds.get(w, "var")]
                candidates = real_roots(single, other, low, high)
                if not 0 < len(candidates) <= _MAX_ROOTS:
                    continue
                roots = [
                    r
                    for r in candidates
                    if self._valid(other, r) and _inside(-c0 / c1, other, r, w_low, w_high)
                ]
                if len(roots) == 1:
                    self.settle(other, roots[0], tuple(sorted({id1, id2} | s1 | s2)))
                    return True
        return self._resultant_step()

    def _resultant_step(self) -> bool:
        """Two polynomial equations in the same two unknowns: eliminate one by their resultant.

        A root of the resultant is kept only when some value of the eliminated unknown inside its range
        satisfies both equations there, so no root comes from a complex or out-of-range partner.
        """
        for (id1, e1, s1), (id2, e2, s2) in itertools.combinations(self.pairs[:40], 2):
            if self.deadline is not None and time.perf_counter() > self.deadline:
                return False
            if e1.free_symbols != e2.free_symbols:
                continue
            first, second = cast("list[sympy.Symbol]", sorted(e1.free_symbols, key=str))
            n1, n2 = sympy.numer(sympy.together(e1)), sympy.numer(sympy.together(e2))
            if not (n1.is_polynomial(first, second) and n2.is_polynomial(first, second)):
                continue
            for w, other in ((first, second), (second, first)):
                single = sympy.expand(sympy.resultant(n1, n2, w))
                if single.free_symbols != {other}:
                    continue
                low, high = self.interval(other)
                candidates = real_roots(single, other, low, high)
                if not 0 < len(candidates) <= _MAX_ROOTS:
                    continue
                roots = [
                    r for r in candidates if self._valid(other, r) and self._partner(n1, n2, w, other, r)
                ]
                if len(roots) == 1:
                    self.settle(other, roots[0], tuple(sorted({id1, id2} | s1 | s2)))
                    return True
        return False

    def _partner(
        self, n1: sympy.Expr, n2: sympy.Expr, w: sympy.Symbol, other: sympy.Symbol, root: float
    ) -> bool:
        """Whether ``n1 = n2 = 0`` at ``other = root`` for some ``w`` inside its range."""
        low, high = self.interval(w)
        at = sympy.Float(root, 30)
        for value in real_roots(cast(sympy.Expr, n1.xreplace({other: at})), w, low, high):
            point = {other: at, w: sympy.Float(value, 30)}
            terms = [complex(cast(sympy.Expr, t.xreplace(point))) for t in sympy.Add.make_args(n2)]
            scale = max(1.0, *(abs(t) for t in terms))
            if abs(sum(terms)) <= 1e-7 * scale and self._valid(w, value):
                return True
        return False

    def guess(self) -> bool:
        """Settle the first ambiguous unknown on its least root (used only when nothing else helps)."""
        if not self.ambiguous:
            return False
        cand = self.ambiguous[0]
        self.settle(cand.var, cand.roots[0], (cand.eq, *sorted(cand.sources)))
        return True
