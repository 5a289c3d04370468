"""A dependency-free PEP 517 build backend for the areev Python package.

pip's isolated builds cannot download setuptools here, so this backend needs
nothing but the standard library, CMake and a C++20 compiler. It configures
bindings/python/CMakeLists.txt (which pulls grainstore and memtool from the
repository two levels up, or from `_repo/` inside an sdist), builds the abi3
extension and zips it with the pure-Python files into a wheel.

Settings (``pip install --config-settings KEY=VALUE`` or environment):
  build-dir / AREEV_PY_BUILD_DIR   CMake build directory (default:
                                   bindings/python/build/abi3, reused between builds)
  build-type / AREEV_PY_BUILD_TYPE CMake build type (default: Release)
"""

import base64
import hashlib
import io
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile

NAME = "areev"
VERSION = "0.1.0"
SUMMARY = "Anthropic memory-tool (memory_20250818) backend on a versioned SQLite store"
PY_TAG = "cp39"  # the Limited API floor (Py_LIMITED_API=0x03090000)

HERE = pathlib.Path(__file__).resolve().parent
PY_FILES = ("__init__.py", "_areev.pyi", "py.typed")
# What an sdist must carry from the repository to build on its own.
REPO_PARTS = ("cmake", "grainstore", "memtool", "bindings/cmake", "bindings/core",
              "bindings/python/CMakeLists.txt", "bindings/python/src", "bindings/python/areev")


def _repo_root():
    for cand in (HERE.parent.parent, HERE / "_repo"):
        if (cand / "grainstore" / "CMakeLists.txt").is_file() and \
           (cand / "bindings" / "cmake" / "AreevBindings.cmake").is_file():
            return cand
    raise RuntimeError(f"areev sources not found next to {HERE} (expected ../../grainstore "
                       "or _repo/); build from a repository checkout or an areev sdist")


def _setting(config_settings, key, env, default):
    if config_settings and config_settings.get(key):
        return config_settings[key]
    return os.environ.get(env) or default


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.9\nLicense: Proprietary\n")


def _wheel_tag():
    if sys.implementation.name != "cpython":
        raise RuntimeError("areev's extension uses the CPython stable ABI; CPython >= 3.9 needed")
    if sys.version_info < (3, 9):
        raise RuntimeError("areev needs Python >= 3.9")
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{PY_TAG}-abi3-{plat}"


def _run(cmd):
    print("areev_build:", " ".join(str(c) for c in cmd), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in cmd], check=True, stdout=sys.stderr)


def _build_extension(config_settings):
    """Runs CMake; returns the path of the built _areev.abi3.so."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("cmake not found on PATH (apt-get install cmake)")
    repo = _repo_root()
    build_dir = pathlib.Path(_setting(config_settings, "build-dir", "AREEV_PY_BUILD_DIR",
                                      HERE / "build" / "abi3")).resolve()
    build_type = _setting(config_settings, "build-type", "AREEV_PY_BUILD_TYPE", "Release")
    configure = [cmake, "-S", repo / "bindings" / "python", "-B", build_dir,
                 f"-DCMAKE_BUILD_TYPE={build_type}", f"-DAREEV_SOURCE_DIR={repo}",
                 "-DAREEV_WERROR=OFF"]
    if not (build_dir / "CMakeCache.txt").exists():
        # Any CPython >= 3.9 provides the headers an abi3 module needs; the
        # first one to configure the directory is kept.
        configure.append(f"-DPython3_EXECUTABLE={sys.executable}")
    _run(configure)
    jobs = str(max(1, min(os.cpu_count() or 1, 8)))
    _run([cmake, "--build", build_dir, "--target", "areev_python_ext", "-j", jobs])
    so = build_dir / "pkg" / "areev" / "_areev.abi3.so"
    if not so.is_file():
        raise RuntimeError(f"build finished but {so} is missing")
    return so


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _dist_info_files(tag):
    dist_info = f"{NAME}-{VERSION}.dist-info"
    wheel = (f"Wheel-Version: 1.0\nGenerator: areev_build {VERSION}\nRoot-Is-Purelib: false\n"
             f"Tag: {tag}\n")
    return dist_info, {f"{dist_info}/METADATA": _metadata().encode(),
                       f"{dist_info}/WHEEL": wheel.encode(),
                       f"{dist_info}/top_level.txt": f"{NAME}\n".encode()}


def _zip_write(zf, arcname, data, mode=0o644):
    info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


# ---- PEP 517 hooks --------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info, files = _dist_info_files(_wheel_tag())
    for arcname, data in files.items():
        path = pathlib.Path(metadata_directory) / arcname
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tag = _wheel_tag()
    so = _build_extension(config_settings)
    entries = {f"{NAME}/{name}": (HERE / NAME / name).read_bytes() for name in PY_FILES}
    entries[f"{NAME}/_areev.abi3.so"] = so.read_bytes()
    dist_info, meta = _dist_info_files(tag)
    entries.update(meta)
    filename = f"{NAME}-{VERSION}-{tag}.whl"
    out = pathlib.Path(wheel_directory) / filename
    record = []
    with zipfile.ZipFile(out, "w") as zf:
        for arcname, data in entries.items():
            mode = 0o755 if arcname.endswith(".so") else 0o644
            _zip_write(zf, arcname, data, mode)
            record.append(_record_line(arcname, data))
        record.append(f"{dist_info}/RECORD,,")
        _zip_write(zf, f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode())
    return filename


def build_sdist(sdist_directory, config_settings=None):
    repo = _repo_root()
    base = f"{NAME}-{VERSION}"
    filename = f"{base}.tar.gz"
    out = pathlib.Path(sdist_directory) / filename

    def skip(tarinfo):
        name = pathlib.PurePosixPath(tarinfo.name)
        if "__pycache__" in name.parts or name.name.endswith(".pyc"):
            return None
        tarinfo.uid = tarinfo.gid = 0
        tarinfo.uname = tarinfo.gname = ""
        return tarinfo

    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for name in ("pyproject.toml", "areev_build.py", "README.md"):
            if (HERE / name).exists():
                tf.add(HERE / name, f"{base}/{name}", filter=skip)
        tf.add(HERE / NAME, f"{base}/{NAME}", filter=skip)
        for part in REPO_PARTS:
            if (repo / part).exists():
                tf.add(repo / part, f"{base}/_repo/{part}", filter=skip)
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        info.mtime = int(time.time())
        tf.addfile(info, io.BytesIO(pkg_info))
    return filename
