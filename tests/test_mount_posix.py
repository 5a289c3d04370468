"""POSIX behaviour of `areev mount` over a real FUSE mount."""
import ctypes
import errno
import json
import mmap
import os
import stat
import subprocess
import time

import pytest

from mount_util import *  # noqa: F401,F403
from mount_util import Mount, areev, history, history_dir, memtool, wait_for

pytestmark = fuse_test_marker  # noqa: F405

_libc = ctypes.CDLL(None, use_errno=True)
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
AT_FDCWD = -100


def renameat2(old, new, flags):
    if _libc.renameat2(AT_FDCWD, os.fsencode(old), AT_FDCWD, os.fsencode(new), flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def expect_errno(code, fn, *args):
    with pytest.raises(OSError) as info:
        fn(*args)
    assert info.value.errno == code, f"expected {errno.errorcode[code]}, got {info.value}"


@pytest.mark.parametrize("mnt", [(), ("-s",), ("-o", "writeback_cache")], indirect=True,
                         ids=["mt", "single", "writeback"])
def test_mount_roundtrip_and_exit_code(mnt):
    p = mnt.path / "notes.md"
    p.write_text("hello\n")
    assert p.read_text() == "hello\n"
    (mnt.path / "sub").mkdir()
    (mnt.path / "sub" / "b.md").write_text("b")
    assert sorted(os.listdir(mnt.path)) == ["notes.md", "sub"]
    with open("/proc/mounts") as f:
        line = [l for l in f if f" {mnt.path} " in l][0]
    assert line.startswith("areev ") and " fuse.areev " in line
    assert "default_permissions" in line


def test_paths_map_one_to_one(mnt):
    (mnt.path / "a").mkdir()
    (mnt.path / "a" / "b.md").write_text("deep")
    got = memtool_view(mnt.db, "/memories/a/b.md")
    assert "deep" in got


def memtool_view(db, path):
    from mount_util import memtool
    return memtool(db, {"command": "view", "path": path})["content"]


def _listing_paused_after_its_first_page(d):
    """An open listing of `d` that has read its first entries (one READDIRPLUS
    at offset 0, the snapshot) and not the rest: (fd, iterator)."""
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    it = os.scandir(fd)
    for _ in range(5):
        next(it)
    return fd, it


def _finish(fd, it):
    rest = [e.name for e in it]
    it.close()
    os.close(fd)
    return rest


@pytest.mark.parametrize("how", ["unlink", "rename", "memtool delete", "memtool rename"])
def test_a_name_gone_during_a_listing_stays_gone(mnt, how):
    # Issue: the later pages of a listing came from the snapshot of its first,
    # each with a dentry (300 s): a name unlinked or moved meanwhile, through
    # the mount or by another process, resolved again, and a new file written
    # there landed on the deleted file (lost) or on the moved one (overwritten).
    d = mnt.path / "big"
    d.mkdir()
    for i in range(300):  # several READDIRPLUS pages
        (d / f"f{i:04}").write_text("x")
    (d / "zzz").write_text("precious\n")
    fd, it = _listing_paused_after_its_first_page(d)
    if how == "unlink":
        os.unlink(d / "zzz")
    elif how == "rename":
        os.rename(d / "zzz", d / "report.md")
    elif how == "memtool delete":
        memtool(mnt.db, {"command": "delete", "path": "/memories/big/zzz"})
    else:
        memtool(mnt.db, {"command": "rename", "old_path": "/memories/big/zzz",
                         "new_path": "/memories/big/report.md"})
    time.sleep(0.3)  # the poller has dropped the name: the listing must not bring it back
    rest = _finish(fd, it)
    assert len(rest) >= 250
    assert not (d / "zzz").exists()
    (d / "zzz").write_text("a new file\n")
    assert (d / "zzz").read_text() == "a new file\n"
    assert areev(mnt.db, "cat", "/memories/big/zzz").stdout == "a new file\n"
    if "rename" in how:
        assert (d / "report.md").read_text() == "precious\n"
        assert areev(mnt.db, "cat", "/memories/big/report.md").stdout == "precious\n"


def test_a_listing_shows_a_name_replaced_meanwhile_as_it_is_now(mnt):
    d = mnt.path / "big"
    d.mkdir()
    for i in range(300):
        (d / f"f{i:04}").write_text("x")
    (d / "zzz").write_text("old\n")
    (d / "new").write_text("replacement, longer\n")
    new_ino = os.stat(d / "new").st_ino
    fd, it = _listing_paused_after_its_first_page(d)
    os.rename(d / "new", d / "zzz")
    entries = {e.name: e for e in it}
    assert entries["zzz"].inode() == new_ino
    assert entries["zzz"].stat().st_size == len("replacement, longer\n")
    it.close()
    os.close(fd)
    assert os.stat(d / "zzz").st_ino == new_ino


def test_inode_numbers_stable_across_remount(mnt, tmp_path):
    (mnt.path / "d").mkdir()
    (mnt.path / "d" / "f.md").write_text("x")
    (mnt.path / "d" / "f.md").write_text("y")

    versions = sorted(os.listdir(mnt.path / ".history" / "d" / "f.md"))
    assert len(versions) == 2
    names = ["d", "d/f.md", ".history", ".history/d", ".history/d/f.md"]
    names += [f".history/d/f.md/{v}" for v in versions]

    def numbers(root):
        return {n: os.lstat(root / n).st_ino for n in names}

    before = numbers(mnt.path)
    assert mnt.stop() == 0
    m2 = Mount(mnt.db, mnt.path).start()
    try:
        # .history entries too: numbered by what each names, not by the
        # order a mount meets them (here the newest version comes first)
        os.lstat(m2.path / names[-1])
        after = numbers(m2.path)
    finally:
        assert m2.stop() == 0
    assert before == after
    assert len(set(before.values())) == len(before)
    mnt.start()  # the fixture unmounts it again


def test_mkdir_rmdir_notempty(mnt):
    d = mnt.path / "d"
    d.mkdir(0o750)
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o750 & ~_umask()
    (d / "f").write_text("x")
    expect_errno(errno.ENOTEMPTY, os.rmdir, d)
    expect_errno(errno.EEXIST, os.mkdir, d)
    os.unlink(d / "f")
    os.rmdir(d)
    assert not d.exists()
    expect_errno(errno.ENOENT, os.rmdir, d)


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def test_rename_flags(mnt):
    a, b = mnt.path / "a", mnt.path / "b"
    a.write_text("A")
    b.write_text("B")
    expect_errno(errno.EEXIST, renameat2, a, b, RENAME_NOREPLACE)
    expect_errno(errno.EINVAL, renameat2, a, b, RENAME_EXCHANGE)
    renameat2(a, mnt.path / "c", RENAME_NOREPLACE)
    assert (mnt.path / "c").read_text() == "A" and not a.exists()


def test_rename_over_keeps_moved_inode(mnt):
    tmp, dst = mnt.path / "x.tmp", mnt.path / "x.md"
    dst.write_text("old")
    tmp.write_text("new")
    ino = os.stat(tmp).st_ino
    os.rename(tmp, dst)
    assert os.stat(dst).st_ino == ino
    assert dst.read_text() == "new"
    assert not tmp.exists()


def test_unlink_open_file_still_readable_and_writes_do_not_resurrect(mnt):
    p = mnt.path / "gone.md"
    p.write_text("still here")
    fd = os.open(p, os.O_RDWR)
    try:
        os.unlink(p)
        assert not p.exists()
        assert os.pread(fd, 100, 0) == b"still here"
        os.pwrite(fd, b"STILL", 0)
        os.fsync(fd)
        assert os.pread(fd, 100, 0) == b"STILL here"
        assert os.fstat(fd).st_nlink == 0
    finally:
        os.close(fd)
    time.sleep(0.2)
    assert not p.exists()
    assert "gone.md" not in os.listdir(mnt.path)


def test_truncate_and_ftruncate(mnt):
    p = mnt.path / "t.md"
    p.write_text("0123456789")
    os.truncate(p, 4)
    assert p.read_text() == "0123"
    with open(p, "r+") as f:
        f.truncate(2)
        f.seek(0, 2)
        f.write("zz")
    assert p.read_text() == "01zz"
    os.truncate(p, 6)
    assert p.read_bytes() == b"01zz\0\0"


def test_chmod_chown_utimens_exact(mnt):
    p = mnt.path / "m.md"
    p.write_text("x")
    os.chmod(p, 0o640)
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    os.chown(p, 1234, 5678)
    st = os.stat(p)
    assert (st.st_uid, st.st_gid) == (1234, 5678)
    os.utime(p, ns=(1_600_000_000_123_456_789, 1_700_000_000_987_654_321))
    st = os.stat(p)
    assert st.st_atime_ns == 1_600_000_000_123_456_789
    assert st.st_mtime_ns == 1_700_000_000_987_654_321


def test_attributes_survive_remount(mnt):
    p = mnt.path / "keep.md"
    p.write_text("x")
    os.chmod(p, 0o600)
    os.utime(p, ns=(1_600_000_000_000_000_001, 1_700_000_000_000_000_002))
    assert mnt.stop() == 0
    mnt.start()
    st = os.stat(p)
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_mtime_ns == 1_700_000_000_000_000_002


# Issue: `touch -d 2300-01-01` (or a tar entry of that date) was stored as
# 1715-06-13: seconds past what int64 nanoseconds hold wrapped around. Such
# times are clamped to the store's range, as the kernel clamps to ext4's.
@kernel_owns_in_writeback("a cached file's times")  # noqa: F405
def test_times_beyond_the_stores_range_are_clamped_not_wrapped(mnt):
    p = mnt.path / "far.md"
    p.write_text("x")
    late = 10_413_792_000 * 10**9  # 2300-01-01
    early = -11_676_096_000 * 10**9  # 1600-01-01
    os.utime(p, ns=(early, late))
    st = os.stat(p)
    assert (st.st_atime_ns, st.st_mtime_ns) == (-2**63, 2**63 - 1)
    edge = 9_223_372_036 * 10**9 + 854_775_807  # the latest time it holds, kept exactly
    os.utime(p, ns=(edge, edge))
    assert os.stat(p).st_mtime_ns == edge
    os.utime(p, ns=(early, late))
    assert mnt.stop() == 0
    mnt.start()
    st = os.stat(p)
    assert (st.st_atime_ns, st.st_mtime_ns) == (-2**63, 2**63 - 1)


def test_symlinks(mnt):
    link = mnt.path / "lnk"
    os.symlink("target/of/some/length", link)
    assert os.readlink(link) == "target/of/some/length"
    st = os.lstat(link)
    assert stat.S_ISLNK(st.st_mode) and st.st_size == len("target/of/some/length")
    os.symlink("user@host.1234:1700000000", mnt.path / ".#notes.md")  # emacs lock
    assert os.readlink(mnt.path / ".#notes.md") == "user@host.1234:1700000000"
    (mnt.path / "real.md").write_text("r")
    os.symlink("real.md", mnt.path / "rel")
    assert (mnt.path / "rel").read_text() == "r"


def test_o_excl_and_o_append(mnt):
    p = mnt.path / "lockish"
    fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    os.write(fd, b"1")
    os.close(fd)
    expect_errno(errno.EEXIST, os.open, p, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"2")
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, b"3")
    os.close(fd)
    assert p.read_bytes() == b"123"


def test_write_only_handle_then_read_back(mnt):
    p = mnt.path / "wo.bin"
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    os.pwrite(fd, b"abc", 0)
    os.pwrite(fd, b"XY", 10)
    os.close(fd)
    assert p.read_bytes() == b"abc" + b"\0" * 7 + b"XY"


def test_mmap_read_and_write(mnt):
    p = mnt.path / "map.bin"
    p.write_bytes(b"a" * 8192)
    with open(p, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
        assert m[:4] == b"aaaa"
        m[0:4] = b"bbbb"
        m.flush()
        m.close()
    assert p.read_bytes()[:5] == b"bbbba"


def test_statfs_meaningful(mnt):
    s = os.statvfs(mnt.path)
    assert s.f_bsize > 0 and s.f_blocks > 0 and s.f_bavail > 0
    assert s.f_namemax == 255
    # `df -i`: used inodes are the namespace's nodes (the root, d, 30 files),
    # not only those the kernel has looked up since the mount.
    (mnt.path / "d").mkdir()
    for i in range(30):
        (mnt.path / "d" / f"f{i}").write_text("x")
    assert mnt.stop() == 0
    mnt.start()
    s = os.statvfs(mnt.path)
    assert s.f_files - s.f_ffree == 32


def test_parent_times_change(mnt):
    d = mnt.path / "d"
    d.mkdir()
    os.utime(d, ns=(1_000_000_000, 1_000_000_000))
    before = os.stat(d)
    (d / "f").write_text("x")
    mid = os.stat(d)
    assert mid.st_mtime_ns > before.st_mtime_ns and mid.st_ctime_ns >= before.st_ctime_ns
    os.utime(d, ns=(1_000_000_000, 1_000_000_000))
    os.unlink(d / "f")
    assert os.stat(d).st_mtime_ns > 1_000_000_000


def test_hard_links_refused_xattrs_unsupported(mnt):
    p = mnt.path / "f"
    p.write_text("x")
    expect_errno(errno.EPERM, os.link, p, mnt.path / "g")
    with pytest.raises(OSError) as info:
        os.getxattr(p, "user.x")
    assert info.value.errno in (errno.ENOTSUP, errno.ENODATA)
    with pytest.raises(OSError) as info:
        os.setxattr(p, "user.x", b"1")
    assert info.value.errno in (errno.ENOTSUP, errno.ENOSYS)
    try:
        assert os.listxattr(p) == []  # no synthetic xattrs (cp -a would copy them)
    except OSError as e:
        assert e.errno in (errno.ENOTSUP, errno.ENOSYS)


def test_bad_names_clean_errno(mnt):
    expect_errno(errno.EINVAL, open, mnt.path / "back\\slash", "w")
    expect_errno(errno.EINVAL, os.mkdir, mnt.path / "a%2fb")
    expect_errno(errno.ENAMETOOLONG, open, mnt.path / ("n" * 256), "w")
    assert "rejected name" in mnt.log()  # each refusal leaves a log line


# Issue: the daemon logged a refused name as it was given, so a name with a
# newline forged a log line of its own and one with ESC reached the terminal.
def test_a_refused_name_is_logged_on_one_line_with_its_controls_escaped(mnt):
    forged = "a\\b\nareev mount: info: forged\x1b]0;title\x07"
    expect_errno(errno.EINVAL, open, mnt.path / forged, "w")
    log = mnt.log()
    lines = [line for line in log.splitlines() if "rejected name" in line]
    assert lines and "a\\b\\nareev mount: info: forged\\x1b]0;title\\x07" in lines[-1], log
    assert not any(line.startswith("areev mount: info: forged") for line in log.splitlines())
    assert "\x1b" not in log


def test_a_name_that_is_not_utf8_is_refused_and_the_tool_reaches_every_name(mnt):
    # The memory tool's paths are JSON text: a name that is not UTF-8 could
    # be made through the mount but never viewed, edited or deleted by it.
    root = os.fsencode(mnt.path)
    expect_errno(errno.EILSEQ, os.open, root + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY, 0o644)
    expect_errno(errno.EILSEQ, os.mkdir, root + b"/dir\xc3")
    expect_errno(errno.EILSEQ, os.symlink, "target", root + b"/link\xed\xa0\x80")
    (mnt.path / "ok.md").write_text("kept\n")
    expect_errno(errno.EILSEQ, os.rename, mnt.path / "ok.md", root + b"/\xfe.md")
    assert "not valid UTF-8" in mnt.log()
    (mnt.path / "caf\u00e9.md").write_text("fine\n")  # UTF-8 names are fine
    assert sorted(os.listdir(mnt.path)) == ["caf\u00e9.md", "ok.md"]
    listing = memtool(mnt.db, {"command": "view", "path": "/memories"})["content"]
    assert "caf\u00e9.md" in listing and "ok.md" in listing


def test_chmod_before_close_keeps_the_unsaved_writes_mtime(mnt):
    # cp -p and vim write, then fchmod, then close: the version's mtime is
    # the writes', not the previous version's.
    p = mnt.path / "m.md"
    p.write_text("old\n")
    os.utime(p, ns=(946684800 * 10**9, 946684800 * 10**9))  # 2000-01-01
    # A second's margin: the kernel stamps times from a coarse clock, a few
    # ms behind time_ns(), where it owns them (writeback mode).
    before = time.time_ns() - 10**9
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"new\n")
        os.fchmod(fd, 0o600)
        assert os.fstat(fd).st_mtime_ns >= before
    finally:
        os.close(fd)
    st = os.stat(p)
    assert (st.st_mode & 0o777, p.read_text()) == (0o600, "old\nnew\n")
    assert st.st_mtime_ns >= before
    # The store holds it too: another mount of the same store sees it.
    other = Mount(mnt.db, mnt.path.parent / "other").start()
    try:
        assert os.stat(other.path / "m.md").st_mtime_ns == st.st_mtime_ns
    finally:
        assert other.stop() == 0


def test_a_files_change_time_is_its_last_change_not_its_close(mnt):
    # Issue: a save's ctime was the close that sealed it, so a file held open
    # after its last write showed a ctime later than its mtime (and, once the
    # kernel dropped its cached one, a ctime that moved with nothing
    # changed): tools that watch ctime (backup, tar's incremental mode,
    # git's trustctime) saw a change that had not happened.
    p = mnt.path / "held.md"
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, b"x\n")
        time.sleep(0.5)
    finally:
        os.close(fd)
    os.listdir(mnt.path)
    st = os.stat(p)
    assert st.st_ctime_ns == st.st_mtime_ns
    # A chmod after the last write is the last change.
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"y\n")
        time.sleep(0.2)
        os.fchmod(fd, 0o600)
        after_chmod = time.time_ns()
        time.sleep(0.5)
    finally:
        os.close(fd)
    st = os.stat(p)
    assert st.st_mtime_ns < st.st_ctime_ns <= after_chmod
    # As stored: another mount of the store shows the same times.
    other = Mount(mnt.db, mnt.path.parent / "other").start()
    try:
        seen = os.stat(other.path / "held.md")
        assert (seen.st_mtime_ns, seen.st_ctime_ns) == (st.st_mtime_ns, st.st_ctime_ns)
    finally:
        assert other.stop() == 0


def test_a_chmod_or_chown_through_another_mount_reaches_this_one(mnt):
    # Issue: a mode or owner change made no op-log entry, so another mount of
    # the store kept the old one for as long as it cached the file: a chmod
    # 600 through one mount left the file readable through the other.
    (mnt.path / "d").mkdir()
    (mnt.path / "d" / "secret.md").write_text("s\n")
    assert os.stat(mnt.path / "d" / "secret.md").st_mode & 0o777 == 0o644
    other = Mount(mnt.db, mnt.path.parent / "other").start()
    try:
        os.chmod(other.path / "d" / "secret.md", 0o600)
        os.chown(other.path / "d" / "secret.md", 1234, 1235)
        os.chmod(other.path / "d", 0o700)

        def seen():
            f, d = os.stat(mnt.path / "d" / "secret.md"), os.stat(mnt.path / "d")
            return (f.st_mode & 0o777, f.st_uid, f.st_gid, d.st_mode & 0o777) == (
                0o600, 1234, 1235, 0o700)
        assert wait_for(seen, timeout=5.0), os.stat(mnt.path / "d" / "secret.md")
        assert (mnt.path / "d" / "secret.md").read_text() == "s\n"
    finally:
        assert other.stop() == 0
    ops = [o["op"] for o in json.loads(areev(mnt.db, "log", "--json", ns=mnt.ns).stdout)]
    assert ops.count("setattr") == 3, ops
    # Times alone make no entry (touch, a writeback close).
    os.utime(mnt.path / "d" / "secret.md", (1, 1))
    ops = [o["op"] for o in json.loads(areev(mnt.db, "log", "--json", ns=mnt.ns).stdout)]
    assert ops.count("setattr") == 3, ops


def test_paths_past_the_key_limit_are_name_too_long(mnt):
    """A path over 4096 bytes is ENAMETOOLONG (not EFBIG), also when a directory
    rename would push a file under it past the limit; nothing moves then.
    Every call is relative to an open directory: the kernel itself refuses an
    absolute path over PATH_MAX before the daemon sees it."""
    seg = "d" * 250
    depth = 0
    os.mkdir(mnt.path / "deep")
    fds = [os.open(mnt.path / "deep", os.O_RDONLY | os.O_DIRECTORY)]
    key_len = len("/memories/deep")
    try:
        while key_len + 1 + len(seg) <= 4096 - 20:
            os.mkdir(seg, dir_fd=fds[-1])
            fds.append(os.open(seg, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
            key_len += 1 + len(seg)
            depth += 1
        assert depth >= 15
        expect_errno(errno.ENAMETOOLONG, lambda: os.mkdir(seg, dir_fd=fds[-1]))
        expect_errno(errno.ENAMETOOLONG,
                     lambda: os.open(seg, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fds[-1]))
        # A file that fits, then a rename of its top directory to a longer name.
        name = "keep.md"
        fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fds[-1])
        os.write(fd, b"kept\n")
        os.close(fd)
        file_key = key_len + 1 + len(name)
        longer = "x" * (len("deep") + (4096 - file_key) + 1)
        expect_errno(errno.ENAMETOOLONG, os.rename, mnt.path / "deep", mnt.path / longer)
        fd = os.open(name, os.O_RDONLY, dir_fd=fds[-1])
        assert os.read(fd, 100) == b"kept\n"
        os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)
    assert not os.path.exists(mnt.path / longer)
    # The memory tool refuses the same move with the path message.
    result = memtool(mnt.db, {"command": "rename", "old_path": "/memories/deep",
                              "new_path": "/memories/" + longer}, ns=mnt.ns)
    assert result == {"content": f"Error: Path /memories/{longer} is too long", "is_error": True}
    rel = "/".join(["deep"] + [seg] * depth + [name])
    assert areev(mnt.db, "cat", "/memories/" + rel, ns=mnt.ns).stdout == "kept\n"
    # One byte shorter fits: the file keeps its history at a 4096-byte path.
    os.rename(mnt.path / "deep", mnt.path / longer[:-1])
    moved = "/memories/" + longer[:-1] + rel[len("deep"):]
    assert len(moved.encode()) == 4096
    assert areev(mnt.db, "cat", moved, ns=mnt.ns).stdout == "kept\n"


def test_history_dir_hidden_reserved_and_read_only(mnt):
    (mnt.path / "f.md").write_text("v1")
    assert ".history" not in os.listdir(mnt.path)
    assert os.path.isdir(mnt.path / ".history")
    expect_errno(errno.EEXIST, os.mkdir, mnt.path / ".history")
    h = mnt.path / ".history"
    expect_errno(errno.EROFS, open, h / "new.md", "w")
    expect_errno(errno.EROFS, os.mkdir, h / "x")
    names = os.listdir(h / "f.md")
    assert len(names) == 1
    v = h / "f.md" / names[0]
    expect_errno(errno.EROFS, open, v, "w")
    expect_errno(errno.EROFS, os.unlink, v)
    expect_errno(errno.EROFS, os.rename, v, h / "f.md" / "other")
    expect_errno(errno.EROFS, os.chmod, v, 0o777)
    expect_errno(errno.EROFS, os.rmdir, h)
    assert v.read_text() == "v1"


def test_reserved_history_name_refused_via_rename(mnt):
    (mnt.path / "d").mkdir()
    (mnt.path / "d" / ".history").mkdir()  # reserved at the root only
    (mnt.path / "x").write_text("x")
    (mnt.path / "e").mkdir()
    # As onto a directory that holds files: a file is refused by the kernel,
    # a directory by the daemon (it answered EPERM, with a warning logged).
    expect_errno(errno.EISDIR, os.rename, mnt.path / "x", mnt.path / ".history")
    expect_errno(errno.ENOTEMPTY, os.rename, mnt.path / "e", mnt.path / ".history")
    assert (mnt.path / "x").read_text() == "x" and (mnt.path / "e").is_dir()
    os.rename(mnt.path / "e", mnt.path / "d" / ".history" / "e")  # below the root: a name
    assert (mnt.path / "d" / ".history" / "e").is_dir()


def test_a_history_directory_the_memory_tool_made_is_shadowed(mnt):
    """The memory tool may use /memories/.history like any hidden name. On the
    mount, .history stays the version directory: the agent's is not listed,
    grep -r never reads it, and its files' versions are under
    .history/.history/."""
    for cmd in [{"command": "create", "path": "/memories/.history/x.md", "file_text": "SHADOW1\n"},
                {"command": "str_replace", "path": "/memories/.history/x.md",
                 "old_str": "SHADOW1", "new_str": "SHADOW2"},
                {"command": "create", "path": "/memories/a.md", "file_text": "a\n"}]:
        assert memtool(mnt.db, cmd, ns=mnt.ns)["is_error"] is False, cmd
    assert wait_for(lambda: "a.md" in os.listdir(mnt.path), timeout=3)
    assert ".history" not in os.listdir(mnt.path)
    assert "a.md" in os.listdir(mnt.path / ".history")  # the virtual directory
    names = wait_for(lambda: history_dir(mnt.path, ".history/x.md"), timeout=3)
    assert len(names) == 2
    assert (mnt.path / ".history" / ".history" / "x.md" / names[1]).read_text() == "SHADOW2\n"
    grep = subprocess.run(["grep", "-r", "SHADOW", str(mnt.path)], capture_output=True, text=True)
    assert grep.returncode == 1 and grep.stdout == "", grep.stdout
    with pytest.raises(OSError) as info:
        os.mkdir(mnt.path / ".history")
    assert info.value.errno in (errno.EPERM, errno.EEXIST)
    assert memtool(mnt.db, {"command": "view", "path": "/memories/.history/x.md"},
                   ns=mnt.ns)["content"].endswith("     1\tSHADOW2\n     2\t")


def test_big_file_and_big_directory(mnt):
    data = os.urandom(5 << 20)
    (mnt.path / "big.bin").write_bytes(data)
    assert (mnt.path / "big.bin").read_bytes() == data
    d = mnt.path / "many"
    d.mkdir()
    for i in range(1500):
        (d / f"f{i:05}").write_text(str(i))
    names = os.listdir(d)
    assert len(names) == 1500 and len(set(names)) == 1500
    assert (d / "f01234").read_text() == "1234"


# Issue: with -o writeback_cache the kernel takes every write first, so a
# file written past the store's 128 MiB limit failed only when the kernel
# sent the part past it, and the part below was saved as a cut version
# (`stat` showing the bigger size). The change now fails whole: nothing is
# saved, close() fails, and the file shows what it held before.
@pytest.mark.parametrize("mnt", [(), ("-o", "writeback_cache")], indirect=True,
                         ids=["default", "writeback"])
def test_a_write_past_the_body_limit_saves_no_cut_version_in_writeback_mode(mnt):
    p = mnt.path / "huge.bin"
    p.write_text("old\n")
    chunk = b"x" * (1 << 20)
    writeback = "writeback_cache" in mnt.extra
    with pytest.raises(OSError) as e:
        with open(p, "wb") as f:
            for _ in range(130):
                f.write(chunk)
            f.flush()
    assert e.value.errno in ((errno.EIO, errno.EFBIG) if writeback else (errno.EFBIG,))
    versions = history(mnt.db, "/memories/huge.bin")
    if writeback:
        assert [v["size"] for v in versions] == [4]
        assert wait_for(lambda: os.stat(p).st_size == 4, timeout=5), os.stat(p)
        assert p.read_text() == "old\n"
    else:
        # As on a local disk, the part written before the refused write(2) is
        # the file's content, saved at the close.
        assert [v["size"] for v in versions] == [4, 128 << 20]
    # A handle whose writes reach the daemon as they are made (direct I/O:
    # opened right after another process's edit) is told at its write(2), in
    # either mode, and keeps what it wrote before.
    r = memtool(mnt.db, {"command": "create", "path": "/memories/direct.bin", "file_text": "x\n"})
    assert not r["is_error"], r
    written = 0
    fd = os.open(mnt.path / "direct.bin", os.O_WRONLY | os.O_TRUNC)
    try:
        with pytest.raises(OSError) as e:
            for _ in range(130):
                written += os.write(fd, chunk)
        assert e.value.errno == errno.EFBIG
    finally:
        os.close(fd)
    assert written == 128 << 20
    assert [v["size"] for v in history(mnt.db, "/memories/direct.bin")] == [2, 128 << 20]


def test_concurrency_smoke(mnt):
    import threading
    errors = []

    def worker(k):
        try:
            d = mnt.path / f"w{k}"
            d.mkdir()
            for i in range(60):
                p = d / f"f{i}.md"
                p.write_text(f"{k}:{i}\n" * 10)
                assert p.read_text() == f"{k}:{i}\n" * 10
                with open(mnt.path / "shared.log", "a") as f:
                    f.write(f"{k}:{i}\n")
                os.listdir(d)
            for i in range(0, 60, 2):
                os.rename(d / f"f{i}.md", d / f"g{i}.md")
                os.unlink(d / f"f{i + 1}.md")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    lines = (mnt.path / "shared.log").read_text().splitlines()
    assert len(lines) == 6 * 60 and len(set(lines)) == 6 * 60
    for k in range(6):
        assert sorted(os.listdir(mnt.path / f"w{k}")) == sorted(f"g{i}.md" for i in range(0, 60, 2))


@kernel_owns_in_writeback("when writes reach the daemon")  # noqa: F405
def test_sizes_past_the_store_limit_fail_at_once_and_lose_nothing(mnt):
    limit = 128 << 20  # grainstore::Limits::kMaxBodyBytes
    p = mnt.path / "big.bin"
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, b"abc")
        with pytest.raises(OSError) as e:
            os.pwrite(fd, b"x", limit)
        assert e.value.errno == errno.EFBIG
        with pytest.raises(OSError) as e:
            os.ftruncate(fd, limit + 1)
        assert e.value.errno == errno.EFBIG
        assert os.fstat(fd).st_size == 3
    finally:
        os.close(fd)  # seals what was accepted
    with pytest.raises(OSError) as e:
        os.truncate(p, 200 << 20)
    assert e.value.errno == errno.EFBIG
    assert p.read_bytes() == b"abc"
    assert areev(mnt.db, "cat", "/memories/big.bin").stdout == "abc"


# Issue: a posix_fallocate past the 128 MiB limit failed with EFBIG but left the file
# grown to the limit (glibc's fallback of one write per block, as the mount had no
# fallocate), and its close saved that as a version.
@pytest.mark.parametrize("mnt", [(), ("-o", "writeback_cache")], indirect=True,
                         ids=["default", "writeback"])
def test_posix_fallocate_grows_a_file_whole_or_not_at_all(mnt):
    p = mnt.path / "pfa.md"
    p.write_bytes(b"small\n")
    fd = os.open(p, os.O_RDWR)
    try:
        with pytest.raises(OSError) as e:
            os.posix_fallocate(fd, 0, 130 << 20)
        assert e.value.errno == errno.EFBIG
        assert os.fstat(fd).st_size == 6
        os.posix_fallocate(fd, 2, 4)  # within the file: nothing to do
        assert os.fstat(fd).st_size == 6
        os.posix_fallocate(fd, 1000, 3000)
        assert os.fstat(fd).st_size == 4000
    finally:
        os.close(fd)
    assert p.read_bytes() == b"small\n" + bytes(3994)
    assert [v["size"] for v in history(mnt.db, "/memories/pfa.md")] == [6, 4000]
    # Keeping the size (rsync --preallocate) reserves nothing and changes
    # nothing, but is weighed as growth is; punching holes or zeroing ranges
    # is not offered.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    fd = os.open(p, os.O_RDWR)
    try:
        assert libc.fallocate(fd, 0x01, 0, 8192) == 0  # FALLOC_FL_KEEP_SIZE
        assert os.fstat(fd).st_size == 4000
        assert libc.fallocate(fd, 0x01, 0, 130 << 20) == -1
        assert ctypes.get_errno() == errno.EFBIG
        for mode in (0x03, 0x10):  # PUNCH_HOLE|KEEP_SIZE, ZERO_RANGE
            assert libc.fallocate(fd, mode, 0, 8192) == -1
            assert ctypes.get_errno() == errno.EOPNOTSUPP, mode
    finally:
        os.close(fd)
    assert p.read_bytes() == b"small\n" + bytes(3994)
    assert [v["size"] for v in history(mnt.db, "/memories/pfa.md")] == [6, 4000]
