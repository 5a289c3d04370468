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
