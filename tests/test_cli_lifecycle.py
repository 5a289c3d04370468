"""delete / restore / purge / rename through the CLI, and what they keep."""
import json
import pathlib
import re
import time

import pytest


def memtool(run_areev, db, expect=0, **cmd):
    proc = run_areev("memtool", json.dumps(cmd), "--db", db)
    assert proc.returncode == expect, (cmd, proc.stdout, proc.stderr)
    return proc.stdout


def versions(run_areev, db, path):
    proc = run_areev("history", path, "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def old_file(run_areev, db):
    memtool(run_areev, db, command="create", path="/memories/old.md", file_text="first\n")
    memtool(run_areev, db, command="create", path="/memories/old.md", file_text="second\n")
    return "/memories/old.md"


def test_delete_then_restore_brings_file_and_history_back(run_areev, db, old_file):
    assert {v["chain_state"] for v in versions(run_areev, db, old_file)} == {"live"}
    memtool(run_areev, db, command="delete", path=old_file)
    assert run_areev("cat", old_file, "--db", db).returncode == 1
    # The tombstoned chain is still visible to history, and says so, in the
    # table and in the JSON.
    hist = run_areev("history", old_file, "--db", db)
    assert hist.returncode == 0 and "deleted" in hist.stdout
    assert {v["chain_state"] for v in versions(run_areev, db, old_file)} == {"deleted"}
    proc = run_areev("restore", old_file, "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"restored {old_file}\n"
    assert run_areev("cat", old_file, "--db", db).stdout == "second\n"
    assert run_areev("cat", old_file, "--version", "1", "--db", db).stdout == "first\n"
    assert [v["version"] for v in versions(run_areev, db, old_file)][:2] == [1, 2]
    assert {v["chain_state"] for v in versions(run_areev, db, old_file)} == {"live"}
    view = memtool(run_areev, db, command="view", path="/memories")
    assert "/memories/old.md" in view


def test_restore_errors(run_areev, db, old_file):
    # Nothing deleted there.
    live = run_areev("restore", old_file, "--db", db)
    assert live.returncode == 1 and "restore" in live.stderr
    assert run_areev("restore", "/memories/never.md", "--db", db).returncode == 1
    # The path was taken again after the delete.
    memtool(run_areev, db, command="delete", path=old_file)
    memtool(run_areev, db, command="create", path=old_file, file_text="new life\n")
    taken = run_areev("restore", old_file, "--db", db)
    assert taken.returncode == 1
    assert run_areev("cat", old_file, "--db", db).stdout == "new life\n"  # nothing lost


def test_purge_erases_bodies_for_good(run_areev, db, tmp_path):
    marker = "PURGE-ME-7f3e9c1d-unique-marker"
    memtool(run_areev, db, command="create", path="/memories/secret.md",
            file_text=f"{marker} v1\n")
    memtool(run_areev, db, command="str_replace", path="/memories/secret.md",
            old_str="v1", new_str="v2")
    memtool(run_areev, db, command="create", path="/memories/keep.md", file_text="keep me\n")
    memtool(run_areev, db, command="delete", path="/memories/secret.md")
    # Before purge the tombstoned bodies are still readable...
    assert run_areev("cat", "/memories/secret.md", "--version", "1", "--db", db).returncode == 0
    raw = b"".join(p.read_bytes() for p in pathlib.Path(tmp_path).iterdir()
                   if p.name.startswith("agent.db"))
    assert marker.encode() in raw  # ...and on disk, so the check below can fail
    proc = run_areev("purge", "/memories/secret.md", "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "purged /memories/secret.md\n"
    gone = run_areev("cat", "/memories/secret.md", "--version", "1", "--db", db)
    assert gone.returncode == 1 and gone.stdout == ""
    refused = run_areev("restore", "/memories/secret.md", "--db", db)
    assert (refused.returncode, refused.stderr) == (
        1, "areev: restore /memories/secret.md: the deleted file at /memories/secret.md was "
           "purged: its versions are erased and cannot be restored\n")
    hist = versions(run_areev, db, "/memories/secret.md")
    assert hist and all(v["purged"] for v in hist)
    assert {v["chain_state"] for v in hist} == {"purged"}
    files = [p for p in pathlib.Path(tmp_path).iterdir() if p.name.startswith("agent.db")]
    assert files
    for f in files:
        assert marker.encode() not in f.read_bytes(), f.name
    # Other files are untouched.
    assert run_areev("cat", "/memories/keep.md", "--db", db).stdout == "keep me\n"


def test_purge_refuses_a_live_file(run_areev, db, old_file):
    proc = run_areev("purge", old_file, "--db", db)
    assert proc.returncode == 1 and proc.stderr
    assert run_areev("cat", old_file, "--version", "1", "--db", db).stdout == "first\n"
    assert run_areev("purge", "/memories/never.md", "--db", db).returncode == 1


def test_purge_again_after_a_new_file_at_the_path_finishes_instead_of_refusing(run_areev, db,
                                                                               old_file):
    # Purged, then a new file at the same path: running purge again (as its
    # busy-reader message asks) only finishes the WAL's truncation.
    memtool(run_areev, db, command="delete", path=old_file)
    assert run_areev("purge", old_file, "--db", db).returncode == 0
    memtool(run_areev, db, command="create", path=old_file, file_text="new life\n")
    again = run_areev("purge", old_file, "--db", db)
    assert (again.returncode, again.stdout, again.stderr) == (0, f"purged {old_file}\n", "")
    assert run_areev("cat", old_file, "--db", db).stdout == "new life\n"
    # A live file with nothing deleted at its path is still refused, clearly.
    memtool(run_areev, db, command="create", path="/memories/only.md", file_text="x\n")
    live = run_areev("purge", "/memories/only.md", "--db", db)
    assert (live.returncode, live.stderr) == (
        1, "areev: purge /memories/only.md: /memories/only.md is live; delete it before "
           "purging\n")


def test_rename_keeps_history_at_new_path(run_areev, db, old_file):
    before = versions(run_areev, db, old_file)
    out = memtool(run_areev, db, command="rename", old_path=old_file, new_path="/memories/new/n.md")
    assert out == "Successfully renamed /memories/old.md to /memories/new/n.md"
    after = versions(run_areev, db, "/memories/new/n.md")
    assert [v["grain_id"] for v in after[:len(before)]] == [v["grain_id"] for v in before]
    assert run_areev("cat", "/memories/new/n.md", "--version", "1", "--db", db).stdout == "first\n"
    assert run_areev("cat", "/memories/new/n.md", "--db", db).stdout == "second\n"
    assert run_areev("cat", old_file, "--db", db).returncode == 1
    # A rename provenance grain, if recorded, points back at the old head.
    extra = after[len(before):]
    for v in extra:
        assert v["derived_from"] in (None, before[-1]["grain_id"])


def test_purge_leaves_no_plaintext_in_wal_while_another_connection_is_open(run_areev, db,
                                                                          tmp_path):
    import sqlite3
    marker = "WAL-MARKER-2b9d41c7e0aa"
    memtool(run_areev, db, command="create", path="/memories/s.md", file_text=f"{marker}\n")
    # An idle second connection keeps the WAL file from being removed at
    # close, so what the purge left in it can be inspected.
    idle = sqlite3.connect(db)
    idle.execute("SELECT count(*) FROM sqlite_master").fetchall()  # joins the WAL
    try:
        memtool(run_areev, db, command="delete", path="/memories/s.md")
        raw = b"".join(f.read_bytes() for f in tmp_path.iterdir()
                       if f.name.startswith("agent.db"))
        assert marker.encode() in raw  # the check below can fail
        proc = run_areev("purge", "/memories/s.md", "--db", db)
        assert proc.returncode == 0, proc.stderr
        for f in tmp_path.iterdir():
            if f.name.startswith("agent.db"):
                assert marker.encode() not in f.read_bytes(), f.name
    finally:
        idle.close()


def test_the_other_files_at_a_path_are_named_ten_at_most_unless_all(run_areev, db):
    lines = "".join(json.dumps({"command": c, "path": "/memories/k.md", "file_text": f"{i}\n"})
                    + "\n" for i in range(13) for c in ("create", "delete"))
    assert run_areev("memtool", "--batch", "--db", db, input=lines).returncode == 0
    chains = [v["chain_id"] for v in json.loads(
        run_areev("history", "/memories/k.md", "--json", "--db", db).stdout)]
    note = run_areev("history", "/memories/k.md", "--db", db).stdout.splitlines()[-1]
    named = [int(c) for c in re.findall(r"chain (\d+) \(", note)]
    # The last one deleted is the table; the ten before it, newest first, are
    # named; the two oldest are counted.
    assert named == list(range(chains[0] - 1, chains[0] - 11, -1)), note
    assert note.endswith(" and 2 older (`--all` names every one); `--chain ID` shows one"), note
    note = run_areev("history", "/memories/k.md", "--all", "--db", db).stdout.splitlines()[-1]
    assert len(re.findall(r"chain \d+ \(", note)) == 12 and "older" not in note, note


# Issue: only the table's "# other files at this path" line named the older
# files at a path and when they were deleted; `--json` had no way to find them.
def test_history_chains_lists_every_file_at_the_path_in_a_table_and_json(run_areev, db):
    memtool(run_areev, db, command="create", path="/memories/c.md", file_text="A\n")
    memtool(run_areev, db, command="delete", path="/memories/c.md")
    memtool(run_areev, db, command="create", path="/memories/c.md", file_text="B\n")
    memtool(run_areev, db, command="str_replace", path="/memories/c.md", old_str="B",
            new_str="C")
    log = json.loads(run_areev("log", "--json", "--db", db).stdout)
    deleted_at = next(op["at_ns"] for op in log if op["op"] == "delete")
    proc = run_areev("history", "/memories/c.md", "--chains", "--json", "--db", db)
    assert proc.returncode == 0, proc.stderr
    live, gone = json.loads(proc.stdout)
    assert (live["state"], live["versions"], live["deleted"], live["deleted_ns"]) == (
        "live", 2, None, None)
    assert (gone["state"], gone["versions"], gone["deleted_ns"]) == ("deleted", 1, deleted_at)
    assert (live["purged_ns"], gone["purged"], gone["purged_ns"]) == (None, None, None)
    assert gone["subject"] == live["subject"] == "/memories/c.md"
    assert gone["created_ns"] < gone["deleted_ns"] < live["created_ns"]
    # Each id reads its own file.
    for chain, body in ((live["chain_id"], "C\n"), (gone["chain_id"], "A\n")):
        cat = run_areev("cat", "/memories/c.md", "--chain", str(chain), "--db", db)
        assert (cat.returncode, cat.stdout) == (0, body), (chain, cat.stderr)
    table = run_areev("history", "/memories/c.md", "--chains", "--db", db).stdout.splitlines()
    assert table[0].split() == ["CHAIN", "STATE", "VERSIONS", "CREATED", "(UTC)", "DELETED",
                                "(UTC)", "PURGED", "(UTC)"]
    assert table[1].split()[:3] == [str(live["chain_id"]), "live", "2"]
    assert len(table[1].split()) == 4 and len(table[2].split()) == 5
    assert table[2].split()[:3] == [str(gone["chain_id"]), "deleted", "1"]
    # Nothing ever there, and --chain with it.
    never = run_areev("history", "/memories/never.md", "--chains", "--db", db)
    assert (never.returncode, never.stdout) == (1, ""), never.stderr
    assert "no history for /memories/never.md" in never.stderr
    both = run_areev("history", "/memories/c.md", "--chains", "--chain", "1", "--db", db)
    assert both.returncode == 2 and both.stdout == "", both.stderr


# Issue: a purge wrote its own time over the file's deletion time, so
# `history --chains` and the notes showed a purged file deleted when it was
# purged, and chains purged together lost their order.
def test_a_purged_file_keeps_its_deletion_time_beside_its_purge_time(run_areev, db):
    for body in ("A\n", "B\n"):
        memtool(run_areev, db, command="create", path="/memories/p.md", file_text=body)
        memtool(run_areev, db, command="delete", path="/memories/p.md")
        time.sleep(0.01)
    assert run_areev("purge", "/memories/p.md", "--db", db).returncode == 0
    log = json.loads(run_areev("log", "--json", "--db", db).stdout)
    deletes = [op["at_ns"] for op in log if op["op"] == "delete"]
    purges = [op["at_ns"] for op in log if op["op"] == "purge"]
    assert len(deletes) == 2 and len(purges) == 2 and purges[0] == purges[1] > deletes[1]
    chains = json.loads(run_areev("history", "/memories/p.md", "--chains", "--json",
                                  "--db", db).stdout)
    # Newest deletion first, each with its own deletion time and the purge's.
    assert [(c["state"], c["deleted_ns"], c["purged_ns"]) for c in chains] == [
        ("purged", deletes[1], purges[0]), ("purged", deletes[0], purges[0])]
    table = run_areev("history", "/memories/p.md", "--chains", "--db", db).stdout.splitlines()
    assert len(table) == 3 and all(len(row.split()) == 6 for row in table[1:]), table
    assert table[1].split()[4] != table[1].split()[5]  # deleted, then purged
    shown = run_areev("history", "/memories/p.md", "--db", db)
    purged_line = [l for l in shown.stdout.splitlines() if l.startswith("# /memories/p.md purged")]
    assert purged_line == [f"# /memories/p.md purged at {chains[0]['purged'][:23]}Z"], shown.stdout


def test_an_older_file_deleted_at_a_reused_path_stays_reachable(run_areev, db):
    """Delete a file, create another at the same path, delete that too: the
    first file's versions stay readable (by grain id, or with --chain) and
    it can still be restored, instead of being shadowed for good."""
    memtool(run_areev, db, command="create", path="/memories/s.md", file_text="OLD\n")
    old = versions(run_areev, db, "/memories/s.md")[0]
    memtool(run_areev, db, command="delete", path="/memories/s.md")
    memtool(run_areev, db, command="create", path="/memories/s.md", file_text="NEW\n")
    memtool(run_areev, db, command="delete", path="/memories/s.md")
    new = versions(run_areev, db, "/memories/s.md")[0]
    assert new["chain_id"] != old["chain_id"]
    table = run_areev("history", "/memories/s.md", "--db", db).stdout
    assert (f"# other files at this path: chain {old['chain_id']} (1 version, deleted "
            in table), table
    # A grain id from the op-log reads its version, whichever file it was.
    for prefix in (old["grain_id"][:10], old["grain_id"]):
        cat = run_areev("cat", "/memories/s.md", "--version", prefix, "--db", db)
        assert (cat.returncode, cat.stdout) == (0, "OLD\n"), cat.stderr
    chain = str(old["chain_id"])
    assert run_areev("cat", "/memories/s.md", "--chain", chain, "--db", db).stdout == "OLD\n"
    hist = json.loads(run_areev("history", "/memories/s.md", "--chain", chain, "--json",
                                "--db", db).stdout)
    assert [v["grain_id"] for v in hist] == [old["grain_id"]]
    diff = run_areev("diff", "/memories/s.md", "--chain", chain, "--db", db)
    assert diff.returncode == 0 and "+OLD" in diff.stdout
    # A chain that is not at this path is not found; a bad id is a usage error.
    assert run_areev("history", "/memories/s.md", "--chain", "999", "--db", db).returncode == 1
    assert run_areev("cat", "/memories/s.md", "--chain", "-1", "--db", db).returncode == 2
    assert run_areev("restore", "/memories/s.md", "--chain", "0", "--db", db).returncode == 2
    assert run_areev("restore", "/memories/s.md", "--chain", "-2", "--db", db).returncode == 2
    # Restore the older file; the newer stays deleted, and restorable after.
    proc = run_areev("restore", "/memories/s.md", "--chain", chain, "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert run_areev("cat", "/memories/s.md", "--db", db).stdout == "OLD\n"
    memtool(run_areev, db, command="delete", path="/memories/s.md")
    again = run_areev("restore", "/memories/s.md", "--chain", str(new["chain_id"]), "--db", db)
    assert again.returncode == 0, again.stderr
    assert run_areev("cat", "/memories/s.md", "--db", db).stdout == "NEW\n"


def test_diff_takes_a_grain_id_of_an_older_file_as_cat_does(run_areev, db):
    """`diff --from/--to` find a version as `cat --version` does: a number in the
    current file's chain, a grain id in any chain at the path."""
    p = "/memories/p.md"
    memtool(run_areev, db, command="create", path=p, file_text="old file\n")
    old = versions(run_areev, db, p)[0]
    memtool(run_areev, db, command="delete", path=p)
    memtool(run_areev, db, command="create", path=p, file_text="new\n")
    new = versions(run_areev, db, p)[0]
    assert new["chain_id"] != old["chain_id"]
    g = old["grain_id"][:12]
    cat = run_areev("cat", p, "--version", g, "--db", db)
    assert (cat.returncode, cat.stdout) == (0, "old file\n"), cat.stderr
    # Across the two files at the path: the old file's v1 against the new file.
    diff = run_areev("diff", p, "--from", g, "--db", db)
    assert diff.returncode == 0, diff.stderr
    lines = diff.stdout.splitlines()
    # Both sides are a v1: each header names its file's chain too.
    assert lines[0].startswith(f"--- {p}\tv1 {g} ")
    assert lines[0].endswith(f"Z (chain {old['chain_id']})")
    assert lines[1].startswith(f"+++ {p}\tv1 {new['grain_id'][:12]} ")
    assert lines[1].endswith(f"Z (chain {new['chain_id']})")
    assert lines[2:] == ["@@ -1 +1 @@", "-old file", "+new"]
    reverse = run_areev("diff", p, "--from", new["grain_id"], "--to", g, "--db", db)
    assert reverse.returncode == 0 and reverse.stdout.splitlines()[2:] == [
        "@@ -1 +1 @@", "-new", "+old file"], reverse.stderr
    # --to alone: the version before it in its own chain, here none.
    first = run_areev("diff", p, "--to", g, "--db", db)
    assert first.returncode == 0 and first.stdout.splitlines()[0] == "--- /dev/null"
    assert first.stdout.splitlines()[2:] == ["@@ -0,0 +1 @@", "+old file"]
    # Numbers still count in the current file: v1 against itself, no output.
    same = run_areev("diff", p, "--from", "1", "--db", db)
    assert (same.returncode, same.stdout) == (0, ""), same.stderr
    # With --chain, a version is looked for in that chain only, as cat does.
    chain = str(new["chain_id"])
    for cmd in (["cat", p, "--chain", chain, "--version", g],
                ["diff", p, "--chain", chain, "--from", g]):
        proc = run_areev(*cmd, "--db", db)
        assert proc.returncode == 1 and f"has no version {g}" in proc.stderr, (cmd, proc.stderr)
    in_old = run_areev("diff", p, "--chain", str(old["chain_id"]), "--to", g, "--db", db)
    assert in_old.returncode == 0 and "+old file" in in_old.stdout, in_old.stderr


def test_a_directory_delete_logs_contents_before_each_rmdir(run_areev, db):
    """The op-log of a directory delete replays in order: every entry under a
    directory comes before that directory's rmdir."""
    for name in ("a/x.md", "a/b/y.md", "a/b/c/z.md", "a/b/w.md", "a/v.md"):
        memtool(run_areev, db, command="create", path=f"/memories/{name}", file_text="x\n")
    last = json.loads(run_areev("log", "--json", "--db", db).stdout)[-1]["seq"]
    memtool(run_areev, db, command="delete", path="/memories/a")
    proc = run_areev("log", "--after", str(last), "--json", "--db", db)
    assert proc.returncode == 0, proc.stderr
    entries = [(e["op"], e["subject"]) for e in json.loads(proc.stdout)]
    subjects = [s for _, s in entries]
    rmdirs = [s for op, s in entries if op == "rmdir"]
    assert sorted(rmdirs) == ["/memories/a", "/memories/a/b", "/memories/a/b/c"], entries
    assert len(entries) == 8, entries  # 5 deletes, 3 rmdirs
    for i, (op, subject) in enumerate(entries):
        if op != "rmdir":
            continue
        later = [s for s in subjects[i + 1:] if s.startswith(subject + "/")]
        assert later == [], (subject, entries)
    # Replayed on a model tree, no rmdir meets a non-empty directory.
    live = set(subjects)
    for op, subject in entries:
        if op == "rmdir":
            assert not any(s.startswith(subject + "/") for s in live), (subject, entries)
        live.discard(subject)
