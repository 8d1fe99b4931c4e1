"""`geo dsl run` on a batch where hostile scripts sit among benign ones: every benign answer is right."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only"),
    pytest.mark.skipif(os.uname().machine != "x86_64", reason="the seccomp allowlist is x86-64 only"),
]

DISARM = "import sys\nsys.modules['__main__']._Policy.__call__ = lambda self, event, args: None\n"
HOSTILE = [
    DISARM
    + "import os\nfor p in range(2, 4000):\n    try: os.kill(p, 9)\n    except OSError: pass\nprint(0)\n",
    DISARM
    + "import os\nfd = os.open('/proc/1/fd/1', os.O_WRONLY)\nos.write(fd, b'\\x00\\x00\\x00\\x04junk')\n",
    DISARM
    + "import os\ntop = os.open('.', os.O_RDONLY)\nprint(os.open('../' * 9 + 'etc/shadow', os.O_RDONLY, dir_fd=top))\n",
    'import os\nos.write(3, b\'{"finished": true, "error": null}\')\nos._exit(0)\n',
    "while True:\n    pass\n",
]


def test_hostile_scripts_among_fifty_benign_ones_exit_zero(tmp_path: Path) -> None:
    records: list[dict[str, str]] = []
    for i in range(50):
        records.append(
            {"id": f"b{i}", "script": f"from sympy import Rational\nprint(float(Rational({i}, 8)))\n"}
        )
        if i % 10 == 0:
            records.append({"id": f"h{i}", "script": textwrap.dedent(HOSTILE[(i // 10) % len(HOSTILE)])})
    path = tmp_path / "scripts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = subprocess.run(
        [sys.executable, "-m", "geo_cli", "dsl", "run", str(path), "--jobs", "2", "--timeout", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["id"] for o in out] == [r["id"] for r in records]
    benign = {o["id"]: o for o in out if o["id"].startswith("b")}
    assert [benign[f"b{i}"]["answer"] for i in range(50)] == [i / 8 for i in range(50)]
    assert all(benign[f"b{i}"]["error"] is None for i in range(50))
    hostile = [o for o in out if o["id"].startswith("h")]
    assert all(o["error"] is not None for o in hostile), hostile
