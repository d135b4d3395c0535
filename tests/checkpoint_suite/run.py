"""Run the ``langgraph-checkpoint`` library's own tests of ``InMemorySaver`` with ctxfold's
ContextSaver in its place.

    python tests/checkpoint_suite/run.py [PYTEST ARGS...]

The tests come from the library's source distribution for the installed version (fetched
with ``pip download``). In ``tests/test_memory.py`` every test that uses a saver only through
the ``BaseCheckpointSaver`` API gets ``ContextSaver`` (in memory) where it made an
``InMemorySaver``: put, put_writes, get_tuple, list with its filters, deletes, serde
allowlists and their ``with_allowlist`` copies. A test that reaches into ``InMemorySaver``'s
own dicts (``storage``, ``blobs``, ``writes``) or its class keeps ``InMemorySaver``: it tests
that saver's internals. The file keeps its name and package (its allowlists name the module
``tests.test_memory``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _sdist import unpacked  # noqa: E402

# What marks a test of InMemorySaver's internals.
_INTERNALS = (".storage", ".blobs", ".writes", "_load_blobs", "InMemorySaver.__mro__", "(InMemorySaver)")
# (at the end: the tests read the name when they run, and nothing is put before a __future__ import)
_IMPORT = "\nfrom ctxfold.adapters.langgraph import ContextSaver  # noqa: E402\n"


def swapped(source: str) -> tuple[str, int]:
    """``source`` with ``ContextSaver`` made wherever a top-level test or test class that does
    not touch InMemorySaver's internals made an ``InMemorySaver``; how many were swapped."""
    lines = source.splitlines(keepends=True)
    count = 0
    for node in ast.parse(source).body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        start, end = node.lineno - 1, node.end_lineno or node.lineno
        text = "".join(lines[start:end])
        if any(mark in text for mark in _INTERNALS):
            continue
        for i in range(start, end):
            n = lines[i].count("InMemorySaver")
            if n:
                lines[i] = lines[i].replace("InMemorySaver", "ContextSaver")
                count += n
    return "".join(lines) + _IMPORT, count


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = unpacked("langgraph-checkpoint", tmp)
        test = root / "tests" / "test_memory.py"
        text, count = swapped(test.read_text(encoding="utf-8"))
        if count < 5:  # the file changed shape: say so rather than test InMemorySaver alone
            print(f"checkpoint suite: only {count} InMemorySaver swapped in {test.name}", file=sys.stderr)
            return 1
        test.write_text(text, encoding="utf-8")
        print(f"checkpoint suite: ContextSaver in place of InMemorySaver at {count} places of {test.name}")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto",
               "tests/test_memory.py"]
        return subprocess.run([*cmd, *argv], cwd=root).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
