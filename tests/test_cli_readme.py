"""README.md's "Use" block, run line by line as a reader would type it, in order,
on a fresh agent.db: every line must succeed."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, areev_path

MOUNT_WORDS = ("areev mount", "areev umount")


def use_block():
    """The lines of the first ``` block under "## Use" in README.md."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Use\n", 1)[1]
    block = re.search(r"^```\n(.*?)^```$", section, re.S | re.M)
    assert block, "README.md's Use section has no ``` block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def can_mount():
    return os.path.exists("/dev/fuse") and shutil.which("fusermount3") is not None


def test_the_readme_use_block_runs_in_order_on_a_fresh_store(areev_bin, tmp_path):
    lines = use_block()
    assert any(line.startswith("areev diff") for line in lines)
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), PATH=f"{areev_path().parent}:{os.environ['PATH']}")
    env.pop("AREEV_DB", None)
    mountpoint = home / "agent-memory"
    try:
        for line in lines:
            if line.startswith(MOUNT_WORDS) and not can_mount():
                continue  # the rest still runs; the mount's own tests skip alike
            proc = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, (line, proc.stdout, proc.stderr)
            if line.startswith("areev diff"):
                assert proc.stdout.startswith("--- /memories/prefs.md\tv1 "), proc.stdout
                assert "\n+++ /memories/prefs.md\tv3 " in proc.stdout, proc.stdout
            if line.startswith("areev restore"):
                assert proc.stdout == "restored /memories/old.md\n"
    finally:
        if os.path.ismount(mountpoint):
            subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)], capture_output=True)
    assert (tmp_path / "agent.db").exists()

