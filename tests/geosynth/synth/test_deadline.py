"""The per-figure alarm of synthesis: a figure past its clock is dropped, however the alarm surfaces."""

from __future__ import annotations

import signal
import time

import pytest

from geosynth.engine import FactStore
from geosynth.synth._generate import _deadline, _Overtime

MANY = "SELECT COUNT(*) FROM line AS x, line AS y, line AS z WHERE x.l <> y.l AND y.l <> z.l"


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
def test_an_alarm_inside_an_interruptible_query_is_overtime() -> None:
    # The alarm rings while the store's deadline check runs: SQLite turns the handler's exception into
    # "interrupted", which must still count as the figure's overtime, not as a failed stage.
    store = FactStore([f"p{i}" for i in range(60)])
    with pytest.raises(_Overtime), _deadline(0.05):
        store.select(MANY, time.perf_counter() + 1e6)
    assert store.select("SELECT COUNT(*) FROM seg WHERE a = 'p0'") == [(59,)]


def test_an_error_without_the_alarm_is_not_overtime() -> None:
    with pytest.raises(ZeroDivisionError), _deadline(60.0):
        _ = 1 / 0
