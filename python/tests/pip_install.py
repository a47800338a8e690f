"""ctest: `pip install --no-build-isolation --no-index .` from the clone into a
fresh venv that sees Debian's packages (--system-site-packages), then import
the installed package from elsewhere and use it (docs/python.md).

UNTOLD_CMAKE_BUILD_DIR (set by ctest to this build directory) makes setup.py
reuse the module built there instead of configuring a Release build of its
own: the packaging path is the one a user runs, without a second compile.
Exits 77 when venv or pip is missing (Debian: python3-venv, python3-pip).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile


def main(repo: str) -> int:
    try:
        import ensurepip  # noqa: F401  (python3-venv)
        import pip  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e}")
        return 77
    with tempfile.TemporaryDirectory(prefix="untold-pip-") as tmp:
        venv = os.path.join(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["PIP_NO_INPUT"] = "1"
        subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--quiet", repo],
                       check=True, env=env, cwd=tmp)
        probe = ("import untold, numpy, os, sys; "
                 "assert untold.__file__.startswith(sys.prefix), untold.__file__; "
                 "d = untold.build({'meshes': [{'positions': numpy.eye(3, dtype=numpy.float32), 'indices': [0, 1, 2]}]}); "
                 "open('t.untold', 'wb').write(d); a = untold.open('t.untold'); "
                 "assert a.meshes[0].vertex_count == 3; print('installed', untold.__file__)")
        out = subprocess.run([python, "-c", probe], check=True, env=env, cwd=tmp, capture_output=True, text=True)
        print(out.stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
