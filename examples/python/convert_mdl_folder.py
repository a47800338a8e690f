"""Convert every Urho3D model (.mdl) under a folder to .untold, keeping the
folder structure, and print what each conversion dropped or changed.

    python3 examples/python/convert_mdl_folder.py IN_FOLDER OUT_FOLDER
"""
import os
import sys

import untold


def main(source: str, target: str) -> int:
    failed = 0
    for folder, _, files in os.walk(source):
        for name in sorted(files):
            if not name.lower().endswith(".mdl"):
                continue
            path = os.path.join(folder, name)
            out = os.path.join(target, os.path.relpath(path, source))[:-4] + ".untold"
            os.makedirs(os.path.dirname(out), exist_ok=True)
            try:
                report = untold.convert(path, out)
            except untold.UntoldError as e:
                print(f"{path}: {e.rule_id or 'failed'}: {e}")
                failed += 1
                continue
            losses = ", ".join(f"{e.severity} {e.what}" for e in report.dropped + report.changed)
            print(f"{path} -> {out}" + (f" ({losses})" if losses else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
