"""The data stage: splits written in PGPS format, diagrams copied when available and drawn otherwise."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from geo_cli.pipeline import PipelineConfigError, StageContext, check_pipeline, load_pipeline_config
from geo_cli.pipeline._diagram import _layout, draw_schematic
from geo_cli.pipeline._stages_prep import run_data
from geodsl.data import load_pgps, load_sample

pytest.importorskip("matplotlib", reason="schematic diagrams need matplotlib (geotts[report])")
MakeConfig = Callable[..., Path]


def test_splits_and_diagrams(tmp_path: Path, make_config: MakeConfig) -> None:
    sample = load_sample()
    images = tmp_path / "given"
    draw_schematic(["line A B"], ["AB = 1"], images / str(sample[101].diagram))  # one image "exists"
    config, base = load_pipeline_config(make_config({"data": {"test": {"images_dir": str(images)}}}))
    folder = tmp_path / "data"
    folder.mkdir()
    summary = run_data(StageContext(config=config, base=base, workdir=tmp_path, folder=folder, resumed=False))
    train, test = load_pgps(folder / "train.json"), load_pgps(folder / "test.json")
    assert [r.id for r in train] == [r.id for r in sample[:8]]
    assert [r.id for r in test] == [r.id for r in sample[100:102]]
    assert train[0] == sample[0]  # every field round-trips
    assert summary["test"]["diagrams"] == {"drawn": 1, "copied": 1}
    assert summary["train"]["diagrams"] == {"drawn": 8}
    for rec in [*train, *test]:
        assert (folder / "images" / str(rec.diagram)).read_bytes()[:4] == b"\x89PNG"
    assert not list((folder / "images").glob(".*.tmp"))
    again = run_data(StageContext(config=config, base=base, workdir=tmp_path, folder=folder, resumed=True))
    assert again["train"]["diagrams"] == {"present": 8}  # a resumed stage keeps finished images


def test_missing_pgps_file_is_named(tmp_path: Path, make_config: MakeConfig) -> None:
    missing = tmp_path / "nope.json"
    config, base = load_pipeline_config(
        make_config({"data": {"train": {"source": "pgps_file", "path": str(missing)}}})
    )
    report = check_pipeline(config, base)
    assert str(missing) in report.missing_inputs and not report.runnable_here
    folder = tmp_path / "data"
    folder.mkdir()
    with pytest.raises(PipelineConfigError, match=r"nope\.json does not exist"):
        run_data(StageContext(config=config, base=base, workdir=tmp_path, folder=folder, resumed=False))


def test_schematic_layout_keeps_the_longest_line_straight() -> None:
    pos = _layout(["line R S T", "line S U"])
    assert pos["R"][1] == pos["S"][1] == pos["T"][1]
    assert pos["R"][0] < pos["S"][0] < pos["T"][0] and pos["U"][1] > pos["S"][1]


def test_a_synthesized_calculation_split_holds_verified_pgps_programs(
    tmp_path: Path, make_config: MakeConfig
) -> None:
    import geodsl

    pytest.importorskip("geosynth.synth")
    spec = {"source": "synthesize", "synth_kind": "calculation", "synth_count": 6}
    config, base = load_pipeline_config(make_config({"data": {"train": spec}}))
    assert check_pipeline(config, base).stages[0].state == "ready"
    folder = tmp_path / "data"
    folder.mkdir()
    summary = run_data(StageContext(config=config, base=base, workdir=tmp_path, folder=folder, resumed=False))
    train = load_pgps(folder / "train.json")
    assert 1 <= len(train) <= 6 and summary["train"]["records"] == len(train)
    for rec in train:
        # The N numbers come from the clauses through the PGPS loader; the program reproduces the answer.
        answer = float(geodsl.execute(rec.expression, list(rec.numbers)).answer)
        assert abs(answer - float(rec.answer)) <= 1e-3 * max(1.0, abs(answer))
        assert (folder / "images" / str(rec.diagram)).read_bytes()[:4] == b"\x89PNG"
    before = (folder / "train.json").read_bytes()
    run_data(StageContext(config=config, base=base, workdir=tmp_path, folder=folder, resumed=True))
    assert (folder / "train.json").read_bytes() == before  # the generator's shards are reused, same seed
