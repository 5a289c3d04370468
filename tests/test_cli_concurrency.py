"""Many `areev` processes editing one file at once: no update lost, no lock errors."""
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

WORKERS = 8
EDITS = 25


def test_parallel_inserts_lose_nothing(areev_bin, db, tmp_path):
    init = json.dumps({"command": "create", "path": "/memories/log.md", "file_text": "header\n"})
    subprocess.run([areev_bin, "memtool", init, "--db", db], check=True, capture_output=True)
    # Each worker runs EDITS separate `areev memtool` insert processes; line 0
    # is always a valid insert point, so every command must succeed.
    worker = textwrap.dedent(f"""
        import json, subprocess, sys
        w = int(sys.argv[1])
        failures = []
        for i in range({EDITS}):
            cmd = json.dumps({{"command": "insert", "path": "/memories/log.md",
                              "insert_line": 0, "insert_text": f"w{{w}}-e{{i}}"}})
            p = subprocess.run([{areev_bin!r}, "memtool", cmd, "--db", {db!r}],
                               capture_output=True, text=True)
            if p.returncode != 0 or p.stderr:
                failures.append((i, p.returncode, p.stdout, p.stderr))
        print(json.dumps(failures))
    """)
    procs = [subprocess.Popen([sys.executable, "-c", worker, str(w)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(WORKERS)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        failures = json.loads(out)
        assert failures == [], failures
        assert "locked" not in out + err
    body = subprocess.run([areev_bin, "cat", "/memories/log.md", "--db", db], check=True,
                          capture_output=True, text=True).stdout
    lines = body.splitlines()
    expected = {f"w{w}-e{i}" for w in range(WORKERS) for i in range(EDITS)}
    assert len(lines) == WORKERS * EDITS + 1
    assert set(lines[:-1]) == expected and lines[-1] == "header"
    # Each worker's own inserts are in reverse order (each went to line 0).
    for w in range(WORKERS):
        mine = [line for line in lines if line.startswith(f"w{w}-")]
        assert mine == [f"w{w}-e{i}" for i in reversed(range(EDITS))]
    hist = json.loads(subprocess.run([areev_bin, "history", "/memories/log.md", "--db", db,
                                      "--json"], check=True, capture_output=True).stdout)
    assert len(hist) == WORKERS * EDITS + 1
    assert [v["version"] for v in hist] == list(range(1, WORKERS * EDITS + 2))


def test_parallel_batches_and_readers(areev_bin, db):
    # Writers in --batch mode and readers (history/log/cat) interleave freely.
    init = json.dumps({"command": "create", "path": "/memories/b.md", "file_text": ""})
    subprocess.run([areev_bin, "memtool", init, "--db", db], check=True, capture_output=True)
    batch = "\n".join(json.dumps({"command": "insert", "path": "/memories/b.md",
                                  "insert_line": 0, "insert_text": f"x{i}\n"})
                      for i in range(50)) + "\n"
    writers = [subprocess.Popen([areev_bin, "memtool", "--batch", "--db", db],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for w in writers:
        w.stdin.write(batch)
        w.stdin.close()
    reader_errors = []
    for _ in range(10):
        for args in (["log", "--limit", "5"], ["history", "/memories/b.md"],
                     ["cat", "/memories/b.md"]):
            p = subprocess.run([areev_bin, *args, "--db", db], capture_output=True, text=True)
            if p.returncode != 0:
                reader_errors.append((args, p.stderr))
    for w in writers:
        out = w.stdout.read()
        err = w.stderr.read()
        assert w.wait(timeout=300) == 0, err
        results = [json.loads(line) for line in out.splitlines()]
        assert len(results) == 50 and not any(r["is_error"] for r in results), out[-300:]
    assert reader_errors == []
    body = subprocess.run([areev_bin, "cat", "/memories/b.md", "--db", db],
                          capture_output=True, text=True).stdout
    assert body.count("x") == 200


def test_reads_do_not_wait_for_a_writer_holding_the_lock(run_areev, db):
    create = json.dumps({"command": "create", "path": "/memories/l.md", "file_text": "locked\n"})
    assert run_areev("memtool", create, "--db", db).returncode == 0
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another program, mid-write
        view = json.dumps({"command": "view", "path": "/memories/l.md"})
        for args in (["cat", "/memories/l.md"], ["memtool", view], ["log"],
                     ["history", "/memories/l.md"]):
            started = time.monotonic()
            proc = run_areev(*args, "--db", db)
            took = time.monotonic() - started
            assert proc.returncode == 0, (args, proc.stderr)
            # Opening once took the write lock to check the schema, so each
            # read waited out the 30 s busy timeout and failed.
            assert took < 10, (args, took)
        assert run_areev("cat", "/memories/l.md", "--db", db).stdout == "locked\n"
    finally:
        writer.execute("ROLLBACK")
        writer.close()


# Issue: a store another program kept locked past the 30 s busy timeout while
# areev opened it was exit 3 ("cannot open store"), though docs/cli.md puts
# a lock held past the timeout under exit 1, as it is once the store is open.
# Issue: the message was SQLite's "database is locked" alone; it now says how
# long it waited, for what, and to try again. Writes that wait for another
# process's write lock (the second store) say the same.
def test_a_store_locked_past_the_busy_timeout_while_opening_is_exit_1(areev_bin, db):
    if os.environ.get("AREEV_PRESET") == "asan":
        pytest.skip("waits out the 30 s timeout; the release pass covers it")
    create = json.dumps({"command": "create", "path": "/memories/a.md", "file_text": "a\n"})
    written = db + ".w"
    for store in (db, written):
        assert subprocess.run([areev_bin, "memtool", create, "--db", store]).returncode == 0
    holder = sqlite3.connect(db, isolation_level=None)
    writer = sqlite3.connect(written, isolation_level=None)
    waited = ": database is locked: waited 30 s for another process's write lock; try again " \
             "once it lets go\n"
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("INSERT INTO counters VALUES('zz', 1)")
        writer.execute("BEGIN IMMEDIATE")  # reads go on, writes wait
        view = json.dumps({"command": "view", "path": "/memories/a.md"})
        runs = [(store, args) for store, args in
                ((db, ["cat", "/memories/a.md"]), (db, ["memtool", view]), (db, ["log"]),
                 (written, ["add", "--subject", "s", "--relation", "r"]),
                 (written, ["memtool", json.dumps({"command": "create", "path": "/memories/b.md",
                                                   "file_text": "b\n"})]),
                 (written, ["memtool", view, "--ns", "brandnew"]))]
        procs = [subprocess.Popen([areev_bin, *args, "--db", store], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for store, args in runs]
        for proc in procs:
            out, err = proc.communicate(timeout=90)
            assert proc.returncode == 1, (proc.args, err)
            assert err.endswith(waited), (proc.args, err)
            assert out in ("", "Error: Storage operation failed for /memories/b.md (Busy)"), out
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        writer.execute("ROLLBACK")
        writer.close()
    assert subprocess.run([areev_bin, "cat", "/memories/a.md", "--db", db],
                          capture_output=True, text=True).stdout == "a\n"


def test_readers_and_writers_racing_a_stores_creation_never_call_it_foreign(areev_bin, tmp_path):
    # Each round, two writers and two readers open a store that does not exist
    # yet. A reader may find no store (exit 3, "no such file" or still
    # empty) but never "not an areev store": the creator's schema appears in
    # one commit, and the check reads the file's header in one statement.
    create = json.dumps({"command": "create", "path": "/memories/a.md", "file_text": "a\n"})
    foreign = "not an areev store"
    for round_ in range(60):
        db = str(tmp_path / f"race{round_}.db")
        procs = [subprocess.Popen([areev_bin, "memtool", create, "--db", db],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        procs += [subprocess.Popen([areev_bin, "log", "--db", db],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for _ in range(2)]
        results = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
        for code, err in results[:2]:
            assert code == 0, (round_, err)
        for code, err in results[2:]:
            assert foreign not in err or "empty" in err, (round_, err)


# Issue: while another connection held an old snapshot, every commit past the
# inline checkpoint's threshold tried a checkpoint that read the whole WAL:
# 8,000 edits took ten times as long beside the reader, 100,000 took 55 times.
def test_edits_beside_a_reader_holding_a_snapshot_stay_linear(areev_bin, db):
    edits = 8000  # each writes a few WAL pages: well past the 16,384-frame threshold

    def batch(first):
        lines = "".join(json.dumps({"command": "str_replace", "path": "/memories/f.md",
                                    "old_str": f"v{i} ", "new_str": f"v{i + 1} "}) + "\n"
                        for i in range(first, first + edits))
        started = time.monotonic()
        proc = subprocess.run([areev_bin, "memtool", "--batch", "--db", db], input=lines,
                              capture_output=True, text=True, timeout=600)
        took = time.monotonic() - started
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count('"is_error": false') == edits, proc.stdout[-300:]
        return took

    create = json.dumps({"command": "create", "path": "/memories/f.md", "file_text": "v0 x\n"})
    subprocess.run([areev_bin, "memtool", create, "--db", db], check=True, capture_output=True)
    free = batch(0)
    reader = sqlite3.connect(db, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sqlite_master").fetchall()  # pins a snapshot
        held = batch(edits)
        wal = os.path.getsize(db + "-wal")
    finally:
        reader.execute("COMMIT")
        reader.close()
    assert wal > 64 << 20  # the reader did hold the checkpoint back
    assert held < 3 * free + 1.0, (free, held)
    assert subprocess.run([areev_bin, "cat", "/memories/f.md", "--db", db], capture_output=True,
                          text=True).stdout == f"v{2 * edits} x\n"
