"""How every command writes its OUT (``convert``, ``convert --to/--from``, ``store --export``), by
the rule ``Context.save`` follows: a regular or new file is replaced atomically, keeping its mode
(a new one gets the umask's); a symlink, a FIFO or a device is written through, never replaced;
``-`` is standard output; a missing folder is named; ``--pretty`` indents."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from ctxfold import Context, Message, Part
from ctxfold._cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, symlinks and /dev are POSIX")


@pytest.fixture
def saved(tmp_path) -> str:
    ctx = Context(messages=[Message.system("be brief"), Message.user([Part.text("hi")]),
                            Message.assistant("calling", tool_calls=[{"id": "c1", "name": "f", "arguments": "{}"}]),
                            Message.tool("c1", "ok")])
    return ctx.save(tmp_path / "saved")


@pytest.fixture
def request_file(tmp_path) -> str:
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    return str(path)


def commands(saved: str, request_file: str, store_url: str, out: str) -> list[list[str]]:
    """Every command that writes OUT."""
    ctx_id = Context.load(saved).id
    return [["convert", saved, out],
            ["convert", "--to", "anthropic", saved, out],
            ["convert", "--from", "openai_chat", request_file, out],
            ["store", store_url, "--export", ctx_id, out]]


@pytest.fixture
def store_url(tmp_path, saved) -> str:
    url = f"sqlite://{tmp_path}/s.db"
    assert main(["store", url, "--import", saved]) == 0
    return url


def litter(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_a_new_file_has_the_mode_save_gives(tmp_path, saved, request_file, store_url, mask, capsys):
    old = os.umask(mask)
    try:
        saved_mode = stat.S_IMODE(os.stat(Context.load(saved).save(tmp_path / "again")).st_mode)
        for i, argv in enumerate(commands(saved, request_file, store_url, str(tmp_path / f"new{mask}-{{}}.json"))):
            argv[-1] = argv[-1].format(i)
            assert main(argv) == 0, capsys.readouterr().err
            assert stat.S_IMODE(os.stat(argv[-1]).st_mode) == saved_mode == 0o666 & ~mask, argv
    finally:
        os.umask(old)
    assert litter(tmp_path) == []


def test_a_replaced_file_keeps_its_mode(tmp_path, saved, request_file, store_url, capsys):
    out = tmp_path / "out.json"
    for argv in commands(saved, request_file, store_url, str(out)):
        out.write_text("old")
        out.chmod(0o640)
        assert main(argv) == 0, capsys.readouterr().err
        assert stat.S_IMODE(out.stat().st_mode) == 0o640 and json.loads(out.read_text()), argv
    assert litter(tmp_path) == []


def test_a_fifo_is_written_through(tmp_path, saved, request_file, store_url, capsys):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    for argv in commands(saved, request_file, store_url, str(fifo)):
        got: list[str] = []
        reader = threading.Thread(target=lambda into=got: into.append(fifo.read_text()))
        reader.start()
        assert main(argv) == 0, capsys.readouterr().err
        reader.join(30)
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode), argv
        assert json.loads(got[0]), argv
    assert litter(tmp_path) == []


def test_a_symlink_stays_and_its_file_changes(tmp_path, saved, request_file, store_url, capsys):
    target, link = tmp_path / "target.json", tmp_path / "link.json"
    link.symlink_to(target)
    for argv in commands(saved, request_file, store_url, str(link)):
        target.write_text("old")
        assert main(argv) == 0, capsys.readouterr().err
        assert link.is_symlink() and json.loads(target.read_text()), argv


def device(tmp_path: Path, name: str) -> str:
    """A character device to write to. As root, a private node of the same device in
    ``tmp_path``, so that a writer that wrongly replaced its OUT would replace that node and
    not the machine's ``/dev/null``; otherwise ``/dev``'s own, which only root could replace."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        node = tmp_path / name
        os.mknod(node, 0o666 | stat.S_IFCHR, os.stat(f"/dev/{name}").st_rdev)
        return str(node)
    return f"/dev/{name}"


def test_devices_are_written_through_and_their_errors_reported(tmp_path, saved, request_file, store_url, capsys):
    null = device(tmp_path, "null")
    for argv in commands(saved, request_file, store_url, null):
        assert main(argv) == 0, capsys.readouterr().err
        assert stat.S_ISCHR(os.lstat(null).st_mode), argv
    if os.path.exists("/dev/full"):
        full = device(tmp_path, "full")
        for argv in commands(saved, request_file, store_url, full):
            assert main(argv) == 1
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "ctxfold: error:" in err and "No space left on device" in err, err
            assert stat.S_ISCHR(os.lstat(full).st_mode), argv


def test_a_missing_folder_is_named(tmp_path, saved, request_file, store_url, capsys):
    for argv in commands(saved, request_file, store_url, str(tmp_path / "nowhere" / "out.json")):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"no such folder: {tmp_path / 'nowhere'}" in err and ".tmp" not in err, err
    assert not (tmp_path / "nowhere").exists()


def test_dash_is_stdout_and_the_report_goes_to_stderr(saved, request_file, store_url, capsys):
    for argv in commands(saved, request_file, store_url, "-"):
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert json.loads(out) and out.count("\n") == 1, argv  # compact: one line
        assert err.startswith("wrote stdout: "), argv
        assert main(["convert", "--pretty", *argv[1:]] if argv[0] == "convert" else [*argv, "--pretty"]) == 0
        pretty = capsys.readouterr().out
        assert pretty.startswith('{\n  "'), argv
        if "--from" not in argv:  # (--from makes a new context each time)
            assert json.loads(pretty) == json.loads(out), argv


@pytest.mark.skipif(not os.path.exists("/proc/self/fd/1"), reason="needs /proc")
def test_a_link_to_stdout_in_a_pipe_gets_the_json_only(tmp_path, saved):
    # /dev/stdout is such a link; a private one, so that a writer that wrongly replaced the link
    # would replace this one and not the machine's.
    out = tmp_path / "stdout"
    out.symlink_to("/proc/self/fd/1")
    run = subprocess.run([sys.executable, "-m", "ctxfold._cli", "convert", "--to", "openai_chat", saved, str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert out.is_symlink()
    assert json.loads(run.stdout)["messages"][0] == {"role": "system", "content": "be brief"}
    assert run.stderr.startswith(f"wrote {out}: an openai_chat request")
