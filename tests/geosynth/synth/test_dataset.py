"""Dataset folders: byte-identical for a seed whatever the parallelism, resumable, loadable, summarised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from geosynth.synth import (
    DatasetError,
    SynthUnavailableError,
    dataset_stats,
    generate,
    load_config,
    read_records,
    record_line,
    write_dataset,
)

CONFIG = load_config().model_copy(update={"time_limit": None})  # rounds only: no clock, so runs compare


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("serial") / "ds"
    made, failed = write_dataset(CONFIG, 4, 5, out, task="proving", shard_size=2)
    assert (made, failed) == (2, ())
    return out


def test_layout_manifest_and_records_match_the_generator(written: Path) -> None:
    assert sorted(_files(written)) == [
        "README.md",
        "data/shard-00000.jsonl",
        "data/shard-00001.jsonl",
        "manifest.json",
    ]
    manifest = json.loads((written / "manifest.json").read_text())
    assert (manifest["seed"], manifest["n"], manifest["task"], manifest["config"]["name"]) == (
        5,
        4,
        "proving",
        "default",
    )
    lines = (written / "data" / "shard-00000.jsonl").read_text().splitlines()
    assert lines == [record_line(r) for r in generate(CONFIG, 2, 5, "proving")]
    assert [r.index for r in read_records(written)] == [0, 1, 2, 3]


def test_two_processes_write_the_same_bytes(written: Path, tmp_path: Path) -> None:
    write_dataset(CONFIG, 4, 5, tmp_path / "ds", task="proving", shard_size=2, jobs=2)
    assert _files(tmp_path / "ds") == _files(written)


def test_a_rerun_skips_finished_shards_and_redoes_a_missing_one(written: Path, tmp_path: Path) -> None:
    copy = tmp_path / "ds"
    for name, data in _files(written).items():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes(data)
    assert write_dataset(CONFIG, 4, 5, copy, task="proving", shard_size=2) == (0, ())
    (copy / "data" / "shard-00001.jsonl").unlink()
    done: list[tuple[int, int]] = []
    assert write_dataset(
        CONFIG, 4, 5, copy, task="proving", shard_size=2, progress=lambda d, t: done.append((d, t))
    ) == (1, ())
    assert done == [(4, 4)]
    assert _files(copy) == _files(written)


def test_a_folder_made_with_other_settings_is_refused(written: Path) -> None:
    with pytest.raises(DatasetError, match=r"different settings \(seed\)"):
        write_dataset(CONFIG, 4, 6, written, task="proving", shard_size=2)


def test_stats_recheck_every_record(written: Path) -> None:
    stats = dataset_stats(written)
    assert stats.records == 4 and stats.checked == 4 and stats.check_rate == 1.0
    assert sum(stats.goal_types.values()) == 4 and stats.tasks == {"proving": 4}
    assert stats.text_field in ("question", "problem") and 0 < stats.unique_texts <= 1
    assert stats.solution_steps.max >= stats.solution_steps.median > 0


def test_a_tampered_record_lowers_the_check_rate(written: Path, tmp_path: Path) -> None:
    copy = tmp_path / "ds"
    for name, data in _files(written).items():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes(data)
    shard = copy / "data" / "shard-00000.jsonl"
    first, *rest = shard.read_text().splitlines()
    record = json.loads(first)
    name = record["goal"].split()[1]
    record["points"] = [{**p, "x": p["x"] + 0.1} if p["name"] == name else p for p in record["points"]]
    shard.write_text("\n".join([json.dumps(record), *rest]) + "\n")
    assert dataset_stats(copy).checked == 3


@pytest.mark.slow
def test_hugging_face_datasets_loads_the_folder(written: Path) -> None:
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset(str(written), split="train")
    assert len(loaded) == 4 and loaded[0]["task"] == "proving" and loaded[0]["points"][0]["name"] == "a"


def test_not_a_dataset_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no data/shard"):
        read_records(tmp_path)


def test_bad_sizes_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="positive"):
        write_dataset(CONFIG, 0, 1, tmp_path)


def test_rendering_without_matplotlib_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec

    def hide_matplotlib(name: str, package: str | None = None) -> object:
        return None if name == "matplotlib" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", hide_matplotlib)
    with pytest.raises(SynthUnavailableError, match=r"geosynth\[render\]"):
        write_dataset(CONFIG, 2, 0, tmp_path / "out", render=True)
    assert not (tmp_path / "out").exists()
