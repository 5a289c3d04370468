#!/usr/bin/python3
"""Python binding overhead: the median time of `Areev.memory_tool(json)`
called from Python against the median of the same command through
MemoryTool::Execute in C++ (bench/exec_timer), on the same store file,
alternating rounds in one run.

    /usr/bin/python3 bench/bindings/py_overhead.py --pkg BUILD/py/pkg \
        --exec-timer BUILD/bench/exec_timer --dir SCRATCH [--iterations N] [--rounds R]

Prints a markdown table; goal: at most 5 us median added per call.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def build_store(areev, db):
    m = areev.Areev(db, ns="bench")
    small = "".join(f"- line {j}: user prefers concise answers\n" for j in range(20))
    big = "".join(f"- line {j}: lorem ipsum dolor sit amet consectetur\n" for j in range(2000))
    m.memory_tool(json.dumps({"command": "create", "path": "/memories/small.md", "file_text": small}))
    m.memory_tool(json.dumps({"command": "create", "path": "/memories/big.md", "file_text": big}))
    for i in range(10):
        m.memory_tool(json.dumps({"command": "create", "path": f"/memories/dir/f{i}.md",
                                  "file_text": small}))
    m.close()


CASES = [
    ("view small file (20 lines)", {"command": "view", "path": "/memories/small.md"}, False),
    ("view directory (10 files)", {"command": "view", "path": "/memories/dir"}, False),
    ("view 100 KB file (2,000 lines)", {"command": "view", "path": "/memories/big.md"}, False),
    ("error: view missing path", {"command": "view", "path": "/memories/missing.md"}, True),
]


def time_python(areev, db, cmd, expect_error, iterations):
    m = areev.Areev(db, ns="bench")
    samples = []
    clock = time.perf_counter_ns
    call = m.memory_tool
    for i in range(iterations + 1000):
        t0 = clock()
        try:
            call(cmd)
            failed = False
        except ValueError:
            failed = True
        t1 = clock()
        if failed != expect_error:
            sys.exit(f"py_overhead: unexpected outcome for {cmd}")
        if i >= 1000:
            samples.append(t1 - t0)
    m.close()
    return statistics.median(samples)


def time_cpp(exec_timer, db, cmd, expect_error, iterations):
    r = subprocess.run([exec_timer, "--db", db, "--ns", "bench", "--cmd", cmd,
                        "--iterations", str(iterations), "--expect-error",
                        "1" if expect_error else "0"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"py_overhead: exec_timer failed: {r.stderr}")
    return json.loads(r.stdout)["median_ns"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pkg", required=True)
    ap.add_argument("--exec-timer", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, args.pkg)
    import areev  # noqa: E402
    os.makedirs(args.dir, exist_ok=True)
    db = os.path.join(args.dir, "py-overhead.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    build_store(areev, db)
    print(f"python {sys.version.split()[0]}, {args.iterations} calls per round, "
          f"{args.rounds} rounds (median of round medians)")
    print("| call | Python median | C++ median | added | goal | result |")
    print("|---|---|---|---|---|---|")
    for name, obj, expect_error in CASES:
        cmd = json.dumps(obj)
        py, cpp = [], []
        for _ in range(args.rounds):
            py.append(time_python(areev, db, cmd, expect_error, args.iterations))
            cpp.append(time_cpp(args.exec_timer, db, cmd, expect_error, args.iterations))
        p = statistics.median(py)
        c = statistics.median(cpp)
        added = (p - c) / 1e3
        print(f"| {name} | {p / 1e3:.2f} us | {c / 1e3:.2f} us | {added:.2f} us | <= 5 us | "
              f"{'met' if added <= 5 else 'NOT met'} |")


if __name__ == "__main__":
    main()
