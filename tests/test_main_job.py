"""The README's main job, `scripts/run.sh`: it sets up, builds areev into
build/, mounts the store at ./memories in the foreground (relative to where it
is run), and Ctrl-C unmounts it. Run only against build/ (the release pass),
the build the script itself makes: any other build directory would have it
build one more."""
import contextlib
import os
import signal
import subprocess
import time

import pytest

from conftest import BUILD_DIR, ROOT
from mount_util import fuse_test_marker, fusermount_unmount, history_dir, mounted

pytestmark = fuse_test_marker + [
    pytest.mark.skipif(BUILD_DIR != (ROOT / "build").resolve(),
                       reason="scripts/run.sh builds into build/, not this build directory"),
]

RUN = str(ROOT / "scripts" / "run.sh")


def start(cwd, *args, env_db=None):
    env = {k: v for k, v in os.environ.items() if k != "AREEV_DB"}
    if env_db is not None:
        env["AREEV_DB"] = env_db
    return subprocess.Popen([RUN, *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_mounted(path, proc, timeout=100.0):
    """Waits for the mount (setup and an up-to-date build come first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if mounted(path):
            return
        if proc.poll() is not None:
            pytest.fail(f"scripts/run.sh exited {proc.returncode}: {proc.stderr.read()}")
        time.sleep(0.1)
    pytest.fail("scripts/run.sh did not mount")  # main_job's finally kills it


@contextlib.contextmanager
def main_job(cwd, mnt, *args, env_db=None):
    """Runs scripts/run.sh until it has mounted `mnt`, then yields a function
    that presses Ctrl-C and returns (exit code, stderr). On the way out a
    script still running is killed and the mount undone."""
    proc = start(cwd, *args, env_db=env_db)

    def ctrl_c():
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends the foreground process
        _, err = proc.communicate(timeout=60)
        return proc.returncode, err

    try:
        wait_mounted(mnt, proc)
        yield ctrl_c
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        fusermount_unmount(mnt)


def test_the_main_job_mounts_agent_db_at_memories_and_ctrl_c_unmounts(tmp_path, run_areev):
    mnt, db = tmp_path / "memories", tmp_path / "agent.db"
    with main_job(tmp_path, mnt) as ctrl_c:
        (mnt / "notes.md").write_text("first\n")
        (mnt / "notes.md").write_text("second\n")
        assert run_areev("cat", "/memories/notes.md", "--db", str(db)).stdout == "second\n"
        versions = [(mnt / ".history" / "notes.md" / name).read_text()
                    for name in history_dir(mnt, "notes.md")]
        assert sorted(versions) == ["first\n", "second\n"]
        code, err = ctrl_c()
    assert code == 0, err
    assert f"areev: mounting {db} at {mnt} (Ctrl-C to unmount)\n" in err
    assert not mounted(mnt)
    assert os.listdir(mnt) == []  # the files live in the store, not the directory
    assert run_areev("cat", "/memories/notes.md", "--db", str(db)).stdout == "second\n"


def test_the_main_job_takes_a_mountpoint_and_store_relative_to_where_it_runs(tmp_path,
                                                                            run_areev):
    (tmp_path / "work").mkdir()
    mnt, db = tmp_path / "work" / "m", tmp_path / "work" / "s.db"
    with main_job(tmp_path / "work", mnt, "m", "s.db",
                  env_db=str(tmp_path / "ignored.db")) as ctrl_c:
        (mnt / "a.md").write_text("A\n")
        code, err = ctrl_c()
    assert code == 0, err
    assert run_areev("cat", "/memories/a.md", "--db", str(db)).stdout == "A\n"
    assert not (tmp_path / "ignored.db").exists()
    # AREEV_DB names the store when no DB argument does; set but empty, it is
    # refused before anything is mounted or built.
    empty = start(tmp_path / "work", "m2", env_db="")
    _, err = empty.communicate(timeout=60)
    assert empty.returncode == 2 and "AREEV_DB is set but empty" in err, err
    assert not (tmp_path / "work" / "m2").exists()
