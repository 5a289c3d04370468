"""The file workloads of the mount benchmark. Each takes the workload root
(a directory that may not exist yet) and a per-target state dict, does its
work and returns the number of errors it saw (failed calls or commands,
wrong content, wrong counts). `run` times one workload."""
import os
import sqlite3
import subprocess
import time

# Goals: areev time / passthrough_ll time must be at most this.
GOALS = {
    "create": 1.25, "ls -lR": 1.0, "read all": 1.0, "grep -r": 1.0, "git status": 1.0,
    "git add+commit": 1.5, "append x1000": 1.5, "sed -i x500": 1.5,
}
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid",
               GIT_CONFIG_NOSYSTEM="1", HOME="/nonexistent")
BIG = 64 << 20
CHUNK = 1 << 20
LOG = 32 << 20  # the large log of "append x1000 to 32MiB"
TIMEOUT = 900


def body(i):
    return (f"file {i}\nneedle {i}\n" + "lorem ipsum dolor sit amet " * 6 + "\n").encode()


def paths(root, n):
    # 10 x 10 directories, two levels deep, files spread evenly.
    return [root / f"d{i % 10}" / f"e{(i // 10) % 10}" / f"f{i}.txt" for i in range(n)]


def create(root, st):
    errs = 0
    for a in range(10):
        for b in range(10):
            try:
                os.makedirs(root / f"d{a}" / f"e{b}", exist_ok=True)
            except OSError:
                errs += 1
    for i, p in enumerate(paths(root, st["n"])):
        try:
            with open(p, "wb") as f:
                f.write(body(i))
        except OSError:
            errs += 1
    return errs


def sh(cmd, root, expect_out=None, **kw):
    r = subprocess.run(cmd, cwd=root, capture_output=True, env=GIT_ENV, timeout=TIMEOUT, **kw)
    if r.returncode != 0:
        return 1, r.stdout
    if expect_out is not None and not expect_out(r.stdout):
        return 1, r.stdout
    return 0, r.stdout


def ls_lr(root, st):
    errs, out = sh(["ls", "-lR", "."], root)
    # every file shows up once in the long listing
    return errs + (0 if out.count(b".txt\n") == st["n"] else 1)


def read_all(root, st):
    errs = 0
    for i, p in enumerate(paths(root, st["n"])):
        try:
            with open(p, "rb") as f:
                if f.read() != body(i):
                    errs += 1
        except OSError:
            errs += 1
    return errs


def grep_r(root, st):
    errs, out = sh(["grep", "-r", "needle", "."], root)
    return errs + (0 if out.count(b"\n") == st["n"] else 1)


def git_commit(root, st):
    errs, _ = sh(["git", "add", "-A"], root)
    e2, _ = sh(["git", "commit", "-q", "-m", "bench"], root)
    return errs + e2


def git_status(root, st):
    errs, _ = sh(["git", "status", "--porcelain"], root, expect_out=lambda o: o == b"")
    return errs


def append(root, st):
    p = root / "append.log"
    errs = 0
    for k in range(1000):
        try:
            with open(p, "ab") as f:
                f.write(b"appended line %d\n" % k)
        except OSError:
            errs += 1
    try:
        if p.stat().st_size != sum(len(b"appended line %d\n" % k) for k in range(1000)):
            errs += 1
    except OSError:
        errs += 1
    return errs


def sqlite_wal(root, st):
    """A SQLite database kept in the directory, in WAL mode, taking 800
    one-row transactions: its -wal grows at every commit (the mount keeps it
    unversioned, stored while it lives)."""
    db = root / "app.db"
    errs = 0
    try:
        c = sqlite3.connect(db)
        c.execute("PRAGMA journal_mode=wal")
        c.execute("CREATE TABLE t(v)")
        c.commit()
        for k in range(800):
            with c:
                c.execute("INSERT INTO t VALUES (?)", ("row %d " % k + "x" * 200,))
        if c.execute("SELECT count(*) FROM t").fetchone()[0] != 800:
            errs += 1
        c.close()
    except sqlite3.Error:
        errs += 1
    return errs


def big_log(root, st):
    line = b"x" * 99 + b"\n"
    with open(root / "big.log", "wb") as f:
        f.write(line * (LOG // len(line)))


def big_append(root, st):
    # The append loop again, on a log that is already large: its cost should
    # be the lines', not the file's.
    p = root / "big.log"
    errs = 0
    start = p.stat().st_size
    lines = [b"appended line %d\n" % k for k in range(1000)]
    for line in lines:
        try:
            with open(p, "ab") as f:
                f.write(line)
        except OSError:
            errs += 1
    try:
        with open(p, "rb") as f:
            f.seek(start)
            if f.read() != b"".join(lines):
                errs += 1
    except OSError:
        errs += 1
    return errs


def sed_i(root, st):
    files = [str(p.relative_to(root)) for p in paths(root, st["n"])[:500]]
    errs, _ = sh(["sed", "-i", "s/^needle /pin /"] + files, root)
    for i, f in enumerate(files):
        try:
            with open(root / f, "rb") as fh:
                if fh.read() != body(i).replace(b"\nneedle ", b"\npin "):
                    errs += 1
        except OSError:
            errs += 1
    return errs


def seq_write(root, st):
    chunk = bytes(range(256)) * (CHUNK // 256)
    try:
        with open(root / "big.bin", "wb") as f:
            for _ in range(BIG // CHUNK):
                f.write(chunk)
        return 0
    except OSError:
        return 1


def seq_read(root, st):
    total = 0
    try:
        with open(root / "big.bin", "rb") as f:
            while True:
                b = f.read(CHUNK)
                if not b:
                    break
                total += len(b)
    except OSError:
        return 1
    return 0 if total == BIG else 1


def git_init(root, st):
    subprocess.run(["git", "init", "-q", "."], cwd=root, env=GIT_ENV, check=False,
                   capture_output=True)


def plan(scale):
    """(name, workload, untimed setup or None) in run order."""
    n = max(100, int(10000 * scale))

    def with_n(fn):
        def wrapped(root, st):
            st.setdefault("n", n)
            return fn(root, st)
        return wrapped

    return [("create", with_n(create), None), ("ls -lR", with_n(ls_lr), None),
            ("read all", with_n(read_all), None), ("grep -r", with_n(grep_r), None),
            ("git add+commit", with_n(git_commit), git_init),
            ("git status", with_n(git_status), None), ("append x1000", with_n(append), None),
            ("append x1000 to 32MiB", with_n(big_append), big_log),
            ("sqlite x800", with_n(sqlite_wal), None),
            ("sed -i x500", with_n(sed_i), None), ("write 64MiB", with_n(seq_write), None),
            ("read 64MiB", with_n(seq_read), None)]


def run(fn, pre, root, st):
    """Runs the untimed setup `pre`, then times fn(root, st)."""
    root.mkdir(parents=True, exist_ok=True)
    if pre:
        pre(root, st)
    t0 = time.perf_counter()
    try:
        errs = fn(root, st)
    except Exception as e:  # a crashed workload counts as one error, and the run goes on
        print(f"workload error: {e!r}", flush=True)
        errs = 1
    return time.perf_counter() - t0, errs
