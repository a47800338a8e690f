"""README.md's ```python blocks run as they are (from the repository's root),
as its C++ snippets build and run (examples/readme.cpp)."""
from __future__ import annotations

import contextlib
import io
import os
import re

from conftest import REPO


def test_readme_python_snippets_run():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README.md has no ```python block"
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        for block in blocks:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})
            assert out.getvalue(), "a README snippet printed nothing"
    finally:
        os.chdir(cwd)
