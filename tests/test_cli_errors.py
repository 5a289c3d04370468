"""Exit codes 0/1/2/3, corrupt and missing stores, and "bad input loses nothing"."""
import base64
import contextlib
import json
import os
import pathlib
import pwd
import re
import shutil
import sqlite3
import subprocess
import tempfile

import pytest

from disk_util import ext4, fill, tmpfs


def create(path, text):
    return json.dumps({"command": "create", "path": path, "file_text": text})


def sqlite_file(path, *statements):
    """Another program's SQLite database at path, made by running statements."""
    con = sqlite3.connect(path, isolation_level=None)  # each statement commits
    for statement in statements:
        con.execute(statement)
    con.close()
    return path


def not_a_store(path):
    return (f"areev: cannot open store {path}: the file is a SQLite "
            f"database but not an areev store\n")


def test_exit_codes(run_areev, db):
    assert run_areev("memtool", create("/memories/a", "a"), "--db", db).returncode == 0
    assert run_areev("cat", "/memories/b", "--db", db).returncode == 1
    unknown = run_areev("frobnicate", "--db", db)
    assert unknown.returncode == 2
    assert unknown.stderr == "areev: unknown command 'frobnicate'; run with --help\n"
    # A usage error is one line too, like every other error.
    flag = run_areev("log", "--frobnicate", "--db", db)
    assert (flag.returncode, flag.stderr) == (
        2, "areev: unknown option '--frobnicate'; run with --help\n")
    negative = run_areev("diff", "/memories/a", "-U", "-1", "--db", db)
    assert (negative.returncode, negative.stderr) == (
        2, "areev: --unified: must be a decimal number from 0 to 18446744073709551615, "
           "got -1; run with --help\n")
    assert run_areev().returncode == 2
    assert run_areev("cat", "/memories/a", "--db", db, "--ns", "bad name!").returncode == 2


# Issue: an option where the subcommand belongs was called an unknown command,
# and an empty value was shown as nothing ("got ; run with --help").
def test_unknown_options_and_empty_values_are_named_as_such(run_areev, db):
    for args, said in ((["--bogus"], "unknown option '--bogus'"),
                       (["--bogus", "log"], "unknown option '--bogus'"),
                       (["--version=1"], "--version takes no value, got '--version=1'"),
                       (["log", "-x", "--db", db], "unknown option '-x'"),
                       (["log", "-x", "--y", "--db", db], "unknown options '-x' '--y'"),
                       # An unknown option given its value apart: the option is the fault.
                       (["log", "--subject", "x", "--db", db], "unknown option '--subject'"),
                       (["log", "--bogus", "x", "--zap", "y", "--db", db],
                        "unknown options '--bogus' '--zap'"),
                       (["log", "--after=", "--db", db],
                        "--after: must be a decimal number from 0 to 18446744073709551615, "
                        "got ''"),
                       (["log", "--limit", " 1", "--db", db],
                        "--limit: must be a decimal number from 0 to 18446744073709551615, "
                        "got ' 1'")):
        proc = run_areev(*args)
        assert (proc.returncode, proc.stderr) == (2, f"areev: {said}; run with --help\n"), args
    assert not os.path.exists(db)


# Issue: "--" before the command was an "unknown option '--'", `--version` beside a
# command was an unknown option (the command line alone prints the version), and
# "--version=" was "takes no other arguments".
def test_options_end_and_version_misplaced_are_named(run_areev, db):
    for args, said in ((["--", "log"], "the command must come before '--'"),
                       (["--", "--help"], "the command must come before '--'"),
                       (["--version", "log"],
                        "--version takes no other arguments: areev --version prints the version"),
                       (["log", "--version", "--db", db],
                        "--version takes no other arguments: areev --version prints the version"),
                       (["--version="], "--version takes no value, got '--version='")):
        proc = run_areev(*args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            2, "", f"areev: {said}; run with --help\n"), args
    assert not os.path.exists(db)


# Issue: a store path of blanks showed as nothing ("cannot open store  : ..."), and a
# dangling symbolic link as the store was "no such file" with no word of the link.
def test_blank_store_paths_are_quoted_and_dangling_links_named(run_areev, tmp_path):
    for name in (" ", "a "):
        proc = run_areev("log", env={"AREEV_DB": name}, cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (
            3, f"areev: cannot open store '{name}': no such file (only commands that write "
               f"create a store)\n")
    link = tmp_path / "link.db"
    link.symlink_to(tmp_path / "gone" / "x.db")
    proc = run_areev("history", "/memories/a", "--db", str(link))
    assert (proc.returncode, proc.stderr) == (
        3, f"areev: cannot open store {link}: it is a symbolic link to {tmp_path}/gone/x.db, "
           f"which does not exist (only commands that write create a store)\n")
    assert not (tmp_path / "gone").exists()


# Issue: a command that named a namespace the store lacks said only "namespace
# default not found in X", with no hint of --ns or of the namespaces there.
def test_a_missing_namespace_names_the_ones_the_store_has(run_areev, db):
    for ns in ("work", "assistant", "b", "c", "d", "e"):
        assert run_areev("memtool", create("/memories/a.md", "a\n"), "--db", db,
                         "--ns", ns).returncode == 0
    proc = run_areev("history", "/memories/a.md", "--db", db)
    assert (proc.returncode, proc.stderr) == (
        1, f"areev: namespace default not found in {db}; it has namespaces assistant, b, c, d, "
           f"e and 1 more (choose one with --ns NAME)\n")
    one = db + ".one"
    assert run_areev("memtool", create("/memories/a.md", "a\n"), "--db", one,
                     "--ns", "assistant").returncode == 0
    proc = run_areev("cat", "/memories/a.md", "--db", one, "--ns", "nope")
    assert (proc.returncode, proc.stderr) == (
        1, f"areev: namespace nope not found in {one}; it has namespace assistant (choose one "
           f"with --ns NAME)\n")


# Issue: `diff` of a directory said only "no history for P (memory_file)";
# `history` of it adds that it is a directory.
def test_diff_of_a_directory_says_it_is_one(run_areev, db):
    assert run_areev("memtool", create("/memories/d/a.md", "a\n"), "--db", db).returncode == 0
    for command in ("diff", "history"):
        proc = run_areev(command, "/memories/d", "--db", db)
        assert (proc.returncode, proc.stderr) == (
            1, f"areev: {command} /memories/d: no history for /memories/d (memory_file); it is "
               f"a directory\n"), command


# Issue: a --db whose last name is over 255 bytes said "cannot read the file"
# also to commands that would have created it.
def test_a_store_name_too_long_for_the_filesystem_is_named_as_such(run_areev, tmp_path):
    long_name = str(tmp_path / ("a" * 300 + ".db"))
    for args in (["memtool", create("/memories/a.md", "a\n")], ["log"]):
        proc = run_areev(*args, "--db", long_name)
        assert (proc.returncode, proc.stderr) == (
            3, f"areev: cannot open store {long_name}: its file name is longer than the "
               f"filesystem allows (File name too long)\n"), args


# Issue: `umount ''` said "umount:  is not mounted", and a mount of another
# type was "a ext4 mount".
def test_umount_of_an_empty_name_or_another_kind_of_mount_reads_well(run_areev):
    empty = run_areev("umount", "")
    assert (empty.returncode, empty.stderr) == (
        2, "areev: umount: the mountpoint must not be empty; run with --help\n")
    proc = run_areev("umount", "/proc")
    assert (proc.returncode, proc.stderr) == (
        1, "areev: umount: /proc is not a FUSE mount (its type is proc)\n")


def test_corrupt_db_gives_exit_3_with_clear_message(run_areev, tmp_path):
    bad = tmp_path / "corrupt.db"
    bad.write_bytes(os.urandom(64 * 1024))
    before = bad.read_bytes()
    for args in (["memtool", json.dumps({"command": "view", "path": "/memories"})],
                 ["history", "/memories/a"], ["cat", "/memories/a"], ["log"],
                 ["add", "--subject", "a", "--relation", "r", "--object", "o"],
                 ["recall", "--subject", "a"], ["restore", "/memories/a"]):
        proc = run_areev(*args, "--db", str(bad))
        assert proc.returncode == 3, (args, proc.stdout, proc.stderr)
        assert proc.stdout == ""
        assert "cannot open store" in proc.stderr and str(bad) in proc.stderr, proc.stderr
        assert len(proc.stderr.splitlines()) == 1
    assert bad.read_bytes() == before  # never "repaired" or truncated


def test_open_failures_say_what_is_wrong_with_the_path(run_areev, tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database" * 100)
    missing_dir = tmp_path / "no" / "such" / "x.db"
    for args in (["log"], ["memtool", create("/memories/a", "a")]):
        proc = run_areev(*args, "--db", str(junk))
        assert (proc.returncode, proc.stderr) == (
            3, f"areev: cannot open store {junk}: not an areev store: the file is not a "
               f"SQLite database\n"), args
    proc = run_areev("memtool", create("/memories/a", "a"), "--db", str(missing_dir))
    assert (proc.returncode, proc.stderr) == (
        3, f"areev: cannot open store {missing_dir}: no such directory: {missing_dir.parent}\n")
    assert not (tmp_path / "no").exists()


def test_a_store_path_that_is_a_symbolic_link_is_explained_at_its_target(run_areev, tmp_path):
    # SQLite creates the store where a link points: a failure is explained
    # there, after the last of a chain of links.
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "link.db").symlink_to("../no/x.db")
    (tmp_path / "chain.db").symlink_to("sub/link.db")
    target = tmp_path / "no" / "x.db"
    for link in ("sub/link.db", "chain.db"):
        proc = run_areev("memtool", create("/memories/a", "a"), "--db", link, cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (
            3, f"areev: cannot open store {link}: {link} is a symbolic link to {target}: "
               f"no such directory: {target.parent}\n")
    # A loop of links says so; a link to a place that can be written is used.
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    proc = run_areev("memtool", create("/memories/a", "a"), "--db", "loop1", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (
        3, "areev: cannot open store loop1: cannot open the file: Too many levels of symbolic "
           "links\n")
    (tmp_path / "no").mkdir()
    assert run_areev("memtool", create("/memories/a", "a"), "--db", "chain.db",
                     cwd=tmp_path).returncode == 0
    assert target.is_file()


def test_usage_errors_end_with_the_help_hint(run_areev, db):
    for args in (["history", "--db", db], ["cat", "prefs.md", "--db", db],
                 ["--version", "--db", db], ["frobnicate"], [],
                 ["cat", "/memories/a.md", "--help-me", "--db", db]):
        proc = run_areev(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("areev: ") and proc.stderr.endswith(
            "; run with --help\n"), (args, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1


def test_truncated_real_store_is_not_silently_accepted(run_areev, db, tmp_path):
    assert run_areev("memtool", create("/memories/a", "a" * 50_000), "--db", db).returncode == 0
    data = open(db, "rb").read()
    cut = tmp_path / "cut.db"
    cut.write_bytes(data[:100] + os.urandom(len(data) - 100))
    proc = run_areev("cat", "/memories/a", "--db", str(cut))
    assert proc.returncode in (1, 3), proc.stderr
    assert proc.stdout == "" and proc.stderr


def test_foreign_sqlite_file_is_exit_3(run_areev, tmp_path):
    # A schema version of its own, or another application id: not a store of
    # a newer areev, which would carry areev's id ("arev").
    for name, stamp in (("version.db", "PRAGMA user_version = 999"),
                        ("app.db", "PRAGMA application_id = 1234")):
        other = sqlite_file(tmp_path / name, "CREATE TABLE t (x)", stamp)
        for args in (["log"], ["memtool", create("/memories/a", "a")]):
            proc = run_areev(*args, "--db", str(other))
            assert (proc.returncode, proc.stderr) == (3, not_a_store(other)), (name, args)
    newer = sqlite_file(tmp_path / "newer.db", "CREATE TABLE t (x)",
                        f"PRAGMA application_id = {0x61726576}", "PRAGMA user_version = 999")
    proc = run_areev("log", "--db", str(newer))
    assert (proc.returncode, proc.stderr) == (
        3, f"areev: cannot open store {newer}: the store has schema version 999, "
           f"newer than this build supports (9)\n")


def test_a_store_whose_schema_version_another_program_changed_is_named_so(run_areev, db,
                                                                            tmp_path):
    # Issue: a negative or zero version under areev's id was taken for an old
    # store, and its migration failed with "no such column" from SQL.
    assert run_areev("memtool", create("/memories/a", "a"), "--db", db).returncode == 0
    for version in (-1, 0, 1):
        copy = tmp_path / f"v{version}.db"
        shutil.copy(db, copy)
        with contextlib.closing(sqlite3.connect(copy)) as con:
            con.execute(f"PRAGMA user_version = {version}")
        before = copy.read_bytes()
        proc = run_areev("log", "--db", str(copy))
        if version < 1:
            reason = (f"the store's header says schema version {version}, which no areev build "
                      "writes (another program changed it)")
        else:
            reason = ("migrating the store from schema version 1 to 9 failed (the file is left "
                      'as it was): the store: no such column: "head_grain"')
        assert (proc.returncode, proc.stderr) == (
            3, f"areev: cannot open store {copy}: {reason}\n"), version
        assert copy.read_bytes() == before, version


def test_read_only_commands_do_not_create_a_store(run_areev, tmp_path):
    missing = tmp_path / "missing.db"
    for args in (["cat", "/memories/a"], ["history", "/memories/a"], ["log"],
                 ["recall", "--subject", "x"], ["diff", "/memories/a"]):
        proc = run_areev(*args, "--db", str(missing))
        assert proc.returncode == 3, (args, proc.stderr)
        assert "cannot open store" in proc.stderr and "no such file" in proc.stderr
    assert not missing.exists()
    # An empty file (touch agent.db) is not turned into a store by a read.
    empty = tmp_path / "empty.db"
    empty.touch()
    for args in (["cat", "/memories/a"], ["log"], ["history", "/memories/a"]):
        proc = run_areev(*args, "--db", str(empty))
        assert proc.returncode == 3, (args, proc.stderr)
        assert "the file is empty, not an areev store" in proc.stderr
    assert empty.stat().st_size == 0 and not (tmp_path / "empty.db-wal").exists()
    # A write may create the store in it.
    create = json.dumps({"command": "create", "path": "/memories/a", "file_text": "a"})
    assert run_areev("memtool", create, "--db", str(empty)).returncode == 0
    assert run_areev("cat", "/memories/a", "--db", str(empty)).stdout == "a"


def test_another_programs_database_is_refused_as_it_was_found(run_areev, tmp_path):
    # A database of another program (rollback journal, tables of its own) is
    # refused by reads and writes alike, and left byte for byte as it was: no
    # switch to WAL, no -wal or -shm beside it.
    other = sqlite_file(tmp_path / "other.db", "CREATE TABLE t (x)",
                        "INSERT INTO t VALUES (1)")
    before = other.read_bytes()
    for args in (["log"], ["cat", "/memories/a"],
                 ["memtool", create("/memories/a", "a")],
                 ["add", "--subject", "s", "--relation", "r", "--object", "o"]):
        proc = run_areev(*args, "--db", str(other))
        assert (proc.returncode, proc.stderr) == (3, not_a_store(other)), args
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def test_a_sqlite_database_without_tables_is_made_a_store_only_by_a_write(run_areev, tmp_path):
    # VACUUM writes the header page: a database with no tables.
    blank = sqlite_file(tmp_path / "blank.db", "PRAGMA user_version = 0", "VACUUM")
    before = blank.read_bytes()
    assert len(before) > 0
    proc = run_areev("log", "--db", str(blank))
    assert (proc.returncode, proc.stderr) == (3, not_a_store(blank))
    assert blank.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blank.db"]
    assert run_areev("memtool", create("/memories/a", "a"), "--db", str(blank)).returncode == 0
    assert run_areev("cat", "/memories/a", "--db", str(blank)).stdout == "a"


def test_memtool_input_the_contract_rejects_creates_no_store_and_no_namespace(
        areev_bin, run_areev, tmp_path):
    bad = ['{"command":', '[1]', '{"command":"view","path":"/nope"}',
           '{"command":"create","path":"/memories/a.md"}',
           '{"command":"rename","old_path":"/memories/a","new_path":"/memories/../b"}']
    missing = tmp_path / "new.db"
    for command in bad:
        proc = run_areev("memtool", command, "--db", str(missing))
        assert proc.returncode == 1 and proc.stdout.startswith("Error: "), (command, proc)
    proc = run_areev("memtool", "--batch", "--db", str(missing), input="\n".join(bad) + "\n")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0 and len(lines) == len(bad)
    assert all(line["is_error"] for line in lines)
    assert list(tmp_path.iterdir()) == []
    # A batch opens (and creates) the store at its first command that needs it.
    good = json.dumps({"command": "view", "path": "/memories/a.md"})
    proc = run_areev("memtool", "--batch", "--db", str(missing),
                     input=bad[0] + "\n" + create("/memories/a.md", "a") + "\n" + good + "\n")
    assert [json.loads(line)["content"] for line in proc.stdout.splitlines()] == [
        "Error: Input is not valid JSON", "File created successfully at: /memories/a.md",
        "Here's the content of /memories/a.md with line numbers:\n     1\ta"]
    # In an existing store, rejected input adds no namespace.
    for command in bad:
        assert run_areev("memtool", command, "--db", str(missing), "--ns", "other").returncode == 1
    proc = run_areev("log", "--db", str(missing), "--ns", "other")
    assert proc.returncode == 1 and "namespace other not found" in proc.stderr
    # --db and --ns are checked before the input, as for any command.
    for options, code in (([":memory:"], 2), ([""], 2), (["stores/"], 3),
                          ([str(missing), "--ns", "bad!"], 2)):
        for mode in (["{}"], ["--batch"]):
            proc = run_areev("memtool", *mode, "--db", *options, input="{}\n", cwd=tmp_path)
            assert (proc.returncode, proc.stdout) == (code, ""), (options, mode, proc)
            assert proc.stderr.startswith("areev: "), proc.stderr
    # `memtool -` refuses them before it waits for its input (stdin left open).
    for options in ([":memory:"], [str(missing), "--ns", "bad!"]):
        proc = subprocess.Popen([areev_bin, "memtool", "-", "--db", *options],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            assert proc.wait(timeout=10) == 2, proc.stderr.read()
        finally:
            proc.kill()
            proc.wait()
            proc.stdin.close()
            proc.stdout.close()
            proc.stderr.close()
    # An existing file that is no store is refused before any result line.
    junk = tmp_path / "junk.db"
    junk.write_text("not a store")
    proc = run_areev("memtool", "--batch", "--db", str(junk), input="{}\n" + good + "\n")
    assert (proc.returncode, proc.stdout) == (3, ""), proc
    assert not (tmp_path / ":memory:").exists() and not (tmp_path / "stores").exists()


# Issue: a store whose page of versions reads as empty (its cell count
# zeroed) made `diff` say "no versions" (exit 1) where `history` reported the
# damage (exit 3), and neither message named the store.
def test_damage_found_after_the_open_is_exit_3_and_names_the_store(run_areev, tmp_path):
    db = tmp_path / "damaged.db"
    for text in ("v1", "v2", "v3"):
        assert run_areev("memtool", create("/memories/f.md", text), "--db", str(db)).returncode == 0
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = [p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'grains'")]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    assert len(pages) == 1
    raw = bytearray(db.read_bytes())
    at = (pages[0] - 1) * page_size
    raw[at + 3:at + 5] = b"\0\0"  # the leaf's cell count
    db.write_bytes(bytes(raw))
    for args in (["history", "/memories/f.md"], ["diff", "/memories/f.md"]):
        proc = run_areev(*args, "--db", str(db))
        assert proc.returncode == 3, (args, proc.stderr)
        assert proc.stderr.startswith(f"areev: {args[0]} /memories/f.md: "), proc.stderr
        assert proc.stderr.endswith(f" (in the store {db})\n"), proc.stderr


def test_db_path_is_a_directory(run_areev, tmp_path):
    proc = run_areev("memtool", create("/memories/a", "a"), "--db", str(tmp_path))
    assert proc.returncode == 3 and "cannot open store" in proc.stderr


def test_usage_errors_of_writing_commands_create_and_change_nothing(run_areev, tmp_path):
    view = json.dumps({"command": "view", "path": "/memories"})
    refused = [
        (["--ns", "bad ns", "memtool", view], "areev: --ns: invalid namespace name 'bad ns'"),
        (["add", "--subject", "a", "--relation", "r", "--ns", "bad ns"],
         "areev: --ns: invalid namespace name 'bad ns'"),
        (["add", "--subject", "a", "--relation", "memory_file"],
         "areev: add: memory_file grains are written through the memory tool"),
        (["add", "--subject", "a", "--relation", "r", "--object", "\udcff"],
         "areev: add: a fact's subject, relation and object must be UTF-8 text"),
        (["log", "--ns", "bad/ns"], "areev: --ns: invalid namespace name 'bad/ns'"),
    ]
    missing = tmp_path / "new.db"
    for args, message in refused:
        proc = run_areev(*args, "--db", str(missing))
        assert proc.returncode == 2 and proc.stderr.startswith(message), (args, proc.stderr)
    assert list(tmp_path.iterdir()) == []
    # In an existing store, a refused add adds no namespace either.
    store = tmp_path / "s.db"
    assert run_areev("memtool", create("/memories/a", "a"), "--db", str(store),
                     "--ns", "other").returncode == 0
    for args, _ in refused[1:4]:
        assert run_areev(*args, "--db", str(store)).returncode == 2, args
    proc = run_areev("log", "--db", str(store), "--ns", "default")
    assert proc.returncode == 1 and "namespace default not found" in proc.stderr


def test_memtool_says_which_of_its_inputs_is_wrong(run_areev, db):
    proc = run_areev("memtool", "--db", db)
    assert (proc.returncode, proc.stderr) == (2, "areev: memtool: give one JSON command (or - "
                                                 "for stdin), or --batch; run with --help\n")
    proc = run_areev("memtool", "{}", "--batch", "--db", db)
    assert (proc.returncode, proc.stderr) == (
        2, "areev: memtool: give a JSON command or --batch, not both; run with --help\n")


def test_missing_namespace_for_reads_is_exit_1(run_areev, db):
    assert run_areev("memtool", create("/memories/a", "a"), "--db", db).returncode == 0
    proc = run_areev("cat", "/memories/a", "--db", db, "--ns", "ghost")
    assert proc.returncode == 1 and "namespace ghost" in proc.stderr


def test_bad_input_loses_nothing(run_areev, db):
    assert run_areev("memtool", create("/memories/a.md", "keep\n"), "--db", db).returncode == 0
    hist = run_areev("history", "/memories/a.md", "--db", db, "--json").stdout
    failing = [
        json.dumps({"command": "str_replace", "path": "/memories/a.md", "old_str": "zzz",
                    "new_str": "y"}),
        json.dumps({"command": "insert", "path": "/memories/a.md", "insert_line": 99,
                    "insert_text": "x"}),
        json.dumps({"command": "create", "path": "/memories/a.md/child", "file_text": "x"}),
        json.dumps({"command": "rename", "old_path": "/memories/a.md", "new_path": "/tmp/x"}),
        json.dumps({"command": "delete", "path": "/memories"}),
        json.dumps({"command": "nuke", "path": "/memories/a.md"}),
        '{"command": "create", "path": "/memories/a.md", "file_text": ',
        "[]",
    ]
    for cmd in failing:
        proc = run_areev("memtool", cmd, "--db", db)
        assert proc.returncode == 1, cmd
        assert proc.stdout.startswith("Error: "), cmd
    for cmd in ("--bogus", "--limit"):
        assert run_areev("memtool", cmd, "--db", db).returncode == 2
    assert run_areev("cat", "/memories/a.md", "--db", db).stdout == "keep\n"
    assert run_areev("history", "/memories/a.md", "--db", db, "--json").stdout == hist


def test_stdout_write_failure_is_reported(areev_bin, db):
    import subprocess
    cmd = create("/memories/a", "a" * 10_000)
    subprocess.run([areev_bin, "memtool", cmd, "--db", db], check=True, capture_output=True)
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([areev_bin, "cat", "/memories/a", "--db", db], stdout=full,
                              stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1
    assert "cannot write to stdout" in proc.stderr


# UBSan's vptr check needs descriptors of its own, and reports every virtual
# call as a type error once the process has none left.
@pytest.mark.skipif(os.environ.get("AREEV_PRESET") == "asan",
                    reason="the sanitizers fail before the store's own error")
def test_running_out_of_file_descriptors_is_named_as_such(areev_bin, tmp_path):
    import resource
    failed = 0
    for limit in range(4, 16):  # too few for a store's database, WAL and shared memory
        db = tmp_path / f"{limit}.db"
        proc = subprocess.run(
            [areev_bin, "memtool", create("/memories/a", "a"), "--db", str(db)],
            capture_output=True, text=True,
            preexec_fn=lambda n=limit: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)))
        if proc.returncode != 0:
            failed += 1
            assert proc.returncode == 3, proc.stderr
            assert proc.stderr.startswith(f"areev: cannot open store {db}: "), proc.stderr
            assert "Too many open files" in proc.stderr, proc.stderr
            # No empty store file is left alone; a store begun is finished
            # by the next command (another process may have been making it).
            left = sorted(p.name for p in tmp_path.glob(f"{limit}.db*"))
            if left:
                assert left != [f"{limit}.db"] or db.stat().st_size > 0, left
                again = subprocess.run([areev_bin, "memtool", create("/memories/a", "a"),
                                        "--db", str(db)], capture_output=True, text=True)
                assert again.returncode == 0, again.stderr
    assert failed > 0


def test_help_that_cannot_be_written_is_a_failure(areev_bin):
    for args in (["--help"], ["cat", "--help"], ["memtool", "-h"], ["--version"]):
        with open("/dev/full", "wb") as full:
            proc = subprocess.run([areev_bin, *args], stdout=full, stderr=subprocess.PIPE,
                                  text=True)
        assert proc.returncode == 1, args
        assert proc.stderr == "areev: cannot write to stdout: No space left on device\n", args
    assert subprocess.run([areev_bin, "--help"], capture_output=True).returncode == 0


def test_an_option_missing_its_value_never_takes_another_option_as_it(run_areev, tmp_path):
    for args, taken in [
        (["add", "--subject", "a", "--relation", "b", "--db", "--durable"], "--db", ),
        (["add", "--subject", "a", "--relation", "b", "--ns", "--db=x.db"], "--ns"),
        (["recall", "--subject", "--json", "--db", "x.db"], "--subject"),
        # Short options and --version too: a store named "-h" was made.
        (["add", "--subject", "a", "--relation", "b", "--db", "-h"], "--db"),
        (["memtool", '{"command":"view","path":"/memories"}', "--db", "--version"], "--db"),
        (["memtool", '{"command":"view","path":"/memories"}', "--ns", "-h"], "--ns"),
        (["diff", "/memories/a", "--db", "-U"], "--db"),
        (["cat", "/memories/a", "--db", "--version", "1"], "--db"),
    ]:
        proc = run_areev(*args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith(f"areev: {taken} needs a value, but the next argument is "
                                      "the option "), proc.stderr
    assert list(tmp_path.iterdir()) == []  # no store named after an option, nor any other
    # Given with `=`, a value that is no option of the command is taken as it is.
    ok = run_areev("add", "--subject=-x", "--relation", "b", "--db", "s.db", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    # So is one that is, written after the '=', and a value that only starts
    # like a short option: "-hx" is a valid namespace, "-hyphen" an object.
    for args in (["--ns=-h"], ["--ns", "-hx"], ["--object=-hyphen"],
                 ["--object", "-hyphen", "--context", "-h is for help"]):
        ok = run_areev("add", "--subject", "s", "--relation", "r", *args, "--db", "s.db",
                       cwd=tmp_path)
        assert ok.returncode == 0, (args, ok.stderr)
    assert "-hyphen" in run_areev("recall", "--subject", "s", "--db", "s.db", cwd=tmp_path).stdout


def test_an_option_given_as_name_equals_nothing_has_an_empty_value(run_areev, tmp_path):
    # CLI11 reads `--ns=` as `--ns` and takes the next argument as its value:
    # `--ns= s.db` wrote into ./agent.db, in a namespace named "s.db".
    create = '{"command":"create","path":"/memories/a","file_text":"x"}'
    proc = run_areev("memtool", create, "--ns=", "s.db", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("areev: memtool takes no more arguments, but s.db was given")
    proc = run_areev("--db=", "memtool", create, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("areev: cannot open store '': the store path is empty")
    proc = run_areev("log", "--limit=", "--json", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("areev: --limit: must be a decimal number"), proc.stderr
    assert list(tmp_path.iterdir()) == []
    # A value after the '=' is the value, as before.
    ok = run_areev("memtool", create, "--db=s.db", "--ns=n1", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert run_areev("cat", "/memories/a", "--db=s.db", "--ns=n1", cwd=tmp_path).stdout == "x"


def test_extra_arguments_are_named_in_the_order_given(run_areev, tmp_path):
    proc = run_areev("mount", str(tmp_path), "a", "b", "c")
    assert proc.returncode == 2
    assert proc.stderr == ("areev: mount takes no more arguments, but a b c were given; "
                           "run with --help\n")
    proc = run_areev("log", "x", "--db", str(tmp_path / "s.db"))
    assert (proc.returncode, proc.stderr) == (
        2, "areev: log takes no arguments, but x was given; run with --help\n")


# Issue: an option given twice answered in CLI11's words ("--version: At
# Most 1 required but received 2"), naming no fault a user would recognise.
def test_an_option_given_twice_is_named(run_areev, tmp_path):
    for args, option in [(["cat", "/memories/a", "--version", "2", "--version", "3"],
                          "--version"),
                         (["recall", "--subject", "a", "--subject", "a"], "--subject"),
                         (["log", "--limit", "1", "--limit", "2"], "--limit"),
                         (["log", "--db", "a.db", "--db", "b.db"], "--db")]:
        proc = run_areev(*args, cwd=tmp_path)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            2, "", f"areev: {option}: given more than once; give it once; run with --help\n"), args
    assert list(tmp_path.iterdir()) == []


# Issue: a missing value was answered in CLI11's words ("--db: 1 required
# TEXT missing"), and so was a bare `areev` ("A subcommand is required").
def test_a_missing_value_or_command_is_named(run_areev, tmp_path):
    for args, said in [(["log", "--db"], "--db needs a value"),
                       (["log", "--limit"], "--limit needs a value"),
                       (["cat", "/memories/a", "--version"], "--version needs a value"),
                       (["diff", "/memories/a", "-U"], "--unified needs a value"),
                       (["add", "--subject", "a", "--relation", "r", "--object"],
                        "--object needs a value"),
                       (["history", "/memories/a", "--chain"], "--chain needs a value"),
                       ([], "a command is required: memtool, history, cat, diff, log, "
                            "restore, purge, add, recall, mount or umount")]:
        proc = run_areev(*args, cwd=tmp_path)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            2, "", f"areev: {said}; run with --help\n"), args
    assert list(tmp_path.iterdir()) == []


# Issue: an on/off option took a value, so `--event=no` stored a fact,
# `--durable=0` wrote without fsync and `--batch=0` ran one command, each
# with exit 0.
def test_an_on_off_option_takes_no_value(run_areev, tmp_path):
    create = '{"command":"create","path":"/memories/a","file_text":"x"}'
    assert run_areev("memtool", create, "--db", "s.db", cwd=tmp_path).returncode == 0
    def ops():
        return json.loads(run_areev("log", "--json", "--db", "s.db", cwd=tmp_path).stdout)

    before = ops()
    for args in (["add", "--subject", "z", "--relation", "r", "--object", "o", "--event=no"],
                 ["--durable=0", "add", "--subject", "z", "--relation", "r", "--object", "o"],
                 ["memtool", "--batch=0", create],
                 ["log", "--json=2"],
                 ["history", "/memories/a", "--all=1"],
                 ["recall", "z", "--json=false"],
                 ["history", "/memories/a", "--chains=yes"]):
        proc = run_areev(*args, "--db", "s.db", cwd=tmp_path)
        given = next(a for a in args if "=" in a and a.startswith("--"))
        option = given.split("=")[0]
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            2, "", f"areev: {option} takes no value, got '{given}'; run with --help\n"), args
    assert ops() == before  # nothing written
    assert json.loads(run_areev("recall", "z", "--json", "--db", "s.db", cwd=tmp_path).stdout) == []


def test_arguments_after_a_double_dash_are_never_options(run_areev, tmp_path):
    # `--` ends the options: what follows is an argument, for a command that
    # takes none too (`log -- --db x` read store x, and `add ... -- --db x`
    # wrote to it).
    create = '{"command":"create","path":"/memories/a","file_text":"x"}'
    assert run_areev("memtool", create, "--db", "s.db", cwd=tmp_path).returncode == 0
    for command in (["log"], ["add", "--subject", "s", "--relation", "r", "--object", "o"]):
        proc = run_areev(*command, "--", "--db", "s.db", cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (
            2, f"areev: {command[0]} takes no arguments, but --db s.db followed '--'; "
               "run with --help\n"), command
        assert proc.stdout == ""
    assert not (tmp_path / "agent.db").exists()
    recalled = run_areev("recall", "--subject", "s", "--json", "--db", "s.db", cwd=tmp_path)
    assert json.loads(recalled.stdout) == []
    # A command with arguments takes them as arguments, and `--` with
    # nothing after it changes nothing.
    proc = run_areev("cat", "--db", "s.db", "--", "/memories/a", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "x")
    proc = run_areev("cat", "--", "/memories/a", "1", "--db", "s.db", cwd=tmp_path)
    assert proc.returncode == 2 and "--db s.db" in proc.stderr, proc.stderr
    assert run_areev("log", "--db", "s.db", "--", cwd=tmp_path).returncode == 0
    # Past a command's arguments, what follows "--" is refused too, not read
    # as options (`cat P -- --db x` read store x).
    for command in (["cat", "/memories/a", "1"], ["memtool", create], ["recall", "s"]):
        proc = run_areev(*command, "--", "--db", "s.db", cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (
            2, f"areev: {command[0]} takes no more arguments, but --db s.db followed '--'; "
               "run with --help\n"), command
    assert not (tmp_path / "agent.db").exists()
    # An argument after "--" may look like an option.
    proc = run_areev("umount", "--", "--ns", cwd=tmp_path)
    assert proc.returncode == 1 and "needs a value" not in proc.stderr, proc.stderr


def test_help_or_an_option_after_a_double_dash_is_an_argument_refused(run_areev, tmp_path):
    # `purge P -- --help` printed purge's help and exited 0 having purged
    # nothing; `cat P -- --version 1` got CLI11's words.
    create = '{"command":"create","path":"/memories/s.md","file_text":"x"}'
    delete = '{"command":"delete","path":"/memories/s.md"}'
    for command in (create, delete):
        assert run_areev("memtool", command, "--db", "s.db", cwd=tmp_path).returncode == 0
    cases = [
        (["purge", "/memories/s.md", "--", "--help"], "purge takes no more", "--help"),
        (["restore", "/memories/s.md", "--", "-h"], "restore takes no more", "-h"),
        (["log", "--", "-h"], "log takes no", "-h"),
        (["add", "--subject", "a", "--relation", "b", "--", "-h"], "add takes no", "-h"),
        (["cat", "--", "/memories/s.md", "1", "--help"], "cat takes no more", "--help"),
        (["cat", "/memories/s.md", "1", "--", "--version", "1"], "cat takes no more",
         "--version 1"),
        (["history", "/memories/s.md", "--", "--json"], "history takes no more", "--json"),
        (["log", "--", "--limit", "1"], "log takes no", "--limit 1"),
        (["cat", "/memories/s.md", "1", "--", "--db="], "cat takes no more", "--db="),
        (["umount", "mp", "--", "--abort"], "umount takes no more", "--abort"),
    ]
    for args, takes, extra in cases:
        proc = run_areev("--db", "s.db", *args, cwd=tmp_path)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            2, "", f"areev: {takes} arguments, but {extra} followed '--'; run with --help\n"), args
    # After "--" an option's name is an argument, even where the command
    # takes one: here a version, which it does not name.
    for args, arg in [(["cat", "/memories/s.md", "--", "--help"], "version"),
                      (["diff", "/memories/s.md", "--", "-h"], "versions")]:
        proc = run_areev("--db", "s.db", *args, cwd=tmp_path)
        assert (proc.returncode, proc.stdout) == (2, ""), args
        assert proc.stderr.startswith(f"areev: {arg}: '{args[-1]}' is neither a version number"), \
            proc.stderr
    # Nothing was purged: the deleted file is still there to restore.
    assert run_areev("restore", "/memories/s.md", "--db", "s.db", cwd=tmp_path).returncode == 0
    # -h before "--" is the help, as ever.
    proc = run_areev("purge", "-h", "--", "x", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("Erase"), proc.stdout


def test_a_store_named_like_an_option_in_areev_db_is_a_file_name(run_areev, tmp_path,
                                                                 monkeypatch):
    # No argument followed --db: its value came from the environment.
    for name in ("--durable", "-h"):
        monkeypatch.setenv("AREEV_DB", name)
        proc = run_areev("log", cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (
            3, f"areev: cannot open store {name}: no such file (only commands that write "
               "create a store)\n"), name


def test_numeric_options_refuse_negatives_and_survive_huge_values(run_areev, db):
    assert run_areev("memtool", create("/memories/a.md", "1\n2\n3\n"), "--db", db).returncode == 0
    edit = json.dumps({"command": "str_replace", "path": "/memories/a.md",
                       "old_str": "2", "new_str": "two"})
    assert run_areev("memtool", edit, "--db", db).returncode == 0
    for args in (["diff", "/memories/a.md", "-U", "-1"], ["log", "--limit", "-1"],
                 ["log", "--after", "-1"]):
        proc = run_areev(*args, "--db", db)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "must be a decimal number from 0 to 18446744073709551615, got -1" in proc.stderr
    # More context than lines: the whole file, at once (it once looped forever).
    full = run_areev("diff", "/memories/a.md", "-U", "3", "--db", db, timeout=10)
    huge = "18446744073709551615"
    proc = run_areev("diff", "/memories/a.md", "-U", huge, "--db", db, timeout=10)
    assert proc.returncode == 0 and proc.stdout == full.stdout, proc.stderr
    # No sequence number is that large: nothing comes after it.
    proc = run_areev("log", "--after", huge, "--json", "--db", db)
    assert proc.returncode == 0 and json.loads(proc.stdout) == [], proc.stderr
    assert len(json.loads(run_areev("log", "--after", "0", "--json", "--db", db).stdout)) >= 2


U64_MAX = "18446744073709551615"
I64_MAX = "9223372036854775807"


def test_integer_options_take_plain_decimal_digits_only(run_areev, db):
    """Hex, octal, signs, blanks and values past the option's range are usage
    errors, not read as another number or clamped to the largest one."""
    lines = "".join(create(f"/memories/f{i}.md", f"{i}\n") + "\n" for i in range(12))
    assert run_areev("memtool", "--batch", "--db", db, input=lines).returncode == 0
    p = "/memories/f0.md"
    chain = str(json.loads(run_areev("history", p, "--json", "--db", db).stdout)[0]["chain_id"])
    options = [  # (command before the value, option name in messages, range)
        (["log", "--limit"], "--limit", ("0", U64_MAX)),
        (["log", "--after"], "--after", ("0", U64_MAX)),
        (["diff", p, "-U"], "--unified", ("0", U64_MAX)),
        (["history", p, "--chain"], "--chain", ("1", I64_MAX)),
        (["cat", p, "--chain"], "--chain", ("1", I64_MAX)),
        (["diff", p, "--chain"], "--chain", ("1", I64_MAX)),
        (["restore", p, "--chain"], "--chain", ("1", I64_MAX)),
    ]
    bad_values = ["0x1", "0x10", "0X2", "-0", "-1", "+1", " 1", "1 ", "1e3", "1.0", "", "ten",
                  "99999999999999999999", "18446744073709551616"]
    for command, name, (lo, hi) in options:
        extra = ["0", str(int(hi) + 1)] if lo == "1" else []
        for value in bad_values + extra:
            proc = run_areev(*command, value, "--db", db)
            # An empty value, or one with blanks, is quoted so that it shows.
            shown = f"'{value}'" if value.strip() != value or not value else value
            assert (proc.returncode, proc.stdout, proc.stderr) == (
                2, "", f"areev: {name}: must be a decimal number from {lo} to {hi}, "
                       f"got {shown}; run with --help\n"), (command, value)
    # Leading zeros are still decimal (strtoull would read "010" as octal 8).
    limited = json.loads(run_areev("log", "--limit", "010", "--json", "--db", db).stdout)
    assert len(limited) == 10
    after = json.loads(run_areev("log", "--after", "007", "--json", "--db", db).stdout)
    assert after[0]["seq"] == 8
    assert run_areev("cat", p, "--chain", "00" + chain, "--db", db).stdout == "0\n"
    # The top of each range is accepted: it names nothing, or means "all".
    assert run_areev("cat", p, "--chain", I64_MAX, "--db", db).returncode == 1
    assert json.loads(run_areev("log", "--after", U64_MAX, "--json", "--db", db).stdout) == []
    assert len(json.loads(run_areev("log", "--limit", U64_MAX, "--json", "--db", db).stdout)) == 12


def test_version_zero_is_a_usage_error(run_areev, db):
    """Versions are numbered from 1: 0 names none, whatever the command."""
    assert run_areev("memtool", create("/memories/a.md", "one\n"), "--db", db).returncode == 0
    for args, name in ((["cat", "/memories/a.md", "--version"], "--version"),
                       (["diff", "/memories/a.md", "--from"], "--from"),
                       (["diff", "/memories/a.md", "--to"], "--to")):
        for zero in ("0", "00"):
            proc = run_areev(*args, zero, "--db", db)
            assert (proc.returncode, proc.stdout, proc.stderr) == (
                2, "", f"areev: {name}: versions are numbered from 1, got {zero}; "
                       "run with --help\n"), (args, zero)
    # Six zeros may begin a grain id: looked for, and not found.
    proc = run_areev("cat", "/memories/a.md", "--version", "000000", "--db", db)
    assert proc.returncode == 1 and "has no version 000000" in proc.stderr, proc.stderr


def test_an_empty_version_is_a_usage_error_not_the_default(run_areev, db):
    assert run_areev("memtool", create("/memories/a.md", "one\n"), "--db", db).returncode == 0
    for args in (["cat", "/memories/a.md", "--version", ""],
                 ["diff", "/memories/a.md", "--from", ""],
                 ["diff", "/memories/a.md", "--to", ""]):
        proc = run_areev(*args, "--db", db)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "is neither a version number nor a grain id prefix" in proc.stderr
        assert proc.stdout == ""


def test_store_paths_sqlite_would_not_keep(run_areev, tmp_path):
    for name in ("", ":memory:"):
        proc = run_areev("memtool", create("/memories/x.md", "important\n"), "--db", name,
                         cwd=tmp_path)
        assert proc.returncode == 2, (name, proc.stdout, proc.stderr)  # bad usage
        assert "File created" not in proc.stdout
    # A name starting with "file:" is a file of that name, not a URI.
    name = "file:u.db?mode=memory"
    assert run_areev("memtool", create("/memories/x.md", "kept\n"), "--db", name,
                     cwd=tmp_path).returncode == 0
    assert (tmp_path / name).is_file() and not (tmp_path / "u.db").exists()
    assert run_areev("cat", "/memories/x.md", "--db", name, cwd=tmp_path).stdout == "kept\n"


def test_errors_stay_on_one_line_and_name_the_value_once(run_areev, db):
    assert run_areev("memtool", create("/memories/a", "a"), "--db", db).returncode == 0
    proc = run_areev("cat", "/memories/a", "--db", db, "--ns", "a\nb")
    assert proc.returncode == 2
    assert proc.stderr == ("areev: --ns: invalid namespace name 'a\\nb': "
                           "use 1-64 characters from A-Z a-z 0-9 . _ -; run with --help\n")


@pytest.fixture
def as_nobody(areev_bin):
    """A shared directory under /tmp and the areev command run as user nobody
    (a copy of the binary there, so a checkout nobody cannot enter works too)."""
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("needs root and runuser to act as another user")
    shared = pathlib.Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        shared.chmod(0o755)
        shutil.copy2(areev_bin, shared / "areev")
        command = ["runuser", "-u", "nobody", "--", str(shared / "areev")]
        if subprocess.run(command + ["--help"], capture_output=True).returncode != 0:
            pytest.skip("user nobody cannot run this build")
        yield shared, command
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_a_reader_of_another_users_store_leaves_nothing_that_blocks_its_owner(as_nobody):
    # A shared sticky directory (like /tmp): user daemon owns the store, user
    # nobody may read it and may create files beside it. -wal and -shm files
    # nobody made would be nobody's, and daemon could never write again.
    shared, nobody = as_nobody
    shared.chmod(0o1777)
    owner = ["runuser", "-u", "daemon", "--", str(shared / "areev")]
    db = str(shared / "agent.db")

    def run(who, *args):
        return subprocess.run(who + list(args) + ["--db", db], capture_output=True, text=True)

    assert run(owner, "memtool", create("/memories/a.md", "a\n")).returncode == 0
    os.chmod(db, 0o644)  # readable by everyone, writable by its owner
    before = open(db, "rb").read()
    cat = run(nobody, "cat", "/memories/a.md")
    assert (cat.returncode, cat.stdout, cat.stderr) == (0, "a\n", "")
    add = run(nobody, "add", "--subject", "s", "--relation", "r", "--object", "o")
    assert (add.returncode, add.stderr) == (
        1, f"areev: add: the store cannot be written: it was opened read-only, as a snapshot, "
           f"because this user cannot write {db} (Permission denied)\n")
    assert open(db, "rb").read() == before
    assert sorted(p.name for p in shared.iterdir()) == ["agent.db", "areev"]
    # Its owner still writes it, and then reads it back.
    assert run(owner, "memtool", create("/memories/b.md", "b\n")).returncode == 0
    assert run(owner, "cat", "/memories/b.md").stdout == "b\n"


def test_a_store_behind_a_directory_the_user_cannot_enter_says_so(as_nobody, run_areev):
    shared, nobody = as_nobody
    (shared / "priv" / "sub").mkdir(parents=True)
    db = shared / "priv" / "sub" / "agent.db"
    assert run_areev("add", "--subject", "s", "--relation", "r", "--db", str(db)).returncode == 0
    (shared / "priv").chmod(0o700)
    proc = subprocess.run(nobody + ["add", "--subject", "s", "--relation", "r", "--db", str(db)],
                          capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (
        3, f"areev: cannot open store {db}: cannot reach {db.parent}: Permission denied\n")
    beside = shared / "priv" / "b.db"  # a new store right in the closed directory
    proc = subprocess.run(nobody + ["memtool", create("/memories/a", "a"), "--db", str(beside)],
                          capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (
        3, f"areev: cannot open store {beside}: cannot reach {beside.parent}: "
           f"Permission denied\n")
    # A command that only reads said "no such file": whether the store is
    # there is not known to a user who may not search the directory.
    for args in (["log"], ["cat", "/memories/a"], ["history", "/memories/a"]):
        proc = subprocess.run(nobody + args + ["--db", str(db)], capture_output=True, text=True)
        assert (proc.returncode, proc.stderr) == (
            3, f"areev: cannot open store {db}: cannot reach {db.parent}: Permission denied\n")


def test_a_store_in_a_directory_the_user_cannot_write_reads_as_a_snapshot(as_nobody, run_areev):
    # SQLite needs the store's -shm file to read a WAL store. With no process
    # holding the store open there is none, and nobody cannot create one in
    # root's directory: the store is read as it is in its file.
    shared, nobody = as_nobody
    db = str(shared / "agent.db")
    assert run_areev("memtool", create("/memories/a.md", "one\n"), "--db", db).returncode == 0
    assert run_areev("memtool", create("/memories/a.md", "two\n"), "--db", db).returncode == 0
    os.chmod(db, 0o666)  # the file could be written; its directory cannot
    assert sorted(p.name for p in shared.iterdir()) == ["agent.db", "areev"]
    before = open(db, "rb").read()

    def run(*args, input=None):
        return subprocess.run(nobody + list(args) + ["--db", db], input=input,
                              capture_output=True, text=True)

    cat = run("cat", "/memories/a.md", "--version", "1")
    assert (cat.returncode, cat.stdout, cat.stderr) == (0, "one\n", "")
    view = run("memtool", json.dumps({"command": "view", "path": "/memories/a.md"}))
    assert view.returncode == 0, view.stderr
    assert view.stdout == ("Here's the content of /memories/a.md with line numbers:\n"
                           "     1\ttwo\n     2\t")
    log = run("log", "--json")
    assert log.returncode == 0 and len(json.loads(log.stdout)) == 2

    why = (f"the store cannot be written: it was opened read-only, as a snapshot, because "
           f"files cannot be created in {shared} (Permission denied); a writer needs the "
           f"store's -wal and -shm files there")
    edit = run("memtool", json.dumps({"command": "create", "path": "/memories/b.md",
                                      "file_text": "x"}))
    assert edit.returncode == 1
    assert edit.stdout == "Error: Storage operation failed for /memories/b.md (ReadOnly)"
    assert edit.stderr == f"areev: memtool: {why}\n"
    add = run("add", "--subject", "s", "--relation", "r", "--object", "o")
    assert (add.returncode, add.stderr) == (1, f"areev: add: {why}\n")
    assert open(db, "rb").read() == before
    assert sorted(p.name for p in shared.iterdir()) == ["agent.db", "areev"]
    # The same file named with a leading "//" (one directory to POSIX).
    twice = run("cat", "/memories/a.md")
    assert twice.returncode == 0
    assert subprocess.run(nobody + ["cat", "/memories/a.md", "--db", "/" + db],
                          capture_output=True, text=True).stdout == "two\n"


# Issue: schema v7 changed an index only, yet a user who could read but not
# write a store still at v6 could no longer open it ("the store cannot be
# written") until someone who could write opened it first.
def test_a_reader_who_cannot_write_reads_a_store_one_index_behind(as_nobody, run_areev):
    shared, nobody = as_nobody
    db = str(shared / "agent.db")
    assert run_areev("memtool", create("/memories/d/a.md", "12345\n"), "--db", db).returncode == 0
    with contextlib.closing(sqlite3.connect(db)) as con:  # as a v6 build leaves it
        con.executescript("DROP INDEX nodes_by_key; "
                          "CREATE INDEX nodes_by_key ON nodes(ns_id, key, kind, body_id); "
                          "PRAGMA user_version = 6;")
    os.chmod(db, 0o644)
    before = open(db, "rb").read()
    view = subprocess.run(nobody + ["memtool", json.dumps({"command": "view", "path": "/memories"}),
                                    "--db", db], capture_output=True, text=True)
    assert (view.returncode, view.stderr) == (0, "")
    assert view.stdout.endswith("\n4K\t/memories/d/\n6B\t/memories/d/a.md")
    cat = subprocess.run(nobody + ["cat", "/memories/d/a.md", "--db", db],
                         capture_output=True, text=True)
    assert (cat.returncode, cat.stdout) == (0, "12345\n")
    assert open(db, "rb").read() == before  # left as it was
    # Its owner's next open migrates it.
    assert run_areev("cat", "/memories/d/a.md", "--db", db).returncode == 0
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 9


# Issue: a long-lived reader (here memtool --batch) that opened the store as a
# snapshot answered every read after a writer changed the store with "Busy"
# and "open it again to read it", for as long as it ran.
def test_a_snapshot_reader_reads_what_a_writer_changes_after_it_opened(as_nobody, run_areev,
                                                                      areev_bin):
    shared, nobody = as_nobody
    db = str(shared / "agent.db")
    assert run_areev("memtool", create("/memories/a.md", "v1\n"), "--db", db).returncode == 0
    os.chmod(db, 0o644)
    reader = subprocess.Popen(nobody + ["memtool", "--batch", "--db", db], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    writer = None

    def view():
        reader.stdin.write(json.dumps({"command": "view", "path": "/memories/a.md"}) + "\n")
        reader.stdin.flush()
        return json.loads(reader.stdout.readline())

    def content(text):
        return {"content": "Here's the content of /memories/a.md with line numbers:\n"
                           f"     1\t{text}\n     2\t", "is_error": False}

    def edit(old, new):
        return json.dumps({"command": "str_replace", "path": "/memories/a.md",
                           "old_str": old, "new_str": new})

    try:
        assert view() == content("v1")
        # A writer that came and went: the file holds the change.
        assert run_areev("memtool", edit("v1", "v2"), "--db", db).returncode == 0
        assert view() == content("v2")
        # A writer that stays: the change is in its -wal, read through its -shm.
        writer = subprocess.Popen([areev_bin, "memtool", "--batch", "--db", db],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        writer.stdin.write(edit("v2", "v3") + "\n")
        writer.stdin.flush()
        assert json.loads(writer.stdout.readline())["is_error"] is False
        assert os.path.exists(db + "-shm")
        assert view() == content("v3")
        refused = json.dumps({"command": "create", "path": "/memories/b.md", "file_text": "b"})
        reader.stdin.write(refused + "\n")
        reader.stdin.flush()
        assert json.loads(reader.stdout.readline()) == {
            "content": "Error: Storage operation failed for /memories/b.md (ReadOnly)",
            "is_error": True}
    finally:
        reader.stdin.close()
        reader.wait(timeout=30)
        if writer is not None:
            writer.stdin.close()
            writer.wait(timeout=30)
    assert "the store cannot be written" in reader.stderr.read()
    fresh = subprocess.run(nobody + ["cat", "/memories/a.md", "--db", db],
                           capture_output=True, text=True)
    assert (fresh.returncode, fresh.stdout) == (0, "v3\n")


def test_a_store_named_through_a_symlink_is_judged_where_the_file_lies(as_nobody, run_areev):
    # SQLite keeps the -wal and -shm beside the file a link names: a link in a
    # directory nobody cannot write to a store in one nobody can is a store
    # nobody can write.
    shared, nobody = as_nobody
    real_dir = shared / "open"
    real_dir.mkdir()
    real_dir.chmod(0o777)
    db = real_dir / "agent.db"
    assert run_areev("memtool", create("/memories/a.md", "a\n"), "--db", str(db)).returncode == 0
    os.chmod(db, 0o666)
    link = shared / "agent.db"
    link.symlink_to(db)
    made = subprocess.run(nobody + ["memtool", create("/memories/b.md", "b\n"), "--db", str(link)],
                          capture_output=True, text=True)
    assert (made.returncode, made.stdout) == (0, "File created successfully at: /memories/b.md")
    assert run_areev("cat", "/memories/b.md", "--db", str(db)).stdout == "b\n"


def test_exit_codes_hold_when_stderr_cannot_be_written(areev_bin, run_areev, db):
    assert run_areev("memtool", create("/memories/a", "a"), "--db", db).returncode == 0
    cases = [("cat /memories/nope --db {db} 2>/dev/full", 1),
             ("cat /memories/nope --db {db} 2>&-", 1),
             ("log --frobnicate --db {db} 2>&-", 2),
             ("log --db {db}/missing 2>/dev/full", 3),
             ("log --db {db} >/dev/full 2>/dev/full", 1)]
    for line, code in cases:
        proc = subprocess.run(["bash", "-c", f"{areev_bin} " + line.format(db=db)],
                              capture_output=True, text=True)
        assert (proc.returncode, proc.stderr) == (code, ""), line


def test_memtool_dash_reports_a_stdin_it_cannot_read(areev_bin, db, tmp_path):
    for redirect, reason in (("<&-", "Bad file descriptor"), (f"< {tmp_path}", "Is a directory")):
        proc = subprocess.run(["bash", "-c", f"{areev_bin} memtool - --db {db} {redirect}"],
                              capture_output=True, text=True)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            1, "", f"areev: reading stdin failed: {reason}\n"), redirect
    for redirect, reason in (("<&-", "Bad file descriptor"), (f"< {tmp_path}", "Is a directory")):
        proc = subprocess.run(["bash", "-c", f"{areev_bin} memtool --batch --db {db} {redirect}"],
                              capture_output=True, text=True)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            1, "", f"areev: reading stdin failed: {reason}\n"), redirect
    proc = subprocess.run([areev_bin, "memtool", "-", "--db", db], capture_output=True, text=True,
                          input=create("/memories/piped", "from stdin"))
    assert (proc.returncode, proc.stdout) == (0, "File created successfully at: /memories/piped")


def test_a_store_path_that_is_no_file_is_refused_untouched(run_areev, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    view = json.dumps({"command": "view", "path": "/memories"})
    for path, kind in ((str(tmp_path), "a directory"), ("/dev/null", "a character device"),
                       (str(fifo), "a FIFO")):
        for args in (["log"], ["memtool", view]):
            proc = run_areev(*args, "--db", path, timeout=10)
            assert (proc.returncode, proc.stderr) == (
                3, f"areev: cannot open store {path}: it is {kind}, not a store file\n"), args
    assert not os.path.exists("/dev/null-shm") and not os.path.exists("/dev/null-wal")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def test_a_store_file_with_a_second_hard_link_is_refused_by_both_names(run_areev, tmp_path):
    # Issue: each name got its own -wal; a checkpoint through one name wrote
    # over files created through the other, after both had been acknowledged.
    first, second = tmp_path / "t.db", tmp_path / "h.db"
    assert run_areev("memtool", create("/memories/s.md", "base\n"), "--db", str(first)).returncode == 0
    os.link(first, second)
    before = first.read_bytes()
    for path in (first, second):
        for args in (["log"], ["memtool", create("/memories/x.md", "x")]):
            proc = run_areev(*args, "--db", str(path))
            assert (proc.returncode, proc.stdout) == (3, ""), args
            assert proc.stderr == (
                f"areev: cannot open store {path}: the file has 2 hard links; SQLite keeps a WAL "
                "per name, so writes made through one name would be lost through another: give "
                "the store one name (copy it to a new file, or remove the other links)\n"), args
    assert first.read_bytes() == before
    os.unlink(second)
    proc = run_areev("cat", "/memories/s.md", "--db", str(first))
    assert (proc.returncode, proc.stdout) == (0, "base\n")


def test_a_store_path_longer_than_sqlite_opens_is_a_usage_error(run_areev, tmp_path):
    # SQLite's unix VFS opens full paths of at most 504 bytes (512 with
    # "-journal"); a longer one failed with "unable to open database file".
    deep = tmp_path
    while len(str(deep)) < 400:
        deep = deep / ("d" * 60)
    deep.mkdir(parents=True)
    fits = deep / ("f" * (504 - len(str(deep)) - 4) + ".db")
    longer = deep / ("g" * (505 - len(str(deep)) - 4) + ".db")
    assert (len(str(fits)), len(str(longer))) == (504, 505)
    create_one = create("/memories/a", "a")
    assert run_areev("memtool", create_one, "--db", str(fits)).returncode == 0
    proc = run_areev("memtool", create_one, "--db", str(longer))
    assert (proc.returncode, proc.stderr) == (
        2, f"areev: cannot open store {longer}: the path is 505 bytes long as an absolute "
           f"path; SQLite opens at most 504; run with --help\n")
    # Relative to a deep working directory, the absolute length counts.
    proc = run_areev("log", "--db", longer.name, cwd=deep)
    assert proc.returncode == 2 and "505 bytes long" in proc.stderr
    assert not longer.exists()


def test_version_flag_prints_the_project_version(run_areev):
    cmake = (pathlib.Path(__file__).resolve().parent.parent / "CMakeLists.txt").read_text()
    version = re.search(r"project\(areev VERSION ([0-9.]+)", cmake).group(1)
    proc = run_areev("--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"areev {version}\n", "")
    # `cat --version` is still cat's own option.
    assert run_areev("cat", "/memories/a.md", "--version", "1", "--db", "/nonexistent/x.db"
                     ).returncode == 3
    # Anywhere else it is a usage error: a command given --version must not
    # print the version and exit 0 having done nothing.
    for args in (["purge", "/memories/a.md", "--version"], ["log", "--version"],
                 ["memtool", "--version", "{}"], ["--version", "log"]):
        proc = run_areev(*args, "--db", "/nonexistent/x.db")
        assert proc.returncode == 2 and proc.stdout == "", (args, proc.stdout)


def test_an_empty_areev_db_is_a_usage_error_not_agent_db(run_areev, tmp_path):
    view = json.dumps({"command": "view", "path": "/memories"})
    proc = run_areev("memtool", view, env={"AREEV_DB": ""}, cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (
        2, "areev: AREEV_DB is set but empty: set it to a store file, or unset it for "
           "./agent.db; run with --help\n")
    assert list(tmp_path.iterdir()) == []
    # --db still wins over the variable, and a set one names the store.
    assert run_areev("memtool", view, "--db", "given.db", env={"AREEV_DB": ""},
                     cwd=tmp_path).returncode == 0
    assert run_areev("memtool", view, env={"AREEV_DB": "env.db"}, cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env.db", "given.db"]
    # umount names no store.
    proc = run_areev("umount", str(tmp_path), env={"AREEV_DB": ""})
    assert "AREEV_DB" not in proc.stderr and "not mounted" in proc.stderr


def test_a_store_path_is_measured_as_sqlite_resolves_it(run_areev, tmp_path):
    # "../" and "./" shorten the path SQLite opens; a symlink can lengthen it.
    deep = tmp_path
    while 496 - len(str(deep)) - 1 > 100:
        deep = deep / ("d" * 100)
    deep = deep / ("d" * (496 - len(str(deep)) - 1))
    deep.mkdir(parents=True)
    assert len(str(deep)) == 496
    view = json.dumps({"command": "view", "path": "/memories"})
    assert len(str(deep / "../../c.db")) > 504
    assert run_areev("memtool", view, "--db", "../../c.db", cwd=deep).returncode == 0
    assert (deep.parent.parent / "c.db").exists()
    # From a working directory longer than that, SQLite cannot make a
    # relative path absolute at all.
    deeper = deep / ("e" * 20)
    deeper.mkdir()
    proc = run_areev("memtool", view, "--db", "../x.db", cwd=deeper)
    assert (proc.returncode, proc.stderr) == (
        2, "areev: cannot open store ../x.db: the working directory is 517 bytes long; SQLite "
           "opens a relative path only from one of at most 504: give an absolute path; run with --help\n")
    dots = "./" * 300 + "dots.db"
    assert run_areev("memtool", view, "--db", dots, cwd=tmp_path).returncode == 0
    link = tmp_path / "short"
    link.symlink_to(deep)
    proc = run_areev("memtool", view, "--db", str(link / ("x" * 40 + ".db")))
    assert proc.returncode == 2 and "bytes long as an absolute path" in proc.stderr


def arena_mib(pid):
    """The sizes in MiB of the process's mappings of 1 GiB or more: SQLite's
    page-cache arena reserves 4 GiB of address space (grainstore/
    sqlite_memory.cc), and nothing else in areev maps that much."""
    sizes = []
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            if end - start >= 1 << 30:
                sizes.append((end - start) >> 20)
    return sizes


# Issue: a reader that may not write the store read the file's header before
# its first connection, and that read started SQLite on its defaults: its
# allocator and page cache, which SQLite takes only before it starts, were
# never areev's (no huge-page arena, no page-cache layer for such a reader).
@pytest.mark.skipif(os.environ.get("AREEV_PRESET") == "asan",
                    reason="sanitizer builds keep SQLite on malloc")
def test_a_reader_who_cannot_write_runs_sqlite_with_areevs_settings(as_nobody, run_areev):
    shared, nobody = as_nobody
    shared.chmod(0o1777)
    db = str(shared / "agent.db")
    assert run_areev("memtool", create("/memories/a.md", "a\n"), "--db", db).returncode == 0
    os.chmod(db, 0o644)
    for command in ([str(shared / "areev")], nobody):  # the owner, then a reader
        proc = subprocess.Popen(command + ["memtool", "--batch", "--db", db],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            proc.stdin.write(json.dumps({"command": "view", "path": "/memories/a.md"}) + "\n")
            proc.stdin.flush()
            assert "     1\ta\n" in json.loads(proc.stdout.readline())["content"]
            areev_pid = proc.pid
            if command is nobody:  # runuser's child
                children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                          text=True).stdout.split()
                assert len(children) == 1
                areev_pid = int(children[0])
            assert [mib >= 4092 for mib in arena_mib(areev_pid)] == [True], command
        finally:
            proc.stdin.close()
            proc.wait(timeout=60)


# Issue: a user who may not write the store, asking for a namespace it does
# not have, was told why only while no process had the store open (a
# snapshot); through the owner's -wal and -shm the answer was SQLite's
# "attempt to write a readonly database", with EROFS's errno.
def test_a_reader_is_told_why_it_cannot_write_whether_or_not_the_owner_has_the_store_open(
        as_nobody, run_areev):
    shared, nobody = as_nobody
    shared.chmod(0o1777)
    db = str(shared / "agent.db")
    assert run_areev("memtool", create("/memories/a.md", "a\n"), "--db", db).returncode == 0
    os.chmod(db, 0o644)
    view = ["memtool", json.dumps({"command": "view", "path": "/memories"}), "--db", db,
            "--ns", "other"]
    why = f"because this user cannot write {os.path.realpath(db)} (Permission denied)\n"
    owner = subprocess.Popen([str(shared / "areev"), "memtool", "--batch", "--db", db],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        owner.stdin.write(json.dumps({"command": "view", "path": "/memories"}) + "\n")
        owner.stdin.flush()
        assert owner.stdout.readline()  # the owner has the store open
        proc = subprocess.run(nobody + view, capture_output=True, text=True)
        assert (proc.returncode, proc.stderr) == (
            1, "areev: namespace other: the store cannot be written: it was opened read-only "
               + why)
    finally:
        owner.stdin.close()
        owner.wait(timeout=60)
    proc = subprocess.run(nobody + view, capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (
        1, "areev: namespace other: the store cannot be written: it was opened read-only, as a "
           "snapshot, " + why)


def test_readers_racing_the_owners_writes_never_leave_files_of_their_own(as_nobody):
    # The owner's every write opens and closes the store (its -wal and -shm
    # come and go); a reader that may not write the store must never create
    # them, whatever the timing, or the owner could write no more.
    shared, nobody = as_nobody
    shared.chmod(0o1777)
    owner = ["runuser", "-u", "daemon", "--", str(shared / "areev")]
    db = str(shared / "race.db")
    assert subprocess.run(owner + ["memtool", create("/memories/x.md", "x\n"), "--db", db],
                          capture_output=True).returncode == 0
    os.chmod(db, 0o644)
    writer = subprocess.Popen(
        ["bash", "-c", " ".join(owner) + f" --db {db} memtool --batch"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = "".join(create(f"/memories/w{i}.md", f"{i}\n") + "\n" for i in range(150))
    failed_writes = 0
    readers = []
    for i in range(150):
        w = subprocess.run(owner + ["memtool", create(f"/memories/o{i}.md", "o\n"), "--db", db],
                           capture_output=True, text=True)
        failed_writes += w.returncode != 0
        readers.append(subprocess.Popen(nobody + ["cat", "/memories/x.md", "--db", db],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    out, _ = writer.communicate(lines, timeout=120)
    results = [r.communicate(timeout=60) + (r.returncode,) for r in readers]
    assert failed_writes == 0
    assert all(json.loads(line)["is_error"] is False for line in out.splitlines())
    # Every read answered, or said plainly that it should be tried again.
    for stdout, stderr, code in results:
        assert (code, stdout) == (0, "x\n") or "try again" in stderr, (code, stdout, stderr)
    for name in os.listdir(shared):
        assert os.stat(shared / name).st_uid != pwd.getpwnam("nobody").pw_uid, name


# Issue: on a full disk an intact store that no process had open could not
# even be read ("disk I/O error": SQLite could not make its -shm), and left a
# -shm and a -wal behind.
# On ext4, root's free blocks include those the kernel keeps even from root:
# a store there was judged to have room, and its -shm could not be made.
@pytest.mark.parametrize("kind", ["tmpfs", "ext4"])
def test_a_store_on_a_full_disk_reads_as_a_snapshot(run_areev, tmp_path, kind):
    small = tmpfs(tmp_path / "full", "size=2m") if kind == "tmpfs" else ext4(tmp_path / "full", 40)
    with small as fs:
        db = str(fs / "s.db")
        made = run_areev("memtool", create("/memories/a.md", "alpha\n"), "--db", db)
        assert made.returncode == 0
        pad = fill(fs)
        before = sorted(os.listdir(fs))
        read = run_areev("cat", "/memories/a.md", "--db", db)
        assert (read.returncode, read.stdout, read.stderr) == (0, "alpha\n", "")
        view = run_areev("memtool", json.dumps({"command": "view", "path": "/memories"}),
                         "--db", db)
        assert view.returncode == 0 and "/memories/a.md" in view.stdout, view
        write = run_areev("memtool", create("/memories/b.md", "beta\n"), "--db", db)
        assert write.returncode == 1
        # NoSpace, as when the disk fills under a store opened for writing.
        assert write.stdout == "Error: Storage operation failed for /memories/b.md (NoSpace)"
        assert (f"it was opened read-only, as a snapshot, because the filesystem of {fs} is full "
                "(No space left on device)") in write.stderr, write.stderr
        assert sorted(os.listdir(fs)) == before  # no -wal or -shm
        mp = fs.parent / "mp"
        mp.mkdir()
        mount = run_areev("mount", str(mp), "--db", db, "-f")
        assert mount.returncode == 1
        assert (f"the mount writes every save into the store, but it was opened read-only, as a "
                f"snapshot, because the filesystem of {fs} is full") in mount.stderr, mount.stderr
        assert not os.path.ismount(mp)
        pad.unlink()
        assert run_areev("memtool", create("/memories/b.md", "beta\n"), "--db", db).returncode == 0
        assert run_areev("cat", "/memories/b.md", "--db", db).stdout == "beta\n"


# Issue: with no free inodes, creating a store said "cannot read the file: No
# such file or directory" (the errno of a check made after the failure).
# With one inode left, the store file took it and its -wal found none: the
# error said "No such file or directory" and the empty file stayed.
@pytest.mark.parametrize("left", [0, 1])
def test_a_store_that_cannot_be_created_for_want_of_inodes_says_so(run_areev, tmp_path, left):
    with tmpfs(tmp_path / "inodes", "size=2m,nr_inodes=8") as fs:
        n = 0
        while True:
            try:
                (fs / f"x{n}").touch()
                n += 1
            except OSError:
                break
        for i in range(left):
            (fs / f"x{n - 1 - i}").unlink()
        proc = run_areev("memtool", create("/memories/a.md", "a\n"), "--db", str(fs / "new.db"))
        assert proc.returncode == 3
        assert proc.stderr.endswith(f"cannot create a file in {fs}: its filesystem is full "
                                    "(No space left on device)\n"), proc.stderr
        assert not (fs / "new.db").exists()


# Issue: a new store on a filesystem with inodes but no room said SQLite's
# "the store: database or disk is full" (or "disk I/O error" when only the
# -shm could not grow) and left an empty or one-page store file behind, which
# later commands waited on and then called "not an areev store".
@pytest.mark.parametrize("room", [0, 20 << 10])
def test_a_new_store_on_a_full_disk_says_so_and_leaves_no_file(run_areev, tmp_path, room):
    with tmpfs(tmp_path / "full", "size=256k") as fs:
        (fs / "empty.db").touch()  # existed before: never removed
        (fs / "other.db-wal").write_bytes(b"")  # a sidecar with no store yet: kept too
        pad = fill(fs)
        os.truncate(pad, pad.stat().st_size - room)
        before = sorted(os.listdir(fs))
        for name in ("new.db", "other.db"):
            proc = run_areev("memtool", create("/memories/a.md", "a\n"), "--db", str(fs / name))
            assert (proc.returncode, proc.stderr) == (
                3, f"areev: cannot open store {fs / name}: cannot create a file in {fs}: its "
                   f"filesystem is full (No space left on device)\n"), proc.stderr
            assert sorted(os.listdir(fs)) == before
        kept = run_areev("memtool", create("/memories/a.md", "a\n"), "--db", str(fs / "empty.db"))
        assert kept.returncode != 0
        assert (fs / "empty.db").exists()
        later = run_areev("log", "--db", str(fs / "new.db"))
        assert (later.returncode, later.stderr) == (
            3, f"areev: cannot open store {fs / 'new.db'}: no such file (only commands that "
               f"write create a store)\n")


# Issue: two processes creating one new store on a full disk at once each
# left it to the other: the first to fail found the other's connection on the
# file and removed nothing, the other had not made the file and removed
# nothing either; a 4 KiB store file (or an empty one and a 3-byte -shm)
# stayed, and both said SQLite's "database or disk is full". Two rarer
# interleavings left the file too (about one round in a hundred on a busy
# machine): a creator that looked between the other's creation of the file
# and its removal took the file its own open then made for the other's; and
# two connections closing at once each left the -wal to the other, whose
# frames of the failed transaction then passed for a store's tables.
@pytest.mark.parametrize("room", [0, 80 << 10])
def test_two_new_stores_on_a_full_disk_at_once_say_so_and_leave_no_file(areev_bin, tmp_path,
                                                                         room):
    with tmpfs(tmp_path / "full", "size=2m") as fs:
        pad = fill(fs)
        os.truncate(pad, pad.stat().st_size - room)
        before = sorted(os.listdir(fs))
        for _ in range(20):  # rounds: the races above are rare
            procs = [subprocess.Popen([areev_bin, "--db", str(fs / "new.db"), "memtool",
                                       create(f"/memories/{who}.md", "x\n")],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for who in ("a", "b")]
            for proc in procs:
                _, err = proc.communicate(timeout=60)
                assert (proc.returncode, err) == (
                    3, f"areev: cannot open store {fs / 'new.db'}: cannot create a file in {fs}: "
                       f"its filesystem is full (No space left on device)\n"), err
            assert sorted(os.listdir(fs)) == before


# Issue: a purge whose final checkpoint could not grow the database file on a
# full disk said only "database or disk is full", after the purge had
# committed. It now says the file is purged and what may remain; a purge run
# again once there is room finishes the job.
def test_a_purge_whose_checkpoint_finds_the_disk_full_says_it_purged(run_areev, tmp_path):
    marker = "PURGE-ON-FULL-DISK-5b2e"
    with tmpfs(tmp_path / "fs", "size=8m") as fs:
        db = str(fs / "s.db")
        assert run_areev("memtool", create("/memories/f.md", f"{marker}\n"),
                         "--db", db).returncode == 0
        assert run_areev("memtool", json.dumps({"command": "delete", "path": "/memories/f.md"}),
                         "--db", db).returncode == 0
        # A connection kept open keeps the next write in the WAL, past the
        # database file's end: the purge's checkpoint must grow the file.
        holder = sqlite3.connect(db)
        try:
            holder.execute("SELECT count(*) FROM nodes").fetchall()
            big = base64.b64encode(os.urandom(1_500_000)).decode()
            made = run_areev("memtool", "--batch", "--db", db,
                             input=create("/memories/g.md", big) + "\n")
            assert '"is_error": false' in made.stdout, made.stdout[:200]
            pad = fill(fs)
            os.truncate(pad, pad.stat().st_size - (256 << 10))  # room for the purge's commit
            first = run_areev("purge", "/memories/f.md", "--db", db)
            assert first.returncode == 1
            assert first.stderr == (
                "areev: purge /memories/f.md: /memories/f.md is purged, but the store's files "
                "could not be rewritten without its old pages (the store: database or disk is "
                "full), so they may remain there (the database or its WAL): run purge again "
                "once that is fixed\n"), first.stderr
            gone = run_areev("cat", "/memories/f.md", "--version", "1", "--db", db)
            assert gone.returncode == 1  # purged: the commit stood
            pad.unlink()
            again = run_areev("purge", "/memories/f.md", "--db", db)
            assert (again.returncode, again.stdout) == (0, "purged /memories/f.md\n"), again.stderr
        finally:
            holder.close()
        for f in fs.iterdir():
            if f.name.startswith("s.db"):
                assert marker.encode() not in f.read_bytes(), f.name
        assert run_areev("cat", "/memories/g.md", "--db", db).stdout == big


def test_a_wal_left_without_its_shm_is_named_to_a_reader_who_cannot_recover_it(as_nobody,
                                                                               areev_bin):
    # A writer killed while it held the store open leaves commits in the -wal
    # that are not in the file; copied without its -shm (which holds nothing
    # lasting), such a store can be read only by a user who may make a -shm.
    # Another user is told that, not that writers "kept opening and closing
    # it; try again" (no writer runs, and trying again never helps).
    shared, nobody = as_nobody
    db = shared / "agent.db"
    assert subprocess.run([str(areev_bin), "memtool", create("/memories/a.md", "one\n"),
                           "--db", str(db)], capture_output=True).returncode == 0
    writer = subprocess.Popen([str(areev_bin), "memtool", "--batch", "--db", str(db)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        writer.stdin.write(json.dumps({"command": "create", "path": "/memories/a.md",
                                       "file_text": "two\n"}) + "\n")
        writer.stdin.flush()
        assert '"is_error": false' in writer.stdout.readline()
    finally:
        writer.kill()
        writer.wait()
    assert (shared / "agent.db-wal").stat().st_size > 0
    (shared / "agent.db-shm").unlink()
    files = sorted(p.name for p in shared.iterdir())
    proc = subprocess.run(nobody + ["cat", "/memories/a.md", "--db", str(db)],
                          capture_output=True, text=True)
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr == (
        f"areev: cannot open store {db}: its -wal file holds commits that are not in the "
        f"store file yet, and there is no -shm file beside it (a writer stopped without "
        f"closing the store, or the store was copied without it); this user cannot make one "
        f"to read them: run any areev command on the store once as a user who may write "
        f"{db} and create files in {shared}\n")
    assert sorted(p.name for p in shared.iterdir()) == files
    # Once its owner has opened it, every commit is in the file for everyone.
    owner = subprocess.run([str(areev_bin), "cat", "/memories/a.md", "--db", str(db)],
                           capture_output=True, text=True)
    assert (owner.returncode, owner.stdout) == (0, "two\n")
    proc = subprocess.run(nobody + ["cat", "/memories/a.md", "--db", str(db)],
                          capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "two\n", "")


def test_a_store_name_ending_in_a_directory_creates_no_file(run_areev, tmp_path):
    # "stores/" names a directory; SQLite would drop the slash and make a
    # store file named "stores" (and read "t.db/" or "t.db/." as t.db).
    name = str(tmp_path / "stores") + "/"
    add = run_areev("add", "--subject", "s", "--relation", "r", "--db", name)
    assert (add.returncode, add.stdout) == (3, "")
    assert add.stderr == (f"areev: cannot open store {name}: the name ends in a directory "
                          f"('/', '.' or '..'), not a store file\n")
    assert list(tmp_path.iterdir()) == []
    db = str(tmp_path / "t.db")
    assert run_areev("add", "--subject", "s", "--relation", "r", "--db", db).returncode == 0
    for named in (db + "/", db + "/."):
        proc = run_areev("recall", "--subject", "s", "--db", named)
        assert (proc.returncode, proc.stdout) == (3, ""), named
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.db"]


def test_a_file_that_is_no_store_reads_the_same_to_a_user_who_may_not_write_it(as_nobody,
                                                                              run_areev):
    # Issue: the snapshot a reader opens took a file that is no database for
    # one a writer tore ("the store changed ...; try again", exit 1, EBUSY),
    # and an empty file for writers that kept opening and closing it.
    shared, nobody = as_nobody
    (shared / "text.db").write_text("not sqlite at all, just text\n")
    (shared / "magic.db").write_bytes(b"SQLite format 3\0garbage after the magic")
    (shared / "empty.db").write_bytes(b"")
    other = sqlite3.connect(shared / "other.db")
    other.execute("CREATE TABLE t(x)")
    other.commit()
    other.close()
    expected = {
        "text.db": "not an areev store: the file is not a SQLite database",
        "magic.db": "not an areev store: the file is not a SQLite database",
        "empty.db": "the file is empty, not an areev store",
        "other.db": "the file is a SQLite database but not an areev store",
    }
    for name, reason in expected.items():
        db = shared / name
        db.chmod(0o644)
        before = db.read_bytes()
        for who in ("owner", "nobody"):
            if who == "owner":
                proc = run_areev("log", "--db", str(db))
            else:
                proc = subprocess.run(nobody + ["log", "--db", str(db)], capture_output=True,
                                      text=True)
            assert (proc.returncode, proc.stderr) == (
                3, f"areev: cannot open store {db}: {reason}\n"), (name, who)
        assert db.read_bytes() == before, name
    assert sorted(p.name for p in shared.iterdir()) == sorted(["areev", *expected])
