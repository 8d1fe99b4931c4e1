"""The deductive state in in-memory SQLite tables, with union-find equivalence classes kept in sync.

Points are named; lines, directions, lengths and circles are integer class ids. Union-find (in Python)
decides which id represents a merged class, and every merge is written through to the tables at once,
so a rule compiled to a join always sees the current classes:

- ``line(a, b, l)``: every ordered pair of distinct points and the line through them;
- ``dir(l, d)``: each line's direction class (parallel lines share one);
- ``perp(d1, d2)``: perpendicular direction classes, both orders;
- ``seg(a, b, s)``: every ordered pair and its length class (equal lengths share one);
- ``midp(m, a, b)``: midpoints, both orders of the ends;
- ``circ(p, k)``: points on each known circle;
- ``ang(d1, d2, g)``: the directed angle from direction ``d1`` to ``d2`` (mod 180 degrees) and its
  class ``g``; rows exist only for angles some equality mentions. A class that turns out to contain a
  zero angle makes all its direction pairs parallel, and merging directions merges the angle rows that
  become the same (a worklist, so cascades terminate).

Every row carries in ``v`` the :attr:`FactStore.clock` of the write that inserted or last changed it,
so a rule can join only the combinations that involve a row written since its last join (semi-naive
evaluation): a combination of older rows was there, unchanged, at that join.

Diagrammatic side conditions are not stored: they are read off the diagram when a rule fires.

The tables are never committed: every write since the store was built sits in one open transaction.
A read-only query may be cut short at a deadline (:meth:`FactStore.select`); a write never is, since an
interrupted write would roll that transaction back and leave the tables behind the union-find.
"""

from __future__ import annotations

import functools
import itertools
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterable
from typing import Any

_SCHEMA = """
CREATE TABLE line (a TEXT, b TEXT, l INTEGER, v INTEGER);
CREATE TABLE dir (l INTEGER PRIMARY KEY, d INTEGER, v INTEGER);
CREATE TABLE perp (d1 INTEGER, d2 INTEGER, v INTEGER, UNIQUE (d1, d2));
CREATE TABLE seg (a TEXT, b TEXT, s INTEGER, v INTEGER);
CREATE TABLE midp (m TEXT, a TEXT, b TEXT, v INTEGER, UNIQUE (m, a, b));
CREATE TABLE circ (p TEXT, k INTEGER, v INTEGER, UNIQUE (p, k));
CREATE TABLE ang (d1 INTEGER, d2 INTEGER, g INTEGER, v INTEGER, UNIQUE (d1, d2));
CREATE INDEX line_abl ON line (a, b, l);
CREATE INDEX line_bal ON line (b, a, l);
CREATE INDEX line_lab ON line (l, a, b);
CREATE INDEX dir_d ON dir (d);
CREATE INDEX seg_abs ON seg (a, b, s);
CREATE INDEX seg_bas ON seg (b, a, s);
CREATE INDEX seg_sab ON seg (s, a, b);
CREATE INDEX midp_abm ON midp (a, b, m);
CREATE INDEX midp_bam ON midp (b, a, m);
CREATE INDEX perp_d2 ON perp (d2, d1);
CREATE INDEX circ_k ON circ (k);
CREATE INDEX ang_d2 ON ang (d2, d1, g);
CREATE INDEX ang_g ON ang (g, d1, d2);
CREATE INDEX line_v ON line (v);
CREATE INDEX dir_v ON dir (v);
CREATE INDEX perp_v ON perp (v);
CREATE INDEX seg_v ON seg (v);
CREATE INDEX midp_v ON midp (v);
CREATE INDEX circ_v ON circ (v);
CREATE INDEX ang_v ON ang (v);
"""


SWAP_BUDGET = 4000
"""Most swapped angle equalities one :meth:`FactStore.add_equal_angles` call follows."""

PROGRESS_STEPS = 10_000
"""SQLite virtual-machine steps between two deadline checks of an interruptible query."""


TEMPLATES = 8
"""Starting tables kept per process and thread, one per point set (the latest used)."""

_STARTS: dict[tuple[int, int, tuple[str, ...], tuple[str, ...]], sqlite3.Connection] = {}


def _starting_tables(points: tuple[str, ...], kept: tuple[str, ...]) -> sqlite3.Connection:
    """A database holding the schema and the rows every store over ``kept`` of ``points`` starts with.

    Those rows are each pair's own line, direction and length (class ids numbered in the pair order of
    ``points``). Proof tracing and replay build many stores over one problem's points, so the latest few
    point sets are kept; a connection is shared across neither processes nor threads.
    """
    key = (os.getpid(), threading.get_ident(), points, kept)
    found = _STARTS.pop(key, None)
    if found is None:
        found = sqlite3.connect(":memory:")
        found.executescript(_SCHEMA)
        _fill(found, points, kept)
        found.commit()
        while len(_STARTS) >= TEMPLATES:
            _STARTS.pop(next(iter(_STARTS))).close()
    _STARTS[key] = found  # most recently used last
    return found


TABLES = ("line", "dir", "perp", "seg", "midp", "circ", "ang")
"""The store's tables."""
POOLED = 4
"""Connections of finished stores kept per process and thread for the next stores."""

_POOL: dict[tuple[int, int], list[sqlite3.Connection]] = {}


def pair_ids(points: tuple[str, ...], kept: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """The pairs of ``kept`` with their ids, numbered in the pair order of ``points``."""
    if kept == points:
        return [(i, a, b) for i, (a, b) in enumerate(itertools.combinations(points, 2))]
    inside = set(kept)
    pairs = enumerate(itertools.combinations(points, 2))
    return [(i, a, b) for i, (a, b) in pairs if a in inside and b in inside]


@functools.lru_cache(maxsize=4 * TEMPLATES)
def _starting_rows(
    points: tuple[str, ...], kept: tuple[str, ...]
) -> tuple[list[tuple[str, str, int]], list[tuple[int, int]]]:
    """Each pair's line and length both ways, each line's direction (class ids: :func:`pair_ids`)."""
    pairs = pair_ids(points, kept)
    both_ways = [row for i, a, b in pairs for row in ((a, b, i), (b, a, i))]
    return both_ways, [(i, i) for i, _, _ in pairs]


def _fill(db: sqlite3.Connection, points: tuple[str, ...], kept: tuple[str, ...]) -> None:
    """Insert the rows every store over ``kept`` of ``points`` starts with into empty tables."""
    both_ways, dirs = _starting_rows(points, kept)
    db.executemany("INSERT INTO line VALUES (?, ?, ?, 0)", both_ways)
    db.executemany("INSERT INTO seg VALUES (?, ?, ?, 0)", both_ways)
    db.executemany("INSERT INTO dir VALUES (?, ?, 0)", dirs)


def _connection(points: tuple[str, ...], kept: tuple[str, ...]) -> sqlite3.Connection:
    """A database holding the starting rows of a store over ``kept`` of ``points``.

    A connection of a finished store is reused when one is free: its rows are replaced (same schema, same
    rows in the same order as a copy of the starting tables; no trace callback, progress handler or
    planner statistics), and the statements it has prepared stay prepared. Compiling a rule's join costs
    more than running it on a small store, so reuse spares every search and every checked proof step that
    cost after the first.
    """
    free = _POOL.get((os.getpid(), threading.get_ident()))
    db = free.pop() if free else None
    if db is not None:
        db.commit()
        db.set_trace_callback(None)
        db.set_progress_handler(None, 0)
        if db.execute("SELECT 1 FROM sqlite_master WHERE name LIKE 'sqlite_stat%'").fetchone() is not None:
            db.close()  # someone ran ANALYZE on it: its statistics would steer the next store's plans
            db = None
    if db is None:
        db = sqlite3.connect(":memory:", cached_statements=1024)
        _starting_tables(points, kept).backup(db)  # far faster than the schema script and inserts
        return db
    for table in TABLES:
        db.execute(f"DELETE FROM {table}")
    _fill(db, points, kept)
    return db


def _release(key: tuple[int, int], db: sqlite3.Connection) -> None:
    """Keep a finished store's connection for the next store of its process and thread (or close it)."""
    free = _POOL.setdefault(key, [])
    if len(free) < POOLED:
        free.append(db)
    else:
        db.close()


class UnionFind:
    """Disjoint sets over integer ids; the smaller id represents a merged class."""

    def __init__(self) -> None:
        self._parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        """The representative of ``x``'s class."""
        parent = self._parent
        up = parent.get(x, x)
        if up == x or parent.get(up, up) == up:  # a root or a root's child: nearly every call
            return up
        root = up
        while parent.get(root, root) != root:
            root = parent[root]
        while x != root:  # path compression
            parent[x], x = root, parent.get(x, x)
        return root

    def union(self, x: int, y: int) -> tuple[int, int] | None:
        """Merge two classes; ``(kept, absorbed)`` representatives, or ``None`` if already one class."""
        rx, ry = self.find(x), self.find(y)
        if rx == ry:
            return None
        kept, gone = min(rx, ry), max(rx, ry)
        self._parent[gone] = kept
        return kept, gone


class FactStore:
    """Tables of one problem's known facts over a fixed set of points."""

    def __init__(self, points: Iterable[str], *, only: Collection[str] | None = None) -> None:
        """A store over ``points``, or over those of them in ``only`` numbered as in the whole store.

        ``only`` gives a store of part of a problem's points (a proof step's) whose class ids are the ids
        those pairs have in a store over all of them, so the two enumerate shared classes alike; a pair
        outside ``only`` has no row and no class (looking it up is a ``KeyError``).
        """
        everything = tuple(points)
        self.points = everything if only is None else tuple(p for p in everything if p in only)
        self.db = _connection(everything, self.points)
        weakref.finalize(self, _release, (os.getpid(), threading.get_ident()), self.db)
        self.clock = 0
        """The version every write stamps on the rows it inserts or changes (column ``v``)."""
        self.written: dict[str, int] = dict.fromkeys(TABLES, 0)
        """Per table, the version of its latest write (a join of older tables has nothing new)."""
        self._lines, self._dirs, self._lengths, self._angles = (
            UnionFind(),
            UnionFind(),
            UnionFind(),
            UnionFind(),
        )
        self.triangles: set[object] = set()
        """Similar and congruent triangle pairs known (relations; the algebra reads their ratios)."""
        self._next_circle = 0
        self._next_angle = 0
        self._zero_angles: set[int] = set()
        self._dir_merges = 0
        """Direction classes merged so far (:meth:`add_equal_angles` knows when its pairs went stale)."""
        # A mirror of the ang table for the lookups (the joins read the table): each row's class as
        # stored, and each stored class's rows with their rowids, so members come in the table's order.
        self._ang: dict[tuple[int, int], int] = {}
        self._ang_rows: dict[int, dict[tuple[int, int], int]] = {}
        # Pair ids seed the line, direction and length classes; lookups go through union-find, the
        # tables mirror the same classes for the joins.
        self._pair: dict[tuple[str, str], int] = {}
        for ident, a, b in pair_ids(everything, self.points):
            self._pair[a, b] = self._pair[b, a] = ident

    # --- lookups ---------------------------------------------------------------------------------------

    def tick(self) -> int:
        """Advance :attr:`clock`; rows written from now on carry the returned version or a later one."""
        self.clock += 1
        return self.clock

    def recent_share(self, since: int) -> Callable[[str], float]:
        """A function giving, per table, the share of its rows of version ``since`` or later (memoised)."""
        memo: dict[str, float] = {}

        def share(table: str) -> float:
            found = memo.get(table)
            if found is None:
                recent, total = self.db.execute(
                    f"SELECT (SELECT COUNT(*) FROM {table} WHERE v >= ?), (SELECT COUNT(*) FROM {table})",
                    (since,),
                ).fetchone()
                found = memo[table] = recent / total if total else 0.0
            return found

        return share

    def _stamp(self, table: str) -> int:
        """The version for a write to ``table`` now (remembered as that table's latest write)."""
        self.written[table] = self.clock
        return self.clock

    def select(
        self, sql: str, deadline: float | None = None, params: dict[str, Any] | None = None
    ) -> list[tuple[Any, ...]] | None:
        """Every row of a read-only query, or ``None`` when it ran past ``deadline`` and was interrupted.

        ``deadline`` is a :func:`time.perf_counter` reading (``None``: the query runs to the end). While
        the query runs, a progress handler checks the clock every :data:`PROGRESS_STEPS` steps and aborts
        the statement once past the deadline; the handler is removed before this returns. An interrupted
        query returns no rows and changes nothing (a read-only statement keeps the open transaction), so
        the store stays usable. Only ``SELECT`` statements belong here.
        """
        if deadline is None:
            return self.db.execute(sql, params or {}).fetchall()
        fired = False

        def late() -> bool:
            nonlocal fired
            fired = time.perf_counter() > deadline
            return fired

        self.db.set_progress_handler(late, PROGRESS_STEPS)
        try:
            return self.db.execute(sql, params or {}).fetchall()
        except sqlite3.OperationalError:
            if fired:
                return None
            raise
        finally:
            self.db.set_progress_handler(None, 0)

    def line_of(self, a: str, b: str) -> int:
        """The line class through two distinct points."""
        return self._lines.find(self._pair[a, b])

    def dir_of(self, a: str, b: str) -> int:
        """The direction class of line ``a b`` (a line's id seeds its direction's id)."""
        return self._dirs.find(self.line_of(a, b))

    def length_of(self, a: str, b: str) -> int:
        """The length class of segment ``a b``."""
        return self._lengths.find(self._pair[a, b])

    def is_perp(self, d1: int, d2: int) -> bool:
        """Whether two direction classes are known perpendicular."""
        d1, d2 = self._dirs.find(d1), self._dirs.find(d2)
        return self.db.execute("SELECT 1 FROM perp WHERE d1 = ? AND d2 = ?", (d1, d2)).fetchone() is not None

    def has_midpoint(self, m: str, a: str, b: str) -> bool:
        """Whether ``m`` is known to be the midpoint of ``a b``."""
        return (
            self.db.execute("SELECT 1 FROM midp WHERE m = ? AND a = ? AND b = ?", (m, a, b)).fetchone()
            is not None
        )

    def on_one_circle(self, points: tuple[str, ...]) -> bool:
        """Whether some known circle passes through all the points."""
        marks = ",".join("?" * len(points))
        sql = f"SELECT k FROM circ WHERE p IN ({marks}) GROUP BY k HAVING COUNT(DISTINCT p) = ?"
        return self.db.execute(sql, (*points, len(set(points)))).fetchone() is not None

    # --- merges (each written through to the tables) -------------------------------------------------

    def merge_lines(self, l1: int, l2: int) -> bool:
        """Make two line classes one (their directions merge too). Returns whether anything changed."""
        merged = self._lines.union(l1, l2)
        if merged is None:
            return False
        kept, gone = merged
        d_kept, d_gone = self._dirs.find(kept), self._dirs.find(gone)
        self.db.execute("UPDATE line SET l = ?, v = ? WHERE l = ?", (kept, self._stamp("line"), gone))
        self.db.execute("DELETE FROM dir WHERE l = ?", (gone,))
        self.merge_dirs(d_kept, d_gone)
        return True

    def merge_dirs(self, d1: int, d2: int) -> bool:
        """Make two direction classes one, with every consequence for angles. Returns whether anything changed."""
        work = [(d1, d2)]
        changed = False
        while work:
            merged = self._dirs.union(*work.pop())
            if merged is None:
                continue
            changed = True
            self._dir_merges += 1
            kept, gone = merged
            self.db.execute("UPDATE dir SET d = ?, v = ? WHERE d = ?", (kept, self._stamp("dir"), gone))
            self.db.execute(
                "UPDATE OR IGNORE perp SET d1 = ?, v = ? WHERE d1 = ?", (kept, self._stamp("perp"), gone)
            )
            self.db.execute(
                "UPDATE OR IGNORE perp SET d2 = ?, v = ? WHERE d2 = ?", (kept, self._stamp("perp"), gone)
            )
            self.db.execute("DELETE FROM perp WHERE d1 = ? OR d2 = ?", (gone, gone))
            work.extend(self._move_angles(kept, gone))
        return changed

    def _move_angles(self, kept: int, gone: int) -> list[tuple[int, int]]:
        """Rewrite angle rows of a merged direction; returns direction pairs that must merge."""
        rows = self.db.execute("SELECT d1, d2, g FROM ang WHERE d1 = ? OR d2 = ?", (gone, gone)).fetchall()
        self.db.execute("DELETE FROM ang WHERE d1 = ? OR d2 = ?", (gone, gone))
        for x, y, g in rows:
            del self._ang[x, y]
            del self._ang_rows[g][x, y]
        pending: list[tuple[int, int]] = []
        for x, y, g in rows:
            nx, ny = (kept if x == gone else x), (kept if y == gone else y)
            if nx == ny:
                pending.extend(self._mark_zero(self._angles.find(g)))
                continue
            found = self._ang.get((nx, ny))
            if found is None:
                self._insert_angle(nx, ny, g)
            else:
                pending.extend(self.merge_angles(found, g))
        return pending

    def _insert_angle(self, d1: int, d2: int, g: int) -> None:
        rowid = self.db.execute(
            "INSERT INTO ang VALUES (?, ?, ?, ?)", (d1, d2, g, self._stamp("ang"))
        ).lastrowid
        self._ang[d1, d2] = g
        self._ang_rows.setdefault(g, {})[d1, d2] = 0 if rowid is None else rowid

    def _mark_zero(self, g: int) -> list[tuple[int, int]]:
        self._zero_angles.add(g)
        return self._members(g)

    def angle_of(self, d1: int, d2: int) -> int | None:
        """The class of the directed angle from ``d1`` to ``d2``, if some equality mentions it."""
        return self._ang.get((d1, d2))

    def _angle_or_new(self, d1: int, d2: int) -> int:
        found = self.angle_of(d1, d2)
        if found is not None:
            return found
        self._next_angle += 1
        self._insert_angle(d1, d2, self._next_angle)
        return self._next_angle

    def merge_angles(self, g1: int, g2: int) -> list[tuple[int, int]]:
        """Make two angle classes one; returns direction pairs that must merge (a class became zero)."""
        merged = self._angles.union(g1, g2)
        if merged is None:
            return []
        kept, gone = merged
        self.db.execute("UPDATE ang SET g = ?, v = ? WHERE g = ?", (kept, self._stamp("ang"), gone))
        moved = self._ang_rows.pop(gone, {})
        for pair in moved:
            self._ang[pair] = kept
        self._ang_rows.setdefault(kept, {}).update(moved)
        if kept in self._zero_angles or gone in self._zero_angles:
            return self._mark_zero(kept)
        return []

    def add_equal_angles(self, first: tuple[int, int], second: tuple[int, int]) -> bool:
        """Record ``angle(first) = angle(second)`` (directed, mod 180) with what follows by symmetry.

        With the equality come its mirror (``angle(second[::-1])``...) and, for every pair of angles
        already equal to each side, the swapped equality: ``angle(a, b) = angle(c, d)`` gives
        ``angle(a, c) = angle(b, d)``. The swapped forms are followed for at most
        :data:`SWAP_BUDGET` pairs per call (large classes make them quadratic; the algebraic system
        derives any equality left out). Returns whether anything was new.
        """
        # Each item carries the count of direction merges when its pairs were read: class members are
        # representatives then, so an item no merge has overtaken needs no lookups.
        work = [(first, second, -1)]
        changed = False
        budget = SWAP_BUDGET
        find, angle = self._dirs.find, self._ang.get  # most swapped forms are known: test them inline
        while work:
            f, s, read = work.pop()
            if read != self._dir_merges:
                f, s = (find(f[0]), find(f[1])), (find(s[0]), find(s[1]))
            if f[0] == f[1] or s[0] == s[1]:
                if f[0] != f[1] or s[0] != s[1]:
                    changed |= self.merge_dirs(*(s if f[0] == f[1] else f))
                continue
            known = angle(f)
            if known is not None and known == angle(s):  # angles_equal(f, s)
                continue
            g1, g2 = self._angle_or_new(*f), self._angle_or_new(*s)
            left, right, read = self._members(g1), self._members(g2), self._dir_merges
            pending = self.merge_angles(g1, g2)
            pending += self.merge_angles(self._angle_or_new(f[1], f[0]), self._angle_or_new(s[1], s[0]))
            changed = True
            for pair in pending:
                self.merge_dirs(*pair)
            if len(left) * len(right) <= budget:
                budget -= len(left) * len(right)
                work.extend(((a, c), (b, d), read) for a, b in left for c, d in right)
        return changed

    def _members(self, g: int) -> list[tuple[int, int]]:
        rows = self._ang_rows.get(g, {})
        return sorted(rows, key=rows.__getitem__)  # the table's order for this class: by rowid

    def _reps(self, pair: tuple[int, int]) -> tuple[int, int]:
        return self._dirs.find(pair[0]), self._dirs.find(pair[1])

    def angles_equal(self, first: tuple[int, int], second: tuple[int, int]) -> bool:
        """Whether two directed angles between direction classes are known equal."""
        first, second = self._reps(first), self._reps(second)
        zero1, zero2 = first[0] == first[1], second[0] == second[1]
        if zero1 or zero2:
            return zero1 and zero2
        g1, g2 = self.angle_of(*first), self.angle_of(*second)
        return g1 is not None and g1 == g2

    def add_perp(self, d1: int, d2: int) -> bool:
        """Record two direction classes as perpendicular. Returns whether it was new."""
        d1, d2 = self._dirs.find(d1), self._dirs.find(d2)
        if self.is_perp(d1, d2):
            return False
        stamp = self._stamp("perp")
        self.db.executemany("INSERT INTO perp VALUES (?, ?, ?)", [(d1, d2, stamp), (d2, d1, stamp)])
        return True

    def merge_lengths(self, s1: int, s2: int) -> bool:
        """Make two length classes one. Returns whether anything changed."""
        merged = self._lengths.union(s1, s2)
        if merged is None:
            return False
        self.db.execute("UPDATE seg SET s = ?, v = ? WHERE s = ?", (merged[0], self._stamp("seg"), merged[1]))
        return True

    def add_midpoint(self, m: str, a: str, b: str) -> bool:
        """Record a midpoint. Returns whether it was new."""
        if self.has_midpoint(m, a, b):
            return False
        stamp = self._stamp("midp")
        self.db.executemany("INSERT INTO midp VALUES (?, ?, ?, ?)", [(m, a, b, stamp), (m, b, a, stamp)])
        return True

    def add_circle(self, points: tuple[str, ...]) -> bool:
        """Record points as concyclic, merging with every known circle that shares three of them."""
        if self.on_one_circle(points):
            return False
        marks = ",".join("?" * len(points))
        sql = f"SELECT k FROM circ WHERE p IN ({marks}) GROUP BY k HAVING COUNT(DISTINCT p) >= 3"
        circles = [int(r[0]) for r in self.db.execute(sql, points).fetchall()]
        if circles:
            kept = min(circles)
            for gone in circles:
                if gone != kept:
                    self.db.execute(
                        "UPDATE OR IGNORE circ SET k = ?, v = ? WHERE k = ?",
                        (kept, self._stamp("circ"), gone),
                    )
                    self.db.execute("DELETE FROM circ WHERE k = ?", (gone,))
        else:
            kept = self._next_circle
            self._next_circle += 1
        stamp = self._stamp("circ")
        self.db.executemany("INSERT OR IGNORE INTO circ VALUES (?, ?, ?)", [(p, kept, stamp) for p in points])
        return True
