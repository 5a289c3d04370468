"""A long-lived process keeps its read transaction open between reads
(docs/storage-format.md, "Held reads"). Other processes must not notice it:
their writes show on its very next read, and a purge, which has to empty the
WAL, does not wait for it."""
import json
import time

import pytest

from test_bindings_common import import_areev

NS = "held"
FILES = 12


@pytest.fixture(scope="module")
def areev():
    return import_areev()


def cli(run_areev, db, **command):
    proc = run_areev("memtool", json.dumps(command), "--db", db, "--ns", NS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def view(m, path):
    return m.memory_tool(json.dumps({"command": "view", "path": path}))


def test_every_read_sees_the_write_another_connection_just_made(areev, run_areev, db):
    for i in range(FILES):
        cli(run_areev, db, command="create", path=f"/memories/f{i}.md", file_text=f"before {i}\n")
    # Two handles are two connections; the writer's commit lands microseconds
    # after the reader's last read, well inside the time a read is held.
    with areev.Areev(db, ns=NS) as reader, areev.Areev(db, ns=NS) as writer:
        for i in range(FILES):
            # Two reads with nothing committed in between: the second reuses
            # the read the first left open.
            assert f"before {i}" in view(reader, f"/memories/f{i}.md")
            assert f"{FILES - 1}" in view(reader, f"/memories/f{FILES - 1}.md")
            writer.memory_tool(json.dumps({"command": "str_replace", "path": f"/memories/f{i}.md",
                                           "old_str": "before", "new_str": "after"}))
            assert f"after {i}" in view(reader, f"/memories/f{i}.md"), i
            assert f"/memories/f{i}.md" in view(reader, "/memories")
    # And a write from another process, seen by a handle that read just before.
    with areev.Areev(db, ns=NS) as reader:
        assert "after 0" in view(reader, "/memories/f0.md")
        cli(run_areev, db, command="str_replace", path="/memories/f0.md",
            old_str="after", new_str="again")
        assert "again 0" in view(reader, "/memories/f0.md")


def test_purge_does_not_wait_for_an_idle_reader(areev, run_areev, db):
    cli(run_areev, db, command="create", path="/memories/secret.md", file_text="secret\n")
    cli(run_areev, db, command="create", path="/memories/other.md", file_text="other\n")
    with areev.Areev(db, ns=NS) as m:
        assert "other" in view(m, "/memories/other.md")  # leaves a read open, then idles
        cli(run_areev, db, command="delete", path="/memories/secret.md")
        started = time.monotonic()
        proc = run_areev("purge", "/memories/secret.md", "--db", db, "--ns", NS)
        took = time.monotonic() - started
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "purged /memories/secret.md\n"
        # The busy timeout is 30 s; a reader that never let go would use it all.
        assert took < 10, took
        assert "other" in view(m, "/memories/other.md")


def _count_up(db, commits, counter, go):
    """In a child process: rewrites /memories/k.txt with 1, 2, ... and
    publishes each number once its write has returned."""
    with import_areev().Areev(db, ns=NS) as writer:
        go.wait()
        for i in range(1, commits + 1):
            writer.memory_tool(json.dumps({"command": "create", "path": "/memories/k.txt",
                                           "file_text": str(i)}))
            counter.value = i


def test_a_long_lived_reader_never_reads_older_than_a_write_that_returned(areev, db):
    # Issue: a read that reused the held read counted a commit landing just
    # after it began as seen, and the read cache then served the body from
    # before that commit until the next one (an agent's view showed old text).
    import multiprocessing
    commits, fillers = 15000, 50
    ctx = multiprocessing.get_context("fork")
    counter, go = ctx.Value("q", 0, lock=False), ctx.Event()
    with areev.Areev(db, ns=NS) as reader:
        for j in range(fillers):  # reads of other files go through SQL after each commit
            reader.memory_tool(json.dumps({"command": "create", "path": f"/memories/f{j}.md",
                                           "file_text": f"filler {j}\n"}))
        reader.memory_tool(json.dumps({"command": "create", "path": "/memories/k.txt",
                                       "file_text": "0"}))
        child = ctx.Process(target=_count_up, args=(db, commits, counter, go))
        child.start()
        stale, reads, j = [], 0, 0
        try:
            go.set()
            while child.is_alive() or counter.value < commits:
                returned = counter.value
                seen = int(reader.read("/memories/k.txt"))
                reads += 1
                if seen < returned and len(stale) < 5:
                    stale.append((returned, seen))
                reader.read(f"/memories/f{j % fillers}.md")
                j += 1
                if not child.is_alive() and child.exitcode != 0:
                    break
        finally:
            child.join(60)
        assert child.exitcode == 0
        assert counter.value == commits
        assert stale == [], f"{reads} reads; (returned, read) pairs: {stale}"
        assert reader.read("/memories/k.txt") == str(commits)
