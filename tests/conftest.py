"""Shared pytest fixtures: where the built binaries live, and a fresh store."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD_DIR = pathlib.Path(os.environ.get("AREEV_BUILD_DIR", ROOT / "build")).resolve()


def areev_path() -> pathlib.Path:
    return BUILD_DIR / "cli" / "areev"


@pytest.fixture(scope="session")
def areev_bin():
    path = areev_path()
    if not path.exists():
        pytest.fail(f"areev binary not built at {path}; run scripts/build.sh")
    return str(path)


@pytest.fixture
def db(tmp_path):
    """Path of a fresh (not yet created) store file."""
    return str(tmp_path / "agent.db")


@pytest.fixture
def run_areev(areev_bin):
    """Runs `areev ARGS...`, returning the CompletedProcess (text mode)."""

    def run(*args, input=None, env=None, check=False, timeout=60, cwd=None):
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        return subprocess.run([areev_bin, *args], input=input, capture_output=True,
                              text=True, env=full_env, check=check, timeout=timeout, cwd=cwd)

    return run
