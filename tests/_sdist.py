"""A framework's own tests, from its source distribution: what ``sdk_suite/run.py`` and
``langgraph_suite/run.py`` run against ctxfold's adapters."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path


def unpacked(dist: str, into: str) -> Path:
    """The source distribution of the installed version of ``dist`` (its name on PyPI),
    fetched with ``pip download`` (the package registry being the one place this machine
    reaches) and unpacked in the empty folder ``into``; the path of its top folder."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         f"{dist}=={version(dist)}", "-d", into],
        check=True,
    )
    (sdist,) = Path(into).glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(into, filter="data")
    (root,) = (p for p in Path(into).iterdir() if p.is_dir())
    return root
