"""A mount whose store file is deleted (alone or with its directory), or has
another file moved over it, while mounted: its writes would go to a file no other process can reach and
that is gone at the unmount, so each one fails (EIO, logged) instead of being
acknowledged, while reads still serve what the mount had, for copying out."""
import errno
import os
import shutil
import time

import pytest

from mount_util import *  # noqa: F401,F403
from mount_util import areev, checked_mount

pytestmark = fuse_test_marker  # noqa: F405

GONE = "was deleted or replaced after this process opened it"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def expect_eio(fn):
    with pytest.raises(OSError) as e:
        fn()
    assert e.value.errno == errno.EIO


def move_away(db, tmp_path):
    os.unlink(db)


def move_another_over(db, tmp_path):
    other = tmp_path / "other.db"
    areev(other, "memtool", '{"command":"create","path":"/memories/o.md","file_text":"o\\n"}')
    os.rename(other, db)


def remove_its_directory(db, tmp_path):
    shutil.rmtree(db.parent)


@pytest.mark.parametrize("extra", [(), ("-o", "writeback_cache")], ids=["default", "writeback"])
@pytest.mark.parametrize("change", [move_away, move_another_over, remove_its_directory],
                         ids=["deleted", "replaced", "directory-removed"])
def test_a_mount_whose_store_file_went_refuses_writes_and_still_reads(tmp_path, extra, change):
    (tmp_path / "store").mkdir()
    db = tmp_path / "store" / "agent.db"
    with checked_mount(db, tmp_path / "mnt", extra=extra, allowed_errors=(GONE,)) as m:
        write(m.path / "a.md", "one\n")
        os.mkdir(m.path / "d")
        change(db, tmp_path)
        time.sleep(0.25)  # the store looks at its file at most every 100 ms
        assert (m.path / "a.md").read_text() == "one\n"
        assert sorted(os.listdir(m.path)) == ["a.md", "d"]
        copied = tmp_path / "copy"
        shutil.copytree(m.path, copied)
        assert (copied / "a.md").read_text() == "one\n"
        expect_eio(lambda: write(m.path / "a.md", "two\n"))
        expect_eio(lambda: write(m.path / "b.md", "new\n"))
        expect_eio(lambda: os.mkdir(m.path / "e"))
        expect_eio(lambda: os.rename(m.path / "a.md", m.path / "c.md"))
        expect_eio(lambda: os.rmdir(m.path / "d"))
        expect_eio(lambda: os.unlink(m.path / "a.md"))
        assert sorted(os.listdir(m.path)) == ["a.md", "d"]
        assert GONE in m.log()


LOST = "was deleted or replaced while this process had the store open"


def remove_sidecars(db, names):
    for suffix in names:
        os.unlink(f"{db}{suffix}")


# Issue: a mount left idle after its -wal went read the op-log through it
# without looking (statements outside a transaction skipped the look that a
# transaction's begin makes), logging "database disk image is malformed" at
# every poll and never the loss. Now it logs the loss, and only once.
def test_an_idle_mount_whose_wal_went_logs_the_loss_once(tmp_path):
    db = tmp_path / "agent.db"
    areev(db, "memtool", '{"command":"create","path":"/memories/base.md","file_text":"b\\n"}')
    with checked_mount(db, tmp_path / "mnt", allowed_errors=(LOST,)) as m:
        with open(m.path / "a.md", "w") as f:
            f.write("one\n")
            f.flush()
            os.fsync(f.fileno())  # its checkpoint leaves the other process's write room to land
        time.sleep(0.3)
        remove_sidecars(db, ("-wal",))
        made = areev(db, "memtool",
                     '{"command":"create","path":"/memories/c.md","file_text":"c\\n"}',
                     check=False)
        time.sleep(1.5)  # the op-log poller looks every 100-200 ms
        log = m.log()
        assert made.returncode == 0, made.stderr
        assert log.count(LOST) == 1, log
        assert "malformed" not in log
    assert areev(db, "cat", "/memories/base.md").stdout == "b\n"


# Issue: a mount whose -wal and -shm were deleted (a cleaner of stray files)
# went on acknowledging saves into files no other process reads; a process
# that opened the store then made new ones, and at the unmount the daemon
# checkpointed its own and deleted the other's -wal: that process's
# acknowledged write was lost (with the -wal alone deleted, the store file was
# damaged). Now the mount refuses reads and writes once it sees the loss, and
# its close, whether or not it was used since, leaves the store to whoever
# wrote it since, or keeps its own commits when nobody did.
@pytest.mark.parametrize("lost", [("-wal", "-shm"), ("-shm",), ("-wal",)],
                         ids=["wal-and-shm", "shm", "wal"])
@pytest.mark.parametrize("other", ["writes", "idle"])
@pytest.mark.parametrize("after", ["mount-used", "mount-idle"])
def test_a_mount_whose_wal_or_shm_went_loses_no_other_write(tmp_path, lost, other, after):
    db = tmp_path / "agent.db"
    areev(db, "memtool", '{"command":"create","path":"/memories/base.md","file_text":"b\\n"}')
    # Until the mount sees the loss, a read of the other process's frames
    # through its own index may find them malformed.
    allowed = (LOST, "Corruption", "malformed", "disk I/O error")
    with checked_mount(db, tmp_path / "mnt", allowed_errors=allowed) as m:
        write(m.path / "a.md", "one\n")
        remove_sidecars(db, lost)
        acked = False
        if other == "writes":
            # With the -wal alone gone, the other process reads the mount's
            # index, which names frames its new -wal lacks: its write may fail
            # (cleanly, then: nothing acknowledged).
            made = areev(db, "memtool",
                         '{"command":"create","path":"/memories/c.md","file_text":"c\\n"}',
                         check=lost != ("-wal",))
            acked = made.returncode == 0
            assert acked or made.stderr.endswith("disk I/O error\n"), made.stderr
        time.sleep(0.25)  # the store looks at its files at most every 100 ms
        if after == "mount-used":
            expect_eio(lambda: write(m.path / "b.md", "two\n"))
            assert LOST in m.log()
    assert areev(db, "cat", "/memories/base.md").stdout == "b\n"
    if acked:
        assert areev(db, "cat", "/memories/c.md").stdout == "c\n"
    elif other == "idle":  # nobody else wrote: the mount's saves are in the store
        assert areev(db, "cat", "/memories/a.md").stdout == "one\n"
    import sqlite3
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
