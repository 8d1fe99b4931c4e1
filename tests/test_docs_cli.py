"""Every command shown in docs/cli.md runs as shown, from a copy of the repository root, on shipped data.

docs/cli.md keeps its examples in ```bash blocks; the commands of one block run in order in one fresh
folder laid out like the repository root (``tests``, ``packages`` linked, ``docs/examples`` copied, so
nothing is written into the checkout), each expected to exit 0 unless its line ends in ``# exit N``.
Commands that load torch skip, with the reason, when the ML stack is absent; blocks that train, mine or
run a pipeline are marked slow.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml

ROOT = Path(__file__).resolve().parents[1]
CLI_MD = ROOT / "docs" / "cli.md"
TEXT = CLI_MD.read_text(encoding="utf-8")
HAS_ML = (
    importlib.util.find_spec("torch") is not None and importlib.util.find_spec("transformers") is not None
)

# Sub-commands that import torch / transformers (or run a stage that does).
ML_COMMANDS = {
    ("train",),
    ("tts", "run"),
    ("prm", "critique"),
    ("prm", "build-data"),
    ("prm", "figure-data"),
    ("prm", "figure-eval"),
}
# Sub-commands that take more than a few seconds on two shared cores.
SLOW_COMMANDS = {("synth", "aux-data"), ("synth", "generate"), ("pipeline", "run")}


@dataclass(frozen=True)
class Example:
    """One command line of a ```bash block."""

    line: str
    exit_code: int

    @property
    def words(self) -> list[str]:
        return shlex.split(self.line, comments=True)

    def geo_words(self) -> list[list[str]]:
        """The words after each ``geo`` of the line (a pipeline may hold more than one command)."""
        words = self.words
        starts = [i for i, w in enumerate(words) if w == "geo"]
        return [words[i + 1 :] for i in starts]

    def path(self) -> tuple[str, ...]:
        """The sub-command path of the line's geo command, e.g. ('synth', 'mts')."""
        (args,) = self.geo_words()
        return tuple(w for w in args[:2] if not w.startswith("-"))

    @property
    def needs_ml(self) -> bool:
        path = self.path()
        if path[:1] == ("train",) or path in ML_COMMANDS:
            return True
        if path == ("prm", "score") and "--model" in self.words:
            return True
        # A pipeline run that goes past MTS trains a model.
        return path == ("pipeline", "run") and "--until" not in self.words

    @property
    def slow(self) -> bool:
        return self.needs_ml or self.path() in SLOW_COMMANDS


def _blocks() -> list[tuple[str, list[Example]]]:
    blocks: list[tuple[str, list[Example]]] = []
    heading = "intro"
    count: dict[str, int] = {}
    for part in re.split(r"(^## [^\n]*$|^```bash\n.*?^```$)", TEXT, flags=re.M | re.S):
        if part.startswith("## "):
            heading = re.sub(r"[^a-z]+", "-", part[3:].split(":")[0].lower()).strip("-")
        elif part.startswith("```bash\n"):
            examples = []
            for raw in part.splitlines()[1:-1]:
                if raw.strip() and not raw.lstrip().startswith("#"):
                    code = re.search(r"#\s*exit (\d+)\s*$", raw)
                    examples.append(Example(raw.strip(), int(code.group(1)) if code else 0))
            count[heading] = count.get(heading, 0) + 1
            blocks.append((f"{heading}-{count[heading]}", examples))
    return blocks


BLOCKS = _blocks()


def _params() -> list[object]:
    params: list[object] = []
    for name, examples in BLOCKS:
        marks = [pytest.mark.slow] if any(e.slow for e in examples) else []
        params.append(pytest.param(examples, id=name, marks=marks))
    return params


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    work.mkdir()
    for name in ("tests", "packages"):
        (work / name).symlink_to(ROOT / name, target_is_directory=True)
    shutil.copytree(ROOT / "docs" / "examples", work / "docs" / "examples")
    return work


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["OMP_NUM_THREADS"] = "1"
    env["COLUMNS"] = "200"
    return env


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 10
    assert all(examples for _, examples in BLOCKS)


def _subcommands(command: Any) -> dict[str, Any]:
    """The sub-commands of a Typer (click) group; empty for a plain command."""
    return dict(getattr(command, "commands", {}))


def test_every_command_of_the_cli_has_an_example() -> None:
    from geo_cli.main import app

    group = typer.main.get_command(app)
    commands = {(name, sub) for name, command in _subcommands(group).items() for sub in _subcommands(command)}
    assert len(commands) >= 25
    shown = {example.path() for _, examples in BLOCKS for example in examples if example.geo_words()}
    assert commands - shown == set()


def test_every_option_shown_exists() -> None:
    from geo_cli.main import app

    group = typer.main.get_command(app)
    unknown: list[str] = []
    for _, examples in BLOCKS:
        for example in examples:
            for args in example.geo_words():
                command: Any = group
                for word in args:
                    command = _subcommands(command).get(word, command)
                known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
                known.add("--help")
                unknown += [
                    f"{example.line}: {w}" for w in args if w.startswith("-") and w != "-" and w not in known
                ]
    assert unknown == []


def test_the_example_configs_are_valid() -> None:
    from geo_cli.pipeline import load_pipeline_config
    from geo_cli.prm import BuildDataConfig
    from geo_cli.tts import RunConfig

    examples = ROOT / "docs" / "examples"
    RunConfig.model_validate(yaml.safe_load((examples / "run.yaml").read_text(encoding="utf-8")))
    BuildDataConfig.model_validate(yaml.safe_load((examples / "build.yaml").read_text(encoding="utf-8")))
    config, _ = load_pipeline_config(str(examples / "pipeline.yaml"))
    assert config.name == "example"
    (full,) = re.findall(r"```yaml\n(.*?)```", TEXT, flags=re.S)
    BuildDataConfig.model_validate(yaml.safe_load(full))


@pytest.mark.parametrize("examples", _params())
def test_examples_run(examples: list[Example], tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    env = _env()
    for example in examples:
        if example.needs_ml and not HAS_ML:
            pytest.skip(f"`{example.line}` needs the ML stack (torch, transformers): uv sync --group ml-cpu")
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", example.line],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        output = done.stdout + done.stderr
        assert done.returncode == example.exit_code, (example.line, output[-3000:])
        assert "Traceback (most recent call last)" not in output, (example.line, output[-3000:])
