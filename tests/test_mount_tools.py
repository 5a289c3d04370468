"""Real tools over the mount: git, grep, and the memory tool in another process."""
import json
import os
import re
import subprocess
import threading
import time

import pytest

from mount_util import *  # noqa: F401,F403
from mount_util import GIT_ENV, areev, history, memtool, wait_for
from test_bindings_common import import_areev

pytestmark = fuse_test_marker  # noqa: F405


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True,
                          check=True, timeout=60)


def test_git_init_add_commit_status_clean(mnt):
    repo = mnt.path / "repo"
    repo.mkdir()
    for i in range(20):
        (repo / f"f{i}.md").write_text(f"file {i}\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "x.md").write_text("x\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    assert git(repo, "status", "--porcelain").stdout == ""
    (repo / "f1.md").write_text("changed\n")
    assert git(repo, "status", "--porcelain").stdout.strip() == "M f1.md"
    git(repo, "commit", "-q", "-am", "second")
    assert git(repo, "status", "--porcelain").stdout == ""
    assert git(repo, "fsck", "--no-progress").returncode == 0
    assert len(git(repo, "log", "--oneline").stdout.splitlines()) == 2
    # .git is stored but never versioned
    assert history(mnt.db, "/memories/repo/.git/HEAD") == []
    assert history(mnt.db, "/memories/repo/.git/index") == []
    assert ".git" not in os.listdir(mnt.path / ".history" / "repo")
    assert len(history(mnt.db, "/memories/repo/f1.md")) == 2


def test_git_status_clean_after_remount(mnt):
    repo = mnt.path / "r"
    repo.mkdir()
    (repo / "a.md").write_text("a\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "c")
    assert mnt.stop() == 0
    mnt.start()
    assert git(repo, "status", "--porcelain").stdout == ""


def test_grep_recursive_never_enters_history(mnt):
    (mnt.path / "d").mkdir()
    p = mnt.path / "d" / "needle.md"
    p.write_text("a needle here\n")
    p.write_text("a needle here\nand another needle\n")
    r = subprocess.run(["grep", "-rn", "needle", str(mnt.path)], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    assert len(lines) == 2, lines
    assert all(".history" not in line for line in lines)
    found = subprocess.run(["find", str(mnt.path)], capture_output=True, text=True).stdout
    assert ".history" not in found


def test_memtool_write_visible_in_mount_within_a_second(mnt):
    (mnt.path / "seen.md").write_text("old\n")
    assert (mnt.path / "seen.md").read_text() == "old\n"  # cached by the kernel now
    os.listdir(mnt.path)
    assert not (mnt.path / "new.md").exists()  # the kernel has looked the name up
    r = memtool(mnt.db, {"command": "create", "path": "/memories/new.md", "file_text": "fresh\n"})
    assert not r["is_error"], r
    r = memtool(mnt.db, {"command": "str_replace", "path": "/memories/seen.md",
                         "old_str": "old", "new_str": "brand new"})
    assert not r["is_error"], r
    t0 = time.monotonic()
    assert wait_for(lambda: (mnt.path / "new.md").exists(), timeout=1.0)
    assert wait_for(lambda: (mnt.path / "seen.md").read_text() == "brand new\n", timeout=1.0)
    assert time.monotonic() - t0 < 1.0
    assert "new.md" in os.listdir(mnt.path)
    assert (mnt.path / "new.md").read_text() == "fresh\n"
    assert os.stat(mnt.path / "seen.md").st_size == len("brand new\n")


@kernel_owns_in_writeback("a cached file's size at an open right after the edit")  # noqa: F405
def test_open_right_after_external_write_sees_it(mnt):
    p = mnt.path / "fast.md"
    p.write_text("v1 body\n")
    assert p.read_text() == "v1 body\n"
    r = memtool(mnt.db, {"command": "str_replace", "path": "/memories/fast.md",
                         "old_str": "v1", "new_str": "version two"})
    assert not r["is_error"], r
    assert p.read_text() == "version two body\n"  # no waiting


def test_memtool_delete_and_rename_visible(mnt):
    (mnt.path / "a.md").write_text("a")
    (mnt.path / "b.md").write_text("b")
    assert sorted(os.listdir(mnt.path)) == ["a.md", "b.md"]
    assert not memtool(mnt.db, {"command": "delete", "path": "/memories/a.md"})["is_error"]
    assert not memtool(mnt.db, {"command": "rename", "old_path": "/memories/b.md",
                                "new_path": "/memories/c.md"})["is_error"]
    # A listing can be fresh a moment before the poller has dropped the
    # kernel's cached entry for a.md (docs/fusefs.md: both follow within the
    # poll interval; the timeout leaves room for a loaded machine).
    assert wait_for(lambda: sorted(os.listdir(mnt.path)) == ["c.md"]
                    and not (mnt.path / "a.md").exists(), timeout=5.0)
    assert (mnt.path / "c.md").read_text() == "b"


def test_open_right_after_another_process_deletes_never_reaches_the_deleted_file(mnt):
    # The kernel still holds each name (just read) when another process
    # deletes the file; an open at once, before the poller drops the name,
    # must behave as after the delete: a read finds nothing, a write makes a
    # new file the store keeps, and a name created again reads the new file.
    for i in range(5):
        for name in (f"r{i}.md", f"w{i}.md", f"n{i}.md"):
            r = memtool(mnt.db, {"command": "create", "path": f"/memories/{name}",
                                 "file_text": "old\n"})
            assert not r["is_error"], r
            assert (mnt.path / name).read_text() == "old\n"
        for name in (f"r{i}.md", f"w{i}.md"):
            r = memtool(mnt.db, {"command": "delete", "path": f"/memories/{name}"})
            assert not r["is_error"], r
        with pytest.raises(FileNotFoundError):
            (mnt.path / f"r{i}.md").read_text()
        (mnt.path / f"w{i}.md").write_text("user note\n")
        assert areev(mnt.db, "cat", f"/memories/w{i}.md").stdout == "user note\n"
        batch = "".join(json.dumps(c) + "\n" for c in (
            {"command": "delete", "path": f"/memories/n{i}.md"},
            {"command": "create", "path": f"/memories/n{i}.md", "file_text": "new\n"}))
        out = areev(mnt.db, "memtool", "--batch", input=batch).stdout.splitlines()
        assert [json.loads(line)["is_error"] for line in out] == [False, False], out
        assert (mnt.path / f"n{i}.md").read_text() == "new\n"


@pytest.fixture
def agent(mnt):
    """Memory-tool commands from this process through the Python binding: a
    writer other than the mount, fast enough to act inside the poller's
    interval (the CLI's start-up alone can outlast it)."""
    m = import_areev().Areev(str(mnt.db), ns="default")

    def run(command):
        return m.memory_tool(json.dumps(command))
    yield run
    m.close()


def create_cached(mnt, agent, name, text):
    """Creates /memories/NAME through the binding, waits until the poller's
    notices for the create are out, and reads it through the mount, so that
    the kernel holds the name cached when the test's change comes."""
    agent({"command": "create", "path": f"/memories/{name}", "file_text": text})
    time.sleep(0.25)
    assert (mnt.path / name).read_text() == text


def test_open_right_after_another_process_moves_a_file_away_finds_the_new_one(mnt, agent):
    # Another process renames f away and makes a new f; an append through f
    # at once goes to the new file, as on a local disk, not the moved one.
    for i in range(5):
        old, new = f"/memories/f{i}.md", f"/memories/g{i}.md"
        create_cached(mnt, agent, f"f{i}.md", "old\n")
        agent({"command": "rename", "old_path": old, "new_path": new})
        agent({"command": "create", "path": old, "file_text": "new\n"})
        with open(mnt.path / f"f{i}.md", "a") as f:
            f.write("appended\n")
        assert areev(mnt.db, "cat", old).stdout == "new\nappended\n"
        assert areev(mnt.db, "cat", new).stdout == "old\n"


def test_a_moved_file_looked_up_by_its_new_name_is_not_reached_by_its_old(mnt, agent):
    # The lookup of the new name is what tells the daemon of the move; the
    # kernel still holds the old name until the poller drops it.
    for i in range(10):
        old, new = f"/memories/o{i}.md", f"/memories/n{i}.md"
        create_cached(mnt, agent, f"o{i}.md", "old\n")
        agent({"command": "rename", "old_path": old, "new_path": new})
        os.stat(mnt.path / f"n{i}.md")
        fd = os.open(mnt.path / f"o{i}.md", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, b"X\n")
        os.close(fd)
        assert areev(mnt.db, "cat", old).stdout == "X\n"
        assert areev(mnt.db, "cat", new).stdout == "old\n"
        assert (mnt.path / f"n{i}.md").read_text() == "old\n"  # by its new name, at once


@pytest.mark.parametrize("file_cached", [True, False], ids=["file-cached", "dir-cached"])
def test_open_right_after_another_process_moves_the_directory_finds_nothing(mnt, agent,
                                                                          file_cached):
    # Another process renames directory d away while the kernel holds d
    # (and d/f.md, or a name it never looked up there): an open by the old
    # path fails at once, as on a local disk; an append by it writes nothing
    # into the moved file.
    for i in range(5):
        if file_cached:
            create_cached(mnt, agent, f"d{i}/f.md", "old\n")
        else:
            agent({"command": "create", "path": f"/memories/d{i}/f.md", "file_text": "old\n"})
            time.sleep(0.25)  # the poller's notices for the create are out
            assert (mnt.path / f"d{i}").is_dir()
        agent({"command": "rename", "old_path": f"/memories/d{i}", "new_path": f"/memories/e{i}"})
        with pytest.raises(FileNotFoundError):
            with open(mnt.path / f"d{i}" / "f.md", "a") as f:
                f.write("appended\n")
        assert areev(mnt.db, "cat", f"/memories/e{i}/f.md").stdout == "old\n"
        assert (mnt.path / f"e{i}" / "f.md").read_text() == "old\n"  # by its new path, at once


# Calls on directory `d` or a name in it, while the kernel holds d: each
# takes the mount root and d; with what d then holds when the call came by
# its new name.
IN_DIR = {
    "listdir": (lambda root, d: os.listdir(d), ["f.md"]),
    "create": (lambda root, d: open(d / "new.md", "w").close(), ["f.md", "new.md"]),
    "mkdir": (lambda root, d: os.mkdir(d / "sub"), ["f.md", "sub"]),
    "symlink": (lambda root, d: os.symlink("f.md", d / "ln"), ["f.md", "ln"]),
    "mknod": (lambda root, d: os.mknod(d / "node"), ["f.md", "node"]),
    "rename_into": (lambda root, d: os.rename(root / "x.md", d / "x.md"), ["f.md", "x.md"]),
    "rename_out": (lambda root, d: os.rename(d / "f.md", root / "out.md"), []),
    "rename_within": (lambda root, d: os.rename(d / "f.md", d / "g.md"), ["g.md"]),
    "unlink": (lambda root, d: os.unlink(d / "f.md"), []),
    "truncate": (lambda root, d: os.truncate(d / "f.md", 1), ["f.md"]),
}


def tree(db):
    """Every node of the store's /memories, as `areev memtool` lists it."""
    out = memtool(db, {"command": "view", "path": "/memories"})["content"]
    return sorted(line.split("\t")[1] for line in out.splitlines()[1:])


def move_held_directory(mnt, agent, old, new, below=""):
    """Makes OLD/f.md (or OLD/BELOW/f.md) and a root file x.md, with OLD held
    by the kernel (BELOW never looked up), then has another process rename
    OLD to NEW; returns the tree before."""
    create_cached(mnt, agent, f"{old}/f.md", "old\n")
    if below:
        agent({"command": "create", "path": f"/memories/{old}/{below}/f.md", "file_text": "old\n"})
    (mnt.path / "x.md").write_text("x\n")
    before = tree(mnt.db)
    agent({"command": "rename", "old_path": f"/memories/{old}", "new_path": f"/memories/{new}"})
    return before


@pytest.mark.parametrize("below", ["", "s"], ids=["in-it", "below-it"])
@pytest.mark.parametrize("call", sorted(IN_DIR))
def test_calls_by_the_old_path_right_after_another_process_moves_the_directory_fail(
        mnt, agent, call, below):
    # Another process renames directory d while the kernel holds it: a
    # listing, create, mkdir, rename or unlink by the old path, in d or in a
    # directory under it that the kernel first looks up then, fails with
    # ENOENT at once, as on a local disk, and changes nothing in the moved
    # directory.
    for i in range(3):
        before = move_held_directory(mnt, agent, f"d{i}", f"e{i}", below)
        with pytest.raises(FileNotFoundError):
            IN_DIR[call][0](mnt.path, mnt.path / f"d{i}" / below)
        moved = [p.replace(f"/memories/d{i}", f"/memories/e{i}") for p in before]
        assert tree(mnt.db) == sorted(moved), call
        assert (mnt.path / f"e{i}" / below / "f.md").read_text() == "old\n"


@pytest.mark.parametrize("call", sorted(IN_DIR))
def test_calls_by_the_new_path_right_after_another_process_moves_the_directory_work(
        mnt, agent, call):
    # The same calls by the directory's new path at once: the daemon cannot
    # tell which name they came by, sends them back once, and lets the
    # kernel's retry in.
    fn, holds = IN_DIR[call]
    for i in range(3):
        move_held_directory(mnt, agent, f"d{i}", f"e{i}")
        new = mnt.path / f"e{i}"
        fn(mnt.path, new)
        assert sorted(os.listdir(new)) == holds, call
        under = [p.rstrip("/") for p in tree(mnt.db) if p.startswith(f"/memories/e{i}/")]
        names = [p.rsplit("/", 1)[1] for p in under if p != f"/memories/e{i}"]
        files = [n for n in holds if not os.path.islink(new / n)]  # the tool lists no links
        assert sorted(names) == files, call
        for leftover in ("x.md", "out.md"):
            if (mnt.path / leftover).exists():
                os.unlink(mnt.path / leftover)


def delete_held_directory_and_make_it_again(mnt, agent, d):
    """Makes D/f.md, with D held by the kernel; then another process deletes
    D and makes D/g.md anew."""
    create_cached(mnt, agent, f"{d}/f.md", "old\n")
    agent({"command": "delete", "path": f"/memories/{d}"})
    agent({"command": "create", "path": f"/memories/{d}/g.md", "file_text": "g\n"})


def test_a_create_by_a_path_another_process_just_deleted_and_made_again_lands_in_the_new(
        mnt, agent):
    # Another process deletes directory d and makes d/g.md anew while the
    # kernel holds the old d: a create of d/new.md lands in the new d.
    for i in range(3):
        delete_held_directory_and_make_it_again(mnt, agent, f"d{i}")
        (mnt.path / f"d{i}" / "new.md").write_text("made\n")
        assert areev(mnt.db, "cat", f"/memories/d{i}/new.md").stdout == "made\n"
        assert sorted(os.listdir(mnt.path / f"d{i}")) == ["g.md", "new.md"]


def test_a_file_in_a_directory_another_process_just_deleted_and_made_again_is_found(mnt, agent):
    # The kernel holds d and looks g.md up in it by d's old path: the daemon
    # finds it in the directory that stands at that path now.
    for i in range(3):
        delete_held_directory_and_make_it_again(mnt, agent, f"d{i}")
        assert (mnt.path / f"d{i}" / "g.md").read_text() == "g\n"


def test_truncate_by_the_old_name_right_after_another_process_moves_the_file_fails(mnt, agent):
    # A truncate by path reaches the inode the kernel holds for the name; it
    # must not cut the moved file.
    for i in range(5):
        create_cached(mnt, agent, f"o{i}.md", "keep me\n")
        agent({"command": "rename", "old_path": f"/memories/o{i}.md",
               "new_path": f"/memories/n{i}.md"})
        with pytest.raises(FileNotFoundError):
            os.truncate(mnt.path / f"o{i}.md", 2)
        assert areev(mnt.db, "cat", f"/memories/n{i}.md").stdout == "keep me\n"
        os.truncate(mnt.path / f"n{i}.md", 4)  # by the new name, at once
        assert areev(mnt.db, "cat", f"/memories/n{i}.md").stdout == "keep"


def test_truncate_right_after_another_process_rewrote_the_file_cuts_the_new_content(mnt, agent):
    # The daemon keeps the bodies of files released lately; a truncate by
    # name right after another process's edit must cut that edit, not the
    # kept body of the version before it.
    for i in range(5):
        create_cached(mnt, agent, f"t{i}.md", "old old old\n")
        agent({"command": "create", "path": f"/memories/t{i}.md", "file_text": "NEW CONTENT\n"})
        os.truncate(mnt.path / f"t{i}.md", 3)
        assert areev(mnt.db, "cat", f"/memories/t{i}.md").stdout == "NEW"
        assert (mnt.path / f"t{i}.md").read_text() == "NEW"


def test_replaced_by_a_file_held_open_under_another_name(mnt, agent):
    # Another process deletes f and renames t (which a reader holds open)
    # onto it: both files changed; an open of f reads t's bytes.
    for i in range(5):
        agent({"command": "create", "path": f"/memories/t{i}.md", "file_text": "NEW\n"})
        create_cached(mnt, agent, f"f{i}.md", "OLD\n")
        held = os.open(mnt.path / f"t{i}.md", os.O_RDONLY)
        try:
            agent({"command": "delete", "path": f"/memories/f{i}.md"})
            agent({"command": "rename", "old_path": f"/memories/t{i}.md",
                   "new_path": f"/memories/f{i}.md"})
            assert (mnt.path / f"f{i}.md").read_text() == "NEW\n"
        finally:
            os.close(held)


def test_a_retry_that_found_nothing_lets_no_other_stale_name_in(mnt, agent):
    for i in range(5):
        f, g, h = (f"/memories/{x}{i}.md" for x in "fgh")
        create_cached(mnt, agent, f"f{i}.md", "old\n")
        agent({"command": "rename", "old_path": f, "new_path": g})
        with pytest.raises(FileNotFoundError):
            (mnt.path / f"f{i}.md").read_text()
        os.stat(mnt.path / f"g{i}.md")
        agent({"command": "rename", "old_path": g, "new_path": h})
        agent({"command": "create", "path": g, "file_text": "NEWG\n"})
        with open(mnt.path / f"g{i}.md", "a") as out:
            out.write("X\n")
        assert areev(mnt.db, "cat", g).stdout == "NEWG\nX\n"
        assert areev(mnt.db, "cat", h).stdout == "old\n"


def test_a_file_held_open_while_another_process_replaces_it(mnt, agent):
    # A handle open on the old file keeps reading it; an open by the name,
    # right after another process deleted and re-created it, gets the new one.
    for i in range(5):
        p = mnt.path / f"h{i}.md"
        agent({"command": "create", "path": f"/memories/h{i}.md", "file_text": "old\n"})
        time.sleep(0.25)  # the poller's notices for the create are out
        with open(p) as held:
            assert held.read() == "old\n"
            agent({"command": "delete", "path": f"/memories/h{i}.md"})
            agent({"command": "create", "path": f"/memories/h{i}.md", "file_text": "new\n"})
            with open(p, "a") as f:
                f.write("appended\n")
            held.seek(0)
            assert held.read() == "old\n"
        assert areev(mnt.db, "cat", f"/memories/h{i}.md").stdout == "new\nappended\n"


@pytest.mark.parametrize("change", ["delete", "move"])
def test_opens_racing_on_a_name_another_process_just_replaced(mnt, agent, change):
    # Several opens of the old name in flight at once: every append lands in
    # the file now at that name, none in the deleted or the moved one.
    threads = 4
    for i in range(5):
        key = f"/memories/race{i}.md"
        create_cached(mnt, agent, f"race{i}.md", "old\n")
        if change == "delete":
            agent({"command": "delete", "path": key})
        else:
            agent({"command": "rename", "old_path": key, "new_path": f"/memories/moved{i}.md"})
        agent({"command": "create", "path": key, "file_text": "new\n"})
        barrier = threading.Barrier(threads)

        def append(k, p=mnt.path / f"race{i}.md"):
            barrier.wait()
            fd = os.open(p, os.O_WRONLY | os.O_APPEND)
            os.write(fd, f"T{k}\n".encode())
            os.close(fd)
        workers = [threading.Thread(target=append, args=(k,)) for k in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        lines = areev(mnt.db, "cat", key).stdout.splitlines()
        assert lines[0] == "new" and sorted(lines[1:]) == [f"T{k}" for k in range(threads)], lines
        if change == "move":
            assert areev(mnt.db, "cat", f"/memories/moved{i}.md").stdout == "old\n"


def test_a_handle_reads_a_file_another_process_deleted_before_its_first_read(mnt, agent):
    for i in range(5):
        agent({"command": "create", "path": f"/memories/gone{i}.md", "file_text": "last words\n"})
        time.sleep(0.25)
        fd = os.open(mnt.path / f"gone{i}.md", os.O_RDONLY)
        try:
            agent({"command": "delete", "path": f"/memories/gone{i}.md"})
            assert os.read(fd, 100) == b"last words\n"
        finally:
            os.close(fd)


def test_opath_descriptor_reopens_a_file_another_process_deleted(mnt, agent):
    p = mnt.path / "kept.md"
    p.write_text("kept\n")
    fd = os.open(p, os.O_PATH)
    try:
        agent({"command": "delete", "path": "/memories/kept.md"})
        # Sent back once (ESTALE), the kernel's retry by the same link is let in.
        again = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)
        try:
            assert os.read(again, 100) == b"kept\n"
        finally:
            os.close(again)
        with pytest.raises(FileNotFoundError):
            p.read_text()
    finally:
        os.close(fd)


def test_open_right_after_another_process_makes_a_name_looked_up_before(mnt):
    # A name the kernel found missing a moment ago: an open right after
    # another process creates it, or renames a file onto it, reads that file.
    (mnt.path / "src").mkdir()
    for i in range(5):
        made, moved = mnt.path / f"made{i}.md", mnt.path / f"moved{i}.md"
        (mnt.path / "src" / f"m{i}.md").write_text(f"moved {i}\n")
        assert not made.exists() and not moved.exists()
        r = memtool(mnt.db, {"command": "create", "path": f"/memories/made{i}.md",
                             "file_text": "agent\n"})
        assert not r["is_error"], r
        assert made.read_text() == "agent\n"
        r = memtool(mnt.db, {"command": "rename", "old_path": f"/memories/src/m{i}.md",
                             "new_path": f"/memories/moved{i}.md"})
        assert not r["is_error"], r
        assert moved.read_text() == f"moved {i}\n"


def test_file_closed_in_mount_visible_to_memtool_at_once(mnt):
    p = mnt.path / "handoff.md"
    with open(p, "w") as f:
        f.write("written in the mount\n")
    r = memtool(mnt.db, {"command": "view", "path": "/memories/handoff.md"})
    assert not r["is_error"], r
    assert "written in the mount" in r["content"]
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"fsynced line\n")
    os.fsync(fd)
    r = memtool(mnt.db, {"command": "view", "path": "/memories/handoff.md"})
    os.close(fd)
    assert "fsynced line" in r["content"]
    assert areev(mnt.db, "cat", "/memories/handoff.md").stdout.endswith("fsynced line\n")


def test_handles_open_on_a_file_another_process_deletes_keep_working(mnt):
    # As after an unlink through the mount: open handles keep the content,
    # their writes and closes succeed, and nothing brings the path back.
    (mnt.path / "kept.md").write_text("base\n")
    (mnt.path / "dirty.md").write_text("base\n")
    reader = os.open(mnt.path / "kept.md", os.O_RDONLY)  # nothing read yet
    appender = os.open(mnt.path / "kept.md", os.O_WRONLY | os.O_APPEND)
    writer = os.open(mnt.path / "dirty.md", os.O_WRONLY | os.O_APPEND)
    try:
        os.write(writer, b"local\n")  # a draft not yet sealed
        for name in ("kept.md", "dirty.md"):
            r = memtool(mnt.db, {"command": "delete", "path": f"/memories/{name}"})
            assert not r["is_error"], r
        assert wait_for(lambda: sorted(os.listdir(mnt.path)) == [], timeout=2.0)
        time.sleep(0.3)  # past a poll of the coherence thread
        assert os.pread(reader, 100, 0) == b"base\n"
        os.write(appender, b"more\n")
        assert os.pread(reader, 100, 0) == b"base\nmore\n"
        os.write(writer, b"local2\n")
        os.fsync(writer)
    finally:
        for fd in (reader, appender, writer):
            os.close(fd)
    assert sorted(os.listdir(mnt.path)) == []
    for name in ("kept.md", "dirty.md"):
        r = memtool(mnt.db, {"command": "view", "path": f"/memories/{name}"})
        assert r["is_error"], r  # still deleted


def assert_an_update_adds_one_version(mnt, source, rel, rsync):
    """Changes `source`, runs `rsync` again: the copy at `rel` in the mount
    gets its new text as a second version."""
    source.write_text("alpha 2\n")
    time.sleep(1.1)  # rsync compares mtimes by the second
    os.utime(source)
    rsync()
    h = history(mnt.db, f"/memories/{rel}", ns=mnt.ns)
    assert [v["version"] for v in h] == [1, 2]
    assert (mnt.path / rel).read_text() == "alpha 2\n"


def test_rsync_copies_each_file_as_one_version(mnt, tmp_path):
    """rsync writes `.NAME.XXXXXX` and renames it to NAME: a first copy is one
    version created at NAME, an update one more version, and a second run
    with nothing changed adds none; the copies are byte-identical. That holds
    for the names rsync shortens in its copy's name too (a dotfile's own dot, a
    trailing dot, a name past 246 bytes, cut inside a character, one cut to
    nothing)."""
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    files = {"a.md": "alpha\n", "sub/b.md": "beta\n", "c.txt": "x" * 5000,
             ".hidden": "h\n", "trail.": "t\n", "L" * 250 + ".md": "long\n",
             "n" + "\u00e9" * 125 + ".md": "accents\n", "\u6587" * 84: "no ascii\n"}
    for rel, text in files.items():
        (src / rel).write_text(text)
    dest = str(mnt.path / "rs") + "/"

    def rsync(*extra):
        subprocess.run(["rsync", "-a", *extra, str(src) + "/", dest], check=True,
                       capture_output=True, timeout=60)

    rsync()
    for rel, text in files.items():
        assert (mnt.path / "rs" / rel).read_text() == text
        h = history(mnt.db, "/memories/rs/" + rel, ns=mnt.ns)
        assert [(v["op"], v["subject"]) for v in h] == [("create", "/memories/rs/" + rel)], h
    names = areev(mnt.db, "log", "--json", ns=mnt.ns).stdout
    assert ".a.md." in names  # the copy's name is in the op-log, not in any history
    rsync()  # nothing changed: nothing to write
    assert len(history(mnt.db, "/memories/rs/a.md", ns=mnt.ns)) == 1
    assert_an_update_adds_one_version(mnt, src / "a.md", "rs/a.md", rsync)


def test_rsync_delay_updates_copies_each_file_as_one_version(mnt, tmp_path):
    """With --delay-updates rsync moves `.NAME.XXXXXX` into `.~tmp~/NAME`,
    then, once every file is copied, to NAME: still one version per copy,
    and no history left at either temporary name."""
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "a" / "f.md").write_text("v1\n")
    dest = str(mnt.path) + "/"

    def rsync():
        subprocess.run(["rsync", "-a", "--delay-updates", str(src) + "/", dest], check=True,
                       capture_output=True, timeout=60)

    rsync()
    h = history(mnt.db, "/memories/a/f.md", ns=mnt.ns)
    assert [(v["op"], v["subject"]) for v in h] == [("create", "/memories/a/f.md")], h
    (src / "a" / "f.md").write_text("second version, longer\n")
    rsync()
    h = history(mnt.db, "/memories/a/f.md", ns=mnt.ns)
    assert [(v["version"], v["size"]) for v in h] == [(1, 3), (2, 23)], h
    assert (mnt.path / "a" / "f.md").read_text() == "second version, longer\n"
    for temp in ("/memories/a/.~tmp~/f.md", "/memories/a/.~tmp~"):
        proc = areev(mnt.db, "history", temp, ns=mnt.ns, check=False)
        assert proc.returncode == 1 and "no history" in proc.stderr, (temp, proc.stderr)
    # Each copy's own chain was discarded on its way, as the op-log says.
    ops = json.loads(areev(mnt.db, "log", "--json", ns=mnt.ns).stdout)
    discarded = [o["subject"] for o in ops if o["op"] == "discard"]
    assert len(discarded) == 2 and all(d.startswith("/memories/a/.f.md.") for d in discarded), ops
    assert history_dir(mnt.path, "a/.~tmp~/f.md") == []


def test_rsync_temp_dir_copies_each_file_as_one_version(mnt, tmp_path):
    """With --temp-dir=DIR rsync writes `NAME.XXXXXX` (no leading dot) in DIR
    and moves it to NAME in the destination: one version created at NAME,
    nothing versioned at the copy's name."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("alpha\n")
    (src / ".dot").write_text("dot\n")
    (mnt.path / "tmp").mkdir()

    def rsync():
        subprocess.run(["rsync", "-a", f"--temp-dir={mnt.path / 'tmp'}", str(src) + "/",
                        str(mnt.path / "dst") + "/"], check=True, capture_output=True,
                       timeout=60)

    rsync()
    for name, text in (("a.md", "alpha\n"), (".dot", "dot\n")):
        assert (mnt.path / "dst" / name).read_text() == text
        h = history(mnt.db, f"/memories/dst/{name}", ns=mnt.ns)
        assert [(v["op"], v["subject"]) for v in h] == [("create", f"/memories/dst/{name}")], h
    assert os.listdir(mnt.path / "tmp") == []
    assert_an_update_adds_one_version(mnt, src / "a.md", "dst/a.md", rsync)


ATOMIC_SAVE_COPIES = {  # the copy's name each library writes for "notes.md"
    "write-file-atomic": "notes.md.3482157740",
    "go-createtemp": "notes.md123456789",
    "renameio": ".notes.md123456789",
    "ruby-tempfile": "notes.md20261205-4242-1x9abc",
    "qt-qsavefile": "notes.md.aBcDeF",
}


@pytest.mark.parametrize("copy", ATOMIC_SAVE_COPIES.values(), ids=ATOMIC_SAVE_COPIES.keys())
def test_an_atomic_save_through_a_copy_named_after_the_file_adds_one_version(mnt, copy):
    """Libraries that save atomically write the whole file to a copy named
    after it, fsync it and rename it onto the file's name: the first save is
    one version created at the real name, each later save one more, and the
    copy's name keeps no history (the op-log records it)."""
    for text in ("first\n", "second\n", "third\n"):
        fd = os.open(mnt.path / copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, text.encode())
        os.fsync(fd)
        os.close(fd)
        os.rename(mnt.path / copy, mnt.path / "notes.md")
    assert (mnt.path / "notes.md").read_text() == "third\n"
    h = history(mnt.db, "/memories/notes.md", ns=mnt.ns)
    assert [(v["version"], v["op"], v["subject"]) for v in h] == [
        (1, "create", "/memories/notes.md"), (2, "edit", "/memories/notes.md"),
        (3, "edit", "/memories/notes.md")], h
    proc = areev(mnt.db, "history", f"/memories/{copy}", ns=mnt.ns, check=False)
    assert proc.returncode == 1 and "no history" in proc.stderr, proc.stderr
    assert sorted(os.listdir(mnt.path)) == ["notes.md"]
    ops = json.loads(areev(mnt.db, "log", "--json", ns=mnt.ns).stdout)
    assert [o["subject"] for o in ops if o["op"] == "discard"] == [f"/memories/{copy}"] * 3


@pytest.mark.parametrize("copy", ["notes.md.1", ".notes.md.Xy3aQ9"], ids=["suffixed", "rsync"])
def test_a_copy_renamed_onto_a_just_deleted_name_takes_none_of_its_history(mnt, copy):
    # A rename is a save only where a file was moved aside: after an unlink,
    # the copy is a new file (one version, created at the name), and the
    # deleted one stays deleted, restorable.
    (mnt.path / "notes.md").write_text("old\n")
    (mnt.path / "notes.md").write_text("old\nolder\n")
    os.unlink(mnt.path / "notes.md")
    (mnt.path / copy).write_text("new\n")
    os.rename(mnt.path / copy, mnt.path / "notes.md")
    h = history(mnt.db, "/memories/notes.md", ns=mnt.ns)
    assert [(v["op"], v["subject"]) for v in h] == [("create", "/memories/notes.md")], h
    assert "revive" not in areev(mnt.db, "log", ns=mnt.ns).stdout
    chains = re.findall(r"chain (\d+) \(2 versions, deleted",
                        areev(mnt.db, "history", "/memories/notes.md", ns=mnt.ns).stdout)
    assert len(chains) == 1


def test_patch_creating_and_changing_a_file_adds_one_version_each(mnt, tmp_path):
    """GNU patch writes NAME.oXXXXXX and renames it to NAME, for a file the
    patch creates as for one it changes."""
    new = tmp_path / "new.md"
    new.write_text("one\ntwo\n")
    create = subprocess.run(["diff", "-u", "/dev/null", str(new)], capture_output=True,
                            text=True).stdout.replace(str(new), "plan.md")
    changed = tmp_path / "changed.md"
    changed.write_text("one\nthree\n")
    change = subprocess.run(["diff", "-u", str(new), str(changed)], capture_output=True,
                            text=True).stdout.replace(str(new), "plan.md").replace(
                                str(changed), "plan.md")
    for diff in (create, change):
        subprocess.run(["patch", "-p0", "-s"], input=diff, text=True, cwd=mnt.path, check=True,
                       capture_output=True, timeout=30)
    assert (mnt.path / "plan.md").read_text() == "one\nthree\n"
    h = history(mnt.db, "/memories/plan.md", ns=mnt.ns)
    assert [(v["op"], v["subject"], v["size"]) for v in h] == [
        ("create", "/memories/plan.md", 8), ("edit", "/memories/plan.md", 10)], h
    assert sorted(os.listdir(mnt.path)) == ["plan.md"]


def test_a_patch_reject_file_has_one_version_at_its_name(mnt, tmp_path):
    """A hunk that does not apply goes to NAME.rej by way of NAME.rXXXXXX,
    which keeps no version of its own."""
    (mnt.path / "f.md").write_text("alpha\nbeta\n")
    old, new = tmp_path / "old.md", tmp_path / "new.md"
    old.write_text("gamma\ndelta\n")
    new.write_text("gamma\nepsilon\n")
    diff = subprocess.run(["diff", "-u", str(old), str(new)], capture_output=True,
                          text=True).stdout.replace(str(old), "f.md").replace(str(new), "f.md")
    proc = subprocess.run(["patch", "-p0", "-s", "-f"], input=diff, text=True, cwd=mnt.path,
                          capture_output=True, timeout=30)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "epsilon" in (mnt.path / "f.md.rej").read_text()
    h = history(mnt.db, "/memories/f.md.rej", ns=mnt.ns)
    assert [(v["op"], v["subject"]) for v in h] == [("create", "/memories/f.md.rej")], h
    assert [v["op"] for v in history(mnt.db, "/memories/f.md", ns=mnt.ns)] == ["create"]
    assert sorted(os.listdir(mnt.path)) == ["f.md", "f.md.orig", "f.md.rej"]


def test_patch_copies_with_a_word_for_a_tail_keep_no_version_beside_their_file(mnt):
    """patch draws NAME.rXXXXXX from [A-Za-z0-9]; a draw of lower-case letters
    only (one in 190) is a temp file too while NAME lies beside it, and a
    name of that shape with no such file keeps its history."""
    (mnt.path / "f.md").write_text("alpha\n")
    (mnt.path / "f.md.rkxcsdh").write_text("--- rejected hunk\n")
    os.rename(mnt.path / "f.md.rkxcsdh", mnt.path / "f.md.rej")
    h = history(mnt.db, "/memories/f.md.rej", ns=mnt.ns)
    assert [(v["op"], v["subject"]) for v in h] == [("create", "/memories/f.md.rej")], h
    log = areev(mnt.db, "log", ns=mnt.ns).stdout
    assert not re.search(r"add +\w+ +/memories/f.md.rkxcsdh", log), log
    (mnt.path / "x.indexed").write_text("one\n")
    (mnt.path / "x.indexed").write_text("two\n")
    assert len(history(mnt.db, "/memories/x.indexed", ns=mnt.ns)) == 2


def test_zip_keeps_an_archive_at_its_own_name(mnt):
    """Info-ZIP writes every archive to ziXXXXXX and renames it onto the
    archive's name: no version is stored at the temp name."""
    (mnt.path / "f1.md").write_text("one\n")
    (mnt.path / "f2.md").write_text("two\n")
    for member in ("f1.md", "f2.md"):
        subprocess.run(["zip", "-q", "a.zip", member], cwd=mnt.path, check=True, timeout=30)
    listed = subprocess.run(["unzip", "-Z1", str(mnt.path / "a.zip")], capture_output=True,
                            text=True, check=True).stdout.split()
    assert listed == ["f1.md", "f2.md"]
    # Both saves came within the revive window of the archive's first one,
    # whose one version is discarded by the second zip's unlink (fusefs.md).
    h = history(mnt.db, "/memories/a.zip", ns=mnt.ns)
    assert [(v["op"], v["subject"]) for v in h] == [("create", "/memories/a.zip")], h
    log = areev(mnt.db, "log", ns=mnt.ns).stdout
    assert not re.search(r"add +\w+ +/memories/zi", log), log
    assert sorted(os.listdir(mnt.path)) == ["a.zip", "f1.md", "f2.md"]


def test_a_bare_repository_in_the_mount_keeps_no_history(mnt, tmp_path):
    """NAME.git is git's own directory without the leading dot: stored, not
    versioned, like a working tree's .git/."""
    subprocess.run(["git", "init", "-q", "--bare", str(mnt.path / "srv" / "repo.git")],
                   check=True, timeout=60)
    work = tmp_path / "work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=60)
    (work / "a.md").write_text("a\n")
    subprocess.run(git + ["add", "-A"], check=True, timeout=60)
    subprocess.run(git + ["commit", "-q", "-m", "one"], check=True, timeout=60)
    subprocess.run(git + ["push", "-q", str(mnt.path / "srv" / "repo.git"), "HEAD:refs/heads/main"],
                   check=True, timeout=60, capture_output=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "-b", "main", str(mnt.path / "srv" / "repo.git"),
                    str(clone)], check=True, timeout=60, capture_output=True)
    assert (clone / "a.md").read_text() == "a\n"
    log = areev(mnt.db, "log", ns=mnt.ns).stdout
    assert "repo.git/HEAD" in log  # stored
    assert not re.search(r"(add|supersede) +\w+ +/memories/srv/repo.git/", log), log
    assert history(mnt.db, "/memories/srv/repo.git/HEAD", ns=mnt.ns) == []


def test_a_rename_of_a_file_with_a_history_onto_its_shorter_name_keeps_it(mnt):
    """Only a young copy loses its own chain: a file with versions of its own
    renamed onto the name it extends moves its history there, as any rename."""
    (mnt.path / "notes.md.1").write_text("one\n")
    (mnt.path / "notes.md.1").write_text("one\ntwo\n")
    os.rename(mnt.path / "notes.md.1", mnt.path / "notes.md")
    h = history(mnt.db, "/memories/notes.md", ns=mnt.ns)
    assert [(v["op"], v["subject"]) for v in h] == [
        ("create", "/memories/notes.md.1"), ("edit", "/memories/notes.md.1"),
        ("rename", "/memories/notes.md")], h
    # The memory tool's file at such a name is never a temp copy either.
    r = memtool(mnt.db, {"command": "create", "path": "/memories/plan.md.2", "file_text": "p\n"},
                ns=mnt.ns)
    assert not r["is_error"], r
    os.rename(mnt.path / "plan.md.2", mnt.path / "plan.md")
    h = history(mnt.db, "/memories/plan.md", ns=mnt.ns)
    assert [(v["op"], v["subject"]) for v in h] == [
        ("create", "/memories/plan.md.2"), ("rename", "/memories/plan.md")], h


@pytest.mark.parametrize("vcs_dir", [".hg", ".svn", ".bzr", ".jj"])
def test_files_inside_a_version_control_directory_are_never_versioned(mnt, vcs_dir):
    """A repository's own directory (Mercurial, Subversion, Bazaar, Jujutsu)
    rewrites its state files at every command; like .git/ it is stored but
    keeps no history, while the working files beside it do."""
    repo = mnt.path / "repo"
    (repo / vcs_dir / "store").mkdir(parents=True)
    for i in range(3):
        (repo / vcs_dir / "dirstate").write_text(f"state {i}\n")
        (repo / vcs_dir / "store" / "data").write_text(f"data {i}\n")
        (repo / "work.md").write_text(f"work {i}\n")
    assert (repo / vcs_dir / "dirstate").read_text() == "state 2\n"
    assert history(mnt.db, f"/memories/repo/{vcs_dir}/dirstate", ns=mnt.ns) == []
    assert history(mnt.db, f"/memories/repo/{vcs_dir}/store/data", ns=mnt.ns) == []
    assert len(history(mnt.db, "/memories/repo/work.md", ns=mnt.ns)) == 3
    assert vcs_dir not in os.listdir(mnt.path / ".history" / "repo")


def test_sqlite_sidecar_files_never_become_versions(mnt):
    """A SQLite database kept in the mount rewrites its -journal (or -wal) on
    every commit; beside their database those are temp files by behaviour.
    The database itself is versioned and stays intact."""
    import sqlite3
    for mode in ("delete", "wal"):
        path = mnt.path / f"{mode}.db"
        con = sqlite3.connect(path)
        con.execute(f"PRAGMA journal_mode={mode}")
        con.execute("CREATE TABLE t(x)")
        for i in range(15):
            with con:
                con.execute("INSERT INTO t VALUES(?)", (i,))
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        con.close()
        con = sqlite3.connect(path)
        assert con.execute("SELECT count(*) FROM t").fetchone() == (15,)
        con.close()
        assert history(mnt.db, f"/memories/{mode}.db", ns=mnt.ns) != []
    for sidecar in ("delete.db-journal", "wal.db-wal", "wal.db-shm"):
        assert history(mnt.db, "/memories/" + sidecar, ns=mnt.ns) == [], sidecar
    # A file that merely ends like a sidecar, with no database beside it, is versioned.
    (mnt.path / "travel-journal").write_text("day one\n")
    assert len(history(mnt.db, "/memories/travel-journal", ns=mnt.ns)) == 1
    # So is a file renamed to its own name plus such an ending: the name it
    # leaves is no file beside it (as for GNU patch's copies).
    for old, new in (("trip", "trip-journal"), ("x", "x.indexed")):
        (mnt.path / old).write_text("day one\n")
        os.rename(mnt.path / old, mnt.path / new)
        with open(mnt.path / new, "a") as f:
            f.write("day two\n")
        h = history(mnt.db, f"/memories/{new}", ns=mnt.ns)
        assert [(v["op"], v["subject"]) for v in h] == [
            ("create", f"/memories/{old}"), ("rename", f"/memories/{new}"),
            ("edit", f"/memories/{new}")], h


def replaced_history(mnt, name):
    """(op, subject, body) of every visible version of /memories/<name>."""
    key = f"/memories/{name}"
    return [(v["op"], v["subject"],
             areev(mnt.db, "cat", key, "--version", str(v["version"])).stdout)
            for v in history(mnt.db, key)]


@pytest.mark.parametrize("save", [
    pytest.param(["mv", "-b", "new.md", "f.md"], id="mv -b"),
    pytest.param(["perl", "-pi~", "-e", "s/two/TWO/", "f.md"], id="perl -pi~"),
    pytest.param(["perl", "-pi.bak", "-e", "s/two/TWO/", "f.md"], id="perl -pi.bak"),
    pytest.param(["sed", "-i.bak", "s/two/TWO/", "f.md"], id="sed -i.bak"),
])
def test_a_save_that_moves_the_old_file_aside_adds_one_version_to_it(mnt, save):
    # Each tool moves the saved file to a backup name and puts the new
    # content in place with a rename: the file keeps its
    # history and gains one version; the backup and the tool's temp file
    # take none of it.
    f = mnt.path / "f.md"
    f.write_text("one\n")
    f.write_text("one\ntwo\n")
    (mnt.path / "new.md").write_text("one\nTWO\n")
    subprocess.run(save, cwd=mnt.path, check=True, capture_output=True, timeout=60)
    assert f.read_text() == "one\nTWO\n"
    assert replaced_history(mnt, "f.md") == [
        ("create", "/memories/f.md", "one\n"), ("edit", "/memories/f.md", "one\ntwo\n"),
        ("edit", "/memories/f.md", "one\nTWO\n")]
    for backup in ("f.md~", "f.md.bak"):
        assert history(mnt.db, f"/memories/{backup}") == []
    assert [name for name in os.listdir(mnt.path / ".history") if name != "new.md"] == ["f.md"]


@pytest.mark.parametrize("save, backup", [
    pytest.param(["mv", "-b", "new.md", "f.md"], "f.md~", id="mv -b"),
    pytest.param(["perl", "-pi~", "-e", "s/two/TWO/", "f.md"], "f.md~", id="perl -pi~"),
    pytest.param(["sed", "-i.bak", "s/two/TWO/", "f.md"], "f.md.bak", id="sed -i.bak"),
])
def test_a_backup_name_the_memory_tool_wrote_is_replaced_not_continued(mnt, save, backup):
    # The agent keeps a file of its own at the backup name: the save still
    # adds its version to f.md, and the agent's file is tombstoned, restorable.
    memtool(mnt.db, {"command": "create", "path": f"/memories/{backup}", "file_text": "mine\n"})
    f = mnt.path / "f.md"
    f.write_text("one\n")
    f.write_text("one\ntwo\n")
    (mnt.path / "new.md").write_text("one\nTWO\n")
    subprocess.run(save, cwd=mnt.path, check=True, capture_output=True, timeout=60)
    assert replaced_history(mnt, "f.md") == [
        ("create", "/memories/f.md", "one\n"), ("edit", "/memories/f.md", "one\ntwo\n"),
        ("edit", "/memories/f.md", "one\nTWO\n")]
    kept = history(mnt.db, f"/memories/{backup}")
    assert [v["size"] for v in kept] == [5] and kept[0]["chain_state"] == "deleted", kept


@pytest.mark.parametrize("name, save", [
    pytest.param("a.bak", ["perl", "-pi", "-e", "s/two/new/", "a.bak"], id="perl -pi"),
    pytest.param("b.tmp", ["bash", "-c", "t=$(mktemp -p .); echo new > $t; mv $t b.tmp"],
                 id="mktemp + mv"),
    pytest.param("c.orig", ["sed", "-i", "s/two/new/", "c.orig"], id="sed -i"),
])
def test_a_save_over_a_file_the_memory_tool_made_at_a_backup_name_adds_a_version(
        mnt, name, save):
    # The agent's own file at a name the mount leaves unversioned: a save's
    # temp copy renamed over it continues its history, and a later edit
    # through the mount is a version too.
    key = f"/memories/{name}"
    memtool(mnt.db, {"command": "create", "path": key, "file_text": "one\n"})
    memtool(mnt.db, {"command": "str_replace", "path": key, "old_str": "one", "new_str": "two"})
    assert wait_for(lambda: (mnt.path / name).exists())
    subprocess.run(save, cwd=mnt.path, check=True, capture_output=True, timeout=60)
    with open(mnt.path / name, "a") as f:
        f.write("more\n")
    h = history(mnt.db, key)
    assert [(v["size"], v["chain_state"]) for v in h] == [
        (4, "live"), (4, "live"), (4, "live"), (9, "live")], h
    assert areev(mnt.db, "cat", key).stdout == "new\nmore\n"
    # The save's temp copy keeps no history of its own, not even a tombstone.
    ops = json.loads(areev(mnt.db, "log", "--json").stdout)
    temps = {o["subject"] for o in ops} - {key}
    assert temps and all(history(mnt.db, t) == [] for t in temps), ops


def test_a_rename_onto_a_just_deleted_name_takes_none_of_its_history(mnt):
    # Only a move to a backup name makes a path a save's target: a file
    # moved onto the name of one deleted a moment before keeps its own
    # history, and the deleted one stays restorable, also when the memory
    # tool does the rename.
    for name in ("plan.md", "keep.md"):
        (mnt.path / name).write_text("one\n")
        (mnt.path / name).write_text("one\ntwo\n")
        os.unlink(mnt.path / name)
    (mnt.path / "scratch.md").write_text("x\n")
    subprocess.run(["mv", "scratch.md", "plan.md"], cwd=mnt.path, check=True)
    (mnt.path / "young.md").write_text("y\n")
    r = memtool(mnt.db, {"command": "rename", "old_path": "/memories/young.md",
                         "new_path": "/memories/keep.md"})
    assert not r["is_error"], r
    for name, first in (("plan.md", "/memories/scratch.md"), ("keep.md", "/memories/young.md")):
        assert [(v["op"], v["subject"]) for v in history(mnt.db, f"/memories/{name}")] == [
            ("create", first), ("rename", f"/memories/{name}")]
    ops = areev(mnt.db, "log").stdout
    assert "revive" not in ops and "discard" not in ops
