"""Validate every file under a folder (any format the library reads), with a
progress bar; prints each invalid file with its rule id, exits 1 if any.

    python3 examples/python/validate_folder.py FOLDER [--deep]
"""
import os
import sys

from tqdm import tqdm

import untold


def main(folder: str, deep: bool) -> int:
    paths = sorted(os.path.join(d, f) for d, _, files in os.walk(folder) for f in files)
    invalid = []
    for path in tqdm(paths, unit="file", file=sys.stderr):
        result = untold.validate(path, deep=deep)
        if not result["valid"]:
            invalid.append((path, result["error"]["rule"], result["error"]["message"]))
    for path, rule, message in invalid:
        print(f"{path}: {rule}: {message}")
    print(f"{len(paths) - len(invalid)} of {len(paths)} files valid")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--deep" in sys.argv[2:]))
