# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""setup.py: hmr's Python package, a C extension over libhmr.

    pip install ./python

uses, in this order (and prints which at build time):
1. a CMake build tree named by HMR_BUILD_DIR (or python3 setup.py build_ext
   --hmr-build-dir DIR): the extension finds libhmr.so in that directory at
   run time (an rpath);
2. an installed libhmr, found with pkg-config hmr;
3. otherwise libhmr built from this source tree (the top-level
   CMakeLists.txt, tests off) and shipped inside the package, next to the
   extension, whose rpath is $ORIGIN: the installed package no longer
   needs the tree.  libhmr's backends are built into it; what it dlopens
   at run time is the vendors' runtimes (libcuda, ...), found as usual.

No pyproject.toml, on purpose: with one, pip builds in an isolated
environment and downloads setuptools from PyPI first; without one, pip
(23.0.1 on Debian 12) builds with the setuptools it runs beside, offline.
"""
import os
import re
import shlex
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)  # hmr's source tree, when the package is in it
SOURCES = ["init.c", "module.c", "domain.c", "register.c", "mr.c", "view.c",
           "export.c", "dlpack.c", "bench.c"]


def source_dir(build):
    """The hmr source tree of a build directory (for include/)."""
    if os.path.exists(os.path.join(TOP, "include", "hmr", "hmr.h")):
        return TOP
    with open(os.path.join(build, "CMakeCache.txt")) as cache:
        for line in cache:
            if line.startswith("hmr_SOURCE_DIR:"):
                return line.split("=", 1)[1].strip()
    raise SystemExit(f"{build}: not an hmr build directory")


def in_tree(build, rpath=None):
    """Flags for the libhmr of a CMake build tree, found at run time through
    rpath (the build tree itself unless told)."""
    build = os.path.abspath(build)
    if not os.path.exists(os.path.join(build, "include", "hmr",
                                       "version.h")):
        raise SystemExit(f"HMR_BUILD_DIR={build}: no include/hmr/version.h;"
                         " configure and build hmr there first")
    return {"include_dirs": [os.path.join(source_dir(build), "include"),
                             os.path.join(build, "include")],
            "library_dirs": [build], "runtime_library_dirs": [rpath or build],
            "libraries": ["hmr"]}


def pkg_config(*args):
    return subprocess.run(["pkg-config", *args, "hmr"], check=True,
                          capture_output=True, text=True).stdout.strip()


def installed():
    """(flags, where) for the libhmr pkg-config hmr finds, or (None, why
    not)."""
    try:
        out = pkg_config("--cflags", "--libs")
        where = (f"{pkg_config('--modversion')} in "
                 f"{os.path.normpath(pkg_config('--variable=libdir'))}")
    except (OSError, subprocess.CalledProcessError) as e:
        why = (getattr(e, "stderr", None) or str(e)).strip()
        return None, why.splitlines()[-1] if why else "failed"
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
    return flags, where


def is_source_tree():
    try:
        with open(os.path.join(TOP, "CMakeLists.txt")) as f:
            return re.search(r"^project\(hmr ", f.read(), re.M) is not None
    except OSError:
        return False


def build_libhmr(build):
    """libhmr.so built from the source tree into build, configured as a
    plain build is but without the tests; only the library is built.
    Returns the file's name as the extension will ask for it (its soname)."""
    jobs = (os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or
            str(len(os.sched_getaffinity(0))))
    try:
        subprocess.run(["cmake", "-S", TOP, "-B", build,
                        "-DHMR_BUILD_TESTS=OFF"], check=True)
        subprocess.run(["cmake", "--build", build, "--target", "hmr",
                        "--parallel", jobs], check=True)
    except OSError as e:
        raise SystemExit(f"cmake: {e}; install cmake (Debian: cmake, "
                         "build-essential, liburcu-dev), or libhmr") from e
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"building libhmr failed: {e}") from e
    # libhmr.so -> libhmr.so.N -> libhmr.so.N.M.P; the middle name is the
    # soname, the one the extension's DT_NEEDED names.
    return os.readlink(os.path.join(build, "libhmr.so"))


def version():
    """hmr's version: the build tree's, the source tree's, or pkg-config's."""
    build = os.environ.get("HMR_BUILD_DIR")
    candidates = [(os.path.join(build, "include", "hmr", "version.h"),
                   r'HMR_VERSION_STRING "([0-9.]+)"')] if build else []
    candidates.append((os.path.join(TOP, "CMakeLists.txt"),
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
    """build_ext with --hmr-build-dir (the same as HMR_BUILD_DIR), and a
    libhmr of its own when there is no other."""
    user_options = build_ext.user_options + [
        ("hmr-build-dir=", None, "an hmr CMake build directory")]

    def initialize_options(self):
        super().initialize_options()
        self.hmr_build_dir = None
        self.hmr_bundle = None  # where libhmr is built, when shipped
        self.hmr_soname = None  # its file name, once built
        self.hmr_which = None  # which libhmr, said when building

    def add_flags(self, flags):
        for ext in self.extensions:
            for key, value in flags.items():
                setattr(ext, key, getattr(ext, key) + value)

    def finalize_options(self):
        super().finalize_options()
        build = self.hmr_build_dir or os.environ.get("HMR_BUILD_DIR")
        if build:
            self.hmr_which = ("the libhmr of the CMake build tree "
                              f"{os.path.abspath(build)} (HMR_BUILD_DIR)")
            self.add_flags(in_tree(build))
            return
        flags, where = installed()
        if flags:
            self.hmr_which = f"the installed libhmr {where} (pkg-config hmr)"
            self.add_flags(flags)
            return
        if not is_source_tree():
            raise SystemExit(f"libhmr not found (pkg-config hmr: {where}) "
                             f"and no hmr source tree at {TOP} to build it "
                             "from; install hmr, or set HMR_BUILD_DIR to a "
                             "CMake build directory")
        self.hmr_bundle = os.path.join(os.path.abspath(self.build_temp),
                                       "libhmr")
        self.hmr_which = (f"a libhmr built from {TOP} into {self.hmr_bundle}, "
                          "shipped in the package (no installed libhmr: "
                          f"pkg-config hmr: {where})")

    def bundled_path(self):
        return os.path.join(os.path.dirname(self.get_ext_fullpath("hmr._hmr")),
                            self.hmr_soname)

    def run(self):
        # Said here, not when options are finalized: egg_info does that too.
        print(f"hmr: using {self.hmr_which}")
        if self.hmr_bundle:
            self.hmr_soname = build_libhmr(self.hmr_bundle)
            # The extension finds it beside itself, wherever it is installed.
            self.add_flags(in_tree(self.hmr_bundle, rpath="$ORIGIN"))
        super().run()
        if self.hmr_bundle:
            shutil.copy(os.path.join(self.hmr_bundle, self.hmr_soname),
                        self.bundled_path())

    def get_outputs(self):
        outputs = super().get_outputs()
        if self.hmr_soname:
            outputs.append(self.bundled_path())
        return outputs


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
