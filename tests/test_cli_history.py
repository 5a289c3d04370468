"""`areev history`, `cat`, `diff` and `log` over memory-file version chains."""
import json
import os
import re
import sqlite3
import subprocess
import sys

import pytest

from store_util import body_rows
from test_bindings_common import import_areev, run_node_script

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$")


def memtool(run_areev, db, ns="default", **cmd):
    proc = run_areev("memtool", json.dumps(cmd), "--db", db, "--ns", ns)
    assert proc.returncode == 0, (cmd, proc.stdout, proc.stderr)
    return proc.stdout


@pytest.fixture
def m(run_areev, db):
    """m(command=..., ...) runs one memory-tool command on the test's store."""
    return lambda **cmd: memtool(run_areev, db, **cmd)


@pytest.fixture
def prefs(run_areev, db):
    """/memories/prefs.md with three versions."""
    memtool(run_areev, db, command="create", path="/memories/prefs.md",
            file_text="Vegetarian.\nLikes tea.\n")
    memtool(run_areev, db, command="str_replace", path="/memories/prefs.md",
            old_str="tea", new_str="green tea")
    memtool(run_areev, db, command="str_replace", path="/memories/prefs.md",
            old_str="Vegetarian.", new_str="Vegan.")
    return "/memories/prefs.md"


def history_json(run_areev, db, *args):
    proc = run_areev("history", *args, "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def now_at(run_areev, db, command, path):
    """Where the moved-away note of `areev COMMAND PATH` says the file is now;
    the whole stderr when it has no such note."""
    err = run_areev(command, path, "--db", db).stderr
    found = re.search(r"; moved away at \S+Z, now at (.+)\n$", err)
    return found.group(1) if found else err


def test_history_after_create_and_two_edits_shows_three_versions(run_areev, db, prefs):
    versions = history_json(run_areev, db, "--subject", prefs, "--relation", "memory_file")
    assert [v["version"] for v in versions] == [1, 2, 3]
    assert [v["size"] for v in versions] == [len("Vegetarian.\nLikes tea.\n"),
                                             len("Vegetarian.\nLikes green tea.\n"),
                                             len("Vegan.\nLikes green tea.\n")]
    for v in versions:
        assert re.fullmatch(r"[0-9a-f]{64}", v["grain_id"])
        assert ISO.match(v["created"]) and isinstance(v["created_ns"], int)
        assert v["subject"] == prefs and v["relation"] == "memory_file"
        assert v["op"] and not v["purged"]
    assert versions[0]["supersedes"] is None
    assert versions[1]["supersedes"] == versions[0]["grain_id"]
    assert versions[2]["supersedes"] == versions[1]["grain_id"]
    assert len({v["grain_id"] for v in versions}) == 3
    assert versions[0]["created_ns"] <= versions[1]["created_ns"] <= versions[2]["created_ns"]


def test_history_table_and_positional_path(run_areev, db, prefs):
    proc = run_areev("history", prefs, "--db", db)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:4] == ["VER", "GRAIN", "CREATED", "(UTC)"]
    assert len(lines) == 4
    ids = [v["grain_id"] for v in history_json(run_areev, db, prefs)]
    for n, (line, gid) in enumerate(zip(lines[1:], ids), start=1):
        cells = line.split()
        assert cells[0] == str(n)
        assert cells[1] == gid[:12]
        assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", cells[2])
        assert cells[-1] == prefs
    # Same answer through --subject; a path that needs normalising is accepted.
    assert run_areev("history", "--subject", prefs, "--db", db).stdout == proc.stdout


def test_history_of_unknown_file_is_exit_1(run_areev, db, prefs):
    proc = run_areev("history", "/memories/none.md", "--db", db)
    assert proc.returncode == 1
    assert proc.stdout == "" and "areev:" in proc.stderr


def test_a_file_asked_for_by_the_path_it_left_says_where_it_went(run_areev, db, prefs):
    # Moved twice (the second time with its directory): every command that
    # finds nothing at the old path names the last place, from the op-log.
    memtool(run_areev, db, command="rename", old_path=prefs, new_path="/memories/d/p.md")
    memtool(run_areev, db, command="rename", old_path="/memories/d", new_path="/memories/e")
    moved = re.compile(r"; moved away at \d{4}-\d\d-\d\dT[\d:.]+Z, now at /memories/e/p\.md\n$")
    for args in (["history", prefs], ["cat", prefs], ["cat", prefs, "--version", "1"],
                 ["restore", prefs], ["purge", prefs], ["history", "/memories/d/p.md"]):
        proc = run_areev(*args, "--db", db)
        assert proc.returncode == 1 and moved.search(proc.stderr), (args, proc.stderr)
    assert history_json(run_areev, db, "/memories/e/p.md")[-1]["subject"] == "/memories/e/p.md"
    for never in ("/memories/never.md", "/memories/d/never.md"):  # under the moved directory
        proc = run_areev("history", never, "--db", db)
        assert proc.stderr == (f"areev: history {never}: no history for {never} "
                               "(memory_file)\n"), proc.stderr


def test_a_moved_note_names_only_the_file_that_left(run_areev, db, m):
    # Moved away and back, then deleted: no note names the path itself.
    m(command="create", path="/memories/a", file_text="A")
    m(command="rename", old_path="/memories/a", new_path="/memories/b")
    m(command="rename", old_path="/memories/b", new_path="/memories/a")
    m(command="delete", path="/memories/a")
    assert "moved" not in run_areev("cat", "/memories/a", "--db", db).stderr
    # Moved, deleted there, and another file moved onto that path since: the
    # note follows the file that left, and says it was deleted.
    m(command="create", path="/memories/old.md", file_text="OLD")
    m(command="create", path="/memories/notes.md", file_text="NOTES")
    m(command="rename", old_path="/memories/notes.md", new_path="/memories/arch.md")
    m(command="delete", path="/memories/arch.md")
    m(command="rename", old_path="/memories/old.md", new_path="/memories/arch.md")
    err = run_areev("cat", "/memories/notes.md", "--db", db).stderr
    assert re.search(r"; moved away at \S+Z, now at /memories/arch\.md \(deleted there at \S+Z\)\n$",
                     err), err
    assert now_at(run_areev, db, "cat", "/memories/old.md") == "/memories/arch.md"  # live
    # A directory's rename does not make a file of a name that held none.
    m(command="create", path="/memories/todo.md", file_text="TODO")
    m(command="create", path="/memories/proj/readme.md", file_text="R")
    m(command="rename", old_path="/memories/proj", new_path="/memories/done")
    m(command="rename", old_path="/memories/todo.md", new_path="/memories/done/todo.md")
    assert "moved" not in run_areev("cat", "/memories/proj/todo.md", "--db", db).stderr
    assert "now at /memories/done/readme.md" in run_areev(
        "cat", "/memories/proj/readme.md", "--db", db).stderr


# Issue: the note took the newest rename of the path or of a directory above
# it, also one made after the file had left (it then named no file, so no
# note), and walked the later renames newest first instead of in order.
def test_a_moved_note_follows_directory_renames_in_the_order_they_came(run_areev, db, m):
    m(command="create", path="/memories/proj/a/one.md", file_text="ONE\n")
    m(command="rename", old_path="/memories/proj/a", new_path="/memories/proj/b")
    m(command="rename", old_path="/memories/proj/b", new_path="/memories/proj/c")
    m(command="rename", old_path="/memories/proj", new_path="/memories/proj2")
    for left in ("/memories/proj/a/one.md", "/memories/proj/b/one.md", "/memories/proj/c/one.md"):
        assert now_at(run_areev, db, "history", left) == "/memories/proj2/c/one.md"
    # Renamed by its own path, then its old directory renamed: the file's
    # own move is the one that carried it.
    m(command="create", path="/memories/x/two.md", file_text="TWO\n")
    m(command="create", path="/memories/x/stays.md", file_text="S\n")
    m(command="rename", old_path="/memories/x/two.md", new_path="/memories/y/two.md")
    m(command="rename", old_path="/memories/x", new_path="/memories/x2")
    assert now_at(run_areev, db, "cat", "/memories/x/two.md") == "/memories/y/two.md"
    assert now_at(run_areev, db, "cat", "/memories/x/stays.md") == "/memories/x2/stays.md"


# Issue: a file deleted where a directory's rename had carried it lost its
# note once a later rename moved on from there (the directory above it, or
# another file made at its place): the walk named only where it ended.
def test_a_moved_note_finds_a_file_deleted_on_the_renames_way(run_areev, db, m):
    deleted = re.compile(r"; moved away at \S+Z, now at /memories/x/b/d\.md "
                         r"\(deleted there at \S+Z\)\n$")
    m(command="create", path="/memories/b/d.md", file_text="one\n")
    m(command="rename", old_path="/memories/b", new_path="/memories/x/b")
    m(command="delete", path="/memories/x/b/d.md")
    m(command="rename", old_path="/memories/x", new_path="/memories/z")
    for args in (["history", "/memories/b/d.md"], ["cat", "/memories/b/d.md"],
                 ["restore", "/memories/b/d.md"]):
        proc = run_areev(*args, "--db", db)
        assert proc.returncode == 1 and deleted.search(proc.stderr), (args, proc.stderr)
    m(command="create", path="/memories/q/d.md", file_text="two\n")
    m(command="rename", old_path="/memories/q", new_path="/memories/w/q")
    m(command="delete", path="/memories/w/q/d.md")
    m(command="create", path="/memories/w/q/d.md", file_text="another file\n")
    m(command="rename", old_path="/memories/w/q/d.md", new_path="/memories/e.md")
    assert now_at(run_areev, db, "history", "/memories/q/d.md").startswith(
        "/memories/w/q/d.md (deleted there at ")
    assert run_areev("restore", "/memories/w/q/d.md", "--db", db).returncode == 0


def test_a_moved_note_follows_the_file_not_the_path(run_areev, db, m):
    # Y left a.md first, X last; each path was renamed again since by the
    # other file: the note follows X, the last file to leave a.md.
    m(command="create", path="/memories/a.md", file_text="Y\n")
    m(command="rename", old_path="/memories/a.md", new_path="/memories/y.md")
    m(command="create", path="/memories/a.md", file_text="X\n")
    m(command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    m(command="rename", old_path="/memories/b.md", new_path="/memories/c.md")
    m(command="rename", old_path="/memories/y.md", new_path="/memories/b.md")
    m(command="rename", old_path="/memories/b.md", new_path="/memories/d.md")
    assert now_at(run_areev, db, "cat", "/memories/a.md") == "/memories/c.md"
    # A newer file deleted at the path is what the path names: no note.
    m(command="create", path="/memories/n.md", file_text="OLD\n")
    m(command="rename", old_path="/memories/n.md", new_path="/memories/o.md")
    m(command="create", path="/memories/n.md", file_text="NEW\n")
    m(command="delete", path="/memories/n.md")
    proc = run_areev("cat", "/memories/n.md", "--db", db)
    assert proc.returncode == 1 and "moved" not in proc.stderr, proc.stderr


# Issue: a file deleted at the path before another file passed through it
# took the note away: `cat` said only "no such file", though no file had been
# at the path since the one that left.
def test_a_file_deleted_at_the_path_before_the_move_keeps_the_note(run_areev, db, m):
    m(command="create", path="/memories/a.md", file_text="A\n")
    m(command="create", path="/memories/b.md", file_text="B\n")
    m(command="delete", path="/memories/b.md")
    m(command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    m(command="rename", old_path="/memories/b.md", new_path="/memories/a.md")
    assert now_at(run_areev, db, "cat", "/memories/b.md") == "/memories/a.md"
    # history and restore still name the file deleted there.
    assert history_json(run_areev, db, "/memories/b.md")[-1]["subject"] == "/memories/b.md"
    # Deleted there after the move: that file is what the path names.
    m(command="create", path="/memories/b.md", file_text="C\n")
    m(command="delete", path="/memories/b.md")
    proc = run_areev("cat", "/memories/b.md", "--db", db)
    assert proc.returncode == 1 and "moved" not in proc.stderr, proc.stderr


# Issue: a purge wrote its time over the deletion time of the file it
# purged, so a file deleted at the path before another passed through it,
# purged after that one left, took the note away as if it had lain there last.
def test_a_purge_after_the_move_keeps_the_note(run_areev, db, m):
    m(command="create", path="/memories/x.md", file_text="X\n")
    m(command="delete", path="/memories/x.md")
    m(command="create", path="/memories/y.md", file_text="Y\n")
    m(command="rename", old_path="/memories/y.md", new_path="/memories/x.md")
    m(command="rename", old_path="/memories/x.md", new_path="/memories/z.md")
    assert run_areev("purge", "/memories/x.md", "--db", db).returncode == 0
    assert now_at(run_areev, db, "cat", "/memories/x.md") == "/memories/z.md"


# Issue: `cat` of a deleted file said only "no such file or directory", with
# no word that the file was deleted there and its versions are kept.
def test_cat_of_a_deleted_file_says_when_it_was_deleted_and_where_its_versions_are(
        run_areev, db, m):
    m(command="create", path="/memories/d.md", file_text="one\n")
    m(command="delete", path="/memories/d.md")
    deleted = history_json(run_areev, db, "/memories/d.md")
    proc = run_areev("cat", "/memories/d.md", "--db", db)
    assert proc.returncode == 1 and proc.stdout == "", proc
    assert re.fullmatch(
        r"areev: cat /memories/d\.md: no such file or directory: /memories/d\.md; the file "
        r"there was deleted at \S+Z: `areev history` lists its versions, which `cat` reads by "
        r"number, and `areev restore` brings it back\n", proc.stderr), proc.stderr
    assert run_areev("cat", "/memories/d.md", "1", "--db", db).stdout == "one\n"
    assert len(deleted) == 1
    assert run_areev("purge", "/memories/d.md", "--db", db).returncode == 0
    proc = run_areev("cat", "/memories/d.md", "--db", db)
    assert re.fullmatch(r"areev: cat /memories/d\.md: no such file or directory: "
                        r"/memories/d\.md; the file there was deleted at (\S+)Z and purged at "
                        r"(\S+)Z\n", proc.stderr), proc.stderr
    # Never a file there: the plain answer.
    proc = run_areev("cat", "/memories/never.md", "--db", db)
    assert proc.stderr == ("areev: cat /memories/never.md: no such file or directory: "
                           "/memories/never.md\n"), proc.stderr


def test_a_deleted_files_history_says_how_to_restore_it_and_when_it_cannot_yet(run_areev,
                                                                                 db, m):
    m(command="create", path="/memories/q.md", file_text="x\n")
    m(command="delete", path="/memories/q.md")
    last = run_areev("history", "/memories/q.md", "--db", db).stdout.splitlines()[-1]
    assert re.fullmatch(r"# /memories/q\.md deleted at \S+; `areev restore` brings it back", last)
    # A control character in the name is escaped there, as in the table, and
    # in restore's answer.
    m(command="create", path="/memories/e\x1b[31m.md", file_text="x\n")
    m(command="delete", path="/memories/e\x1b[31m.md")
    last = run_areev("history", "/memories/e\x1b[31m.md", "--db", db).stdout.splitlines()[-1]
    assert last.startswith("# /memories/e\\x1b[31m.md deleted at "), last
    restored = run_areev("restore", "/memories/e\x1b[31m.md", "--db", db)
    assert restored.stdout == "restored /memories/e\\x1b[31m.md\n", restored.stdout
    m(command="create", path="/memories/q.md/x", file_text="y\n")  # a directory takes the path
    last = run_areev("history", "/memories/q.md", "--db", db).stdout.splitlines()[-1]
    assert last.endswith("; `areev restore` brings it back once the directory now at that "
                         "path is moved or deleted"), last
    assert run_areev("restore", "/memories/q.md", "--db", db).returncode == 1
    m(command="delete", path="/memories/q.md")
    assert run_areev("restore", "/memories/q.md", "--db", db).returncode == 0
    assert run_areev("cat", "/memories/q.md", "--db", db).stdout == "x\n"
    # A file where the path's directory was is named too: restore needs it gone.
    m(command="create", path="/memories/x/a.md", file_text="one\n")
    m(command="delete", path="/memories/x")
    m(command="create", path="/memories/x", file_text="x is a file\n")
    last = run_areev("history", "/memories/x/a.md", "--db", db).stdout.splitlines()[-1]
    assert last.endswith("; `areev restore` brings it back once the file now at /memories/x is "
                         "moved or deleted"), last
    assert run_areev("restore", "/memories/x/a.md", "--db", db).returncode == 1


# Issue: a chain whose versions are gone (damage: a page of grains that reads as
# empty) printed an empty history with exit 0, and the bindings returned [], where
# `diff` reported the damage.
def test_a_chain_without_versions_is_damage_not_an_empty_history(run_areev, db, prefs):
    con = sqlite3.connect(db)
    con.execute("DELETE FROM grains")
    con.commit()
    con.close()
    said = f"chain 1 has no versions (in the store {db})\n"
    for args in ((prefs,), (prefs, "--json"), (prefs, "--all")):
        proc = run_areev("history", *args, "--db", db)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            3, "", f"areev: history {prefs}: {said}"), args
    areev = import_areev()
    with pytest.raises(areev.StoreError, match="chain 1 has no versions"):
        areev.Areev(db).history(prefs)
    script = ("const { Areev } = require(process.argv[1]);"
              "new Areev(process.argv[2]).history(process.argv[3])"
              ".then((r) => console.log(JSON.stringify(r)),"
              " (e) => console.log(e.code, e.message));")
    out = run_node_script(script, db, prefs, timeout=60)
    assert out.startswith("ERR_AREEV_STORE ") and "chain 1 has no versions" in out


def test_history_needs_a_subject(run_areev, db, prefs):
    assert run_areev("history", "--db", db).returncode == 2
    assert run_areev("history", "/etc/passwd", "--db", db).returncode == 2


def test_cat_versions(areev_bin, run_areev, db, prefs):
    assert run_areev("cat", prefs, "--db", db).stdout == "Vegan.\nLikes green tea.\n"
    assert run_areev("cat", prefs, "--version", "1", "--db", db).stdout == \
        "Vegetarian.\nLikes tea.\n"
    assert run_areev("cat", prefs, "--version", "2", "--db", db).stdout == \
        "Vegetarian.\nLikes green tea.\n"
    versions = history_json(run_areev, db, prefs)
    by_prefix = run_areev("cat", prefs, "--version", versions[0]["grain_id"][:10], "--db", db)
    assert by_prefix.returncode == 0, by_prefix.stderr
    assert by_prefix.stdout == "Vegetarian.\nLikes tea.\n"
    missing = run_areev("cat", prefs, "--version", "7", "--db", db)
    assert missing.returncode == 1 and missing.stdout == "" and missing.stderr


def test_cat_is_byte_exact(areev_bin, db):
    body = "no newline at end\r\n\ttab \u00e9\u6f22"
    cmd = json.dumps({"command": "create", "path": "/memories/raw.txt", "file_text": body})
    subprocess.run([areev_bin, "memtool", cmd, "--db", db], check=True, capture_output=True)
    out = subprocess.run([areev_bin, "cat", "/memories/raw.txt", "--db", db], capture_output=True)
    assert out.stdout == body.encode("utf-8")


def test_cat_errors(run_areev, db, prefs):
    assert run_areev("cat", "/memories/nope.md", "--db", db).returncode == 1
    assert run_areev("cat", "/memories", "--db", db).returncode == 1  # a directory
    assert run_areev("cat", "relative.md", "--db", db).returncode == 2
    assert run_areev("cat", "--db", db).returncode == 2


def test_diff_between_versions(run_areev, db, prefs):
    versions = history_json(run_areev, db, prefs)
    proc = run_areev("diff", prefs, "--from", "1", "--to", "3", "--db", db)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"--- {prefs}\tv1 {versions[0]['grain_id'][:12]} ")
    assert lines[1].startswith(f"+++ {prefs}\tv3 {versions[2]['grain_id'][:12]} ")
    assert lines[2:] == ["@@ -1,2 +1,2 @@", "-Vegetarian.", "-Likes tea.", "+Vegan.",
                         "+Likes green tea."]


# Issue: diff printed the stored name raw in its header lines: a name an
# agent chose could split a header with a newline or send an escape sequence
# to the terminal of a user who typed only the file's current path.
def test_diff_and_history_show_a_hostile_name_escaped(run_areev, db, m):
    hostile = "/memories/x\x1b]0;PWNED\x07\nfake\u009b.md"
    m(command="create", path=hostile, file_text="one\n")
    m(command="rename", old_path=hostile, new_path="/memories/notes.md")
    m(command="str_replace", path="/memories/notes.md", old_str="one", new_str="two")
    proc = run_areev("diff", "/memories/notes.md", "--from", "1", "--to", "3", "--db", db)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("--- /memories/x\\x1b]0;PWNED\\x07\\nfake\\u009b.md\tv1 "), lines
    assert lines[1].startswith("+++ /memories/notes.md\tv3 "), lines
    assert not any(c in proc.stdout for c in "\x1b\x07\u009b")
    hist = run_areev("history", "/memories/notes.md", "--db", db)
    assert hist.returncode == 0, hist.stderr
    assert "x\\x1b]0;PWNED\\x07\\nfake\\u009b.md" in hist.stdout, hist.stdout
    assert not any(c in hist.stdout for c in "\x1b\x07\u009b")


def test_diff_defaults_and_identity(run_areev, db, prefs):
    # Default --to is the newest version; default --from the one before it.
    proc = run_areev("diff", prefs, "--db", db)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[2:] == ["@@ -1,2 +1,2 @@", "-Vegetarian.", "+Vegan.",
                                            " Likes green tea."]
    assert run_areev("diff", prefs, "--from", "2", "--db", db).stdout == proc.stdout
    # Version 1 against nothing: every line added.
    first = run_areev("diff", prefs, "--to", "1", "--db", db).stdout.splitlines()
    assert first[0] == "--- /dev/null"
    assert first[2:] == ["@@ -0,0 +1,2 @@", "+Vegetarian.", "+Likes tea."]
    # Equal versions: no output, still success.
    same = run_areev("diff", prefs, "--from", "2", "--to", "2", "--db", db)
    assert same.returncode == 0 and same.stdout == ""
    bad = run_areev("diff", prefs, "--from", "9", "--db", db)
    assert bad.returncode == 1 and "9" in bad.stderr


# Issue: `areev diff PATH 1 3` and `areev cat PATH 2`, as git and most
# version tools take them, were refused ("arguments were not expected").
def test_versions_may_follow_the_path_as_in_git(run_areev, db, prefs):
    def out(*args):
        proc = run_areev(*args, "--db", db)
        assert proc.returncode == 0, (args, proc.stderr)
        return proc.stdout

    grain = history_json(run_areev, db, prefs)[0]["grain_id"]  # whole: never all digits
    assert out("diff", prefs, "1", "3") == out("diff", prefs, "--from", "1", "--to", "3")
    assert out("diff", prefs, "3", "1") == out("diff", prefs, "--from", "3", "--to", "1")
    assert out("diff", prefs, grain) == out("diff", prefs, "--from", "1")  # to the newest
    assert out("diff", prefs, "1").splitlines()[1].startswith(f"+++ {prefs}\tv3 ")
    assert out("cat", prefs, "1") == "Vegetarian.\nLikes tea.\n"
    assert out("cat", prefs, grain) == out("cat", prefs, "--version", "1")
    # One way or the other, not both; at most two; each a version's name.
    for args, said in [
            (("diff", prefs, "1", "--to", "3"), "diff: give the versions after the path or "
                                                "as --from and --to, not both"),
            (("diff", prefs, "2", "--from", "1"), "not both"),
            (("diff", prefs, "1", "2", "3"), "diff: at most two versions follow the path "
                                             "(FROM TO), not 3"),
            (("diff", prefs, "v1"), "'v1' is neither a version number nor a grain id prefix"),
            (("cat", prefs, "1", "--version", "1"), "cat: give the version after the path "
                                                    "or as --version, not both"),
            (("cat", prefs, "1", "2"), "cat takes no more arguments, but 2 was given"),
            (("cat", prefs, ""), "'' is neither a version number")]:
        proc = run_areev(*args, "--db", db)
        assert proc.returncode == 2 and proc.stdout == "", (args, proc)
        assert said in proc.stderr, (args, proc.stderr)
    missing = run_areev("cat", prefs, "9", "--db", db)
    assert missing.returncode == 1 and f"{prefs} has no version 9" in missing.stderr


def test_all_digit_grain_prefixes_name_versions(run_areev, db):
    # Grain ids are hex, so a short id can be all digits; `cat` and `diff` must
    # then take it as the id it is, unless a version has that number.
    lines = "".join(json.dumps({"command": "create", "path": "/memories/d.md",
                                "file_text": f"body {i}\n"}) + "\n" for i in range(300))
    batch = run_areev("memtool", "--db", db, "--batch", input=lines)
    assert batch.returncode == 0, batch.stderr
    versions = history_json(run_areev, db, "/memories/d.md")
    assert len(versions) == 300
    digit = next(v for v in versions
                 if v["grain_id"][:6].isdigit() and int(v["grain_id"][:6]) > 300)
    prefix, seq = digit["grain_id"][:6], digit["version"]
    cat = run_areev("cat", "/memories/d.md", "--version", prefix, "--db", db)
    assert cat.returncode == 0, cat.stderr
    assert cat.stdout == f"body {seq - 1}\n"
    diff = run_areev("diff", "/memories/d.md", "--from", prefix, "--to", "300", "--db", db)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.splitlines()[0].startswith(f"--- /memories/d.md\tv{seq} {prefix}")
    # A number still names the version with that number.
    assert run_areev("cat", "/memories/d.md", "--version", "12", "--db", db).stdout == "body 11\n"


# Issue: a zero-padded number was read as decimal up to ten characters only;
# "00000000001" was then taken for a grain id prefix and named no version.
def test_zero_padded_version_numbers_of_any_length_are_numbers(run_areev, db, prefs):
    for spec in ("01", "0000000001", "00000000001", "0" * 40 + "1", "0" * 70 + "1"):
        cat = run_areev("cat", prefs, "--version", spec, "--db", db)
        assert (cat.returncode, cat.stdout) == (0, "Vegetarian.\nLikes tea.\n"), (spec, cat)
    diff = run_areev("diff", prefs, "--from", "00000000002", "--to", "000000000003",
                     "--db", db)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.splitlines()[0].startswith(f"--- {prefs}\tv2 ")
    assert diff.stdout.splitlines()[1].startswith(f"+++ {prefs}\tv3 ")
    missing = run_areev("cat", prefs, "--version", "00000000009", "--db", db)
    assert (missing.returncode, missing.stderr) == (
        1, f"areev: cat {prefs} --version 00000000009: {prefs} has no version 00000000009\n")


# Issue: 65 digits or more past the largest version number were a usage
# error (exit 2), where 11 to 64 of them named a version that does not exist.
def test_version_numbers_past_the_range_of_any_length_name_no_version(run_areev, db, prefs):
    for nines in ("9" * 11, "9" * 64, "9" * 65, "9" * 300):
        cat = run_areev("cat", prefs, "--version", nines, "--db", db)
        assert (cat.returncode, cat.stderr) == (
            1, f"areev: cat {prefs} --version {nines}: {prefs} has no version {nines}\n"), cat
        diff = run_areev("diff", prefs, "--from", "1", "--to", nines, "--db", db)
        assert diff.returncode == 1 and f"has no version {nines}" in diff.stderr, diff.stderr


def test_malformed_version_names_are_usage_errors(run_areev, db, prefs):
    for bad in ("abc", "v1", "-1", "zzzzzz", "1.5"):
        cat = run_areev("cat", prefs, "--version", bad, "--db", db)
        assert cat.returncode == 2 and "neither a version number" in cat.stderr, (bad, cat.stderr)
        diff = run_areev("diff", prefs, "--from", bad, "--db", db)
        assert diff.returncode == 2 and diff.stdout == "", (bad, diff.stderr)
    # Hex one digit longer than a grain id: the message gives the bounds.
    long_hex = "ab" * 32 + "c"
    cat = run_areev("cat", prefs, "--version", long_hex, "--db", db)
    assert (cat.returncode, cat.stderr) == (
        2, f"areev: --version: '{long_hex}' is neither a version number nor a grain id prefix "
           "(6 to 64 hex digits); run with --help\n"), cat


def test_diff_output_applies_with_patch(run_areev, db, tmp_path):
    old = "".join(f"line {i}\n" for i in range(40))
    new_lines = [f"line {i}\n" for i in range(40)]
    new_lines[3] = "changed 3\n"
    del new_lines[20:22]
    new_lines.insert(30, "inserted\n")
    new = "".join(new_lines) + "tail without newline"
    memtool(run_areev, db, command="create", path="/memories/p.txt", file_text=old)
    memtool(run_areev, db, command="create", path="/memories/p.txt", file_text=new)
    diff = run_areev("diff", "/memories/p.txt", "--from", "1", "--to", "2", "--db", db).stdout
    assert "\\ No newline at end of file" in diff
    target = tmp_path / "p.txt"
    target.write_text(old)
    (tmp_path / "p.diff").write_text(diff)
    subprocess.run(["patch", "-s", str(target), str(tmp_path / "p.diff")], check=True)
    assert target.read_text() == new
    # With unique lines the shortest script is unique: GNU diff -u agrees
    # line for line (headers aside).
    (tmp_path / "old.txt").write_text(old)
    (tmp_path / "new.txt").write_text(new)
    gnu = subprocess.run(["diff", "-u", str(tmp_path / "old.txt"), str(tmp_path / "new.txt")],
                         capture_output=True, text=True)
    assert gnu.stdout.splitlines()[2:] == diff.splitlines()[2:]


def test_log_shows_ops_in_order(run_areev, db, prefs):
    memtool(run_areev, db, command="rename", old_path=prefs, new_path="/memories/p2.md")
    memtool(run_areev, db, command="delete", path="/memories/p2.md")
    proc = run_areev("log", "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr
    ops = json.loads(proc.stdout)
    seqs = [op["seq"] for op in ops]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    for op in ops:
        assert ISO.match(op["at"]) and op["ns"] == "default"
    names = [op["op"] for op in ops]
    # create -> two edits -> rename -> delete, in that order
    file_ops = [op for op in ops if op["subject"] in (prefs, "/memories/p2.md")]
    kinds = [op["op"] for op in file_ops]
    assert len(file_ops) >= 5, names
    assert kinds.index("rename") < kinds.index("delete")
    rename = next(op for op in file_ops if op["op"] == "rename")
    assert rename["subject"] == prefs and rename["new_subject"] == "/memories/p2.md"
    first_three = [op for op in file_ops if op["subject"] == prefs and op["op"] != "rename"]
    assert len({op["grain_id"] for op in first_three if op["grain_id"]}) >= 3

    table = run_areev("log", "--db", db)
    assert table.returncode == 0
    rows = table.stdout.splitlines()
    assert rows[0].split()[0] == "SEQ" and len(rows) == len(ops) + 1
    assert "rename" in table.stdout and f"{prefs} -> /memories/p2.md" in table.stdout


def test_log_filters(run_areev, db, prefs):
    memtool(run_areev, db, ns="other", command="create", path="/memories/o.md", file_text="o")
    everything = json.loads(run_areev("log", "--db", db, "--json").stdout)
    assert {op["ns"] for op in everything} == {"default", "other"}
    other = json.loads(run_areev("log", "--db", db, "--ns", "other", "--json").stdout)
    assert other and {op["ns"] for op in other} == {"other"}
    after = everything[1]["seq"]
    tail = json.loads(run_areev("log", "--db", db, "--after", str(after), "--json").stdout)
    assert [op["seq"] for op in tail] == [op["seq"] for op in everything if op["seq"] > after]
    limited = json.loads(run_areev("log", "--db", db, "--limit", "2", "--json").stdout)
    assert [op["seq"] for op in limited] == [op["seq"] for op in everything[:2]]
    assert run_areev("log", "--db", db, "--limit", "many").returncode == 2
    assert run_areev("log", "--db", db, "--ns", "ghost").returncode == 1


def test_a_prefix_two_files_at_a_path_share_is_ambiguous(run_areev, db, m):
    # A grain id is looked for in every chain at the path (docs/cli.md, `cat`),
    # so a prefix that starts a version of the live file and one of an older
    # file deleted there names no one version: exit 2, as within one chain,
    # never a silent pick of the live file's. Six-hex prefixes collide by
    # chance once a path holds a few thousand versions; the test makes one by
    # giving the older file's version an id that shares the live one's prefix.
    import sqlite3
    m(command="create", path="/memories/p.md", file_text="old\n")
    m(command="delete", path="/memories/p.md")
    m(command="create", path="/memories/p.md", file_text="new\n")
    old = history_json(run_areev, db, "/memories/p.md", "--chain", "1")[0]
    new = history_json(run_areev, db, "/memories/p.md")[0]
    assert old["chain_id"] != new["chain_id"]
    shared = new["grain_id"][:6]
    forged = shared + old["grain_id"][6:]
    assert forged != new["grain_id"]
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE grains SET grain_id = ? WHERE grain_id = ?",
                    (bytes.fromhex(forged), bytes.fromhex(old["grain_id"])))
    con.close()
    for args in (("cat", "/memories/p.md", "--version", shared),
                 ("diff", "/memories/p.md", "--from", shared),
                 ("diff", "/memories/p.md", "--to", shared)):
        proc = run_areev(*args, "--db", db)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stdout == "" and "ambiguous" in proc.stderr, (args, proc.stderr)
    # A longer prefix names one version again, in either file.
    assert run_areev("cat", "/memories/p.md", "--version", new["grain_id"][:12],
                     "--db", db).stdout == "new\n"
    assert run_areev("cat", "/memories/p.md", "--version", forged[:12],
                     "--db", db).stdout == "old\n"
    # Within one chain (--chain) the prefix is that chain's alone.
    assert run_areev("cat", "/memories/p.md", "--chain", str(new["chain_id"]),
                     "--version", shared, "--db", db).stdout == "new\n"
    # A number still names the shown file's version.
    assert run_areev("cat", "/memories/p.md", "--version", "1", "--db", db).stdout == "new\n"


# Issue: `history`, `log` and `cat --version PREFIX` read every version (or
# op-log entry) into memory and built the whole output before printing it: a
# file with a million versions took 0.8-3.5 GB, 368 MB at 100,000 for
# `history --json`. They now read and print in pages; `cat` scans the
# chain's ids keeping only matches.
def test_a_long_history_and_log_print_in_bounded_memory(areev_bin, db):
    if os.environ.get("AREEV_PRESET") == "asan":
        pytest.skip("the sanitizers' own memory use is not the product's")
    n = 100_000
    lines = [json.dumps({"command": "create", "path": "/memories/log.md", "file_text": "a\n"})]
    for i in range(n):
        old, new = ("a", "b") if i % 2 == 0 else ("b", "a")
        lines.append(json.dumps({"command": "str_replace", "path": "/memories/log.md",
                                 "old_str": old, "new_str": new}))
    proc = subprocess.run([areev_bin, "memtool", "--batch", "--db", db],
                          input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]

    def peak(*args):
        # Peak resident memory of one `areev` run, measured in a child of
        # its own so no earlier run's peak is counted.
        script = ("import resource, subprocess, sys\n"
                  "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n"
                  "sys.stdout.buffer.write(p.stdout)\n"
                  "sys.stderr.write('%d %d' % (p.returncode, resource.getrusage("
                  "resource.RUSAGE_CHILDREN).ru_maxrss))\n")
        run = subprocess.run([sys.executable, "-c", script, areev_bin, *args, "--db", db],
                             capture_output=True, timeout=300)
        code, kib = map(int, run.stderr.decode().split())
        assert code == 0, args
        return run.stdout.decode(), kib // 1024

    limit_mib = 64  # 27 MiB measured; 95-368 MiB before
    out, mib = peak("history", "/memories/log.md", "--json")
    versions = json.loads(out)
    assert [v["version"] for v in versions] == list(range(1, n + 2))
    assert mib < limit_mib, mib
    out, mib = peak("history", "/memories/log.md")
    rows = out.splitlines()
    assert len(rows) == n + 2 and rows[0].split()[0] == "VER" and rows[-1].split()[0] == str(n + 1)
    # One width for every row: the grain ids start in one column.
    assert rows[1].index(versions[0]["grain_id"][:12]) == \
        rows[-1].index(versions[-1]["grain_id"][:12]) == len(str(n + 1)) + 2
    assert mib < limit_mib, mib
    out, mib = peak("log", "--json")
    ops = json.loads(out)
    assert len(ops) == n + 1 and ops[0]["op"] == "add" and ops[-1]["op"] == "supersede"
    assert mib < limit_mib, mib
    out, mib = peak("log")
    assert len(out.splitlines()) == n + 2
    assert mib < limit_mib, mib
    middle = versions[n // 2]
    out, mib = peak("cat", "/memories/log.md", "--version", middle["grain_id"][:10])
    assert out == ("b\n" if middle["version"] % 2 == 0 else "a\n")
    assert mib < limit_mib, mib


# Issue: printed as they were read, `log --json` and `history --json` of a
# store damaged past their first pages wrote 720 KB of an unclosed array
# before exit 3; a failed command prints nothing on stdout (docs/cli.md).
def test_a_log_or_history_the_store_cannot_read_prints_nothing(areev_bin, db):
    import sqlite3

    def edits(n, start):
        return [json.dumps({"command": "str_replace", "path": "/memories/h.md",
                            "old_str": "ab"[i % 2], "new_str": "ba"[i % 2]})
                for i in range(start, start + n)]

    # h.md's versions before and after other files' rows: its first versions
    # and the log's first entries lie in pages written early, its last ones
    # in the pages damaged below.
    lines = [json.dumps({"command": "create", "path": "/memories/h.md", "file_text": "a\n"})]
    lines += edits(1500, 0)
    lines += [json.dumps({"command": "create", "path": f"/memories/f{i}.md",
                          "file_text": "x" * 200}) for i in range(3000)]
    lines += edits(1500, 1500)
    subprocess.run([areev_bin, "memtool", "--batch", "--db", db], input="\n".join(lines) + "\n",
                   capture_output=True, text=True, check=True, timeout=300)
    chain = json.loads(subprocess.run([areev_bin, "history", "/memories/h.md", "--json", "--db",
                                       db], capture_output=True, text=True).stdout)[0]["chain_id"]
    pages = os.path.getsize(db) // 4096
    with open(db, "r+b") as f:  # the last quarter
        for page in range(pages * 3 // 4, pages):
            f.seek(page * 4096)
            f.write(b"\xff" * 4096)
    # The first page of each listing still reads, the whole does not: one
    # pass printing as it read would print that page before failing.
    con = sqlite3.connect(db)
    for table, where in (("grains", f"chain_id = {chain} AND "), ("oplog", "")):
        first = f"SELECT * FROM {table} WHERE {where}seq > 0 ORDER BY seq LIMIT 1000"
        assert len(con.execute(first).fetchall()) == 1000, table
        with pytest.raises(sqlite3.DatabaseError):
            con.execute(f"SELECT * FROM {table} WHERE {where}seq > 0 ORDER BY seq").fetchall()
    con.close()
    for args in (["log", "--json"], ["log"], ["history", "/memories/h.md", "--json"],
                 ["history", "/memories/h.md"]):
        proc = subprocess.run([areev_bin, *args, "--db", db], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 3, (args, proc.stderr)
        assert proc.stdout == "", args
        assert "malformed" in proc.stderr, (args, proc.stderr)


def test_a_path_left_by_a_file_and_now_a_directory_says_both(run_areev, db, m):
    m(command="create", path="/memories/d.md", file_text="x\n")
    m(command="rename", old_path="/memories/d.md", new_path="/memories/e.md")
    m(command="create", path="/memories/d.md/x.md", file_text="y\n")
    proc = run_areev("history", "/memories/d.md", "--db", db)
    assert proc.returncode == 1
    assert re.fullmatch(r"areev: history /memories/d\.md: no history for /memories/d\.md "
                        r"\(memory_file\); moved away at \S+Z, now at /memories/e\.md; "
                        r"it is a directory\n", proc.stderr), proc.stderr


def test_edits_in_the_middle_of_a_large_file_store_only_the_change(run_areev, db):
    # One `areev memtool` process per edit: each str_replace or insert is
    # stored as the bytes it changed, on the version it was made from, and
    # every version reads back whole.
    text = "".join(f"entry {i}: something the agent noted\n" for i in range(300))
    expected = [text]

    def tool(command):
        proc = run_areev("memtool", json.dumps(command), "--db", db)
        assert proc.returncode == 0, proc.stdout

    tool({"command": "create", "path": "/memories/m.md", "file_text": text})
    for i in range(30):
        if i % 2:
            old, new = f"entry {i * 7}:", f"entry {i * 7} (revised):"
            tool({"command": "str_replace", "path": "/memories/m.md", "old_str": old,
                  "new_str": new})
            expected.append(expected[-1].replace(old, new))
        else:
            tool({"command": "insert", "path": "/memories/m.md", "insert_line": 100 + i,
                  "insert_text": f"inserted {i}\n"})
            lines = expected[-1].split("\n")
            lines.insert(100 + i, f"inserted {i}")
            expected.append("\n".join(lines))
    for v, body in enumerate(expected, 1):
        assert run_areev("cat", "/memories/m.md", "--version", str(v), "--db", db).stdout == body
    splices, stored, whole = body_rows(db)
    assert splices >= 26
    assert stored * 8 < whole, (stored, whole)
