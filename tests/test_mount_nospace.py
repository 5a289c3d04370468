"""A save through the mount that fails because the store's filesystem is full
stays failed: the close() (or fsync) that reported ENOSPC is the end of it.
The rejected bytes are not shown through the mount, not committed by a later
release or open/close once space is freed, and a retry saves them once.
Other handles whose writes were in the discarded draft get the error at their
next fsync or close (docs/fusefs.md, "Drafts and seal points")."""
import base64
import errno
import json
import os
import resource
import stat
import subprocess
import time

import pytest

from mount_util import *  # noqa: F401,F403
from disk_util import fill, tmpfs
from mount_util import areev, checked_mount

pytestmark = fuse_test_marker  # noqa: F405

KEY = "/memories/app.md"
START = b"start\n"
# The daemon logs each disk-full failure (and the draft it discards) as an
# error; those lines are expected here, any other error line is not.
EXPECTED_ERRORS = ("NoSpace: database or disk is full",)


@pytest.fixture
def small_fs(tmp_path):
    """A 4 MiB tmpfs to hold the store, so that it can be filled up."""
    with tmpfs(tmp_path / "fs", "size=4m") as fs:
        yield fs


@pytest.fixture
def full_mnt(small_fs, tmp_path):
    """A mount whose store lives on the small tmpfs; the daemon must exit 0
    and log no error but the disk-full ones."""
    extra = os.environ.get("AREEV_MOUNT_EXTRA", "").split()
    if "writeback_cache" in " ".join(extra):
        pytest.skip("with -o writeback_cache close() fails on the kernel's time update "
                    "before any flush, and release seals the draft (docs/fusefs.md)")
    with checked_mount(small_fs / "agent.db", tmp_path / "mnt", extra=extra,
                       allowed_errors=EXPECTED_ERRORS) as m:
        yield m


def payload(store_dir, tag):
    """Bytes that cannot be stored on the full tmpfs: incompressible, and
    larger than the WAL (whose frames a commit could otherwise reuse)."""
    wal = store_dir / "agent.db-wal"
    size = max(256 << 10, (wal.stat().st_size if wal.exists() else 0) + (128 << 10))
    text = base64.b64encode(os.urandom(size * 3 // 4)).decode()
    return f"{tag}-{text}\n".encode()


def store_body(m):
    return areev(m.db, "cat", KEY).stdout.encode()


def all_versions(m):
    r = areev(m.db, "history", KEY, "--all", "--json")
    return json.loads(r.stdout)


def mount_body(m):
    with open(m.path / "app.md", "rb") as f:
        return f.read()


def append_fails(path, data, store_dir):
    """Appends `data` while there is room, fills the disk, then closes: the
    save fails. Returns the filler's path."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    assert os.write(fd, data) == len(data)  # the draft takes it
    pad = fill(store_dir)
    with pytest.raises(OSError) as e:
        os.close(fd)  # the save does not
    assert e.value.errno == errno.ENOSPC
    return pad


@pytest.mark.parametrize("hold", [0.0, 0.5])
def test_failed_append_stays_failed(full_mnt, small_fs, hold):
    m = full_mnt
    f = m.path / "app.md"
    f.write_bytes(START)
    rejected = payload(small_fs, "REJECTED")
    pad = append_fails(f, rejected, small_fs)
    time.sleep(hold)  # the asynchronous release comes while full, or after
    pad.unlink()
    time.sleep(0.5)  # let any release that is still due arrive
    assert store_body(m) == START
    assert mount_body(m) == START  # a read-only open/close, too
    assert os.stat(f).st_size == len(START)
    time.sleep(0.3)
    assert store_body(m) == START  # that open/close committed nothing
    versions = all_versions(m)
    assert [v["size"] for v in versions] == [len(START)]
    # a retry of the same append succeeds, once
    with open(f, "ab") as out:
        out.write(rejected)
    time.sleep(0.3)
    assert store_body(m) == START + rejected
    assert mount_body(m) == START + rejected
    versions = all_versions(m)
    assert [v["size"] for v in versions] == [len(START), len(START + rejected)]
    assert [v["transient"] for v in versions] == [False, False]


# Issue: a shell's `echo line >> f` on a full disk exited 0 and the line was
# gone. The write only filled the draft; the save failed at the close that
# the shell's dup2() makes, whose error nobody sees.
def test_a_write_on_a_full_disk_fails_at_once(full_mnt, small_fs):
    m = full_mnt
    f = m.path / "app.md"
    f.write_bytes(START)
    pad = fill(small_fs)
    shell = subprocess.run(["bash", "-c", f"echo line2 >> '{f}'"], capture_output=True,
                           text=True, timeout=30)
    assert shell.returncode == 1, shell
    assert "No space left on device" in shell.stderr, shell.stderr
    fd = os.open(f, os.O_WRONLY | os.O_APPEND)
    try:
        with pytest.raises(OSError) as e:
            os.write(fd, b"line3\n")
        assert e.value.errno == errno.ENOSPC
    finally:
        os.close(fd)  # nothing was written: nothing to save, no error
    assert mount_body(m) == START
    assert store_body(m) == START
    pad.unlink()
    shell = subprocess.run(["bash", "-c", f"echo line2 >> '{f}'"], capture_output=True,
                           text=True, timeout=30)
    assert shell.returncode == 0, shell
    assert store_body(m) == START + b"line2\n"
    assert [v["size"] for v in all_versions(m)] == [len(START), len(START) + 6]


@pytest.mark.parametrize("report", ["fsync", "close"])
def test_other_handle_gets_the_error_once(full_mnt, small_fs, report):
    m = full_mnt
    f = m.path / "app.md"
    f.write_bytes(START)
    one = payload(small_fs, "ONE")
    two = payload(small_fs, "TWO")
    fd1 = os.open(f, os.O_WRONLY | os.O_APPEND)
    fd2 = os.open(f, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd1, one)
        os.write(fd2, two)
        pad = fill(small_fs)
        with pytest.raises(OSError) as e:
            fd, fd1 = fd1, -1
            os.close(fd)  # its save fails, with fd2's writes in the draft
        assert e.value.errno == errno.ENOSPC
        pad.unlink()
        # fd2's writes were discarded too: its next fsync or close says so
        with pytest.raises(OSError) as e:
            if report == "fsync":
                os.fsync(fd2)
            else:
                fd, fd2 = fd2, -1
                os.close(fd)
        assert e.value.errno == errno.ENOSPC
        if report == "fsync":
            os.fsync(fd2)  # once
    finally:
        for fd in (fd1, fd2):
            if fd >= 0:
                os.close(fd)
    time.sleep(0.3)
    assert store_body(m) == START
    assert mount_body(m) == START
    assert [v["size"] for v in all_versions(m)] == [len(START)]


# Issue: posix_fallocate grew the draft past the disk's free space and
# succeeded; the close then failed with ENOSPC and the file was gone back to
# empty, though POSIX says writes to an allocated range do not fail for room.
def test_posix_fallocate_past_the_free_space_fails_at_once(full_mnt, small_fs):
    m = full_mnt
    f = m.path / "app.md"
    f.write_bytes(START)
    free = os.statvfs(small_fs).f_bavail * os.statvfs(small_fs).f_frsize
    fd = os.open(f, os.O_RDWR)
    try:
        with pytest.raises(OSError) as e:
            os.posix_fallocate(fd, 0, free + (1 << 20))
        assert e.value.errno == errno.ENOSPC
        assert os.fstat(fd).st_size == len(START)
        os.posix_fallocate(fd, 0, 64 << 10)  # what fits is allocated
        os.pwrite(fd, b"written", 4096)
    finally:
        os.close(fd)
    expected = START + b"\0" * (4096 - len(START)) + b"written" + b"\0" * ((64 << 10) - 4103)
    assert store_body(m) == expected
    assert mount_body(m) == expected


# Issue: a save too large for the disk failed as it should, but the frames
# it wrote kept the store's WAL at that size, so the disk stayed full and the
# mount refused every later write, however small, until it was remounted.
def test_a_save_too_large_for_the_disk_gives_its_room_back(full_mnt, small_fs):
    m = full_mnt
    free = os.statvfs(small_fs).f_bavail * os.statvfs(small_fs).f_frsize
    chunk = os.urandom(64 << 10)
    fd = os.open(m.path / "big.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for _ in range(free // len(chunk) + 16):  # the draft is the daemon's, not the disk's
            os.write(fd, chunk)
    finally:
        with pytest.raises(OSError) as e:
            os.close(fd)
    assert e.value.errno == errno.ENOSPC
    wal = small_fs / "agent.db-wal"
    assert not wal.exists() or wal.stat().st_size < free // 2
    (m.path / "note.md").write_text("small\n")
    assert areev(m.db, "cat", "/memories/note.md").stdout == "small\n"
    assert os.stat(m.path / "big.bin").st_size == 0


def test_failed_path_truncate_stays_failed(full_mnt, small_fs):
    m = full_mnt
    f = m.path / "app.md"
    f.write_bytes(START)
    wal = small_fs / "agent.db-wal"
    grow = (wal.stat().st_size if wal.exists() else 0) + (128 << 10)  # new WAL pages
    pad = fill(small_fs)
    with pytest.raises(OSError) as e:
        os.truncate(f, len(START) + grow)  # no writer open: its own save
    assert e.value.errno == errno.ENOSPC
    pad.unlink()
    assert os.stat(f).st_size == len(START)
    assert mount_body(m) == START  # an open/close: the release seals nothing
    time.sleep(0.3)
    assert store_body(m) == START
    assert [v["size"] for v in all_versions(m)] == [len(START)]


def test_a_handle_whose_save_failed_writes_nothing_more(full_mnt, small_fs):
    # Its O_TRUNC and offset went with the discarded draft: a later write
    # through it would land on the restored body, past a hole of zeros.
    m = full_mnt
    f = m.path / "app.md"
    f.write_bytes(START)
    rejected = payload(small_fs, "REJECTED")
    fd = os.open(f, os.O_WRONLY | os.O_TRUNC)
    try:
        assert os.write(fd, rejected) == len(rejected)
        pad = fill(small_fs)
        with pytest.raises(OSError) as e:
            os.fsync(fd)
        assert e.value.errno == errno.ENOSPC
        pad.unlink()
        with pytest.raises(OSError) as e:
            os.write(fd, b"tail\n")
        assert e.value.errno == errno.ENOSPC
    finally:
        os.close(fd)
    time.sleep(0.3)
    assert store_body(m) == START
    assert mount_body(m) == START
    assert [v["size"] for v in all_versions(m)] == [len(START)]
    with open(f, "ab") as out:  # a new open writes again
        out.write(b"tail\n")
    assert store_body(m) == START + b"tail\n"


def test_a_release_save_that_failed_is_kept_after_the_kernel_forgets_the_file(
        full_mnt, small_fs):
    # `: > f` while the disk is full: the truncation has no flush to fail
    # (its draft is pristine), the release's save fails and nobody is told.
    # The draft must outlive the kernel dropping the inode from its caches.
    m = full_mnt
    f = m.path / "app.md"
    f.write_bytes(START)
    pad = fill(small_fs)
    os.close(os.open(f, os.O_WRONLY | os.O_TRUNC))
    time.sleep(0.3)  # the release arrives and fails
    assert store_body(m) == START
    pad.unlink()
    with open("/proc/sys/vm/drop_caches", "w") as caches:
        caches.write("2\n")
    assert mount_body(m) == b""  # still the truncated draft, and this release seals it
    time.sleep(0.3)
    assert store_body(m) == b""


# Issue: a daemon started under `ulimit -f` was killed by SIGXFSZ at the first
# save whose WAL frames passed the limit: the mount went, with every other
# open file's unsaved writes. The save must fail alone, with EFBIG, as a
# write past the limit does on a local disk once the signal is ignored.
def test_a_save_past_the_daemons_file_size_limit_fails_alone(tmp_path):
    limits = {resource.RLIMIT_FSIZE: 2 << 20}
    with checked_mount(tmp_path / "agent.db", tmp_path / "mnt", rlimits=limits,
                       allowed_errors=("File too large",)) as m:
        small = m.path / "small.txt"
        small.write_bytes(b"small\n")
        with pytest.raises(OSError) as e:
            with open(m.path / "big.bin", "wb") as f:
                f.write(os.urandom(3 << 20))
        assert e.value.errno == errno.EFBIG
        assert m.proc.poll() is None, m.log()
        assert "File too large" in m.log()
        (m.path / "after.txt").write_bytes(b"after\n")  # the mount goes on saving
        assert small.read_bytes() == b"small\n"
        assert areev(m.db, "cat", "/memories/after.txt").stdout == "after\n"


# Issue: a mknod made the node in one transaction and sealed its empty first
# version in another; when the second failed (here past the daemon's file-size
# limit) the call failed, yet the file stayed in the store and the mount,
# without a version. Now both are one transaction: all or nothing.
def test_a_mknod_whose_version_cannot_be_saved_leaves_no_file(tmp_path):
    db = tmp_path / "agent.db"
    areev(db, "memtool", '{"command":"create","path":"/memories/seed.md","file_text":"x\\n"}')
    limits = {resource.RLIMIT_FSIZE: db.stat().st_size + 120_000}
    with checked_mount(db, tmp_path / "mnt", rlimits=limits,
                       allowed_errors=("File too large",)) as m:
        failed = None
        for i in range(300):
            name = f"n{i:04d}.md"
            try:
                os.mknod(m.path / name, stat.S_IFREG | 0o644)
            except OSError as e:
                assert e.errno == errno.EFBIG
                failed = name
                break
        assert failed is not None, "the file-size limit was never reached"
        assert not (m.path / failed).exists()
        assert m.proc.poll() is None, m.log()
    view = areev(db, "memtool", '{"command":"view","path":"/memories"}').stdout
    assert f"/memories/{failed}" not in view
    assert "/memories/n0000.md" in view


# Issue: an unlink (or a rename over the file) first saves the file's unsaved
# writes; when that save failed (room enough for the unlink, too little for
# the writes) the unlink went ahead: the writes were lost with no error to
# anyone, and the file, judged by the one version it had, left no tombstone
# to restore. Now the unlink or rename fails with the save's errno, and
# nothing is lost; with room again, the writes are saved at the close.
@pytest.mark.parametrize("op", ["unlink", "rename"])
def test_an_unlink_whose_save_first_fails_is_refused(tmp_path, op):
    extra = os.environ.get("AREEV_MOUNT_EXTRA", "").split()
    if "writeback_cache" in " ".join(extra):
        pytest.skip("with -o writeback_cache the kernel holds the writes until it flushes")
    lines = b"an unsaved line that write() accepted\n" * 3000  # about 110 KB
    with tmpfs(tmp_path / "fs", "size=8m") as fs:
        with checked_mount(fs / "agent.db", tmp_path / "mnt", extra=extra,
                           allowed_errors=EXPECTED_ERRORS) as m:
            f = m.path / "f.md"
            f.write_bytes(b"v1\n")
            (m.path / "src.md").write_bytes(b"new file\n")
            fd = os.open(f, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, lines)
                pad = fill(fs, leave=600_000)
                with pytest.raises(OSError) as e:
                    if op == "unlink":
                        os.unlink(f)
                    else:
                        os.rename(m.path / "src.md", f)
                assert e.value.errno == errno.ENOSPC
                assert (m.path / "src.md").exists()
                pad.unlink()
                time.sleep(0.3)  # the mount looks at the disk's room every 100 ms
            finally:
                os.close(fd)
            assert f.read_bytes() == b"v1\n" + lines
            assert areev(m.db, "cat", "/memories/f.md").stdout.encode() == b"v1\n" + lines
