"""The mount while other processes write the same files. O_APPEND writes
land after whatever the file holds when they are saved, as appends to one
file do on a local disk, so no writer's change is erased; readers racing
other writers read whole versions."""
import errno
import json
import mmap
import os
import pathlib
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from mount_util import *  # noqa: F401,F403
from mount_util import Mount, areev, areev_path, history, memtool, wait_for
from test_bindings_common import import_areev

pytestmark = fuse_test_marker  # noqa: F405


def agent_edit(store, path, old_str, new_str):
    """A str_replace by `store`, then closes it. The store is opened before the
    test opens its file: opening the first one may run a build, whose child
    processes would close their copies of the test's fd, a save of its own."""
    try:
        store.memory_tool(json.dumps({"command": "str_replace", "path": path,
                                      "old_str": old_str, "new_str": new_str}))
    finally:
        store.close()


def memtool_by(store, command):
    """One memory-tool command through the open binding `store`."""
    store.memory_tool(json.dumps(command))


def append_line(path, line):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def stat_settles(path, size, within_s):
    """Whether `stat` of `path` shows `size` within `within_s` seconds."""
    deadline = time.monotonic() + within_s
    while os.stat(path).st_size != size:
        if time.monotonic() > deadline:
            return False
    return True


@kernel_owns_in_writeback("a cached file's size")  # noqa: F405
@pytest.mark.parametrize("writer", ["cli", "binding"])
def test_stat_shows_another_processs_edit_at_once(mnt, writer):
    """`stat` is answered from the kernel's attribute cache, so it showed a
    file's old size until the poller's next pass (up to 100 ms) after an
    edit by the memory tool; a script that read `st_size` bytes then read
    the wrong ones. The daemon now hears of each commit as it is made."""
    areev_mod = import_areev()
    store = areev_mod.Areev(mnt.db) if writer == "binding" else None
    late = []
    try:
        for i in range(8):
            path = mnt.path / f"st{i}.md"
            memtool(mnt.db, {"command": "create", "path": f"/memories/st{i}.md",
                             "file_text": "abc\n"})
            assert wait_for(lambda: path.exists())
            time.sleep(0.3)  # past the poller's passes for the create
            assert path.stat().st_size == 4  # the kernel now holds the attributes
            command = {"command": "str_replace", "path": f"/memories/st{i}.md",
                       "old_str": "abc", "new_str": "abcdefghij"}
            if store is not None:
                memtool_by(store, command)
            else:
                memtool(mnt.db, command)
            # The next poll would come within 20 ms one time in five.
            if not stat_settles(path, 11, within_s=0.02):
                late.append(i)
            assert stat_settles(path, 11, within_s=2.0), i
            assert path.read_text() == "abcdefghij\n"
    finally:
        if store is not None:
            store.close()
    assert late == [], f"stat showed the old size for over 20 ms after edits {late}"


@kernel_owns_in_writeback("O_APPEND and a cached file's size")  # noqa: F405
def test_o_append_writes_keep_an_edit_made_meanwhile_by_another_process(mnt):
    p = mnt.path / "log.md"
    p.write_bytes(b"start\n")
    store = import_areev().Areev(mnt.db)
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"one\n")
        agent_edit(store, "/memories/log.md", "start", "START")
        os.write(fd, b"two\n")
    finally:
        os.close(fd)
    expected = "START\none\ntwo\n"
    assert areev(mnt.db, "cat", "/memories/log.md").stdout == expected
    assert p.read_text() == expected
    bodies = [areev(mnt.db, "cat", "/memories/log.md", "--version", str(v["version"])).stdout
              for v in history(mnt.db, "/memories/log.md")]
    assert bodies == ["start\n", "START\n", expected]


@kernel_owns_in_writeback("O_APPEND and a cached file's size")  # noqa: F405
def test_the_size_after_a_save_that_went_after_another_edit_is_the_saved_ones(mnt):
    # Issue: a stat while the appends were open cached the draft's size (300 s);
    # the close put the appends after the agent's longer edit, and stat kept
    # saying the old size (ls -l, rsync's quick check, git status) until an open.
    p = mnt.path / "notes.md"
    p.write_bytes(b"alpha\n")
    store = import_areev().Areev(mnt.db)
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"appended line\n")
        agent_edit(store, "/memories/notes.md", "alpha", "alpha edited by the agent, much longer")
        time.sleep(0.3)  # the poller has seen the edit
        assert os.stat(p).st_size == len(b"alpha\nappended line\n")  # the draft's, cached
    finally:
        os.close(fd)
    expected = b"alpha edited by the agent, much longer\nappended line\n"
    assert areev(mnt.db, "cat", "/memories/notes.md").stdout.encode() == expected
    assert os.stat(p).st_size == len(expected)
    assert p.read_bytes() == expected


@pytest.mark.parametrize("write", ["close", "chmod"])
def test_a_write_waiting_for_the_lock_holds_up_only_its_own_file(mnt, write):
    # Issue: the poller refreshed the waiting file's inode inside the mutex
    # every request that catches up takes, and waited there for the save (or
    # the chmod): lookups and opens of every other file hung with it (30 s).
    (mnt.path / "saving.md").write_text("hello\n")
    (mnt.path / "unrelated.md").write_text("u\n")
    time.sleep(0.3)
    other = sqlite3.connect(mnt.db, timeout=60, isolation_level=None)
    ns, subject, node, chain = other.execute(
        "SELECT ns_id, subject, node_id, chain_id FROM oplog WHERE subject = ? "
        "ORDER BY seq DESC LIMIT 1", ("/memories/saving.md",)).fetchone()
    # SQLite's write lock keeps no queue: the waiting write may take it in the
    # moment between this test's COMMIT and its next BEGIN. Then the checks
    # proved nothing about a waiting write, and the case is made again.
    for attempt in range(4):
        fd = os.open(mnt.path / "saving.md", os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"through the mount\n")
        if write == "chmod":
            os.close(fd)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        waiting = threading.Thread(
            target=(lambda: os.close(fd)) if write == "close" else
            (lambda: os.chmod(mnt.path / "saving.md", 0o600)))
        waiting.start()  # waits for the lock, holding its file
        try:
            time.sleep(0.5)
            # What an edit of that file by another process commits; then the
            # lock is taken again at once, so the write keeps waiting.
            other.execute("INSERT INTO oplog(ns_id, at_ns, op, subject, node_id, chain_id, "
                          "origin) VALUES (?, ?, 'supersede', ?, ?, ?, 12345)",
                          (ns, time.time_ns(), subject, node, chain))
            other.execute("COMMIT")
            other.execute("BEGIN IMMEDIATE")
            time.sleep(0.5)  # the poller has read the entry
            started = time.monotonic()
            assert not (mnt.path / "no-such-name").exists()
            assert (mnt.path / "unrelated.md").read_text() == "u\n"
            assert os.stat(mnt.path / "unrelated.md").st_size == 2
            assert time.monotonic() - started < 2
            still_waiting = waiting.is_alive()
        finally:
            other.execute("ROLLBACK")
            waiting.join()
        if still_waiting:
            break
    else:
        pytest.fail("the write took the lock between the test's transactions in every attempt")
    other.close()
    expected = "hello\n" + "through the mount\n" * (attempt + 1)
    assert areev(mnt.db, "cat", "/memories/saving.md").stdout == expected
    if write == "chmod":
        assert os.stat(mnt.path / "saving.md").st_mode & 0o777 == 0o600


def test_a_listing_that_reaches_a_waiting_save_holds_up_only_that_directory(mnt):
    # Issue: the listing looked the waiting file up holding the inode table's
    # lock, and waited there for the save: every request on every other file
    # (a read of a file already open, an open, a lookup) hung with it.
    (mnt.path / "stall").mkdir()
    (mnt.path / "stall" / "blk.txt").write_text("b\n")
    (mnt.path / "else").mkdir()
    (mnt.path / "else" / "e.txt").write_text("e\n")
    time.sleep(0.3)
    held = open(mnt.path / "else" / "e.txt")
    fd = os.open(mnt.path / "stall" / "blk.txt", os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"more\n")
    other = sqlite3.connect(mnt.db, timeout=60, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    closing = threading.Thread(target=lambda: os.close(fd))
    listing = threading.Thread(target=lambda: os.listdir(mnt.path / "stall"))
    try:
        closing.start()  # its save waits for the lock, holding its file
        time.sleep(0.3)
        listing.start()  # reaches blk.txt, and waits for it
        time.sleep(0.3)
        started = time.monotonic()
        assert held.read() == "e\n"
        assert (mnt.path / "else" / "e.txt").read_text() == "e\n"
        assert not (mnt.path / "else" / "no-such-name").exists()
        assert time.monotonic() - started < 2
        assert closing.is_alive()  # still waiting for the lock
    finally:
        other.execute("ROLLBACK")
        other.close()
        closing.join()
        listing.join()
        held.close()
    assert areev(mnt.db, "cat", "/memories/stall/blk.txt").stdout == "b\nmore\n"


def test_a_name_moved_just_before_its_directory_is_gone_under_the_new_one(mnt):
    # Issue: the poller looked the first move's directory up by its old name,
    # which the second move had taken away, and dropped no name: "e/f" still
    # led to the file now called "e/g" (300 s), and a new "e/f" overwrote it.
    (mnt.path / "d").mkdir()
    (mnt.path / "d" / "f").write_text("content of f\n")
    time.sleep(0.3)
    with open(mnt.path / "d" / "f") as held:  # a pager keeps the dentry in use
        batch = "\n".join(json.dumps(c) for c in [
            {"command": "rename", "old_path": "/memories/d/f", "new_path": "/memories/d/g"},
            {"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"}]) + "\n"
        areev(mnt.db, "memtool", "--batch", input=batch)  # one poll sees both
        time.sleep(0.5)
        assert not (mnt.path / "e" / "f").exists()
        assert (mnt.path / "e" / "g").read_text() == "content of f\n"
        assert held.read() == "content of f\n"
    (mnt.path / "e" / "f").write_text("a new file f\n")
    assert areev(mnt.db, "cat", "/memories/e/g").stdout == "content of f\n"
    assert areev(mnt.db, "cat", "/memories/e/f").stdout == "a new file f\n"


def start_swapper(mnt, directory, count):
    """`areev memtool --batch` moving /memories/<directory>/f aside as g<k> and
    making a new f, `count` times over, as fast as it can: another process
    giving the name f to another file again and again."""
    key = f"/memories/{directory}"
    script = mnt.path.parent / f"swap-{directory}.ndjson"
    with open(script, "w") as out:
        for k in range(count):
            out.write(json.dumps({"command": "rename", "old_path": f"{key}/f",
                                  "new_path": f"{key}/g{k}"}) + "\n")
            out.write(json.dumps({"command": "create", "path": f"{key}/f",
                                  "file_text": f"made by the other process {k}\n"}) + "\n")
    with open(script) as commands:
        return subprocess.Popen([str(areev_path()), "--db", str(mnt.db), "memtool", "--batch"],
                                stdin=commands, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)


@pytest.mark.parametrize("op", ["unlink", "rename"])
def test_a_name_another_process_gives_to_another_file_meanwhile_loses_no_write(mnt, op):
    # Issue: unlink and rename looked the name up (file N), saved N's writes,
    # then removed or moved whatever held the name in a second transaction.
    # When another process had moved N to g<k> and made a new f in between,
    # the mount took the live N for deleted and dropped its later writes
    # (unlink), or gave N's inode the new file's id, so that N's later writes
    # were saved into that other file (rename).
    d = mnt.path / "race"
    d.mkdir()
    (d / "f").write_text("the first f\n")
    swapper = start_swapper(mnt, "race", 20000)
    try:
        deadline = time.monotonic() + 20
        for i in range(300):
            if time.monotonic() > deadline or swapper.poll() is not None:
                break
            try:
                fd = os.open(d / "f", os.O_WRONLY | os.O_APPEND)
            except FileNotFoundError:
                continue
            try:
                os.write(fd, b"draft %d\n" % i)  # a draft the name's loss saves first
                try:
                    if op == "unlink":
                        os.unlink(d / "f")
                    else:
                        os.rename(d / "f", d / f"m{i}")
                except FileNotFoundError:
                    pass
                os.write(fd, b"after %d\n" % i)
            finally:
                os.close(fd)
    finally:
        swapper.kill()
        swapper.wait()
    time.sleep(0.5)
    # Each descriptor's two lines are in one file, or (its file unlinked) in none.
    lines_of = {}
    for name in os.listdir(d):
        st = os.stat(d / name)
        assert st.st_nlink >= 1, f"{name}: a live file shown as deleted"
        body = areev(mnt.db, "cat", f"/memories/race/{name}").stdout
        assert (d / name).read_text() == body, name
        for line in body.splitlines():
            kind, _, i = line.partition(" ")
            if kind in ("draft", "after"):
                lines_of.setdefault(int(i), []).append((kind, name))
    for i, where in sorted(lines_of.items()):
        assert len(where) == 2 and where[0][1] == where[1][1], f"writes of descriptor {i}: {where}"
        assert [kind for kind, _ in where] == ["draft", "after"], f"descriptor {i}: {where}"


@pytest.mark.parametrize("change", ["delete and create", "rename"])
def test_an_append_by_a_name_another_process_just_changed_reaches_the_file_there_now(mnt, change):
    # Issue: while a second appender's save held the file, the mount took in
    # another process's delete or move of it without marking its name stale
    # (the save read the new path or found the file gone first, or the
    # refresh waited for the save), so the next open by the old name went to
    # the old file: the append was lost, or landed in the moved file.
    p = mnt.path / "p.md"
    p.write_text("start\n")
    store = import_areev().Areev(mnt.db)
    other = subprocess.Popen(["bash", "-c", f"while :; do echo other >> '{p}'; sleep 0.02; done"])
    rnd = random.Random(7)
    lost = []
    try:
        deadline = time.monotonic() + 25
        for i in range(250):
            if time.monotonic() > deadline:
                break
            append_line(p, b"before %d\n" % i)  # the kernel holds the name p.md
            if change == "rename":
                memtool_by(store, {"command": "rename", "old_path": "/memories/p.md",
                                   "new_path": f"/memories/q{i}.md"})
            else:
                memtool_by(store, {"command": "delete", "path": "/memories/p.md"})
                memtool_by(store, {"command": "create", "path": "/memories/p.md",
                                   "file_text": f"new {i}\n"})
            time.sleep(rnd.uniform(0, 0.03))
            with open(p, "a") as f:
                f.write(f"appended {i}\n")
            now = store.read("/memories/p.md")
            if f"appended {i}\n" not in now:
                lost.append((i, now))
            time.sleep(rnd.uniform(0, 0.03))
    finally:
        other.kill()
        other.wait()
        store.close()
    assert lost == []


# Two appenders per mount, with lines that cross page boundaries: the kernel
# sends such a write(2) in two WRITE requests, and a seal between them (the
# other appender's close) once put the other mount's line inside this one.
def test_two_mounts_appending_to_one_file_lose_no_line(tmp_path):
    db = tmp_path / "agent.db"
    mounts = [Mount(db, tmp_path / f"m{i}").start() for i in range(2)]
    try:
        (mounts[0].path / "log.md").write_bytes(b"")
        wait_for(lambda: (mounts[1].path / "log.md").exists())
        errors = []
        writers = [(m, f"m{i}.{j}") for i, m in enumerate(mounts) for j in range(2)]

        def line(who, k):
            head = f"{who} {k} "
            return head + "x" * (149 - len(head))

        def appender(m, who):
            try:
                for k in range(150):
                    append_line(m.path / "log.md", (line(who, k) + "\n").encode())
            except OSError as e:
                errors.append(e)

        threads = [threading.Thread(target=appender, args=w) for w in writers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert errors == []
        lines = areev(db, "cat", "/memories/log.md").stdout.splitlines()
        assert sorted(lines) == sorted(line(who, k) for _, who in writers for k in range(150))
        for _, who in writers:  # each writer's own lines stay in the order written
            mine = [x for x in lines if x.startswith(f"{who} ")]
            assert mine == [line(who, k) for k in range(150)]
    finally:
        for m in mounts:
            rc = m.stop()
            assert rc == 0, m.log()


# Issue: an append through one mount was rebased onto another mount's save
# only when the file's body id or size had changed. An unversioned file's
# freed body id is handed out again, so a truncate and a rewrite of the same
# size through the other mount passed both checks, and the append was stored
# onto the bytes before the truncate: that rewrite, acknowledged, was lost.
@pytest.mark.parametrize("name", ["f.tmp", "f.md"])
def test_an_append_after_another_mounts_same_size_rewrite_keeps_it(tmp_path, name):
    db = tmp_path / "agent.db"
    areev(db, "memtool", '{"command":"create","path":"/memories/keep.md","file_text":""}')
    mounts = [Mount(db, tmp_path / f"m{i}").start() for i in range(2)]
    try:
        a, b = (m.path / name for m in mounts)
        a.write_bytes(b"AAAA\n")
        wait_for(lambda: b.exists() and b.read_bytes() == b"AAAA\n")
        fd = os.open(b, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"b\n")
            os.truncate(a, 0)
            with open(a, "r+b") as f:
                f.write(b"CCCC\n")  # the same size as the body before the truncate
        finally:
            os.close(fd)
        stored = areev(db, "cat", f"/memories/{name}").stdout
        assert stored == "CCCC\nb\n"  # the append goes after what the other mount saved
    finally:
        for m in mounts:
            rc = m.stop()
            assert rc == 0, m.log()


def create_while_locked(db, key, text, start, wait=1.0):
    """Holds the store's write lock (so that a mount's create started by
    `start()` waits after its lookup), then has `areev memtool` create `key`
    with `text` (it waits for the lock too) and lets go: who commits first
    is the race. Returns once the rival has ended."""
    hold = sqlite3.connect(db, isolation_level=None, timeout=5)
    hold.execute("BEGIN IMMEDIATE")
    start()
    time.sleep(wait)
    rival = subprocess.Popen(
        [areev_path(), "--db", str(db), "memtool",
         json.dumps({"command": "create", "path": key, "file_text": text})],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.7)
    hold.execute("ROLLBACK")
    hold.close()
    rival.communicate(timeout=60)


OPEN_AS_NOBODY = """
import os, sys
os.setgid(65534)
os.setuid(65534)
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
except OSError as e:
    print(e.errno)
    sys.exit(0)
os.write(fd, b"written by nobody\\n")
os.close(fd)
print(0)
"""


# Issue: an open(O_CREAT) through the mount whose create lost the race to
# another process making the same name (after the kernel's lookup had found
# none) opened that file without looking at its owner or mode: a user with no
# write permission wrote a root-owned 0644 file. The create is now sent back
# (ESTALE) and the kernel opens the existing file itself, checking it.
def test_a_create_that_meets_another_processs_new_file_checks_its_permissions(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to act as user nobody")
    db = tmp_path / "agent.db"
    areev(db, "memtool", '{"command":"create","path":"/memories/seed.md","file_text":"x\\n"}')
    shared = pathlib.Path(tempfile.mkdtemp(dir="/tmp"))  # a path nobody may walk
    shared.chmod(0o755)
    m = Mount(db, shared / "mnt", extra=["-o", "allow_other"]).start()
    try:
        pub = m.path / "pub"
        pub.mkdir()
        os.chmod(pub, 0o1777)
        for i in range(3):
            name = f"p{i}.md"
            opener = []

            def start():
                opener.append(subprocess.Popen(
                    [sys.executable, "-c", OPEN_AS_NOBODY, str(pub / name)],
                    stdout=subprocess.PIPE, text=True))

            create_while_locked(db, f"/memories/pub/{name}", "made by root\n", start)
            opened = int(opener[0].communicate(timeout=60)[0])
            # Whichever made the file first owns it (root's create over
            # nobody's file is a new version of it); nobody never writes a
            # file root made.
            if opened == 0:
                assert (pub / name).stat().st_uid == 65534
            else:
                assert opened == errno.EACCES
                assert (pub / name).stat().st_uid == 0
                assert areev(db, "cat", f"/memories/pub/{name}").stdout == "made by root\n"
    finally:
        rc = m.stop()
        shutil.rmtree(shared, ignore_errors=True)
        assert rc == 0, m.log()


# Issue: a create that meets a name another process made is sent back
# (ESTALE) so that the kernel opens the file itself; when that create was
# already the kernel's one retry (its directory had just been replaced by
# another process, which sends the first try back), the caller got ESTALE
# from open(O_CREAT). A retry now opens the file here, with the same checks.
def test_a_create_retried_after_a_send_back_opens_another_processs_new_file(tmp_path):
    db = tmp_path / "agent.db"
    areev(db, "memtool", '{"command":"create","path":"/memories/seed.md","file_text":"x\\n"}')
    m = Mount(db, tmp_path / "mnt").start()
    try:
        for i in range(8):
            d = m.path / f"d{i}"
            d.mkdir()
            (d / "seed.md").write_text("s\n")
            (d / "seed.md").stat()  # the kernel holds d and its entry
            memtool(db, {"command": "rename", "old_path": f"/memories/d{i}",
                         "new_path": f"/memories/d{i}.old"})
            memtool(db, {"command": "create", "path": f"/memories/d{i}/g.md", "file_text": "g\n"})
            outcome = {}

            def opener():
                try:
                    fd = os.open(d / "f.md", os.O_WRONLY | os.O_CREAT, 0o644)
                    os.write(fd, b"mount\n")
                    os.close(fd)
                    outcome["errno"] = 0
                except OSError as e:
                    outcome["errno"] = e.errno

            t = threading.Thread(target=opener)
            # The retried create waits after its lookup.
            create_while_locked(db, f"/memories/d{i}/f.md", "memtool\n", t.start, wait=0.5)
            t.join(timeout=60)
            assert outcome["errno"] == 0, os.strerror(outcome["errno"])
    finally:
        rc = m.stop()
        assert rc == 0, m.log()


def race_target(mnt, dirname):
    """A file DIR/t.md made through the mount, and the rounds a race runs."""
    d = mnt.path / dirname
    d.mkdir()
    target = d / "t.md"
    target.write_text("init\n" * 3)
    return target, int(os.environ.get("AREEV_RACE_ROUNDS", "3000"))


# Saves through the mount that replace a file by rename, racing another
# process's writes to the same file: a reader that opened the file just
# before a rename replaced it (or whose loaded content the other process's
# change dropped) reads a whole version. It once read nothing (an empty
# read, or the old size in NUL bytes from the kernel), the replacing file's
# body cut to the replaced one's size, or failed with ENOENT when its read
# came between the rename's commit and the daemon's marking of the inode.
@kernel_owns_in_writeback("a file's size until the poller drops its name")  # noqa: F405
def test_readers_of_a_file_replaced_by_renames_and_written_elsewhere_read_content(mnt):
    target, rounds = race_target(mnt, "race")
    done = threading.Event()
    bad, reads, errors = [], [0], []

    def saver(k):
        try:
            for i in range(rounds):
                tmp = target.parent / f"t.md.tmp.{k}.{i}"
                tmp.write_text(f"mount save {k} {i:04d}\n" * 3)
                os.replace(tmp, target)
        except Exception as e:  # any failure, not only an errno, fails the test
            errors.append(e)

    def other_process():
        lines = "".join(json.dumps({"command": "create", "path": "/memories/race/t.md",
                                    "file_text": f"memtool {i:04d}\n" * 3}) + "\n"
                        for i in range(rounds))
        out = areev(mnt.db, "memtool", "--batch", ns=mnt.ns, input=lines).stdout.splitlines()
        if len(out) != rounds or any(json.loads(r)["is_error"] for r in out):
            errors.append(out[:3])

    def whole_version(data):
        lines = data.split(b"\n")
        return len(lines) == 4 and lines[3] == b"" and lines[0] and len(set(lines[:3])) == 1

    def reader():
        while not done.is_set():
            try:
                data = target.read_bytes()
            except FileNotFoundError as e:
                bad.append(e)
                continue
            reads[0] += 1
            if not whole_version(data):
                bad.append(data)

    readers = [threading.Thread(target=reader) for _ in range(3)]
    writers = [threading.Thread(target=saver, args=(k,)) for k in range(3)]
    writers.append(threading.Thread(target=other_process))
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    for t in readers:
        t.join()
    assert not errors
    assert reads[0] > 0
    assert bad == [], f"{len(bad)} of {reads[0]} reads were not a whole version: {bad[:3]}"
    assert len(target.read_text().splitlines()) == 3


# Another process rewrites a file in place (the memory tool's edits keep its
# node, so its inode), alternating a short and a long body, while readers
# read it through the mount one read(2) at a time. Each read returns one
# whole version. With the kernel's page cache, about one read in twenty was
# cut to the size of an earlier version or padded with NUL bytes to it: the
# kernel takes the size from an attribute reply it drops when an
# invalidation lands while the reply is on its way. Opens of a file another
# process changed lately bypass the page cache (fusefs.md, "Caching and
# coherence").
def test_reads_of_a_file_another_process_rewrites_in_place_are_whole_versions(mnt):
    target, rounds = race_target(mnt, "inplace")

    def body(i):
        return (f"long version {i:05d} " + "x" * 60 + "\n") * 3 if i % 2 else f"s{i:05d}\n" * 3

    def edit(i):
        return json.dumps({"command": "create", "path": "/memories/inplace/t.md",
                           "file_text": body(i)}) + "\n"

    # The readers start once another process is editing the file: a handle
    # opened before that reads through the page cache (see fusefs.md).
    areev(mnt.db, "memtool", "--batch", ns=mnt.ns, input=edit(0))
    done = threading.Event()
    bad, reads = [], [0]
    whole = {body(i).encode() for i in range(rounds)}

    def reader():
        try:
            while not done.is_set():
                fd = os.open(target, os.O_RDONLY)
                try:
                    data = os.read(fd, 1 << 16)
                finally:
                    os.close(fd)
                reads[0] += 1
                if data not in whole:
                    bad.append(data)
        except Exception as e:  # an error ends this reader: the test fails
            bad.append(e)

    readers = [threading.Thread(target=reader) for _ in range(3)]
    for t in readers:
        t.start()
    try:
        out = areev(mnt.db, "memtool", "--batch", ns=mnt.ns,
                    input="".join(edit(i) for i in range(1, rounds))).stdout.splitlines()
    finally:
        done.set()
        for t in readers:
            t.join()
    assert len(out) == rounds - 1 and not any(json.loads(r)["is_error"] for r in out)
    assert reads[0] > 0
    assert bad == [], f"{len(bad)} of {reads[0]} reads were not a whole version: {bad[:3]}"
    assert target.read_bytes() == body(rounds - 1).encode()


# The cost of reading a file another process is editing with direct I/O
# (fusefs.md, "Deviations from POSIX"): for 2 s after its last edit, a
# shared map of it fails with ENODEV; a private map (git's) reads the edit,
# and a handle opened once the file was left alone maps it either way.
@kernel_owns_in_writeback("a cached file's size at an open right after the edit")  # noqa: F405
def test_maps_of_a_file_another_process_just_edited(mnt):
    p = mnt.path / "m.md"
    p.write_text("mine\n")
    memtool(mnt.db, {"command": "create", "path": "/memories/m.md", "file_text": "edited\n"},
            ns=mnt.ns)
    with open(p, "rb") as f:
        with mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ) as m:
            assert m[:] == b"edited\n"
        with pytest.raises(OSError) as e:
            mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        assert e.value.errno == errno.ENODEV
    time.sleep(2.1)
    with open(p, "rb") as f:
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            assert m[:] == b"edited\n"


# Issue: with -o writeback_cache the kernel never takes a cached file's size
# from the daemon, and an edit by another process only invalidated the
# inode: a longer version was read cut to the old size, a shorter one padded
# with NULs, and `echo >>` wrote at the old end, in the middle of the text
# (sed -i then saved the cut copy as a version). The poller now also drops
# the file's name in that mode, so the kernel evicts the inode.
@pytest.mark.parametrize("mnt", [("-o", "writeback_cache")], indirect=True, ids=["writeback"])
def test_another_processs_edit_reaches_a_cached_file_in_writeback_mode(mnt):
    p = mnt.path / "log.md"
    p.write_text("line1\n")
    assert p.read_text() == "line1\n" and os.stat(p).st_size == 6  # cached by the kernel
    grown = "line1 edited by the agent, much longer\n"
    r = memtool(mnt.db, {"command": "str_replace", "path": "/memories/log.md",
                         "old_str": "line1", "new_str": grown.rstrip("\n")})
    assert not r["is_error"], r
    # Until the poller has dropped the name, a read may already show the new
    # bytes (direct I/O) while the kernel's size is the old one: the size is
    # what shows the kernel took the new version.
    assert wait_for(lambda: os.stat(p).st_size == len(grown), timeout=5), os.stat(p)
    assert p.read_bytes() == grown.encode()
    r = memtool(mnt.db, {"command": "create", "path": "/memories/log.md", "file_text": "short\n"})
    assert not r["is_error"], r
    assert wait_for(lambda: os.stat(p).st_size == len(b"short\n"), timeout=5), os.stat(p)
    assert p.read_bytes() == b"short\n"
    append_line(p, b"line2\n")
    assert p.read_bytes() == b"short\nline2\n"
    assert areev(mnt.db, "cat", "/memories/log.md").stdout == "short\nline2\n"


# Issue: the same, while a process held the file open across the other
# process's edit: a lookup meanwhile bound the name to the kernel's inode
# again, with its old size and time, and that stayed after every handle had
# closed (minutes later a read was still cut to the old size, `git status`
# saw no change, and `sed -i` saved the cut copy). The last release now drops
# the name once more.
@pytest.mark.parametrize("mnt", [("-o", "writeback_cache")], indirect=True, ids=["writeback"])
@pytest.mark.parametrize("new_text", ["a much longer replacement 207\n", "short\n"],
                         ids=["longer", "shorter"])
def test_an_edit_made_while_a_handle_held_the_file_reaches_it_once_released(mnt, new_text):
    p = mnt.path / "held.md"
    old_text = "main 207 with some more words\n" if new_text == "short\n" else "main 207\n"
    p.write_text(old_text)
    assert p.read_text() == old_text
    fd = os.open(p, os.O_RDONLY)
    try:
        r = memtool(mnt.db, {"command": "create", "path": "/memories/held.md",
                             "file_text": new_text})
        assert not r["is_error"], r
        time.sleep(0.5)  # the poller has dropped the name
        os.stat(p)  # a lookup while the file is held binds the name again
    finally:
        os.close(fd)
    assert wait_for(lambda: os.stat(p).st_size == len(new_text), timeout=5), os.stat(p)
    assert p.read_text() == new_text
    with open(p, "a") as f:
        f.write("appended\n")
    assert areev(mnt.db, "cat", "/memories/held.md").stdout == new_text + "appended\n"


# Issue: fchown, fchmod or futimens on an open file failed with ENOENT when another
# process deleted the file between the mount's catch-up and its store write; an open
# descriptor outlives its name, as on a local disk (cp -p, install and SQLite's
# journal fchown on their own files).
def test_attribute_changes_on_an_open_file_deleted_meanwhile_succeed(mnt):
    (mnt.path / "sva").mkdir()
    p = mnt.path / "sva" / "y.md"
    delete = json.dumps({"command": "delete", "path": "/memories/sva/y.md"}) + "\n"
    deleter = subprocess.Popen([str(areev_path()), "--db", str(mnt.db), "memtool", "--batch"],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    stop = threading.Event()

    def feed():  # deletes until the rounds are done
        try:
            while not stop.is_set():
                deleter.stdin.write(delete * 100)
                deleter.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    failures, rounds = [], 0
    try:
        deadline = time.monotonic() + 3
        while rounds < 400 and time.monotonic() < deadline:
            fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                for name, call in (("fchown", lambda: os.fchown(fd, 0, 0)),
                                   ("fchmod", lambda: os.fchmod(fd, 0o640)),
                                   ("futimens", lambda: os.utime(fd, ns=(1, 1)))):
                    try:
                        call()
                    except OSError as e:
                        failures.append((name, errno.errorcode[e.errno]))
            finally:
                os.close(fd)
            rounds += 1
        assert deleter.poll() is None, "the deleter stopped early"
    finally:
        stop.set()
        deleter.kill()
        feeder.join(timeout=10)
        deleter.wait()
    assert rounds > 20
    assert failures == []
