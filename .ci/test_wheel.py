"""Test ctxfold as users get it: a built wheel, installed in a fresh venv, with no Rust toolchain
on PATH and the source tree not importable.

    python .ci/test_wheel.py            # the README's test command (needs maturin)

builds the wheel (`maturin build --release`, into dist/) and runs the test suite against it on
this interpreter. Settings, from the environment, so that CI runs the README's command as is:

    CTXFOLD_TEST_PYTHONS   interpreters to test on, separated by spaces (default: this one)
    CTXFOLD_WHEEL          test this wheel, or the wheel of a folder that fits each interpreter,
                           instead of building one (the workflow's test jobs)
    CTXFOLD_MATURIN_ARGS   more `maturin build` arguments (CI: --zig --compatibility manylinux2014)
    CTXFOLD_FROM_SDIST=1   build the sdist, then the wheel from the unpacked sdist, and run the
                           sdist's own tests: proves the sdist builds and carries what they need
    PYTEST_ADDOPTS         more pytest arguments, as pytest reads them

Tests marked `frameworks` (a framework's own conformance suite, differential runs against a
framework, a real browser) run on the last interpreter given only (the newest, as CI lists them): they behave the same
on each, and some frameworks need a recent CPython.

dist/ ends up holding the wheel (and the sdist) that were tested, for the checks that follow.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
RUST_TOOLS = ("cargo", "rustc", "cargo.exe", "rustc.exe")


def run(cmd: list[str], **kw) -> None:
    print("+", shlex.join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def build(scratch: Path) -> tuple[Path, Path]:
    """Build the wheel into dist/; returns it and the folder holding the tests to run."""
    if DIST.exists():
        shutil.rmtree(DIST)
    extra = shlex.split(os.environ.get("CTXFOLD_MATURIN_ARGS", ""))
    maturin = [sys.executable, "-m", "maturin"]
    source = ROOT
    env = dict(os.environ)
    if os.environ.get("CTXFOLD_FROM_SDIST") == "1":
        run([*maturin, "sdist", "--out", str(DIST)], cwd=ROOT)
        (sdist,) = DIST.glob("*.tar.gz")
        with tarfile.open(sdist) as t:
            t.extractall(scratch, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        (source,) = scratch.glob("ctxfold-*")
        # The repo's target dir: dependencies already built there are reused.
        env.setdefault("CARGO_TARGET_DIR", str(ROOT / "target"))
    run([*maturin, "build", "--release", "--out", str(DIST), *extra], cwd=source, env=env)
    (wheel,) = DIST.glob("*.whl")
    return wheel, source


def without_rust() -> dict[str, str]:
    """This environment with every PATH entry that holds cargo or rustc taken out."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CARGO", "RUSTC", "RUSTUP_TOOLCHAIN")}
    keep = [d for d in env.get("PATH", "").split(os.pathsep)
            if d and not any((Path(d) / t).exists() for t in RUST_TOOLS)]
    env["PATH"] = os.pathsep.join(keep)
    assert shutil.which("cargo", path=env["PATH"]) is None and shutil.which("rustc", path=env["PATH"]) is None
    return env


def suite(python: str, wheel: Path, tests: Path, scratch: Path, frameworks: bool = True) -> None:
    """The one place the suite is run: a fresh venv of ``python`` holding the wheel and its test
    extra, pytest started from an empty folder, nothing of Rust on PATH."""
    venv = Path(tempfile.mkdtemp(prefix="venv-", dir=scratch))
    run([python, "-m", "venv", str(venv)])
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    vpy = str(bindir / ("python.exe" if os.name == "nt" else "python"))
    env = without_rust()
    env["PATH"] = os.pathsep.join([str(bindir), env["PATH"]])
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1", PYTHONNOUSERSITE="1")
    if wheel.is_dir():
        # A folder of wheels (a platform's abi3 and free-threaded ones): pip picks the one this
        # interpreter takes, from the folder only, then adds the test extra.
        pick = ["--no-index", "--only-binary=:all:", "--find-links", str(wheel)]
        run([vpy, "-m", "pip", "install", "-q", *pick, "ctxfold"], env=env)
        run([vpy, "-m", "pip", "install", "-q", "--find-links", str(wheel), "ctxfold[test]"], env=env)
    else:
        run([vpy, "-m", "pip", "install", "-q", f"{wheel}[test]"], env=env)
    cwd = Path(tempfile.mkdtemp(prefix="cwd-", dir=scratch))
    # The package must come from the venv, never from the source tree.
    where = subprocess.run([vpy, "-c", "import ctxfold, ctxfold._core as c; print(c.__file__)"],
                           cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()
    assert Path(where).resolve().is_relative_to(venv.resolve()), f"ctxfold imported from {where}"
    print(f"ctxfold from {where}", flush=True)
    # Tests marked `frameworks` behave the same on every CPython: run on the newest one only
    # (the last given; some frameworks need a recent CPython).
    marks = [] if frameworks else ["-m", "not frameworks"]
    run([vpy, "-m", "pytest", "-q", "-p", "no:cacheprovider", *marks, str(tests)], cwd=cwd, env=env)


def main() -> int:
    pythons = os.environ.get("CTXFOLD_TEST_PYTHONS", "").split() or [sys.executable]
    with tempfile.TemporaryDirectory(prefix="ctxfold-wheel-test-") as d:
        scratch = Path(d)
        given = os.environ.get("CTXFOLD_WHEEL")
        wheel, source = (Path(given).resolve(), ROOT) if given else build(scratch)
        for i, python in enumerate(pythons):
            t = time.perf_counter()
            suite(python, wheel, source / "tests", scratch, frameworks=(i == len(pythons) - 1))
            print(f"suite on {python}: {time.perf_counter() - t:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
