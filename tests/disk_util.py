"""Small filesystems for tests of a full disk: a tmpfs of a given size or
inode count, an ext4 image (both need root), and filling one up."""
import contextlib
import errno
import os
import subprocess

import pytest


@contextlib.contextmanager
def _mounted(path, what, argv):
    """Runs `mount` with `argv` onto `path` (created); skips the test when it
    fails; unmounts at the end (lazily if it is busy)."""
    path.mkdir()
    r = subprocess.run(["mount", *argv, str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount {what}: {r.stderr.strip()}")
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


@contextlib.contextmanager
def tmpfs(path, options):
    """Mounts a tmpfs with `options` ("size=4m", "size=2m,nr_inodes=8") at
    `path` (created); skips the test without root; unmounts at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    with _mounted(path, "a tmpfs", ["-t", "tmpfs", "-o", options, "tmpfs"]):
        yield path


@contextlib.contextmanager
def ext4(path, size_mb, inodes=None):
    """Mounts a fresh ext4 image of `size_mb` MiB (with at most `inodes`
    inodes) at `path` (created); skips the test without root or the tools;
    unmounts and removes the image at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting an ext4 image needs root")
    image = path.parent / (path.name + ".img")
    with open(image, "wb") as f:
        f.truncate(size_mb << 20)
    mkfs = ["mkfs.ext4", "-q", "-F"] + (["-N", str(inodes)] if inodes else []) + [str(image)]
    try:
        try:
            made = subprocess.run(mkfs, capture_output=True, text=True)
        except FileNotFoundError:
            pytest.skip("mkfs.ext4 is not installed")
        if made.returncode != 0:
            pytest.skip(f"cannot make an ext4 image: {made.stderr.strip()}")
        with _mounted(path, "an ext4 image", ["-o", "loop", str(image)]):
            yield path
    finally:
        image.unlink()


def fill(directory, leave=0):
    """Fills the filesystem of `directory` with a file `pad` until ENOSPC or,
    given `leave`, until at most `leave` bytes are free; returns the filler's
    path."""
    pad = directory / "pad"
    chunk = b"\0" * (64 << 10 if leave else 4096)

    def room_left():
        st = os.statvfs(directory)
        return st.f_bfree * st.f_frsize > leave

    fd = os.open(pad, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while not leave or room_left():
            os.write(fd, chunk)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return pad
