"""Inspect a file of any format the library reads: its format, validity and meshes.

    python3 examples/python/inspect_file.py FILE
"""
import sys

import untold


def main(path: str) -> int:
    result = untold.validate(path, deep=True)
    if not result["valid"]:
        error = result["error"]
        print(f"{path}: invalid ({error['rule']}): {error['describe']}")
        return 1
    print(f"{path}: {result['format']}, valid")
    try:
        asset = untold.open(path)
    except untold.UntoldError as e:  # a package or shader: no meshes to show
        print(f"  not a model: {e}")
        return 0
    print(f"  {asset.file_type} file, format version {asset.format_version}, vertex layout {asset.vertex_layout}")
    for mesh in asset.meshes:
        print(f"  mesh {mesh.index} '{mesh.name}': {mesh.vertex_count} vertices, {mesh.index_count // 3} triangles,"
              f" bounds {mesh.bounds_min} .. {mesh.bounds_max}")
    for entry in asset.report:
        print(f"  {entry.severity} {entry.what} x{entry.count} {entry.where}: {entry.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
