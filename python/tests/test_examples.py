"""Each example of examples/python runs on the repository's test data and does what it says."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import untold
from conftest import DATA, REPO

EXAMPLES = REPO / "examples" / "python"


def run(script, *args, ok=True):
    r = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)], capture_output=True, text=True)
    assert (r.returncode == 0) == ok, r.stdout + r.stderr
    return r.stdout


def test_inspect_file():
    out = run("inspect_file.py", DATA / "urho3d" / "Models" / "TeaPot.mdl")
    assert "urho3d-model, valid" in out and "mesh 0" in out


def test_dump_meshes(tmp_path):
    run("dump_meshes.py", DATA / "minimal_v4.untold", tmp_path)
    [dumped] = list(tmp_path.glob("*.npz"))
    arrays = np.load(dumped)
    a = untold.open(DATA / "minimal_v4.untold")
    assert np.array_equal(arrays["positions"], a.decode_vertices(0)["position"])
    assert np.array_equal(arrays["indices"], a.indices(0))


def test_validate_folder(tmp_path):
    for src in (DATA / "minimal_v4.untold", DATA / "urho3d" / "Models" / "Box.mdl"):
        (tmp_path / src.name).write_bytes(src.read_bytes())
    assert "2 of 2 files valid" in run("validate_folder.py", tmp_path, "--deep")
    (tmp_path / "cut.mdl").write_bytes((DATA / "urho3d" / "Models" / "Box.mdl").read_bytes()[:30])
    out = run("validate_folder.py", tmp_path, ok=False)
    assert "cut.mdl: U3D-" in out and "2 of 3 files valid" in out


def test_convert_mdl_folder(tmp_path):
    out = run("convert_mdl_folder.py", DATA / "urho3d" / "Models", tmp_path)
    converted = sorted(tmp_path.rglob("*.untold"))
    assert len(converted) >= 10 and "Box.mdl ->" in out
    for path in converted:
        assert untold.validate(path, deep=True)["valid"], path
