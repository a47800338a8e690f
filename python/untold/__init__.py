"""untold: read, validate, convert and cook 3D assets (.untold, Urho3D, Pragma UDM, assetc).

The C++ library and the `untold` tool's pipeline, for Python (docs/python.md)::

    import untold
    a = untold.open("tile.untold")          # or a foreign model: Jack.mdl, a .pmdl_b ...
    for mesh in a.meshes:
        v = a.vertices(mesh)                # zero-copy, read-only numpy view of the stored vertices
        i = a.indices(mesh)                 # uint16 or uint32
        f = a.decode_vertices(mesh)         # float32 positions, normals, tangents, uvs, colours

Errors are :class:`UntoldError` with the library's rule id (``e.rule_id``,
e.g. ``"R-HASH"``), its message and context (chunk, record, field, value,
limit ...).
"""
from __future__ import annotations

import json as _json
import os as _os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

PathLike = Union[str, "_os.PathLike[str]"]


class UntoldError(Exception):
    """A file broke one of the library's rules, or a tool step failed.

    ``rule_id`` is the rule's id (``"R-FINITE"``, ``"U3D-MAGIC"`` ...; ``""``
    when the failure is not a rule, e.g. a missing file named by the tool),
    ``message`` the whole sentence and ``context`` a dict of what the library
    knows: ``chunk``, ``record``, ``field``, ``value``, ``limit``, ``offset``,
    ``subject``, ``name``.
    """

    def __init__(self, message: str, rule_id: str = "", context: Optional[Dict[str, Any]] = None):
        super().__init__(message)
        self.message = message
        self.rule_id = rule_id
        self.context = dict(context or {})

    def __str__(self) -> str:  # the message already starts with the rule id when there is one
        return self.message

    def __reduce__(self):  # keeps rule_id and context across processes (Dask workers)
        return (type(self), (self.message, self.rule_id, self.context))


from . import _untold  # noqa: E402  (the error class must exist first)

_untold._set_error_class(UntoldError)

unpack_1010102 = _untold.unpack_1010102
StreamPlanner = _untold.StreamPlanner


@dataclass(frozen=True)
class ReportEntry:
    """One thing a conversion dropped, changed or noted (convert::report_entry)."""

    severity: str  # "dropped", "changed" or "info"
    what: str
    where: str
    reason: str
    count: int


@dataclass
class Report:
    """What a convert or cook wrote and every loss it reported."""

    written: List[str] = field(default_factory=list)
    entries: List[ReportEntry] = field(default_factory=list)
    summary: Dict[str, Any] = field(default_factory=dict)

    @property
    def dropped(self) -> List[ReportEntry]:
        return [e for e in self.entries if e.severity == "dropped"]

    @property
    def changed(self) -> List[ReportEntry]:
        return [e for e in self.entries if e.severity == "changed"]


def _entries(items: Sequence[Dict[str, Any]]) -> List[ReportEntry]:
    return [ReportEntry(e["severity"] if isinstance(e["severity"], str) else ("dropped", "changed", "info")[e["severity"]],
                        e["what"], e["where"], e["reason"], e["count"]) for e in items]


def _report(text: str) -> Report:
    j = _json.loads(text)
    entries = _entries(j.pop("report", []))
    return Report(written=j.pop("written", []), entries=entries, summary=j)


@dataclass(frozen=True)
class Mesh:
    """A mesh record: index, name, counts, index type, material and local bounds."""

    index: int
    name: str
    entity_id: int
    material: Optional[int]
    vertex_count: int
    index_count: int
    index_type: str
    vertex_stride: int
    bounds_min: tuple
    bounds_max: tuple


class Asset:
    """An opened, validated file. Arrays it returns view its bytes and keep it alive."""

    def __init__(self, native: "_untold.Asset", report: Optional[List[ReportEntry]] = None):
        self._native = native
        #: for a foreign model: what its conversion to .untold dropped or changed
        self.report: List[ReportEntry] = report or []

    @property
    def format(self) -> str:
        """"untold", or the foreign format's name ("urho3d-model" ...)."""
        return self._native.format

    @property
    def file_type(self) -> str:
        return self._native.file_type

    @property
    def format_version(self) -> int:
        return self._native.format_version

    @property
    def vertex_layout(self) -> str:
        """"pbrStaticV1" (32 bytes) or "pbrQuantV1" (24 bytes); docs/vertex.md."""
        return self._native.vertex_layout

    @property
    def meshes(self) -> List[Mesh]:
        return [Mesh(**self._native.mesh(i)) for i in range(self._native.mesh_count)]

    @property
    def material_names(self) -> List[str]:
        return self._native.material_names

    @staticmethod
    def _index(mesh: Union[int, Mesh]) -> int:
        return mesh.index if isinstance(mesh, Mesh) else int(mesh)

    def vertices(self, mesh: Union[int, Mesh]):
        """The stored vertices as a read-only structured array (no copy).

        PBR_STATIC_V1: position (3 x f4), normal and tangent (u4, packed
        10:10:10:2: see :func:`unpack_1010102`), uv0, uv1 (2 x f2), color0 (4 x u1).
        PBR_QUANT_V1: position (3 x u2 in the mesh bounds), handedness (u2),
        normal, tangent (2 x i1 octahedral), uv0, uv1, color0.
        """
        return self._native.vertices(self._index(mesh))

    def indices(self, mesh: Union[int, Mesh]):
        """The mesh's indices, a read-only uint16 or uint32 array (no copy)."""
        return self._native.indices(self._index(mesh))

    def decode_vertices(self, mesh: Union[int, Mesh]):
        """The vertices decoded to float32 (a new array): position (3), normal (3),
        tangent (4, w = handedness), uv0 (2), uv1 (2), color0 (4). Either layout."""
        return self._native.decode_vertices(self._index(mesh))

    @property
    def clip_count(self) -> int:
        return self._native.clip_count

    def clip(self, index: int) -> Dict[str, Any]:
        """Animation clip ``index``: name, duration and its channels, each with
        ``translations`` (time, translation xyz) and ``rotations`` (time,
        rotation xyzw) as read-only arrays over the file (no copy)."""
        return self._native.clip(index)

    def __repr__(self) -> str:
        return f"<untold.Asset {self.format} {self.file_type} v{self.format_version}, {self._native.mesh_count} meshes>"


def open(path: PathLike, deep: bool = False) -> Asset:  # noqa: A001 (the library's name)
    """Opens and validates a file of any model format the library reads.

    A .untold file is mapped and viewed in place (``deep``: also the value
    checks R-INDEX-VALUE, R-FINITE, R-BOUNDS). A foreign model (Urho3D .mdl,
    Pragma .pmdl_b, assetc .hmesh ...) goes through its importer into a .untold
    in memory, with the deep checks; ``Asset.report`` lists what that dropped.
    Raises :class:`UntoldError`.
    """
    p = _os.fspath(path)
    if _untold.is_untold(p):
        return Asset(_untold.open_untold(p, deep))
    data, fmt, report = _untold.import_foreign(p)
    return Asset(_untold.open_bytes(data, fmt), _entries(_json.loads(report)))


def validate(path: PathLike, deep: bool = False) -> Dict[str, Any]:
    """Validates a file of any format the library reads (packages and shaders too).

    Returns ``{"file", "format", "valid", "error"?}``; ``error`` has ``rule``,
    ``name``, ``message``, ``context`` and ``describe``. Never raises for an
    invalid file; see :func:`check` for the raising form.
    """
    return _json.loads(_untold.validate(_os.fspath(path), deep))


def check(path: PathLike, deep: bool = False) -> Dict[str, Any]:
    """:func:`validate`, raising :class:`UntoldError` when the file is invalid."""
    result = validate(path, deep)
    if not result["valid"]:
        e = result["error"]
        raise UntoldError(e["describe"], e["rule"], e.get("context", {}))
    return result


def info(path: PathLike) -> Dict[str, Any]:
    """What ``untold info --json`` prints for the file (any format)."""
    return _json.loads(_untold.info(_os.fspath(path)))


def convert(input: PathLike, output: PathLike, target: str = "", animations: Sequence[PathLike] = (),
            strict: bool = False, compress: str = "none") -> Report:
    """Any format the library reads into any it writes (``untold convert``).

    ``target``: "untold", "urho3d", "glb", "gltf", "assetc", "pmdl"; default:
    the output's extension. ``strict``: fail, writing nothing, when anything
    would be dropped. Returns the :class:`Report`; raises :class:`UntoldError`.
    """
    return _report(_untold.convert(_os.fspath(input), _os.fspath(output), target,
                                   [_os.fspath(a) for a in animations], strict, compress))


def cook(input: PathLike, output: PathLike, compress: str = "none", vertex_layout: str = "static",
         lods: int = 0, strict: bool = False, embed_textures: bool = False, mesh_order: str = "cache") -> Report:
    """A model (glTF, OBJ, FBX ... or a foreign format with an importer) into
    a .untold file (``untold cook``). ``compress``: none, lz4, lz4hc[:N],
    zstd[:N], meshopt, meshopt+zstd[:N]; ``vertex_layout``: static or quantized;
    ``mesh_order``: cache, size (fewer bytes, ~8% more vertex shader runs) or
    source (``--mesh-order``)."""
    return _report(_untold.cook(_os.fspath(input), _os.fspath(output), compress, vertex_layout, lods, strict,
                                embed_textures, mesh_order))


def tile_options(tiles: str, lod_ratios: Sequence[float] = (), lod_error: float = 0.01, hlod_ratio: float = 0.1,
                 hlods: bool = True, compress: str = "none", vertex_layout: str = "static") -> "_untold.TileOptions":
    """Options of the tile cook: ``tiles`` is "grid:SIZE" or "quadtree[:MAXTRIS]" (docs/tiles.md)."""
    return _untold.tile_options(tiles, list(lod_ratios), lod_error, hlod_ratio, hlods, compress, vertex_layout)


def cook_tiles(input: PathLike, output: PathLike, tiles: str = "grid:64", **options: Any) -> Report:
    """``untold cook --tiles``: tile files, LODs, HLODs, the shared bucket and
    the manifest in ``output``, in this process. ``options``: see :func:`tile_options`."""
    return _report(_untold.cook_tiles(_os.fspath(input), _os.fspath(output), tile_options(tiles, **options)))


def plan_tiles(input: PathLike, output: PathLike, plan: PathLike, tiles: str = "grid:64",
               **options: Any) -> Dict[str, Any]:
    """Imports and partitions ``input``, writes each tile's piece into ``PLAN.d/pieces/``
    and the distributed tile cook's plan (``cook --tiles --plan``), and returns the plan:
    ``jobs`` lists each job's ``kind`` (tile, lod, hlod, shared, manifest), ``tile``,
    ``level`` (lod), ``after`` (the earlier jobs it waits for; the manifest waits for
    every other job) and ``piece`` (its input, relative to ``PLAN.d``)."""
    return _json.loads(_untold.plan_tiles(_os.fspath(input), _os.fspath(output), _os.fspath(plan),
                                          tile_options(tiles, **options)))


def run_tile_job(plan: PathLike, job: int) -> Report:
    """Runs job ``job`` of a plan (``untold cook-tile PLAN --job N``); raises
    :class:`UntoldError` naming the tile when it fails."""
    return _report(_untold.run_tile_job(_os.fspath(plan), job))


def build(scene: Dict[str, Any], compress: str = "none", vertex_layout: str = "static",
          file_type: str = "tile") -> bytes:
    """A .untold file's bytes from a scene dict (the builder, convert::to_untold)::

        {"name": "...",
         "materials": [{"name", "base_color": (r, g, b, a), "metallic", "roughness", "emissive", "double_sided"}],
         "meshes": [{"name", "positions": (N, 3), "normals", "tangents" (N, 4), "uv0", "uv1", "colors" (N, 4),
                     "indices", "material": index or None}],
         "nodes": [{"name", "parent", "translation", "rotation" (xyzw), "scale", "meshes": [...]}]}

    Without "nodes", each mesh gets a root node. Raises :class:`UntoldError`
    (the model's rule, e.g. R-FINITE) for an inconsistent scene."""
    data, _report_text = _untold.build(scene, compress, vertex_layout, file_type)
    return data


def write(path: PathLike, scene: Dict[str, Any], **options: Any) -> int:
    """:func:`build`, written atomically (temporary file + rename) to ``path``; returns its size."""
    data = build(scene, **options)
    _untold.write_atomic(_os.fspath(path), data)
    return len(data)


__all__ = ["UntoldError", "Asset", "Mesh", "Report", "ReportEntry", "StreamPlanner", "open", "validate", "check",
           "info", "convert", "cook", "cook_tiles", "tile_options", "plan_tiles", "run_tile_job", "build", "write",
           "unpack_1010102"]
