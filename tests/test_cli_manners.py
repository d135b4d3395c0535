"""The ``ctxfold`` command as a user meets it: ``--version``, one-line errors for bad arguments,
deep input and Ctrl-C (even inside a long load), help text in plain words, reading a store that
is not there without creating it, and error messages that read right."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from ctxfold import Context, Message, __version__
from ctxfold._cli import main, parser


def cli(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxfold._cli", *args], capture_output=True, text=True, **kw)


def test_version():
    run = cli("--version")
    assert (run.returncode, run.stdout) == (0, f"ctxfold {__version__}\n")


@pytest.mark.parametrize("value", ["-5", "0", "ten"])
def test_a_bad_demo_size_is_a_one_line_error(value):
    run = cli("demo", "--messages", value)
    assert run.returncode == 2 and run.stdout == ""
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines()[-1].startswith("ctxfold demo: error: argument --messages: "), run.stderr


def test_help_is_plain_words():
    p = parser()
    texts = [p.format_help()]
    texts += [sub.format_help() for action in p._subparsers._group_actions  # type: ignore[union-attr]
              for sub in action.choices.values()]
    for text in texts:
        assert "`" not in text and "SPEC" not in text and "§" not in text, text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="the load is held open with a FIFO")
@pytest.mark.parametrize("argv", [["stats"], ["convert"], ["convert", "--to", "anthropic"]])
def test_ctrl_c_stops_a_long_load_with_one_line(tmp_path, argv):
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    p = subprocess.Popen([sys.executable, "-m", "ctxfold._cli", *argv, str(fifo), *(["-"] if argv[0] == "convert" else [])],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with open(fifo, "w") as w:  # opens once the command is reading it: inside the load
            w.write('{"version": 2, "id": "x", "events": [')
            w.flush()
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 130 and out == "", (out, err)
    assert err.strip() == "ctxfold: interrupted", err


def test_deep_json_is_a_one_line_error_for_every_reader(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text('{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}")
    for argv in (["stats", str(deep)], ["convert", str(deep), "-"],
                 ["convert", "--from", "openai_chat", str(deep), "-"],
                 ["convert", "--from", "anthropic", str(wrapped), "-"],
                 ["convert", "--from", "openai_responses", str(deep), "-"]):
        run = cli(*argv)
        assert run.returncode == 1 and run.stdout == "", argv
        assert run.stderr.count("\n") == 1 and run.stderr.startswith("ctxfold: error: "), (argv, run.stderr)


def test_a_request_without_its_list_reads_right(tmp_path, capsys):
    req = tmp_path / "req.json"
    req.write_text(json.dumps({"model": "m"}))
    assert main(["convert", "--from", "openai_chat", str(req), str(tmp_path / "out.json")]) == 1
    assert f"{req}: an openai_chat request needs 'messages'" in capsys.readouterr().err
    req.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    assert main(["convert", "--from", "anthropic", str(req), str(tmp_path / "out.json")]) == 0
    assert "from an anthropic request" in capsys.readouterr().out


def test_import_errors_name_each_file_once(tmp_path, capsys):
    bad, missing = tmp_path / "bad.json", tmp_path / "missing.json"
    bad.write_text('{"version": 2, "id": "x", "events": [')
    good = Context(messages=[Message.user("x")]).save(tmp_path)
    assert main(["store", str(tmp_path / "s.db"), "--import", str(bad), str(missing), good]) == 1
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 2 and "imported 1 of 3 files" in out
    assert lines[0].count(str(bad)) == 1 and lines[0].startswith(f"ctxfold: error: {bad}: "), lines
    assert lines[1].count(str(missing)) == 1, lines


def test_reading_a_store_that_is_not_there_creates_nothing(tmp_path, capsys):
    for url in (str(tmp_path / "nowhere" / "x.db"), f"sqlite://{tmp_path}/nowhere/x.db", str(tmp_path / "x.db")):
        assert main(["store", url]) == 0
        assert capsys.readouterr().out.startswith("0 contexts: no store at ")
        assert main(["store", url, "some-id"]) == 1
        assert main(["store", url, "--export", "some-id", str(tmp_path / "out.json")]) == 1
        assert capsys.readouterr().err.count("ctxfold: error: no store at ") == 2
    assert sorted(os.listdir(tmp_path)) == []
    # Importing is what makes a store.
    path = Context(messages=[Message.user("x")]).save(tmp_path / "files")
    assert main(["store", str(tmp_path / "x.db"), "--import", path]) == 0
    assert main(["store", str(tmp_path / "x.db")]) == 0
    assert "1 context from 0" in capsys.readouterr().out
