"""An areev mount in the foreground, for the benchmark scripts here that time
one store's mount: started, waited for, and unmounted when the block ends."""
import contextlib
import os
import subprocess
import sys
import time

UP_WITHIN_S = 10
STOPPED_WITHIN_S = 30


@contextlib.contextmanager
def foreground_mount(areev, db, mnt, log_path):
    """Mounts the store `db` on `mnt` (made here) with `areev mount -f`, its
    output in `log_path`, and yields the daemon's Popen; exits the script if
    the mount does not come up."""
    mnt.mkdir()
    with open(log_path, "wb") as log:
        daemon = subprocess.Popen([areev, "--db", str(db), "mount", str(mnt), "-f"],
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + UP_WITHIN_S
            while not os.path.ismount(mnt):
                if daemon.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"the mount did not come up: {log_path.read_text()}")
                time.sleep(0.05)
            yield daemon
        finally:
            subprocess.run(["fusermount3", "-u", str(mnt)], check=False)
            daemon.wait(timeout=STOPPED_WITHIN_S)
