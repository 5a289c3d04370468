"""The daemon's own caches: file bodies kept between opens and directory
attributes updated without a store read must never hide a change or drift
from what the store holds."""
import os
import time

from mount_util import *  # noqa: F401,F403
from mount_util import history, memtool

pytestmark = fuse_test_marker  # noqa: F405


def append(p, line):
    with open(p, "ab") as f:
        f.write(line)


def test_open_append_close_cycles_each_seal_one_version(mnt):
    p = mnt.path / "log.md"
    lines = [b"line %d\n" % k for k in range(40)]
    for line in lines:
        append(p, line)
    assert p.read_bytes() == b"".join(lines)
    versions = history(mnt.db, "/memories/log.md")
    assert len(versions) == len(lines)
    assert versions[-1]["size"] == len(b"".join(lines))


def test_external_edit_between_appends_is_kept(mnt):
    p = mnt.path / "notes.md"
    append(p, b"one\n")
    append(p, b"two\n")  # the body stays cached in the daemon after this close
    r = memtool(mnt.db, {"command": "str_replace", "path": "/memories/notes.md",
                         "old_str": "one", "new_str": "ONE"})
    assert not r["is_error"], r
    append(p, b"three\n")  # open right after the external write: no waiting
    assert p.read_bytes() == b"ONE\ntwo\nthree\n"
    r = memtool(mnt.db, {"command": "str_replace", "path": "/memories/notes.md",
                         "old_str": "two", "new_str": "TWO"})
    assert not r["is_error"], r
    time.sleep(0.5)  # this time the polling thread sees the change first
    append(p, b"four\n")
    assert p.read_bytes() == b"ONE\nTWO\nthree\nfour\n"
    assert len(history(mnt.db, "/memories/notes.md")) == 6  # 4 closes, 2 edits


def test_many_files_appended_in_turn(mnt):
    # More files than the daemon keeps bodies for: every cycle must still see
    # the whole file, whether its body was kept or read back.
    files = [mnt.path / f"f{i}.md" for i in range(100)]
    for rnd in range(3):
        for i, p in enumerate(files):
            append(p, b"%d.%d\n" % (i, rnd))
    for i, p in enumerate(files):
        assert p.read_bytes() == b"".join(b"%d.%d\n" % (i, rnd) for rnd in range(3))


def test_parent_times_after_create_match_the_store(mnt):
    d = mnt.path / "d"
    d.mkdir()
    (d / "f.md").write_text("x")
    (d / "sub").mkdir()
    os.symlink("f.md", d / "lnk")
    os.mknod(d / "node.md")
    root_mtime = os.stat(mnt.path).st_mtime_ns
    st = os.stat(d)
    assert mnt.stop() == 0
    mnt.start()  # a fresh daemon reads the directories from the store
    again = os.stat(d)
    assert (again.st_mtime_ns, again.st_ctime_ns) == (st.st_mtime_ns, st.st_ctime_ns)
    assert os.stat(mnt.path).st_mtime_ns == root_mtime
