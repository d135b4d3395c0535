"""What goes to PyPI carries what docs/shipping.md promises: a LICENSE in every wheel and sdist, and in the
sdist the tests with what they read (the file-format docs) and the benches.

    python .ci/check_dist.py dist/*
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path

# The viewer's page ships in the wheel: `ctxfold serve` has no other copy of it.
WHEEL_NEEDS = ("ctxfold/viewer/static/index.html", "ctxfold/viewer/static/app.js", "ctxfold/viewer/static/style.css")
SDIST_NEEDS = ("LICENSE", "pyproject.toml", "Cargo.lock", "tests/conftest.py", "tests/_oracle.py",
               "docs/format.schema.json", "benches/conftest.py")


def problems(path: Path) -> list[str]:
    if path.name.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
        if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
            return ["no .dist-info/licenses/LICENSE"]
        return [f"carries {n}" for n in names if n.startswith(("tests/", "benches/"))] + \
            [f"no {n}" for n in WHEEL_NEEDS if n not in names]
    if path.name.endswith(".tar.gz"):
        with tarfile.open(path) as t:
            names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
        out = [f"no {n}" for n in SDIST_NEEDS if n not in names]
        if not any(n.startswith("tests/test_") for n in names):
            out.append("no tests/test_*.py")
        return out
    return []


def main(paths: list[str]) -> int:
    bad = 0
    for p in map(Path, paths):
        found = problems(p)
        print(f"{p.name}: {'; '.join(found) if found else 'ok'}")
        bad += bool(found)
    return 1 if bad or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
