#!/usr/bin/python3
"""Saves through a mount while another process writes the store nonstop.

    /usr/bin/python3 bench/mount/save_behind_import.py --build BUILD_DIR
        [--compare-build OTHER_BUILD_DIR] [--rounds 3] [--files 60000]

Each round, for each build (alternated): a fresh store is mounted with
BUILD/cli/areev; `areev memtool --batch` creates --files small files in it
(an import, one transaction per command, back to back) while this script
saves a small new file through the mount (open, write, close) every 30 ms.
The peer is the same saves on the same mount with nothing else writing,
timed right after the import. Prints, per build, the import's time, the
number of saves made during it, and the median, 90th percentile and largest
save time during the import and idle, and the ratio of the medians.

SQLite's write lock has no queue, so how long a save waits behind such a
writer depends on how often the waiter looks for the lock (docs/performance.md,
"Saves behind an import").
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from foreground_mount import foreground_mount

SAVE_EVERY_S = 0.03
IDLE_SAVES = 60


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def save(path, text):
    start = time.monotonic()
    with open(path, "w") as f:
        f.write(text)
    return time.monotonic() - start


def one_round(areev, files, scratch):
    db = scratch / "agent.db"
    mnt = scratch / "mnt"
    with foreground_mount(areev, db, mnt, scratch / "mount.log"):
        commands = "".join(
            json.dumps({"command": "create", "path": f"/memories/import/f{i}.md",
                        "file_text": "x" * 100}) + "\n" for i in range(files)).encode()
        start = time.monotonic()
        importer = subprocess.Popen([areev, "--db", str(db), "memtool", "--batch"],
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        feeder = threading.Thread(target=lambda: (importer.stdin.write(commands),
                                                  importer.stdin.close()))
        feeder.start()
        busy = []
        while importer.poll() is None:
            took = save(mnt / f"busy{len(busy)}.md", f"saved {len(busy)}\n")
            if importer.poll() is None:
                busy.append(took)
            time.sleep(SAVE_EVERY_S)
        feeder.join()
        import_s = time.monotonic() - start
        if importer.returncode != 0:
            sys.exit(f"the import failed with {importer.returncode}")
        idle = []
        for i in range(IDLE_SAVES):
            idle.append(save(mnt / f"idle{i}.md", f"saved {i}\n"))
            time.sleep(SAVE_EVERY_S)
        return import_s, busy, idle


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--compare-build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--files", type=int, default=60000)
    args = parser.parse_args()
    builds = [args.build] + ([args.compare_build] if args.compare_build else [])
    results = {b: {"import": [], "busy": [], "idle": []} for b in builds}
    for round_no in range(args.rounds):
        for build in builds:
            areev = str(pathlib.Path(build) / "cli" / "areev")
            with tempfile.TemporaryDirectory(prefix="save_behind_import.") as scratch:
                import_s, busy, idle = one_round(areev, args.files, pathlib.Path(scratch))
            if not busy:
                sys.exit(f"the import ended before the first save ({import_s:.2f} s): "
                         "give more --files")
            print(f"round {round_no} {build}: import {import_s:.2f} s, {len(busy)} saves "
                  f"during it, median {statistics.median(busy) * 1e3:.1f} ms, "
                  f"max {max(busy) * 1e3:.1f} ms", flush=True)
            results[build]["import"].append(import_s)
            results[build]["busy"] += busy
            results[build]["idle"] += idle
    print("| build | import s (median) | saves during it | during: median / p90 / max ms "
          "| idle: median / p90 / max ms | median during / idle |")
    print("|---|---|---|---|---|---|")
    for build, r in results.items():
        busy, idle = r["busy"], r["idle"]
        print(f"| {build} | {statistics.median(r['import']):.2f} | {len(busy)} | "
              f"{statistics.median(busy) * 1e3:.1f} / {percentile(busy, 0.9) * 1e3:.1f} / "
              f"{max(busy) * 1e3:.1f} | {statistics.median(idle) * 1e3:.2f} / "
              f"{percentile(idle, 0.9) * 1e3:.2f} / {max(idle) * 1e3:.2f} | "
              f"{statistics.median(busy) / statistics.median(idle):.1f}x |")


if __name__ == "__main__":
    main()
