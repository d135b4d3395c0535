"""What an installed wheel must do on its own: hand out the rank files the tests' oracle needs
(so no Rust toolchain is needed to test it), and run the CLI on any console encoding, piped."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest
from ctxfold import Context, Message, _core, encodings

# sha256 of the rank files in tiktoken-rs 0.12.1 (assets/*.tiktoken), the files the extension
# is built from; o200k_harmony and p50k_edit share the files of o200k_base and p50k_base.
_RANK_FILES = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "o200k_harmony": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "p50k_base": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "p50k_edit": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
}


def test_every_encoding_hands_out_its_rank_file_byte_for_byte():
    assert set(_RANK_FILES) == set(encodings())
    for name, sha in _RANK_FILES.items():
        data = _core._rank_file(name)
        assert hashlib.sha256(data).hexdigest() == sha, name


def test_rank_file_of_an_unknown_encoding_is_a_value_error():
    with pytest.raises(ValueError, match="known encodings: cl100k_base"):
        _core._rank_file("gpt2")


def _cli(cwd, *args: str, encoding: str) -> subprocess.CompletedProcess[bytes]:
    """The CLI in a fresh interpreter whose stdout and stderr are pipes in ``encoding``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUTF8", "PYTHONIOENCODING")}
    env["PYTHONIOENCODING"] = encoding
    return subprocess.run([sys.executable, "-m", "ctxfold._cli", *args], cwd=cwd, env=env,
                          capture_output=True, timeout=300)


@pytest.mark.parametrize("encoding", ["cp1252", "ascii", "utf-8"])
def test_demo_prints_on_any_console_encoding(tmp_path, encoding):
    r = _cli(tmp_path, "demo", "--messages", "300", encoding=encoding)
    assert r.returncode == 0, r.stderr.decode(encoding, "replace")
    assert r.stderr == b""
    out = r.stdout.decode(encoding)  # strict: every byte is in the console's encoding
    assert "equal to the original: True" in out
    assert ("    → " in out) == (encoding == "utf-8")
    assert ("    -> " in out) == (encoding != "utf-8")


@pytest.mark.parametrize("encoding", ["cp1252", "ascii"])
def test_stats_and_errors_print_text_the_console_cannot_show(tmp_path, encoding):
    ctx = Context()
    ctx.add_message(Message.user("测试 → ok"))
    path = ctx.save(tmp_path / "會話 → 1")
    r = _cli(tmp_path, "stats", str(path), encoding=encoding)
    assert r.returncode == 0, r.stderr.decode(encoding, "replace")
    assert "1 messages" in r.stdout.decode(encoding)

    r = _cli(tmp_path, "stats", str(tmp_path / "缺失 → .json"), encoding=encoding)
    assert r.returncode == 1
    err = r.stderr.decode(encoding)
    assert err.startswith("ctxfold: error: ") and "\\u2192" in err and "Traceback" not in err


def test_a_closed_pipe_ends_the_cli_quietly(tmp_path):
    """``ctxfold demo | head -1``: the reader is gone before the CLI writes."""
    p = subprocess.Popen([sys.executable, "-m", "ctxfold._cli", "demo", "--messages", "50"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    with p.stderr:
        err = p.stderr.read()
    assert p.wait(timeout=300) == 1
    assert err == b"", err
