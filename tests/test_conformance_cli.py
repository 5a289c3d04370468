"""Every memory-tool vector, run through the `areev memtool` binary.

Each case runs on a fresh store three ways: one process per step with the JSON
as an argument, one process per step with the JSON on stdin (`-`), and the
whole case as one `--batch` process. stdout must equal the vector's output byte
for byte, and the exit code must be 0/1 as is_error says.
"""
import json
import pathlib
import subprocess

import pytest

from batch_util import run_batch

VECTOR_DIR = pathlib.Path(__file__).resolve().parent / "vectors"
# Linux caps one argv string at 128 KiB; larger commands go through stdin.
MAX_ARG_BYTES = 100_000


def load_cases(name):
    path = VECTOR_DIR / name
    if not path.exists():
        return []
    return [pytest.param(name, case, id=f"{path.stem}:{case['name']}")
            for case in json.loads(path.read_text(encoding="utf-8"))]


CASES = load_cases("memory-tool-vectors.json")
EXTRA = load_cases("extra-vectors.json")


def command_bytes(step):
    """The command exactly as a client would send it (UTF-8 JSON text)."""
    value = step["input"]
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


def expected_bytes(step):
    return step["output"].encode("utf-8", "surrogatepass")


def run(areev_bin, args, stdin=None):
    return subprocess.run([areev_bin, *args], input=stdin, capture_output=True, timeout=60)


def check_step(case, index, step, proc):
    where = f"{case['name']} step {index}: {step['input']!r}"
    assert proc.stdout == expected_bytes(step), where
    assert proc.returncode == (1 if step["is_error"] else 0), f"{where}: {proc.stderr!r}"


def run_case_per_process(areev_bin, db, case, via_stdin):
    for index, step in enumerate(case["steps"]):
        command = command_bytes(step)
        if via_stdin or len(command) > MAX_ARG_BYTES or b"\0" in command:
            proc = run(areev_bin, ["memtool", "-", "--db", db], stdin=command)
        else:
            proc = run(areev_bin, ["memtool", command, "--db", db])
        check_step(case, index, step, proc)


def run_case_batch(areev_bin, db, case):
    lines = [command_bytes(step) for step in case["steps"]]
    if any(b"\n" in line or not line.strip() for line in lines):
        pytest.skip("a raw command spans lines or is blank; not expressible in --batch")
    results = run_batch(areev_bin, db, lines)
    for index, (step, result) in enumerate(zip(case["steps"], results)):
        assert result["content"].encode("utf-8", "surrogatepass") == expected_bytes(step), \
            f"{case['name']} step {index}"
        assert result["is_error"] is step["is_error"], f"{case['name']} step {index}"


@pytest.mark.parametrize("name,case", CASES)
def test_vector_argv(areev_bin, tmp_path, name, case):
    run_case_per_process(areev_bin, str(tmp_path / "agent.db"), case, via_stdin=False)


@pytest.mark.parametrize("name,case", CASES)
def test_vector_stdin(areev_bin, tmp_path, name, case):
    run_case_per_process(areev_bin, str(tmp_path / "agent.db"), case, via_stdin=True)


@pytest.mark.parametrize("name,case", CASES)
def test_vector_batch(areev_bin, tmp_path, name, case):
    run_case_batch(areev_bin, str(tmp_path / "agent.db"), case)


@pytest.mark.skipif(not EXTRA, reason="tests/vectors/extra-vectors.json not present")
@pytest.mark.parametrize("name,case", EXTRA)
def test_extra_vector_argv(areev_bin, tmp_path, name, case):
    run_case_per_process(areev_bin, str(tmp_path / "agent.db"), case, via_stdin=False)


@pytest.mark.skipif(not EXTRA, reason="tests/vectors/extra-vectors.json not present")
@pytest.mark.parametrize("name,case", EXTRA)
def test_extra_vector_batch(areev_bin, tmp_path, name, case):
    run_case_batch(areev_bin, str(tmp_path / "agent.db"), case)


def test_vector_files_are_not_empty():
    # Guards against a vector file silently parsing to nothing.
    assert len(CASES) >= 70
