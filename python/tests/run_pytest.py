"""ctest's entry to a Python test or example: checks what it needs first and
exits 77 (ctest's SKIP_RETURN_CODE) with "skipped: <why>" when something is
missing, so a missing dependency is never a pass.

    run_pytest.py --needs numpy,distributed -- -m pytest -q python/tests/test_x.py
    run_pytest.py --needs numpy -- examples/python/inspect_file.py FILE
"""
from __future__ import annotations

import importlib
import os
import runpy
import sys


def main(argv):
    needs = []
    if argv and argv[0] == "--needs":
        needs = [n for n in argv[1].split(",") if n]
        argv = argv[2:]
    if argv and argv[0] == "--":
        argv = argv[1:]
    if os.environ.get("UNTOLD_PYTHON_BUILT") != "1":
        print("skipped: the extension module is not built (configure with -DUNTOLD_BUILD_PYTHON=ON)")
        return 77
    for name in needs:
        try:
            importlib.import_module(name)
        except ImportError as e:
            print(f"skipped: cannot import {name} ({e})")
            return 77
    importlib.import_module("untold")  # built: a module that does not import is a failure, not a skip
    if argv[:2] == ["-m", "pytest"]:
        import pytest
        return pytest.main(argv[2:])
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
