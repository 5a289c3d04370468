"""The daemon as a process: a burst of parallel requests (git's threads stat
every file of a tree at once) grows its pool of worker threads, and the
workers it started stay for the next burst instead of each ending and being
started again; an idle daemon sleeps; and it runs with glibc's malloc
advising huge pages."""
import json
import os
import subprocess
import time

import pytest

from mount_util import *  # noqa: F401,F403
from mount_util import GIT_ENV, Mount, areev

pytestmark = fuse_test_marker  # noqa: F405

TREES = ("a", "b", "c")
FILES_PER_TREE = 2000  # git's preload-index runs one thread per 500 entries
DIRS_PER_TREE = 20


def files_of(tree):
    return [(f"{tree}{i % DIRS_PER_TREE}/f{i}.txt", f"file {tree} {i}\n")
            for i in range(FILES_PER_TREE)]


def threads_of(pid):
    return set(os.listdir(f"/proc/{pid}/task"))


def workers_of(pid):
    """How many of the daemon's threads are request workers (by name)."""
    count = 0
    for tid in threads_of(pid):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                count += f.read().strip() == "areev-worker"
        except FileNotFoundError:
            pass  # the thread ended meanwhile
    return count


@pytest.fixture
def trees(mnt, tmp_path):
    """Writes each tree into the store through the memory tool and, with the
    same files, a git repository outside the mount whose index lists them:
    `git status` with that index and the mount as its work tree stats every
    file of one tree, none of which the kernel has looked up yet."""
    lines = []
    for tree in TREES:
        plain = tmp_path / f"git-{tree}"
        for rel, body in files_of(tree):
            lines.append(json.dumps({"command": "create", "path": f"/memories/{rel}",
                                     "file_text": body}))
            p = plain / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(body)
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", tree]):
            subprocess.run(["git", *cmd], cwd=plain, env=GIT_ENV, check=True, timeout=120)
    out = areev(mnt.db, "memtool", "--batch", input="\n".join(lines) + "\n").stdout
    assert out.count('"is_error": false') == len(lines)
    return {tree: tmp_path / f"git-{tree}" / ".git" for tree in TREES}


def git_status(git_dir, work_tree):
    r = subprocess.run(["git", f"--git-dir={git_dir}", f"--work-tree={work_tree}", "status",
                        "--porcelain", "--untracked-files=no"],
                       env=GIT_ENV, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""  # every file as git committed it


def test_workers_started_by_a_burst_stay_for_the_next(mnt, trees):
    if "-s" in mnt.extra:
        pytest.skip("single-threaded daemon")
    pid = mnt.proc.pid
    git_status(trees["a"], mnt.path)
    first = threads_of(pid)
    assert workers_of(pid) >= 2, "one worker served git's parallel stats alone"
    for tree in TREES[1:]:
        git_status(trees[tree], mnt.path)
    ended = first - threads_of(pid)
    assert not ended, (f"{len(ended)} of the daemon's {len(first)} threads ended during two "
                       "more bursts: idle workers end and are started again")



def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def voluntary_switches(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError(f"no voluntary_ctxt_switches for thread {tid}")


def test_an_idle_daemon_sleeps(mnt):
    # After a request the worker that answered it looks for the next one for
    # a moment instead of sleeping, and the loop's watcher (the main thread)
    # looks every millisecond while requests come: once they stop, both must
    # sleep.
    if "-s" in mnt.extra:
        pytest.skip("single-threaded daemon: libfuse's loop")
    pid = mnt.proc.pid
    for i in range(300):
        (mnt.path / f"f{i}.txt").write_text(f"{i}\n")
        assert (mnt.path / f"f{i}.txt").read_text() == f"{i}\n"
    time.sleep(0.5)
    cpu, woken = cpu_seconds(pid), voluntary_switches(pid, pid)
    time.sleep(2)
    used, woken = cpu_seconds(pid) - cpu, voluntary_switches(pid, pid) - woken
    # The poller looks at the op-log every 100 ms; a spinning reader would
    # take all of one CPU, a watcher that never sleeps about 2,000 wake-ups
    # (a stray request, such as the kernel's forgets, costs it 20).
    assert used < 0.3, f"the idle daemon used {used:.2f} s of CPU in 2 s"
    assert woken < 200, f"the idle watcher woke {woken} times in 2 s"


def raw_environ(pid):
    # The environment the process image started with. glibc may cut the
    # GLIBC_TUNABLES string in place while parsing it, so look for its parts.
    with open(f"/proc/{pid}/environ", "rb") as f:
        return f.read()


def anon_huge_kib(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    return 0


def thp_fault_fallbacks():
    # Faults that asked for a huge page and got small ones: the kernel had no
    # free 2 MiB block (memory fragmented by a long run) and compaction failed.
    with open("/proc/vmstat") as f:
        for line in f:
            if line.startswith("thp_fault_fallback "):
                return int(line.split()[1])
    return 0


def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        return "never"


NO_VALGRIND = pytest.mark.skipif(bool(os.environ.get("AREEV_VALGRIND")),
                                 reason="valgrind keeps its own malloc")


@NO_VALGRIND
def test_the_daemon_runs_with_huge_page_malloc(mnt):
    pid = mnt.proc.pid  # an exec keeps the pid: the daemon restarted itself in place
    assert b"\0GLIBC_TUNABLES=glibc.malloc.hugetlb=1\0" in b"\0" + raw_environ(pid)
    if thp_mode() == "never" or os.environ.get("AREEV_PRESET") == "asan":
        return  # no huge pages to get, or the sanitizer's own malloc
    before, fallbacks = anon_huge_kib(pid), thp_fault_fallbacks()
    with open(mnt.path / "big.bin", "wb") as f:
        f.write(b"x" * (16 << 20))
        f.flush()
        os.fsync(f.fileno())  # the open file's 16 MiB now sit in the daemon's buffer
        # (with -o writeback_cache only fsync sends the kernel's cached pages)
        grown = anon_huge_kib(pid) - before
    if grown < 8 << 10 and thp_fault_fallbacks() > fallbacks:
        pytest.skip("the kernel had no free huge pages to give (thp_fault_fallback rose)")
    assert grown >= 8 << 10, grown


@NO_VALGRIND
def test_the_users_glibc_tunables_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=4")
    m = Mount(tmp_path / "own.db", tmp_path / "own").start()
    try:
        env = raw_environ(m.proc.pid)
        assert b"GLIBC_TUNABLES=glibc.malloc.arena_max=4" in env
        assert b"glibc.malloc.hugetlb=1" in env
        (m.path / "a.md").write_bytes(b"kept\n")
        assert (m.path / "a.md").read_bytes() == b"kept\n"
    finally:
        assert m.stop() == 0
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0")  # the user's choice stands
    m = Mount(tmp_path / "own.db", tmp_path / "own").start()
    try:
        env = raw_environ(m.proc.pid)
        assert b"GLIBC_TUNABLES=glibc.malloc.hugetlb=0" in env
        assert b"hugetlb=1" not in env
        assert (m.path / "a.md").read_bytes() == b"kept\n"
    finally:
        assert m.stop() == 0
