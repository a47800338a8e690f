"""Builds untold's extension module with CMake for pip (pyproject.toml; docs/python.md).

`pip install --no-build-isolation .` runs build_ext below: it configures
build/python-release (Release, UNTOLD_BUILD_PYTHON=ON, no tests or examples)
with this interpreter, builds the target untold_python and puts the module
into the package. UNTOLD_CMAKE_BUILD_DIR=DIR uses an existing build directory
configured with UNTOLD_BUILD_PYTHON=ON instead (the tests do, so that an
install costs no second compile). No network: every dependency is a Debian
package (scripts/install-deps.sh).
"""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("UNTOLD_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = pathlib.Path(build_dir).resolve()
        else:
            build_dir = ROOT / "build" / "python-release"
            configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                         "-DUNTOLD_BUILD_PYTHON=ON", "-DUNTOLD_BUILD_TESTS=OFF", "-DUNTOLD_BUILD_EXAMPLES=OFF",
                         "-DUNTOLD_INSTALL=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
            if shutil.which("ninja"):
                configure += ["-G", "Ninja"]
            subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "untold_python", "-j", jobs], check=True)
        built = list((build_dir / "python" / "package" / "untold").glob("_untold*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _untold module in {build_dir}/python/package/untold, found {built}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(ext_modules=[Extension("untold._untold", sources=[])], cmdclass={"build_ext": CMakeBuild})
