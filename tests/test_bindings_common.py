"""Shared helpers for the binding tests (test_bindings_*.py); holds no tests.

The bindings are built with CMake from bindings/CMakeLists.txt into
$AREEV_BINDINGS_BUILD_DIR (default: <repo>/build-bindings), incrementally, once
per test session. When the main (non-ASan) build already contains them
($AREEV_BUILD_DIR/bindings/...), that build is used instead.
"""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD_DIR = pathlib.Path(os.environ.get("AREEV_BUILD_DIR", ROOT / "build")).resolve()
BINDINGS_BUILD_DIR = pathlib.Path(
    os.environ.get("AREEV_BINDINGS_BUILD_DIR", ROOT / "build-bindings")).resolve()
VECTOR_FILES = [ROOT / "tests" / "vectors" / "memory-tool-vectors.json",
                ROOT / "tests" / "vectors" / "extra-vectors.json"]

# Packaging (wheel, sdist, npm install) does not depend on the preset the main
# build uses; the ASan pass of scripts/test.sh skips it to save a rebuild.
ASAN_PRESET = os.environ.get("AREEV_PRESET", "release") == "asan"
PACKAGING_SKIP = ASAN_PRESET

_built = {}


def _artifacts(build_dir):
    return (build_dir / "python" / "pkg",
            build_dir / "node" / "addon" / "areev.node")


def build_bindings():
    """Builds (or finds) both bindings; returns (python_pkg_dir, node_addon_path)."""
    if "paths" in _built:
        return _built["paths"]
    in_main = BUILD_DIR / "bindings"
    # A sanitizer build's extension cannot load into an uninstrumented Python.
    if not ASAN_PRESET and (_artifacts(in_main)[0] / "areev" / "_areev.abi3.so").exists():
        build_dir = in_main
        cmd = ["cmake", "--build", str(BUILD_DIR), "--target", "areev_python", "areev_node_addon"]
        build_root = BUILD_DIR
    else:
        build_dir = BINDINGS_BUILD_DIR
        if not (build_dir / "CMakeCache.txt").exists():
            subprocess.run(["cmake", "-S", str(ROOT / "bindings"), "-B", str(build_dir),
                            "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                            f"-DPython3_EXECUTABLE={sys.executable}"],
                           check=True, capture_output=True, text=True)
        cmd = ["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 2)]
        build_root = build_dir
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building the bindings in {build_root} failed:\n"
                           f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    paths = _artifacts(build_dir)
    for p in (paths[0] / "areev" / "_areev.abi3.so", paths[1]):
        if not p.exists():
            raise RuntimeError(f"build finished but {p} is missing")
    _built["paths"] = paths
    return paths


def import_areev():
    """Imports the freshly built `areev` package (never an installed one)."""
    pkg_dir, _ = build_bindings()
    if "areev" in sys.modules:
        mod = sys.modules["areev"]
    else:
        sys.path.insert(0, str(pkg_dir))
        import areev as mod  # noqa: E402
    assert pathlib.Path(mod.__file__).resolve().is_relative_to(pkg_dir.resolve()), mod.__file__
    return mod


def python_step(m, step_input):
    """(content, is_error) of one memory-tool command through the Python
    binding `m`, exactly as the product docs' tool loop builds them (a tool
    error is a ValueError carrying the content after "Error: ")."""
    try:
        return m.memory_tool(json.dumps(step_input)), False
    except ValueError as e:
        return f"Error: {e}", True


def load_cases():
    """Every conformance case of the vector files present, as (file stem, case)."""
    cases = []
    for f in VECTOR_FILES:
        if f.exists():
            cases.extend((f.stem, c) for c in json.loads(f.read_text(encoding="utf-8")))
    return cases


def areev_cli():
    """Path of the areev CLI binary, or None when it has not been built."""
    p = BUILD_DIR / "cli" / "areev"
    return str(p) if p.exists() else None


def cli_batch(areev_bin, db, ns, inputs, timeout=120):
    """Runs `areev memtool --batch`; returns [(content, is_error)] per input dict."""
    stdin = "".join(json.dumps(i) + "\n" for i in inputs)
    proc = subprocess.run([areev_bin, "memtool", "--batch", "--db", db, "--ns", ns],
                          input=stdin, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(inputs), proc.stdout
    return [(r["content"], bool(r["is_error"])) for r in map(json.loads, lines)]


def node_env():
    """Environment for node processes that load the freshly built addon."""
    _, addon = build_bindings()
    env = dict(os.environ)
    env["AREEV_NODE_ADDON"] = str(addon)
    cli = areev_cli()
    if cli:
        env["AREEV_BIN"] = cli
    return env


def run_node_script(script, *args, timeout=120):
    """Runs `script` (`node -e`) against the freshly built addon, with the
    package's directory as process.argv[1] and `args` after it; asserts that
    it exited 0 and returns its stdout."""
    proc = subprocess.run(["node", "-e", script, str(ROOT / "bindings" / "node"),
                           *map(str, args)], env=node_env(), capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
