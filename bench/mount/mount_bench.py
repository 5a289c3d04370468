#!/usr/bin/python3
"""Mount benchmarks: the same file workloads on an areev mount, on a mount of
libfuse's passthrough_ll example and on a plain directory, interleaved in one
run (each workload runs on every target before the next workload starts).

    /usr/bin/python3 bench/mount/mount_bench.py --build BUILD_DIR [--rounds N]
        [--targets plain,passthrough_ll,areev] [--scale 1.0] [--durable] [--keep-mounted]
        [--only "append x1000,..."]

passthrough_ll is compiled into BUILD_DIR/passthrough_ll/ from the example
source that Debian's libfuse3-dev ships (/usr/share/doc/libfuse3-dev/examples).
areev is BUILD_DIR/cli/areev, mounted with `areev mount MNT --db DB --ns bench
-f` (durability normal unless --durable). Every workload counts its errors
(failed commands, wrong content, wrong counts); they must be zero. Prints a
markdown table of median seconds and ratios to passthrough_ll.

Each workload starts on a fresh mount of the same data (--keep-mounted: one
mount per round): passthrough_ll holds an fd per inode the kernel knows, and
10,000 files plus git's objects pass this machine's 20,000-fd hard limit, so
on one long mount its later workloads fail fast and their times mean nothing.
"""
import argparse
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import workloads  # noqa: E402

EXAMPLES = pathlib.Path("/usr/share/doc/libfuse3-dev/examples")


def build_passthrough(build: pathlib.Path) -> pathlib.Path:
    out_dir = build / "passthrough_ll"
    out_dir.mkdir(parents=True, exist_ok=True)
    binary = out_dir / "passthrough_ll"
    src = EXAMPLES / "passthrough_ll.c"
    if not src.exists():
        sys.exit(f"mount_bench: {src} not found (install libfuse3-dev)")
    if not binary.exists() or binary.stat().st_mtime < src.stat().st_mtime:
        for name in ("passthrough_ll.c", "passthrough_helpers.h"):
            shutil.copy(EXAMPLES / name, out_dir / name)
        flags = subprocess.run(["pkg-config", "fuse3", "--cflags", "--libs"], check=True,
                               capture_output=True, text=True).stdout.split()
        subprocess.run(["gcc", "-O2", "-Wall", str(out_dir / "passthrough_ll.c"), *flags,
                        "-o", str(binary)], check=True)
    return binary


def raise_fd_limit():
    """passthrough_ll keeps an O_PATH fd open per inode the kernel knows (10,000
    files plus git's objects exceed a 20,000 limit, and lookups then fail with
    EMFILE); every daemon gets the same high limit."""
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20))
    except (ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Target:
    """A directory to run workloads in; a FUSE daemon for mounted targets."""

    def __init__(self, name, work: pathlib.Path, cmd_fn=None):
        self.name = name
        self.work = work
        self.cmd_fn = cmd_fn
        self.proc = None
        self.log = None
        self.root = work / "mnt" if cmd_fn else work / "plain"

    def start(self):
        if self.work.exists():
            shutil.rmtree(self.work)
        self.work.mkdir(parents=True)
        self.root.mkdir()
        self.mount()

    def remount(self):
        """Restarts the daemon on the same data: the kernel forgets every
        inode of the mount (passthrough_ll closes the fd it holds per inode)
        and both daemons start with empty caches of their own."""
        if self.cmd_fn:
            self.stop()
            self.mount()

    def mount(self):
        if not self.cmd_fn:
            return
        self.log = open(self.work / "daemon.log", "ab")
        self.proc = subprocess.Popen(self.cmd_fn(self), stdout=self.log, stderr=subprocess.STDOUT,
                                     preexec_fn=raise_fd_limit)
        deadline = time.monotonic() + 15
        while not os.path.ismount(self.root):
            if self.proc.poll() is not None:
                sys.exit(f"mount_bench: {self.name} daemon exited: "
                         f"{(self.work / 'daemon.log').read_text(errors='replace')}")
            if time.monotonic() > deadline:
                self.stop()
                sys.exit(f"mount_bench: {self.name} did not mount")
            time.sleep(0.05)

    def stop(self):
        if not self.proc:
            return
        for _ in range(50):
            if subprocess.run(["fusermount3", "-u", str(self.root)],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            subprocess.run(["fusermount3", "-u", "-z", str(self.root)], capture_output=True)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self.proc = None
        self.proc = None


def make_targets(args, build: pathlib.Path, base: pathlib.Path):
    targets = {}
    targets["plain"] = Target("plain", base / "plain")
    pt = build_passthrough(build)

    def pt_cmd(t):
        src = t.work / "src"
        src.mkdir(exist_ok=True)
        return [str(pt), "-f", "-o", f"source={src}", str(t.root)]

    targets["passthrough_ll"] = Target("passthrough_ll", base / "passthrough_ll", pt_cmd)
    areev = build / "cli" / "areev"

    def areev_cmd(t):
        cmd = [str(areev), "mount", str(t.root), "--db", str(t.work / "agent.db"),
               "--ns", "bench", "-f"]
        return cmd + (["--durable"] if args.durable else [])

    targets["areev"] = Target("areev", base / "areev", areev_cmd)
    return [targets[n] for n in args.targets.split(",")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--targets", default="plain,passthrough_ll,areev")
    ap.add_argument("--scale", type=float, default=1.0, help="shrink file counts for a smoke run")
    ap.add_argument("--durable", action="store_true")
    ap.add_argument("--only", default="",
                    help="comma-separated workload names to run (e.g. 'append x1000'); later "
                         "workloads need the files earlier ones create, so keep their order")
    ap.add_argument("--keep-mounted", action="store_true",
                    help="one mount per round instead of a fresh one per workload (passthrough_ll "
                         "then runs out of file descriptors on this machine's 20,000 limit)")
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    base = build / "mount-bench"
    targets = make_targets(args, build, base)
    times = {}   # (workload, target) -> [seconds]
    errors = {}  # (workload, target) -> total errors
    plan = workloads.plan(args.scale)
    if args.only:
        wanted = [w.strip() for w in args.only.split(",")]
        unknown = set(wanted) - {name for name, _, _ in plan}
        if unknown:
            ap.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
        plan = [step for step in plan if step[0] in wanted]
    try:
        for rnd in range(args.rounds):
            for t in targets:
                t.start()
            states = {t.name: {} for t in targets}
            for wname, fn, pre in plan:
                for t in targets:
                    if not args.keep_mounted:
                        t.remount()
                    # Write back what earlier workloads left dirty (a daemon's
                    # store, git's objects), so no timed run pays for another's.
                    os.sync()
                    secs, errs = workloads.run(fn, pre, t.root / "w", states[t.name])
                    times.setdefault((wname, t.name), []).append(secs)
                    errors[(wname, t.name)] = errors.get((wname, t.name), 0) + errs
                    print(f"round {rnd} {wname:<14} {t.name:<15} {secs:8.3f} s  errors {errs}",
                          file=sys.stderr, flush=True)
            for t in targets:
                t.stop()
    finally:
        for t in targets:
            t.stop()
    report(plan, targets, times, errors, args)


def report(plan, targets, times, errors, args):
    names = [t.name for t in targets]
    print(f"durability of the areev mount: {'full (--durable)' if args.durable else 'normal'}; "
          f"rounds: {args.rounds}; scale: {args.scale}")
    head = " | ".join(f"{n} s" for n in names)
    print(f"| workload | {head} | areev / passthrough_ll | plain / passthrough_ll | goal | errors |")
    print("|---" * (len(names) + 5) + "|")
    for wname, _, _ in plan:
        med = {n: statistics.median(times[(wname, n)]) for n in names}
        ratio = lambda n: (f"{med[n] / med['passthrough_ll']:.2f}x"  # noqa: E731
                           if n in med and "passthrough_ll" in med and med["passthrough_ll"] > 0 else "-")
        goal = workloads.GOALS.get(wname)
        verdict = ""
        if goal and "areev" in med and "passthrough_ll" in med:
            met = med["areev"] / med["passthrough_ll"] <= goal
            verdict = f"<= {goal}x: {'met' if met else 'NOT met'}"
        errs = ", ".join(f"{n} {errors[(wname, n)]}" for n in names)
        cols = " | ".join(f"{med[n]:.3f}" for n in names)
        print(f"| {wname} | {cols} | {ratio('areev')} | {ratio('plain')} | {verdict} | {errs} |")


if __name__ == "__main__":
    main()
