#!/usr/bin/python3
"""Wall time and CPU time of open-append-close cycles through a mount.

    /usr/bin/python3 bench/mount/append_cpu.py --build BUILD_DIR
        [--compare-build OTHER_BUILD_DIR] [--rounds 3] [--cycles 2000]

Each round, for each build (alternated): a fresh store is mounted with
BUILD/cli/areev in the foreground; this script appends one line to one file
--cycles times (open "ab", write, close, as workloads.py's append) and
prints, per cycle, the wall time, the daemon's CPU time (user + system of
all its threads, from /proc/PID/stat) and this script's own (os.times(),
whose system time includes the kernel's work of waking the daemon).
The daemon's request loop trades CPU for latency (docs/fusefs.md, "Worker
threads"): this shows both sides.
"""
import argparse
import os
import pathlib
import sys
import tempfile
import time

from foreground_mount import foreground_mount


def daemon_cpu_s(pid):
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s():
    t = os.times()
    return t.user + t.system


def one_round(areev, cycles, scratch):
    mnt = scratch / "mnt"
    with foreground_mount(areev, scratch / "s.db", mnt, scratch / "mount.log") as daemon:
        path = mnt / "log.txt"
        path.write_text("first\n")
        time.sleep(0.3)  # the daemon settles: its loop goes idle
        daemon0, own0, wall0 = daemon_cpu_s(daemon.pid), own_cpu_s(), time.perf_counter()
        for i in range(cycles):
            with open(path, "ab") as f:
                f.write(b"line %d\n" % i)
        wall = time.perf_counter() - wall0
        daemon_s, own_s = daemon_cpu_s(daemon.pid) - daemon0, own_cpu_s() - own0
        lines = path.read_text().count("\n")
        if lines != cycles + 1:
            sys.exit(f"{lines} lines in the file, not {cycles + 1}")
    return wall, daemon_s, own_s

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--compare-build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cycles", type=int, default=2000)
    args = parser.parse_args()
    builds = [args.build] + ([args.compare_build] if args.compare_build else [])
    print("build | wall µs/cycle | daemon CPU µs/cycle | client CPU µs/cycle")
    for _ in range(args.rounds):
        for build in builds:
            areev = os.path.join(build, "cli", "areev")
            with tempfile.TemporaryDirectory(prefix="append_cpu.") as scratch:
                wall, daemon_s, own_s = one_round(areev, args.cycles, pathlib.Path(scratch))
            per = 1e6 / args.cycles
            print(f"{build} | {wall * per:.1f} | {daemon_s * per:.1f} | {own_s * per:.1f}",
                  flush=True)


if __name__ == "__main__":
    main()
