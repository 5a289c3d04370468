"""`areev mount` / `areev umount` end to end on a real FUSE mount."""
import errno
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from mount_util import wait_for

pytestmark = [
    pytest.mark.uses_fuse,
    pytest.mark.skipif(not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None,
                       reason="needs /dev/fuse and fusermount3"),
]


def wait_mounted(path, proc, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.ismount(path):
            return
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"areev mount exited {proc.returncode}: {proc.stderr.read()}")
        time.sleep(0.1)
    pytest.fail("mount did not come up")


def force_unmount(path):
    for _ in range(3):  # a build that stacked mounts left more than one
        if not os.path.ismount(path):
            return
        subprocess.run(["fusermount3", "-u", "-z", path], capture_output=True)


def daemon_mount(run_areev, db, mnt):
    """`areev mount` (which goes to the background) on a new directory
    `mnt`; returns once the mount is up."""
    mnt.mkdir()
    proc = run_areev("mount", str(mnt), "--db", db)
    assert proc.returncode == 0, proc.stderr
    wait_mounted(str(mnt), None)


def test_mount_foreground_edit_and_umount(areev_bin, run_areev, db, tmp_path):
    cmd = json.dumps({"command": "create", "path": "/memories/prefs.md", "file_text": "v1\n"})
    assert run_areev("memtool", cmd, "--db", db, "--ns", "assistant").returncode == 0
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.Popen([areev_bin, "mount", str(mnt), "--db", db, "--ns", "assistant", "-f"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_mounted(str(mnt), proc)
        # The daemon restarted itself (huge pages) under its own name, so
        # ps, pgrep and top show "areev", not "exe".
        assert open(f"/proc/{proc.pid}/comm").read() == "areev\n"
        assert (mnt / "prefs.md").read_text() == "v1\n"
        (mnt / "prefs.md").write_text("v2\n")
        (mnt / "new.md").write_text("made through the mount\n")
        umount = run_areev("umount", str(mnt))
        assert umount.returncode == 0, umount.stderr
        assert proc.wait(timeout=20) == 0, proc.stderr.read()
    finally:
        force_unmount(str(mnt))
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not os.path.ismount(str(mnt))
    assert run_areev("cat", "/memories/prefs.md", "--db", db, "--ns", "assistant").stdout == "v2\n"
    assert run_areev("cat", "/memories/prefs.md", "--version", "1", "--db", db,
                     "--ns", "assistant").stdout == "v1\n"
    assert run_areev("cat", "/memories/new.md", "--db", db,
                     "--ns", "assistant").stdout == "made through the mount\n"


def test_mount_daemonizes_and_umount(areev_bin, run_areev, db, tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        proc = run_areev("mount", str(mnt), "--db", db, "-o", "default_permissions")
        assert proc.returncode == 0, proc.stderr
        wait_mounted(str(mnt), None)
        (mnt / "d.md").write_text("daemon\n")
        assert run_areev("umount", str(mnt)).returncode == 0
        deadline = time.monotonic() + 10
        while os.path.ismount(str(mnt)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not os.path.ismount(str(mnt))
    finally:
        force_unmount(str(mnt))
    assert run_areev("cat", "/memories/d.md", "--db", db).stdout == "daemon\n"


def _processes():
    """(pid, argv) of every process whose command line can be read."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                yield int(entry), f.read().split(b"\0")[:-1]
        except OSError:
            continue


def _daemon_of(mountpoint):
    """Pid of the `areev mount` daemon serving `mountpoint`, or None."""
    for pid, argv in _processes():
        if (argv and argv[0].endswith(b"areev") and b"mount" in argv
                and os.fsencode(mountpoint) in argv):
            return pid
    return None


def _gone(pid):
    """Whether `pid` has exited (a zombie its reaper has not collected counts)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _close_standard_fds(fds):
    def close():
        for fd in fds:
            os.close(fd)
    return close


# Issue: a daemonizing mount that made a new store, started with standard
# descriptors closed, got its stop signals' pipe there, which fuse_daemonize
# then pointed at /dev/null: SIGTERM was ignored, and the thread waiting on
# the pipe spun.
@pytest.mark.parametrize("closed", [(0, 1, 2), (1, 2)], ids=["all", "stdout-stderr"])
def test_a_daemon_started_with_standard_descriptors_closed_stops_on_sigterm(areev_bin, run_areev,
                                                                           tmp_path, closed):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    db = str(tmp_path / "new.db")  # made by the mount, after the signals' pipe
    try:
        proc = subprocess.run([areev_bin, "mount", str(mnt), "--db", db],
                              stdin=subprocess.DEVNULL, preexec_fn=_close_standard_fds(closed),
                              timeout=60)
        assert proc.returncode == 0
        wait_mounted(str(mnt), None)
        (mnt / "kept.md").write_text("kept\n")
        pid = _daemon_of(str(mnt))
        assert pid is not None
        os.kill(pid, signal.SIGTERM)
        assert wait_for(lambda: _gone(pid) and not os.path.ismount(str(mnt)), timeout=10.0)
    finally:
        force_unmount(str(mnt))
    assert run_areev("cat", "/memories/kept.md", "--db", db).stdout == "kept\n"


def test_umount_from_a_parent_that_ignores_sigchld_returns(areev_bin, run_areev, db, tmp_path):
    # Ignored SIGCHLD passes through exec: fusermount3 was then reaped by the
    # kernel, and umount waited for it for ever at full CPU.
    mnt = tmp_path / "mnt"
    try:
        daemon_mount(run_areev, db, mnt)
        r = subprocess.run([str(areev_bin), "umount", str(mnt)], capture_output=True, text=True,
                           timeout=30,
                           preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN))
        assert (r.returncode, r.stderr) == (0, ""), r.stderr
        assert not os.path.ismount(str(mnt))
    finally:
        force_unmount(str(mnt))


def test_umount_of_a_busy_mount_detaches_it_and_says_so(areev_bin, run_areev, db, tmp_path):
    mnt = tmp_path / "mnt"
    try:
        daemon_mount(run_areev, db, mnt)
        with open(mnt / "open.md", "w") as f:
            f.write("first\n")
            f.flush()
            r = run_areev("umount", str(mnt))
            assert r.returncode == 0, r.stderr
            assert r.stderr == (f"areev: umount: {mnt} was busy and is detached lazily: files "
                                "still open there are served, and saved, until they close\n")
            assert not os.path.ismount(str(mnt))
            f.write("second\n")  # the open file is still served
    finally:
        force_unmount(str(mnt))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if run_areev("cat", "/memories/open.md", "--db", db).stdout == "first\nsecond\n":
            break
        time.sleep(0.1)
    assert run_areev("cat", "/memories/open.md", "--db", db).stdout == "first\nsecond\n"


def test_umount_abort_frees_a_process_stuck_on_a_stopped_daemon(areev_bin, run_areev, db,
                                                               tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.Popen([areev_bin, "mount", str(mnt), "--db", db, "-f"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reader = None
    try:
        wait_mounted(str(mnt), proc)
        (mnt / "saved.md").write_text("saved\n")
        # A file the mount has not looked up: reading it must ask the daemon.
        made = json.dumps({"command": "create", "path": "/memories/later.md", "file_text": "x"})
        assert run_areev("memtool", made, "--db", db).returncode == 0
        os.kill(proc.pid, signal.SIGSTOP)
        reader = subprocess.Popen(["cat", str(mnt / "later.md")], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        assert reader.poll() is None  # waiting for a daemon that cannot answer
        r = run_areev("umount", "--abort", str(mnt), timeout=30)
        assert (r.returncode, r.stderr) == (0, ""), r.stderr
        _, err = reader.communicate(timeout=10)
        assert reader.returncode == 1
        assert err == f"cat: {mnt}/later.md: Software caused connection abort\n"
        assert not os.path.ismount(str(mnt))
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
        if reader is not None and reader.poll() is None:
            reader.kill()
        force_unmount(str(mnt))
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("the daemon did not exit once its connection was aborted")
    assert run_areev("cat", "/memories/saved.md", "--db", db).stdout == "saved\n"
    refused = run_areev("umount", "--abort", str(mnt))
    assert (refused.returncode, refused.stderr) == (1, f"areev: umount: {mnt} is not mounted\n")


def test_mount_daemonized_with_relative_paths(areev_bin, tmp_path):
    # The daemon moves to "/" after forking: a relative --db and mountpoint
    # must still name the files in the directory the command ran in.
    name = f"relative-{os.getpid()}-{time.monotonic_ns()}.db"
    (tmp_path / "mnt").mkdir()

    def areev(*args):
        return subprocess.run([areev_bin, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60)

    try:
        proc = areev("mount", "mnt", "--db", name)
        assert proc.returncode == 0, proc.stderr
        wait_mounted(str(tmp_path / "mnt"), None)
        (tmp_path / "mnt" / "rel.md").write_text("through a relative path\n")
        assert areev("cat", "/memories/rel.md", "--db", name).stdout == "through a relative path\n"
        assert areev("umount", "mnt").returncode == 0
        deadline = time.monotonic() + 10
        while os.path.ismount(str(tmp_path / "mnt")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not os.path.ismount(str(tmp_path / "mnt"))
    finally:
        force_unmount(str(tmp_path / "mnt"))
    assert not os.path.exists("/" + name), "the daemon opened a store under /"
    assert areev("cat", "/memories/rel.md", "--db", name).stdout == "through a relative path\n"


def test_mount_usage_errors(run_areev, db, tmp_path):
    assert run_areev("mount", "--db", db).returncode == 2  # no mountpoint
    fresh = tmp_path / "fresh.db"
    missing = run_areev("mount", str(tmp_path / "nope"), "--db", str(fresh), "-f")
    assert (missing.returncode, missing.stderr) == (
        1, f"areev mount: ERROR: cannot mount on {tmp_path}/nope: no such directory "
           f"(create it first: mkdir -p {tmp_path}/nope)\n")
    (tmp_path / "plain").write_text("x")
    on_file = run_areev("mount", str(tmp_path / "plain"), "--db", str(fresh), "-f")
    assert (on_file.returncode, on_file.stderr) == (
        1, f"areev mount: ERROR: cannot mount on {tmp_path}/plain: Not a directory\n")
    assert not fresh.exists()  # refused before any store was made
    (tmp_path / "mp").mkdir()
    bad_ns = run_areev("mount", str(tmp_path / "mp"), "--db", str(fresh), "--ns", "bad ns", "-f")
    assert bad_ns.returncode == 2 and bad_ns.stderr.startswith(
        "areev: --ns: invalid namespace name 'bad ns'"), bad_ns.stderr
    assert not fresh.exists()
    bad_opt = run_areev("mount", str(tmp_path / "mp"), "--db", str(fresh), "-o", "no_such_opt",
                        "-f")
    assert bad_opt.returncode == 2 and "unknown option" in bad_opt.stderr, bad_opt.stderr
    assert bad_opt.stderr.endswith(
        f"areev mount: ERROR: cannot mount {tmp_path}/mp: libfuse refused its options "
        f"(its reason is above)\n"), bad_opt.stderr
    assert not fresh.exists()  # libfuse refused the option before the store was opened
    assert not os.path.ismount(str(tmp_path / "mp"))
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database" * 100)
    not_store = run_areev("mount", str(tmp_path / "mp"), "--db", str(junk), "-f")
    assert (not_store.returncode, not_store.stderr) == (
        3, f"areev mount: ERROR: cannot open store {junk}: not an areev store: the file is not "
           f"a SQLite database\n")
    # --db is checked as by every other command, before anything is made.
    for name, shown, code in ((":memory:", ":memory:", 2), ("", "''", 2),
                              ("stores/", "stores/", 3)):
        proc = run_areev("mount", str(tmp_path / "mp"), "--db", name, "-f", cwd=tmp_path)
        assert proc.returncode == code and proc.stderr.startswith(
            f"areev: cannot open store {shown}: "), (name, proc.stderr)
    assert not (tmp_path / ":memory:").exists() and not (tmp_path / "stores").exists()
    assert run_areev("umount").returncode == 2
    started = time.monotonic()
    proc = run_areev("umount", str(tmp_path))
    assert (proc.returncode, proc.stderr) == (1, f"areev: umount: {tmp_path} is not mounted\n")
    assert time.monotonic() - started < 2.0  # said at once: retrying sleeps 10 x 200 ms
    proc = run_areev("umount", "/proc")
    assert (proc.returncode, proc.stderr) == (1, "areev: umount: /proc is not a FUSE mount "
                                                 "(its type is proc)\n")


def test_mount_refuses_a_second_areev_mount_on_one_mountpoint(run_areev, db, tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    other = str(tmp_path / "other.db")
    try:
        assert run_areev("mount", str(mnt), "--db", db).returncode == 0
        wait_mounted(str(mnt), None)
        (mnt / "first.md").write_text("first\n")
        for spelling in (str(mnt), str(mnt) + "/", str(tmp_path / "." / "mnt")):
            second = run_areev("mount", spelling, "--db", other)
            assert second.returncode == 1, second.stderr
            assert "an areev mount is already there; unmount it first" in second.stderr
        link = tmp_path / "link"
        link.symlink_to(mnt)
        through_link = run_areev("mount", str(link), "--db", other)
        assert through_link.returncode == 1, through_link.stderr
        assert mounts_on(mnt) == 1
        assert (mnt / "first.md").read_text() == "first\n"
        assert not os.path.exists(other)
        assert run_areev("umount", str(link)).returncode == 0  # unmounts what the link names
        assert mounts_on(mnt) == 0
    finally:
        force_unmount(str(mnt))


def mounts_on(path):
    with open("/proc/self/mountinfo") as table:
        return sum(f" {path} " in line for line in table)


def test_two_mounts_started_at_once_on_one_mountpoint_make_one(areev_bin, tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        for round_ in range(5):
            procs = [subprocess.Popen([areev_bin, "mount", str(mnt), "--db",
                                       str(tmp_path / f"{round_}-{i}.db")],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for i in range(2)]
            codes = sorted(p.wait(timeout=60) for p in procs)
            assert codes == [0, 1], [p.stderr.read() for p in procs]
            assert mounts_on(mnt) == 1
            assert subprocess.run([areev_bin, "umount", str(mnt)]).returncode == 0
            assert mounts_on(mnt) == 0
    finally:
        force_unmount(str(mnt))


def test_mount_refuses_a_mountpoint_over_its_own_store(run_areev, tmp_path):
    # Mounted there, the daemon would reach its own store through itself and
    # hang, and every process touching the store with it.
    store_dir = tmp_path / "stores"
    store_dir.mkdir()
    db = store_dir / "agent.db"
    cmd = json.dumps({"command": "create", "path": "/memories/a.md", "file_text": "a\n"})
    assert run_areev("memtool", cmd, "--db", str(db)).returncode == 0
    link = tmp_path / "link"
    link.symlink_to(store_dir)
    for mountpoint in (store_dir, db, tmp_path, link):
        try:
            proc = run_areev("mount", str(mountpoint), "--db", str(link / "agent.db"), timeout=20)
        finally:
            force_unmount(str(mountpoint))
        assert proc.returncode == 2, (mountpoint, proc.stderr)
        assert "lies under it" in proc.stderr
        assert not os.path.ismount(str(mountpoint))
    assert run_areev("cat", "/memories/a.md", "--db", str(db), timeout=20).stdout == "a\n"


def _helpers_of(mountpoint):
    """Pids of fusermount3 processes serving `mountpoint` (auto_unmount)."""
    return [pid for pid, argv in _processes()
            if argv and argv[0].endswith(b"fusermount3") and argv[-1] == os.fsencode(mountpoint)]


def test_mount_over_a_dead_mount_of_its_own_clears_it_first(areev_bin, run_areev, db, tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.Popen([str(areev_bin), "mount", str(mnt), "--db", db, "-f"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        # Waited for in the mount table, not by a stat: the kernel then has
        # no attributes of the root cached, and asks the (dead) daemon.
        deadline = time.monotonic() + 10
        while f" {mnt} " not in open("/proc/self/mountinfo").read():
            assert time.monotonic() < deadline and proc.poll() is None, "mount did not come up"
            time.sleep(0.05)
        # The helper that would clean up goes first, then the daemon: the
        # mount stays behind, dead, as after a kill of the whole group.
        helpers = wait_for(lambda: _helpers_of(mnt), timeout=5.0)
        assert helpers
        for pid in helpers:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        proc.kill()
        proc.wait()
        with pytest.raises(OSError) as dead:
            os.stat(mnt)
        assert dead.value.errno == errno.ENOTCONN
        # A mountpoint under the dead mount cannot be reached: the dead
        # mount, not the directory asked for, is what to remove.
        under = run_areev("mount", str(mnt / "sub"), "--db", db + ".sub", timeout=20)
        assert (under.returncode, under.stderr) == (
            1, f"areev mount: ERROR: cannot mount on {mnt}/sub: it lies under {mnt}, a mount "
               f"whose daemon is gone; remove that first (areev umount {mnt})\n")
        # Issue: auto_unmount's helper sometimes left the dead mount after a
        # kill -9 too, and every mount there was refused until `areev umount`.
        again = run_areev("mount", str(mnt), "--db", db, timeout=20)
        assert (again.returncode, again.stderr) == (
            0, f"areev mount: warning: a mount of areev's whose daemon is gone was still on "
               f"{mnt}; removed it\n")
        assert os.path.ismount(mnt)
        (mnt / "after.md").write_text("mounted again\n")
        assert run_areev("umount", str(mnt), timeout=20).returncode == 0
        assert run_areev("cat", "/memories/after.md", "--db", db).stdout == "mounted again\n"
        assert [line for line in open("/proc/self/mountinfo") if f" {mnt} " in line] == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)


def test_mount_on_a_symlink_mounts_the_directory_it_names(run_areev, db, tmp_path):
    (tmp_path / "real").mkdir()
    link = tmp_path / "link"
    link.symlink_to("real")
    try:
        assert run_areev("mount", str(link), "--db", db, timeout=20).returncode == 0
        assert os.path.ismount(tmp_path / "real")
        (link / "a.md").write_text("through the link\n")
        assert run_areev("cat", "/memories/a.md", "--db", db).stdout == "through the link\n"
        assert run_areev("umount", str(link), timeout=20).returncode == 0
        assert not os.path.ismount(tmp_path / "real")
        # As shell completion writes it.
        assert run_areev("mount", f"{link}/", "--db", db, timeout=20).returncode == 0
        assert os.path.ismount(tmp_path / "real")
        assert run_areev("umount", f"{link}/", timeout=20).returncode == 0
        (tmp_path / "dangling").symlink_to("nowhere")
        proc = run_areev("mount", str(tmp_path / "dangling"), "--db", db, timeout=20)
        assert (proc.returncode, proc.stderr) == (
            1, f"areev mount: ERROR: cannot mount on {tmp_path}/dangling: it is a symlink to a "
               f"directory that does not exist\n")
    finally:
        force_unmount(str(tmp_path / "real"))


@pytest.fixture
def shared_dir():
    """A directory under /tmp that another user may enter (pytest's are 0700)."""
    import tempfile
    path = tempfile.mkdtemp(prefix="areev-shared-", dir="/tmp")
    os.chmod(path, 0o755)
    yield path
    force_unmount(os.path.join(path, "mp"))
    shutil.rmtree(path, ignore_errors=True)


AS_ANOTHER_USER = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                     reason="needs root and setpriv to act as another user")


def as_nobody(*argv):
    """Runs `argv` as user nobody (uid and gid 65534, no groups)."""
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv],
                          capture_output=True, text=True, timeout=30)


def stop_foreground_mount(proc, mp):
    """Unmounts the mount of `areev mount -f` process `proc` (if it still
    runs) and waits for it to exit; kills it and unmounts lazily if it hangs."""
    if proc.poll() is None:
        subprocess.run(["fusermount3", "-u", mp], capture_output=True)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        force_unmount(mp)


# Issue: a user who may only read the store got a mount anyway. It served
# the store as a snapshot that went stale (EBUSY, a log line ten times a
# second) at the owner's next write, and a chmod 444 store's appends were
# dropped with only close() saying so, which `echo >>` ignores.
@AS_ANOTHER_USER
def test_mount_refuses_a_store_this_user_may_only_read(areev_bin, run_areev, shared_dir):
    db = os.path.join(shared_dir, "s.db")
    mp = os.path.join(shared_dir, "mp")
    cmd = json.dumps({"command": "create", "path": "/memories/r.md", "file_text": "v1\n"})
    assert run_areev("memtool", cmd, "--db", db).returncode == 0
    os.mkdir(mp)
    os.chmod(mp, 0o777)
    before = sorted(os.listdir(shared_dir))
    for foreground in ([], ["-f"]):
        proc = as_nobody(str(areev_bin), "mount", mp, "--db", db, *foreground)
        assert proc.returncode == 1, proc.stderr
        assert ("the mount writes every save into the store, but it was opened read-only, as a "
                f"snapshot, because this user cannot write {db} (Permission denied)"
                in proc.stderr), proc.stderr
        assert not os.path.ismount(mp)
    assert sorted(os.listdir(shared_dir)) == before  # no -wal or -shm made


# Issue: a mount that fusermount3 refused (here: this user may not open
# /dev/fuse, or write the mountpoint) had already created the new store, and
# left it behind empty.
@AS_ANOTHER_USER
def test_a_refused_mount_leaves_no_new_store(areev_bin, shared_dir):
    mp = os.path.join(shared_dir, "mp")
    os.mkdir(mp)  # root's, 0755: nobody may not mount on it
    stores = os.path.join(shared_dir, "stores")
    os.mkdir(stores)
    os.chmod(stores, 0o777)
    db = os.path.join(stores, "new.db")
    for foreground in ([], ["-f"]):
        proc = as_nobody(str(areev_bin), "mount", mp, "--db", db, *foreground)
        assert proc.returncode == 1, proc.stderr
        assert "fusermount3: " in proc.stderr, proc.stderr
        # areev's own line too, after libfuse's (a refusal of the kind with no
        # fusermount3 involved, such as no descriptors left, has no other).
        assert f"areev mount: ERROR: cannot mount {mp}: libfuse refused it" in proc.stderr
        assert not os.path.ismount(mp)
        assert os.listdir(stores) == []


# A new store that cannot be made once the mount stands: the error is said
# and the mount taken down again, in the foreground and as a daemon.
def test_a_new_store_that_cannot_be_made_unmounts_again(run_areev, tmp_path):
    mp = tmp_path / "mp"
    mp.mkdir()
    db = tmp_path / "no-such-dir" / "new.db"
    for foreground in ([], ["-f"]):
        proc = run_areev("mount", str(mp), "--db", str(db), *foreground)
        assert proc.returncode == 3, proc.stderr  # as for every command's store
        assert proc.stderr.startswith(f"areev mount: ERROR: cannot open store {db}: "), proc.stderr
        assert not os.path.ismount(str(mp))
        assert not db.parent.exists()
    # The same path once its directory exists: the store is made and mounted.
    db.parent.mkdir()
    assert run_areev("mount", str(mp), "--db", str(db)).returncode == 0
    try:
        (mp / "a.md").write_text("made\n")
    finally:
        assert run_areev("umount", str(mp)).returncode == 0
    view = json.dumps({"command": "view", "path": "/memories/a.md"})
    assert "made" in run_areev("memtool", view, "--db", str(db)).stdout


# Issue: `areev umount` of another user's mount retried for two seconds, then
# relayed fusermount3's "entry for ... not found in /etc/mtab".
@AS_ANOTHER_USER
def test_umount_of_another_users_mount_says_whose_it_is(areev_bin, shared_dir):
    mp = os.path.join(shared_dir, "mp")
    os.mkdir(mp)
    proc = subprocess.Popen([str(areev_bin), "mount", mp, "--db", os.path.join(shared_dir, "s.db"),
                             "-f"], stderr=subprocess.PIPE, text=True)
    try:
        wait_mounted(mp, proc)
        started = time.monotonic()
        other = as_nobody(str(areev_bin), "umount", mp)
        assert (other.returncode, other.stderr) == (
            1, f"areev: umount: cannot unmount {mp}: another user (uid 0) mounted it; only "
               f"that user or root may unmount it\n")
        assert time.monotonic() - started < 2.0  # said at once: retrying sleeps 10 x 200 ms
        assert os.path.ismount(mp)
        own = subprocess.run([str(areev_bin), "umount", mp], capture_output=True, text=True,
                             timeout=30)
        assert own.returncode == 0, own.stderr
        proc.wait(timeout=20)
    finally:
        stop_foreground_mount(proc, mp)


# Issue: under `-o allow_other` every version file was 0444 and every
# .history directory 0555, so another user read all versions of a file whose
# mode (0600, or inside a 0700 directory) refused them the file itself.
@AS_ANOTHER_USER
def test_history_is_the_mount_owners_only_under_allow_other(areev_bin, shared_dir):
    db = os.path.join(shared_dir, "s.db")
    mp = os.path.join(shared_dir, "mp")
    os.mkdir(mp)
    proc = subprocess.Popen([str(areev_bin), "mount", mp, "--db", db, "-f", "-o", "allow_other"],
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_mounted(mp, proc)
        os.chmod(mp, 0o755)
        with open(os.path.join(mp, "public.md"), "w") as f:
            f.write("public\n")
        fd = os.open(os.path.join(mp, "secret.md"), os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, b"secret\n")
        os.close(fd)
        os.mkdir(os.path.join(mp, "private"), 0o700)
        with open(os.path.join(mp, "private", "s.md"), "w") as f:
            f.write("private\n")
        assert as_nobody("cat", os.path.join(mp, "public.md")).stdout == "public\n"
        assert as_nobody("cat", os.path.join(mp, "secret.md")).returncode != 0
        for rel in ("secret.md", "public.md", "private/s.md"):
            listing = as_nobody("ls", os.path.join(mp, ".history", rel))
            assert listing.returncode != 0 and "Permission denied" in listing.stderr, listing
        names = os.listdir(os.path.join(mp, ".history", "secret.md"))  # the owner reads them
        assert len(names) == 1
        version = os.path.join(mp, ".history", "secret.md", names[0])
        assert os.stat(version).st_mode & 0o777 == 0o400
        assert open(version).read() == "secret\n"
        read = as_nobody("cat", version)
        assert read.returncode != 0 and "Permission denied" in read.stderr, read
    finally:
        stop_foreground_mount(proc, mp)
