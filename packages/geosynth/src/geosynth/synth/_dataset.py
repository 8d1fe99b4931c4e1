"""Writing datasets: shards of JSONL records (+ diagram images), resumable, identical for a seed.

Layout of a dataset folder::

    manifest.json          configuration, seed, task, count, shard size (a rerun must match it)
    README.md              a dataset card whose header lets ``datasets.load_dataset(DIR)`` find the shards
    data/shard-00000.jsonl one record per line, keys sorted (written atomically: temp file + rename)
    images/<id>.png        diagrams, when rendering is on
    stats.json             :func:`geosynth.synth.dataset_stats` of the finished folder
    pgps/                  with ``pgps``: problems in the PGPS annotation format on each record's figure
                           (data/shard-*.jsonl per shard, Diagram/<id>.png, pgps.json deduplicated)

Shard ``k`` holds records ``k * shard_size`` onwards; a shard file exists only once complete, so a rerun
skips the shards already there. Shards are made by worker processes (``jobs``) or Ray tasks; since every
record depends only on its own seed, the files are the same either way.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from geodsl.data import PGPSRecord
from geosynth.engine import Diagram, atomic_write, parse_problem, worker_context
from geosynth.synth._config import PLAIN_WRITING, SynthConfig, Task
from geosynth.synth._generate import generate_with_figure
from geosynth.synth._records import SynthRecord
from geosynth.synth._render import render_diagram, require_renderer
from geosynth.synth.errors import DatasetError, GenerationFailed

FORMAT_VERSION = 1
"""Version of the folder layout and record schema."""

Progress = Callable[[int, int], None]
"""Called with (records done, records in total) as shards finish."""


class Manifest(BaseModel):
    """What a dataset folder was made from."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    version: int
    """:data:`FORMAT_VERSION` of the writer."""
    task: Task
    """The problems' task."""
    n: int
    """Records requested."""
    seed: int
    """The run's seed."""
    shard_size: int
    """Records per shard."""
    render: bool
    """Whether diagrams were rendered."""
    image_format: str
    """``png`` or ``svg``."""
    config: dict[str, Any]
    """The generator configuration (as JSON)."""
    pgps: int = 0
    """PGPS-format problems made on each calculation record's figure (0: none; not written when 0)."""
    pgps_figures: bool = False
    """Whether the PGPS problems carry their realised figure (not written when off)."""

    def as_json(self) -> dict[str, Any]:
        """The manifest as written (``pgps`` and ``pgps_figures`` only when on, so older folders match).

        The configuration's ``pgps_writing`` is written only when PGPS problems are made and it is not
        the plain writing (which is how every problem was written before the setting existed).
        """
        data = self.model_dump(mode="json")
        if not self.pgps:
            del data["pgps"]
        if not self.pgps_figures:
            del data["pgps_figures"]
        writing = data["config"].get("pgps_writing")
        if writing is not None and (not self.pgps or writing == PLAIN_WRITING.model_dump(mode="json")):
            data["config"] = {k: v for k, v in data["config"].items() if k != "pgps_writing"}
        return data


class ShardResult(BaseModel):
    """One finished shard, as a worker returns it."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    shard: int
    """The shard's number."""
    lines: tuple[str, ...]
    """Its JSONL lines."""
    images: dict[str, bytes]
    """Image file name to bytes."""
    failed: tuple[int, ...]
    """Record indices that exhausted their tries (left out)."""
    pgps_lines: tuple[str, ...] = ()
    """PGPS-format problems on the shard's figures (JSON lines, :meth:`PGPSProblem.line`)."""
    pgps_images: dict[str, bytes] = {}
    """Their diagrams: file name to bytes."""


def record_line(record: SynthRecord) -> str:
    """A record as one deterministic JSON line (sorted keys)."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)


def _render_bytes(record: SynthRecord, fmt: str) -> bytes:
    problem = parse_problem(record.problem)
    diagram = Diagram(points={p.name: (p.x, p.y) for p in record.points}, attempts=1)
    with tempfile.TemporaryDirectory() as folder:
        path = render_diagram(
            problem,
            diagram,
            Path(folder) / f"image.{fmt}",
            fmt=fmt,
            seed=record.seed,
            statements=(record.goal, *record.givens),
        )
        return Path(path).read_bytes()


def make_shard(
    config_json: str,
    task: Task,
    seed: int,
    shard: int,
    shard_size: int,
    n: int,
    render: bool,
    fmt: str,
    pgps: int = 0,
    pgps_figures: bool = False,
) -> ShardResult:
    """Generate (and optionally render) one shard; runs in a worker process or a Ray task.

    With ``pgps`` (calculation records), also up to that many PGPS-format problems on each record's
    whole sampled figure, rendered with their values when ``render`` is on.
    """
    config = SynthConfig.model_validate_json(config_json)
    lines: list[str] = []
    images: dict[str, bytes] = {}
    failed: list[int] = []
    pgps_lines: list[str] = []
    pgps_images: dict[str, bytes] = {}
    for index in range(shard * shard_size, min(n, (shard + 1) * shard_size)):
        try:
            record, figure = generate_with_figure(config, task, seed, index)
        except GenerationFailed:
            failed.append(index)
            continue
        if render:
            name = f"{record.id}.{fmt}"
            images[name] = _render_bytes(record, fmt)
            record = record.model_copy(update={"image": f"images/{name}"})
        lines.append(record_line(record))
        if pgps and task == "calculation":
            from geosynth.synth._pgps_out import pgps_shard_lines

            pgps_lines.extend(
                pgps_shard_lines(
                    figure,
                    record,
                    pgps,
                    render,
                    fmt,
                    pgps_images,
                    figures=pgps_figures,
                    writing=config.pgps_writing,
                    growth=config.pgps_design,
                )
            )
    return ShardResult(
        shard=shard,
        lines=tuple(lines),
        images=images,
        failed=tuple(failed),
        pgps_lines=tuple(pgps_lines),
        pgps_images=pgps_images,
    )


def shard_path(out: Path, shard: int) -> Path:
    """The file of shard ``shard``."""
    return out / "data" / f"shard-{shard:05d}.jsonl"


def pgps_shard_path(out: Path, shard: int) -> Path:
    """The PGPS-format file of shard ``shard``."""
    return out / "pgps" / "data" / f"shard-{shard:05d}.jsonl"


def _store(out: Path, result: ShardResult, pgps: bool) -> None:
    for name, data in sorted(result.images.items()):
        atomic_write(out / "images" / name, data)
    if pgps:  # before the record shard, whose file marks the shard as done
        for name, data in sorted(result.pgps_images.items()):
            atomic_write(out / "pgps" / "Diagram" / name, data)
        text = "".join(line + "\n" for line in result.pgps_lines)
        atomic_write(pgps_shard_path(out, result.shard), text.encode("utf-8"))
    text = "".join(line + "\n" for line in result.lines)
    atomic_write(shard_path(out, result.shard), text.encode("utf-8"))


def _check_manifest(out: Path, manifest: Manifest) -> None:
    path = out / "manifest.json"
    new = manifest.as_json()
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old != new:
            changed = sorted(k for k in {*new, *old} if old.get(k) != new.get(k))
            raise DatasetError(
                f"{out} holds a dataset made with different settings ({', '.join(changed)}); "
                "use a new folder or the same settings to resume"
            )
    else:
        text = json.dumps(new, sort_keys=True, indent=2) + "\n"
        atomic_write(path, text.encode("utf-8"))


CARD = """---
configs:
- config_name: default
  data_files: data/*.jsonl
---
# Synthesized {task} problems

{n} records generated by `geo synth generate` (geosynth.synth), seed {seed}, configuration `{name}`.
Each record holds a formal problem, its diagram coordinates, and a solution the engine derived and re-derived
from the emitted statement; see manifest.json for the configuration and stats.json for the statistics.
"""


def _pending(out: Path, shards: int, pgps: bool) -> list[int]:
    return [
        k
        for k in range(shards)
        if not shard_path(out, k).is_file() or (pgps and not pgps_shard_path(out, k).is_file())
    ]


def _local(args: list[tuple[Any, ...]], jobs: int) -> Iterator[ShardResult]:
    if jobs <= 1:
        for item in args:
            yield make_shard(*item)
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=worker_context()) as pool:
        futures = [pool.submit(make_shard, *item) for item in args]
        for future in as_completed(futures):
            yield future.result()


def write_dataset(
    config: SynthConfig,
    n: int,
    seed: int,
    out: Path,
    *,
    task: Task = "proving",
    shard_size: int = 100,
    jobs: int = 1,
    use_ray: bool = False,
    render: bool = False,
    image_format: str = "png",
    progress: Progress | None = None,
    pgps: int = 0,
    pgps_exclude: Sequence[PGPSRecord] = (),
    pgps_figures: bool = False,
) -> tuple[int, tuple[int, ...]]:
    """Generate ``n`` records into ``out`` (resuming: finished shards are kept).

    Args:
        config: The generator configuration.
        n: Records to generate.
        seed: The run's seed.
        out: The dataset folder (created).
        task: ``proving`` or ``calculation``.
        shard_size: Records per shard file.
        jobs: Worker processes (or Ray CPUs when starting a local Ray).
        use_ray: Run shards as Ray tasks.
        render: Render every diagram (needs the ``render`` extra and the renderer module).
        image_format: ``png`` or ``svg``.
        progress: Called as shards finish.
        pgps: Calculation tasks: also write up to this many PGPS-format problems per record's figure to
            ``out/pgps`` (see :func:`geosynth.synth._pgps_out.assemble_pgps`); 0 for none.
        pgps_exclude: Problems the PGPS corpus must not pose (test splits); those it would are dropped.
        pgps_figures: Keep each PGPS problem's realised figure (``realised_figure``, in the shards and in
            ``pgps.json``; PGPS readers ignore it), for :func:`geosynth.synth.figure_step_labels`.

    Returns:
        Shards made in this call, and record indices left out because they exhausted their tries.

    Raises:
        DatasetError: ``out`` holds a dataset made with other settings.
        SynthUnavailableError: Rendering was asked for but matplotlib is not installed.
        ValueError: A count or size is out of range.
    """
    if n < 1 or shard_size < 1 or jobs < 1:
        raise ValueError(f"n, shard_size and jobs must be positive, got {n}, {shard_size}, {jobs}")
    if image_format not in ("png", "svg"):
        raise ValueError(f"image_format must be png or svg, got {image_format!r}")
    if pgps < 0 or (pgps and task != "calculation"):
        raise ValueError(
            f"pgps problems need a calculation task and a count of at least 0, got {pgps} ({task})"
        )
    if render:
        require_renderer()
    manifest = Manifest(
        version=FORMAT_VERSION,
        task=task,
        n=n,
        seed=seed,
        shard_size=shard_size,
        render=render,
        image_format=image_format,
        config=config.model_dump(mode="json"),
        pgps=pgps,
        pgps_figures=pgps_figures and pgps > 0,
    )
    out.mkdir(parents=True, exist_ok=True)
    _check_manifest(out, manifest)
    shards = -(-n // shard_size)
    todo = _pending(out, shards, pgps > 0)
    done = (shards - len(todo)) * shard_size
    args = [
        (config.model_dump_json(), task, seed, k, shard_size, n, render, image_format, pgps, pgps_figures)
        for k in todo
    ]
    results: Iterator[ShardResult]
    if use_ray:
        from geosynth.synth._ray import ray_shards

        results = ray_shards(args, jobs)
    else:
        results = _local(args, jobs)
    failed: list[int] = []
    for result in results:
        _store(out, result, pgps > 0)
        failed.extend(result.failed)
        done += shard_size
        if progress is not None:
            progress(min(done, n), n)
    card = CARD.format(task=task, n=n, seed=seed, name=config.name)
    atomic_write(out / "README.md", card.encode("utf-8"))
    if pgps:
        from geosynth.synth._pgps_out import assemble_pgps

        # The plain writing keeps the checks its corpora were assembled with (they are made again exactly).
        assemble_pgps(out, shards, pgps_exclude, as_written=config.pgps_writing == PLAIN_WRITING)
    return len(todo), tuple(sorted(failed))


def read_records(out: Path) -> list[SynthRecord]:
    """Every record of a dataset folder (shard order).

    Raises:
        DatasetError: The folder has no shards or a line is not a valid record.
    """
    files = sorted((out / "data").glob("shard-*.jsonl"))
    if not files:
        raise DatasetError(f"{out} has no data/shard-*.jsonl files (not a synthesized dataset?)")
    records: list[SynthRecord] = []
    for file in files:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            try:
                records.append(SynthRecord.model_validate_json(line, strict=False))
            except ValueError as err:
                raise DatasetError(f"{file.name} line {number}: not a synthesized record: {err}") from None
    return records
