"""kill -9 of the daemon under load: the store opens cleanly, every closed or
fsync'd file is intact, auto_unmount cleans the dead mount, a remount works."""
import os
import signal
import sqlite3
import subprocess
import sys
import time

from mount_util import *  # noqa: F401,F403
from mount_util import Mount, areev, mounted, wait_for

pytestmark = fuse_test_marker  # noqa: F405

WRITER = r"""
import os, sys
root, idx = sys.argv[1], int(sys.argv[2])
i = 0
while True:
    p = os.path.join(root, f"w{idx}-{i:05}.md")
    body = (f"writer {idx} file {i}\n" * 50).encode()
    fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, body)
    if i % 3 == 0:
        os.fsync(fd)
    os.close(fd)
    print(p, flush=True)   # acknowledged: closed (and maybe fsync'd)
    i += 1
"""


def test_kill9_under_writers_then_remount(tmp_path):
    db = tmp_path / "agent.db"
    m = Mount(db, tmp_path / "mnt").start()
    # The writers work in a directory of the mount: once auto_unmount has
    # taken the dead mount away, their next create fails (ENOENT) instead of
    # landing in the bare mountpoint directory, where it would count as
    # acknowledged and then be hidden by the remount.
    (m.path / "w").mkdir()
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(m.path / "w"), str(k)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
               for k in range(3)]
    time.sleep(1.5)
    m.proc.send_signal(signal.SIGKILL)
    m.proc.wait(timeout=10)
    acked = []
    for w in writers:
        try:
            out, _ = w.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            w.kill()
            out, _ = w.communicate()
        acked += [line for line in out.splitlines() if line]
    assert len(acked) > 10, "writers made no progress before the kill"
    # auto_unmount removes the dead mount (fusermount3 notices the daemon's
    # end; on a loaded machine that can take a moment)
    assert wait_for(lambda: not mounted(m.path), timeout=10.0)
    assert not any(m.path.iterdir()), "a writer wrote into the bare mountpoint"
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    # every acknowledged (closed) file is intact, seen through the CLI and a remount
    m2 = Mount(db, m.path).start()
    try:
        for p in acked:
            name = os.path.basename(p)
            idx, i = name[1:-3].split("-")
            expected = f"writer {idx} file {int(i)}\n" * 50
            assert (m2.path / "w" / name).read_text() == expected, name
        sample = os.path.basename(acked[0])
        assert areev(db, "cat", "/memories/w/" + sample).stdout.startswith("writer ")
        (m2.path / "after.md").write_text("alive")
        assert (m2.path / "after.md").read_text() == "alive"
    finally:
        assert m2.stop() == 0
    check_daemon_log(m2.log())  # noqa: F405
