"""Helpers for tests that drive `areev mount` over a real FUSE mount.

Environment: AREEV_MOUNT_EXTRA adds daemon arguments to every `mnt` mount
(e.g. "-o writeback_cache" or "-s"); AREEV_VALGRIND=1 runs the daemon under
valgrind; AREEV_MOUNT_TEST_TIMEOUT sets the per-test timeout in seconds.

A test module does `from mount_util import *` and gets: the module-level skip
marker `fuse_test_marker`, the `mnt` fixture (a mounted namespace, yielding a
Mount), the session safety net that lazily unmounts leftovers, a per-test
timeout, and helpers (history listings, the memtool CLI, daemon log checks).
"""
import contextlib
import errno
import json
import os
import re
import pathlib
import resource
import shutil
import signal
import subprocess
import time

import pytest

from conftest import areev_path

# Lines a healthy daemon may print although they contain a checked word.
LOG_ALLOWLIST = (
    "Ignoring invalid max threads value",  # libfuse 3.14.0 quirk
)
LOG_FORBIDDEN = ("ERROR", "AddressSanitizer", "LeakSanitizer", "runtime error:")
MOUNT_TIMEOUT_S = 10.0
# Tests of what the kernel takes over in writeback mode (a cached file's
# size, mtime, O_APPEND, when writes reach the daemon) are expected to fail
# when AREEV_MOUNT_EXTRA asks for it (docs/fusefs.md, "Writeback cache is
# opt-in").
WRITEBACK = "writeback_cache" in os.environ.get("AREEV_MOUNT_EXTRA", "")


def kernel_owns_in_writeback(what):
    return pytest.mark.xfail(WRITEBACK, strict=False,
                             reason=f"writeback mode: the kernel owns {what} (docs/fusefs.md)")
# git with a fixed identity and no system or user configuration.
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@e", GIT_CONFIG_NOSYSTEM="1", HOME="/nonexistent")
TEST_TIMEOUT_S = int(os.environ.get("AREEV_MOUNT_TEST_TIMEOUT", "120"))


def fuse_usable():
    """(ok, reason): whether /dev/fuse and fusermount3 can be used here."""
    if not os.path.exists("/dev/fuse"):
        return False, "no /dev/fuse"
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        return False, "/dev/fuse not accessible"
    if shutil.which("fusermount3") is None:
        return False, "fusermount3 not installed"
    return True, ""


_OK, _WHY = fuse_usable()
fuse_test_marker = [pytest.mark.uses_fuse,
                    pytest.mark.skipif(not _OK, reason=f"FUSE unusable: {_WHY}")]


def check_daemon_log(text, reproducer=""):
    """Fails the test when the daemon output carries an error marker."""
    bad = [line for line in text.splitlines()
           if any(word in line for word in LOG_FORBIDDEN)
           and not any(allowed in line for allowed in LOG_ALLOWLIST)]
    if bad:
        pytest.fail("daemon reported errors:\n" + "\n".join(bad) +
                    (f"\nreproduce with: {reproducer}" if reproducer else ""))


def mount_fields(path):
    """The fields of the kernel's mount table line (/proc/self/mountinfo) for
    the mount point `path`, or None."""
    target = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point == target:
                return fields
    return None


def mounted(path):
    """Whether `path` is a mount point, from the kernel's mount table.

    os.path.ismount() stats the path and answers False when the stat fails,
    which it does on a mount whose daemon died ("Transport endpoint is not
    connected") until that mount is taken down."""
    return mount_fields(path) is not None


def fusermount_unmount(path, lazy_fallback=True):
    """fusermount3 -u, retrying while busy, finally -z. Returns True on success."""
    for _ in range(20):
        r = subprocess.run(["fusermount3", "-u", "-q", str(path)], capture_output=True, text=True)
        if r.returncode == 0 or not mounted(path):
            return True
        time.sleep(0.1)  # EBUSY: something still has a file open
    if lazy_fallback:
        subprocess.run(["fusermount3", "-u", "-z", "-q", str(path)], capture_output=True)
    return False


class Mount:
    """One `areev mount ... -f` daemon."""

    def __init__(self, db, mountpoint, ns="default", extra=(), log_path=None, rlimits=None):
        self.db = str(db)
        self.rlimits = dict(rlimits or {})  # resource.RLIMIT_* -> limit, for the daemon
        self.path = pathlib.Path(mountpoint)
        self.ns = ns
        self.extra = list(extra)
        self.log_path = pathlib.Path(log_path or (self.path.parent / f"{self.path.name}.log"))
        self.proc = None

    @property
    def argv(self):
        return [str(areev_path()), "--db", self.db, "--ns", self.ns, "mount", str(self.path),
                "-f", *self.extra]

    def start(self):
        self.path.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        cmd = self.argv
        if os.environ.get("AREEV_VALGRIND"):
            cmd = ["valgrind", "--error-exitcode=99", "-q"] + cmd
        self._log = open(self.log_path, "ab")
        limits = self.rlimits

        def set_limits():
            for which, value in limits.items():
                resource.setrlimit(which, (value, value))

        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                     preexec_fn=set_limits if limits else None)
        deadline = time.monotonic() + MOUNT_TIMEOUT_S
        while not os.path.ismount(self.path):
            if self.proc.poll() is not None:
                pytest.fail(f"mount daemon exited with {self.proc.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"mount did not appear within {MOUNT_TIMEOUT_S}s:\n{self.log()}")
            time.sleep(0.1)
        return self

    def log(self):
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self):
        """Clean unmount; returns the daemon's exit code."""
        fusermount_unmount(self.path)
        try:
            rc = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("mount daemon did not exit after unmount:\n" + self.log())
        self._log.close()
        return rc

    def kill(self):
        """Failure path: lazy unmount, terminate, then kill."""
        subprocess.run(["fusermount3", "-u", "-z", "-q", str(self.path)], capture_output=True)
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def reproducer(self):
        return " ".join(self.argv)


def areev(db, *args, ns="default", input=None, check=True, timeout=60):
    """Runs the CLI against `db`; returns CompletedProcess (text)."""
    r = subprocess.run([str(areev_path()), "--db", str(db), "--ns", ns, *args], input=input,
                       capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"areev {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r


def memtool(db, command, ns="default"):
    """One memory-tool command through `areev memtool`; returns the result dict."""
    r = areev(db, "memtool", "--batch", ns=ns, input=json.dumps(command) + "\n", check=False)
    return json.loads(r.stdout.splitlines()[0])


def history(db, key, ns="default"):
    """Versions (list of dicts) of the file at key ("/memories/x"), [] if none."""
    r = areev(db, "history", key, "--json", ns=ns, check=False)
    if r.returncode != 0:
        return []
    return json.loads(r.stdout)


def history_dir(mountpoint, rel):
    """Sorted names under MOUNT/.history/<rel>/ ([] if absent)."""
    try:
        return sorted(os.listdir(pathlib.Path(mountpoint) / ".history" / rel))
    except FileNotFoundError:
        return []


def errno_outcome(fn):
    """("ok", fn()) or ("err", the errno's name): a call's result in a form
    two trees' runs of it can be compared by."""
    try:
        return ("ok", fn())
    except OSError as e:
        return ("err", errno.errorcode.get(e.errno, e.errno))


def wait_for(predicate, timeout=2.0, interval=0.02):
    """Polls predicate until true or timeout; returns its last value."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = predicate()
    return value


@contextlib.contextmanager
def checked_mount(db, mountpoint, extra=(), allowed_errors=(), rlimits=None):
    """A Mount for the block; after it, asserts a clean unmount with exit code
    0 and a daemon log with no error but lines naming one of `allowed_errors`.
    If the block raised, the daemon is killed instead."""
    m = Mount(db, mountpoint, extra=extra, rlimits=rlimits).start()
    ok = False
    try:
        yield m
        ok = True
    finally:
        if ok:
            rc = m.stop()
            log = "\n".join(line for line in m.log().splitlines()
                            if not any(e in line for e in allowed_errors))
            check_daemon_log(log, m.reproducer())
            assert rc == 0, f"daemon exit code {rc}:\n{m.log()}"
        else:
            m.kill()


@pytest.fixture
def mnt(tmp_path, request):
    """A mounted namespace over a fresh store: yields the Mount; asserts a
    clean unmount with exit code 0 and a clean daemon log."""
    extra = tuple(getattr(request, "param", ())) + tuple(
        os.environ.get("AREEV_MOUNT_EXTRA", "").split())
    with checked_mount(tmp_path / "agent.db", tmp_path / "mnt", extra=extra) as m:
        yield m


@pytest.fixture(scope="session", autouse=True)
def _unmount_leftovers(tmp_path_factory):
    """Safety net: lazily unmount anything still mounted under the temp root."""
    yield
    root = str(tmp_path_factory.getbasetemp())
    with open("/proc/mounts") as f:
        for line in f:
            point = line.split()[1]
            if point.startswith(root):
                subprocess.run(["fusermount3", "-u", "-z", "-q", point], capture_output=True)


@pytest.fixture(autouse=True)
def _per_test_timeout():
    """Fails a test that runs longer than TEST_TIMEOUT_S (SIGALRM)."""

    def expired(signum, frame):
        raise TimeoutError(f"test exceeded {TEST_TIMEOUT_S}s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_TIMEOUT_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


__all__ = ["Mount", "areev", "memtool", "history", "history_dir", "wait_for", "errno_outcome",
           "check_daemon_log", "fusermount_unmount", "mounted", "fuse_test_marker", "mnt",
           "_unmount_leftovers", "_per_test_timeout", "WRITEBACK", "kernel_owns_in_writeback"]
