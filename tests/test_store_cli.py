"""`ctxfold store`: list, show, import, export, on both backends; and the demo's store turns."""

from __future__ import annotations

import subprocess
import sys

from ctxfold import Context, Message, Store
from ctxfold._cli import main


def saved_files(tmp_path, n: int) -> list[str]:
    paths = []
    for i in range(n):
        ctx = Context(agent_name=f"agent{i}")
        ctx.add_messages([Message.user(f"hello {i} \x00 𝄞"), Message.assistant("hi")][: i + 1])
        paths.append(ctx.save(tmp_path / "files"))
    return paths


def test_import_list_show_export(store_url, tmp_path, capsys):
    files = saved_files(tmp_path, 2)
    assert main(["store", store_url, "--import", *files, "--progress"]) == 0
    out, err = capsys.readouterr()
    assert "imported 2 of 2 files (3 events)" in out
    assert "importing [" in err and "2/2 files" in err  # the progress bar
    ids = [Context.load(f).id for f in files]

    assert main(["store", store_url]) == 0
    out = capsys.readouterr().out
    assert ids[0] in out and ids[1] in out and "agent1" in out and "2 contexts from 0" in out
    assert out.index(ids[1]) < out.index(ids[0])  # the last saved first

    assert main(["store", store_url, ids[1]]) == 0
    out = capsys.readouterr().out
    assert f"context {ids[1]}: 2 messages, 2 events" in out and "stored at seq 2" in out

    dst = tmp_path / "out.json"
    assert main(["store", store_url, "--export", ids[1], str(dst)]) == 0
    back = Context.load(dst)
    assert back.serialize() == Context.load(files[1]).serialize()
    (tmp_path / "folder").mkdir()
    assert main(["store", store_url, "--export", ids[0], str(tmp_path / "folder")]) == 0
    assert len(list((tmp_path / "folder").iterdir())) == 1


def test_errors_are_one_line(sqlite_url, tmp_path, capsys):
    files = saved_files(tmp_path, 1)
    assert main(["store", sqlite_url, "--import", files[0]]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["store", sqlite_url, "--import", files[0], str(bad)]) == 1
    out, err = capsys.readouterr()
    assert "imported 0 of 2 files" in out and "already in the store" in err and "bad.json" in err
    assert "importing [" not in err  # not a terminal, not asked for
    assert main(["store", sqlite_url, "nope"]) == 1
    assert "no context 'nope'" in capsys.readouterr().err
    assert main(["store", "mysql://x"]) == 1
    assert "unknown store URL" in capsys.readouterr().err
    assert main(["store", sqlite_url, "x", "--export", "a", "b"]) == 2


def test_the_demo_saves_its_turns_to_a_store():
    out = subprocess.run([sys.executable, "-m", "ctxfold._cli", "demo", "--messages", "2000"],
                         capture_output=True, text=True, check=True).stdout
    assert "one turn (4 messages): store.save" in out and "ctx.save (rewrites the whole file)" in out
    assert "faster per turn" in out and "equal to the context's: True" in out


def test_store_save_counts_in_the_listing(store_url):
    with Store(store_url) as store:
        ctx = Context()
        store.save(ctx)
        ctx.add_message(Message.user("x"))
        store.save(ctx)
        (entry,) = store.list()
        assert (entry.next_seq, entry.message_count) == (1, 1)
