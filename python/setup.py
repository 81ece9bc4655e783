# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""setup.py: hmr's Python package, a C extension over libhmr.

Against an installed libhmr (found with pkg-config hmr):
    pip install ./python
Against a CMake build tree, without installing libhmr:
    HMR_BUILD_DIR=build pip install ./python
(or python3 setup.py build_ext --hmr-build-dir build).  The extension then
finds libhmr.so in that directory at run time (an rpath).
"""
import os
import re
import shlex
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["init.c", "module.c", "domain.c", "register.c", "mr.c", "view.c",
           "export.c", "dlpack.c", "bench.c"]


def source_dir(build):
    """The hmr source tree of a build directory (for include/)."""
    up = os.path.dirname(HERE)
    if os.path.exists(os.path.join(up, "include", "hmr", "hmr.h")):
        return up
    with open(os.path.join(build, "CMakeCache.txt")) as cache:
        for line in cache:
            if line.startswith("hmr_SOURCE_DIR:"):
                return line.split("=", 1)[1].strip()
    raise SystemExit(f"{build}: not an hmr build directory")


def in_tree(build):
    build = os.path.abspath(build)
    if not os.path.exists(os.path.join(build, "include", "hmr",
                                       "version.h")):
        raise SystemExit(f"HMR_BUILD_DIR={build}: no include/hmr/version.h;"
                         " configure and build hmr there first")
    return {"include_dirs": [os.path.join(source_dir(build), "include"),
                             os.path.join(build, "include")],
            "library_dirs": [build], "runtime_library_dirs": [build],
            "libraries": ["hmr"]}


def installed():
    try:
        out = subprocess.run(["pkg-config", "--cflags", "--libs", "hmr"],
                             check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("libhmr not found (pkg-config hmr: "
                         f"{getattr(e, 'stderr', e)}); install hmr, or set "
                         "HMR_BUILD_DIR to a CMake build directory") from e
    flags = {"include_dirs": [], "library_dirs": [], "libraries": [],
             "extra_compile_args": []}
    for f in shlex.split(out):
        for prefix, key in (("-I", "include_dirs"), ("-L", "library_dirs"),
                            ("-l", "libraries")):
            if f.startswith(prefix):
                flags[key].append(f[2:])
                break
        else:
            flags["extra_compile_args"].append(f)
    return flags


def version():
    """hmr's version: the build tree's, the source tree's, or pkg-config's."""
    build = os.environ.get("HMR_BUILD_DIR")
    candidates = [(os.path.join(build, "include", "hmr", "version.h"),
                   r'HMR_VERSION_STRING "([0-9.]+)"')] if build else []
    candidates.append((os.path.join(os.path.dirname(HERE), "CMakeLists.txt"),
                       r"project\(hmr VERSION ([0-9.]+)"))
    for path, pattern in candidates:
        try:
            with open(path) as f:
                m = re.search(pattern, f.read())
        except OSError:
            continue
        if m:
            return m.group(1)
    try:
        return subprocess.run(["pkg-config", "--modversion", "hmr"],
                              check=True, capture_output=True,
                              text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "0"


class BuildExt(build_ext):
    """build_ext with --hmr-build-dir (the same as HMR_BUILD_DIR)."""
    user_options = build_ext.user_options + [
        ("hmr-build-dir=", None, "an hmr CMake build directory")]

    def initialize_options(self):
        super().initialize_options()
        self.hmr_build_dir = None

    def finalize_options(self):
        super().finalize_options()
        build = self.hmr_build_dir or os.environ.get("HMR_BUILD_DIR")
        flags = in_tree(build) if build else installed()
        for ext in self.extensions:
            for key, value in flags.items():
                setattr(ext, key, getattr(ext, key) + value)


setup(
    name="hmr",
    version=version(),
    description="Register any framework's tensor (DLPack, "
                "__cuda_array_interface__, buffers) for RDMA with hmr",
    license="BSD-2-Clause OR GPL-2.0-only",
    packages=["hmr"],
    package_data={"hmr": ["py.typed", "__init__.pyi"]},
    ext_modules=[Extension("hmr._hmr",
                           sources=[os.path.join("src", s) for s in SOURCES],
                           depends=[os.path.join("src", h) for h in
                                    ("hmrpy.h", "dlpack.h")])],
    cmdclass={"build_ext": BuildExt},
    python_requires=">=3.10",
    zip_safe=False,
)
