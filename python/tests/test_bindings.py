"""untold's Python bindings (docs/python.md): open, zero-copy arrays, decode,
errors, validate/info for every format, convert, cook, the builder and the
streaming planner."""
from __future__ import annotations

import gc
import json
import math
import os

import numpy as np
import pytest

import untold
from conftest import DATA

MDL = DATA / "urho3d" / "Models" / "TeaPot.mdl"


def quad_scene(positions=None):
    p = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=np.float32) if positions is None else positions
    return {
        "name": "quad",
        "materials": [{"name": "red", "base_color": (1, 0, 0, 1)}],
        "meshes": [{"name": "quad", "positions": p,
                    "normals": np.tile(np.array([0, 0, 1], np.float32), (4, 1)),
                    "uv0": np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32),
                    "indices": np.array([0, 1, 2, 0, 2, 3], np.uint32), "material": 0}],
    }


@pytest.fixture
def quad_file(tmp_path):
    path = tmp_path / "quad.untold"
    untold.write(path, quad_scene())
    return path


def test_open_meshes_and_zero_copy_views(quad_file):
    a = untold.open(quad_file)
    assert a.format == "untold" and a.file_type == "tile" and a.vertex_layout == "pbrStaticV1"
    [mesh] = a.meshes
    assert (mesh.name, mesh.vertex_count, mesh.index_count, mesh.index_type) == ("quad", 4, 6, "uint16")
    v = a.vertices(mesh)
    assert v.dtype.itemsize == 32 and v.strides == (32,) and v.shape == (4,)
    assert v.dtype.names == ("position", "normal", "tangent", "uv0", "uv1", "color0")
    assert not v.flags.writeable and not v.flags.owndata
    with pytest.raises(ValueError):
        v["position"][0, 0] = 5
    i = a.indices(mesh)
    assert i.dtype == np.uint16 and not i.flags.writeable
    # The indices may be reordered by the writer; the triangles are the quad's two.
    tris = {tuple(sorted(t)) for t in i.reshape(-1, 3).tolist()}
    assert len(tris) == 2
    positions = v["position"].copy()
    # The views keep the mapped file alive after the Asset is gone.
    del a
    gc.collect()
    assert np.array_equal(v["position"], positions)
    assert set(map(tuple, positions.tolist())) == {(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)}


def test_decode_and_packed_normals(quad_file):
    a = untold.open(quad_file)
    v, d = a.vertices(0), a.decode_vertices(0)
    assert d.dtype.itemsize == 72 and d["position"].dtype == np.float32
    assert np.array_equal(d["position"], v["position"])  # PBR_STATIC_V1 positions are bit copies
    n = untold.unpack_1010102(v["normal"])
    assert n.shape == (4, 4) and np.allclose(n[:, :3], [0, 0, 1], atol=1 / 511) and np.array_equal(n[:, :3], d["normal"])
    # The 10:10:10:2 word: x in bits 0..9, y 10..19, z 20..29 (+511 -> 1.0).
    assert np.array_equal(untold.unpack_1010102(np.array([511 << 20], np.uint32))[0], [0, 0, 1, 1])
    assert np.array_equal(untold.unpack_1010102(np.array([0x201 | 0x80000000], np.uint32))[0], [-1, 0, 0, -1])
    assert np.allclose(d["uv0"], v["uv0"].astype(np.float32))


def test_quantized_layout(tmp_path):
    path = tmp_path / "q.untold"
    untold.write(path, quad_scene(), vertex_layout="quantized")
    a = untold.open(path, deep=True)
    assert a.vertex_layout == "pbrQuantV1"
    v = a.vertices(0)
    assert v.dtype.itemsize == 24 and v["position"].dtype == np.uint16 and v["normal"].dtype == np.int8
    d = a.decode_vertices(0)
    assert np.allclose(d["position"], a.vertices(0)["position"] / 65535.0, atol=1e-6)  # bounds are the unit square
    assert np.allclose(d["normal"], [0, 0, 1], atol=1 / 127)


def test_errors_carry_rule_id_and_context(tmp_path, quad_file):
    data = bytearray(quad_file.read_bytes())
    data[-1] ^= 0xFF  # the index data's last byte: its block digest no longer matches
    bad = tmp_path / "bad.untold"
    bad.write_bytes(bytes(data))
    with pytest.raises(untold.UntoldError) as e:
        untold.open(bad)
    # Every byte is verified at open, by its block digest (the contentHash
    # commits to them): block 0 of row 7, the index data.
    assert e.value.rule_id == "R-BLOCK-HASH" and str(e.value).startswith("R-BLOCK-HASH")
    assert e.value.context == {"chunk": 7, "chunk_type": 7, "field": "block", "value": 0, "name": "block_hash"}
    # validate recomputes spec 5's contentHash over the file too, first.
    r = untold.validate(bad)
    assert r["valid"] is False and r["error"]["rule"] == "R-HASH"
    assert r["error"]["context"] == {"field": "contentHash"}
    with pytest.raises(untold.UntoldError):
        untold.check(bad)
    magic = tmp_path / "magic.untold"
    magic.write_bytes(b"UNTOLD\0\0" + bytes(10))
    with pytest.raises(untold.UntoldError) as e:
        untold.open(magic)
    assert e.value.rule_id == "R-TRUNC-HEADER" and e.value.context["name"] == "truncated_header"
    nan = quad_scene(np.array([[0, 0, 0], [1, 0, 0], [math.nan, 1, 0], [0, 1, 0]], np.float32))
    with pytest.raises(untold.UntoldError) as e:
        untold.build(nan)
    assert e.value.rule_id == "E-INVALID-ARGUMENT" and e.value.context["field"] == "positions" and e.value.context["record"] == 0


def test_foreign_formats(tmp_path):
    a = untold.open(MDL)
    assert a.format == "urho3d-model" and len(a.meshes) >= 1
    assert a.indices(0).size % 3 == 0 and a.decode_vertices(0)["position"].shape[1] == 3
    assert untold.validate(MDL, deep=True)["valid"] is True
    assert untold.info(MDL)["format"] == "urho3d-model"
    hmesh = DATA / "assetc" / "quad.hmesh"
    assert untold.validate(hmesh)["valid"] is True
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x7fELF" + bytes(60))
    assert untold.validate(junk)["error"]["rule"] == "E-FORMAT-UNKNOWN"
    with pytest.raises(untold.UntoldError) as e:
        untold.open(junk)
    assert e.value.rule_id == "E-FORMAT-UNKNOWN"
    truncated = tmp_path / "cut.mdl"
    truncated.write_bytes(MDL.read_bytes()[:40])
    with pytest.raises(untold.UntoldError) as e:
        untold.open(truncated)
    assert e.value.rule_id.startswith("U3D-")


def test_convert_and_cook_reports(tmp_path, city):
    r = untold.convert(MDL, tmp_path / "teapot.untold")
    assert str(tmp_path / "teapot.untold") in r.written and isinstance(r.entries, list)
    assert untold.open(tmp_path / "teapot.untold").meshes
    g = untold.convert(tmp_path / "teapot.untold", tmp_path / "teapot.glb")
    assert (tmp_path / "teapot.glb").read_bytes()[:4] == b"glTF" and all(isinstance(e, untold.ReportEntry) for e in g.entries)
    m = untold.convert(tmp_path / "teapot.untold", tmp_path / "back.mdl")
    assert untold.validate(tmp_path / "back.mdl")["valid"] and m.written
    c = untold.cook(city, tmp_path / "city.untold", compress="zstd", lods=1)
    assert c.summary["triangles"] > 0 and c.summary["meshes"] == 10
    assert any(p.endswith("city.lod1.untold") for p in c.written)
    with pytest.raises(untold.UntoldError):
        untold.cook(tmp_path / "city.untold", tmp_path / "again.untold")
    # mesh_order reorders only: the same triangle and vertex counts.
    s = untold.cook(city, tmp_path / "city_size.untold", compress="meshopt+zstd", mesh_order="size")
    assert s.summary["triangles"] == c.summary["triangles"] and s.summary["vertices"] == c.summary["vertices"]
    with pytest.raises(untold.UntoldError, match="mesh order 'fastest'"):
        untold.cook(city, tmp_path / "bad.untold", mesh_order="fastest")


def test_tiles_and_streaming_planner(tmp_path, city):
    r = untold.cook_tiles(city, tmp_path / "out", tiles="grid:24")
    manifest = tmp_path / "out" / "manifest.json"
    assert r.summary["manifest"] == str(manifest) and len(r.summary["tiles"]) == 16
    planner = untold.StreamPlanner(str(manifest))
    assert len(planner.tile_ids) == 16
    actions = planner.tick((0.0, 2.0, 0.0), 0.0)
    fetched = [x for x in actions if x["kind"] == "fetch_prefix"]
    assert fetched and all(x["path"].startswith("tiles/") for x in fetched)
    done = [(x["request"], "completed") for x in actions if x["request"]]
    planner.tick((0.0, 2.0, 0.0), 0.1, results=done)
    assert planner.resident_bytes >= 0


def test_keyframes_are_zero_copy_views(tmp_path):
    skin = "/usr/share/assimp/models/glTF2/simple_skin/simple_skin.gltf"  # Debian assimp-testmodels
    if not os.path.exists(skin):
        pytest.skip("assimp-testmodels is not installed")
    untold.cook(skin, tmp_path / "skin.untold")
    a = untold.open(tmp_path / "skin.untold", deep=True)
    assert a.clip_count == 1
    clip = a.clip(0)
    assert clip["duration"] == 5.5 and [c["joint_path"] for c in clip["channels"]] == ["joint0/joint1"]
    keys = clip["channels"][0]["rotations"]
    del a, clip
    gc.collect()
    assert keys.dtype.names == ("time", "rotation") and keys.dtype.itemsize == 20 and not keys.flags.writeable
    assert keys.size == 12 and keys["time"][0] == 0 and keys["time"][-1] == 5.5
    assert np.allclose(np.linalg.norm(keys["rotation"], axis=1), 1, atol=1e-3)
