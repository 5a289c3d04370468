"""O_APPEND writes through the mount while other processes write the same
file: they land after whatever the file holds when they are saved, as appends
to one file do on a local disk, so no writer's change is erased."""
import json
import os
import threading

from mount_util import *  # noqa: F401,F403
from mount_util import Mount, areev, history, wait_for
from test_bindings_common import import_areev

pytestmark = fuse_test_marker  # noqa: F405


def append_line(path, line):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def test_o_append_writes_keep_an_edit_made_meanwhile_by_another_process(mnt):
    p = mnt.path / "log.md"
    p.write_bytes(b"start\n")
    # The edit comes from this process: a child would close its copy of fd,
    # which is a save of its own.
    store = import_areev().Areev(mnt.db)
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"one\n")
        store.memory_tool(json.dumps({"command": "str_replace", "path": "/memories/log.md",
                                      "old_str": "start", "new_str": "START"}))
        store.close()
        os.write(fd, b"two\n")
    finally:
        os.close(fd)
    expected = "START\none\ntwo\n"
    assert areev(mnt.db, "cat", "/memories/log.md").stdout == expected
    assert p.read_text() == expected
    bodies = [areev(mnt.db, "cat", "/memories/log.md", "--version", str(v["version"])).stdout
              for v in history(mnt.db, "/memories/log.md")]
    assert bodies == ["start\n", "START\n", expected]


# Two appenders per mount, with lines that cross page boundaries: the kernel
# sends such a write(2) in two WRITE requests, and a seal between them (the
# other appender's close) once put the other mount's line inside this one.
def test_two_mounts_appending_to_one_file_lose_no_line(tmp_path):
    db = tmp_path / "agent.db"
    mounts = [Mount(db, tmp_path / f"m{i}").start() for i in range(2)]
    try:
        (mounts[0].path / "log.md").write_bytes(b"")
        wait_for(lambda: (mounts[1].path / "log.md").exists())
        errors = []
        writers = [(m, f"m{i}.{j}") for i, m in enumerate(mounts) for j in range(2)]

        def line(who, k):
            head = f"{who} {k} "
            return head + "x" * (149 - len(head))

        def appender(m, who):
            try:
                for k in range(150):
                    append_line(m.path / "log.md", (line(who, k) + "\n").encode())
            except OSError as e:
                errors.append(e)

        threads = [threading.Thread(target=appender, args=w) for w in writers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert errors == []
        lines = areev(db, "cat", "/memories/log.md").stdout.splitlines()
        assert sorted(lines) == sorted(line(who, k) for _, who in writers for k in range(150))
        for _, who in writers:  # each writer's own lines stay in the order written
            mine = [x for x in lines if x.startswith(f"{who} ")]
            assert mine == [line(who, k) for k in range(150)]
    finally:
        for m in mounts:
            rc = m.stop()
            assert rc == 0, m.log()
