# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""The package: stubs and docstrings for everything public, the sample,
and pip install against a build tree."""
import ast
import json
import os
import re
import shutil
import subprocess
import sys

import hmr

HELPERS = {"Registrable", "Iface"}  # names only the stubs define


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def own(cls):
    """What a class adds to its base (tuple, Exception): its public API."""
    base = public(cls.__mro__[1]) | {"n_fields", "n_sequence_fields",
                                     "n_unnamed_fields"}
    return public(cls) - base


def stub_tree():
    path = os.path.join(os.path.dirname(hmr.__file__), "__init__.pyi")
    with open(path) as f:
        return ast.parse(f.read())


def stub_names(body):
    names = set()
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets)
    return {n for n in names if not n.startswith("_")} | (
        {"__version__"} & names)


def test_stubs_declare_every_public_name():
    tree = stub_tree()
    assert stub_names(tree.body) - HELPERS - {"__version__"} == public(hmr)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for name in ("Domain", "MR", "MemInfo"):
        assert stub_names(classes[name].body) == own(getattr(hmr, name))


def test_everything_public_has_a_docstring():
    missing = []
    for name in public(hmr):
        obj = getattr(hmr, name)
        if isinstance(obj, int):
            continue
        if not obj.__doc__:
            missing.append(name)
        if isinstance(obj, type):
            for member in own(obj):
                attr = getattr(obj, member)
                if callable(attr) or hasattr(attr, "__get__"):
                    if not attr.__doc__:
                        missing.append(f"{name}.{member}")
    assert not missing
    assert hmr.__doc__ and "DLPack" in hmr.__doc__


def test_sample_registers_a_tensor_and_an_array():
    sample = os.path.join(os.environ["HMR_TEST_SOURCE_DIR"], "samples",
                          "python", "register_tensor.py")
    out = subprocess.run([sys.executable, sample], check=True,
                         capture_output=True, text=True).stdout
    pattern = (r"torch tensor: key 0x[0-9a-f]+ memory system device 0 "
               r"\[0x[0-9a-f]+, \+262144\) via DLPack\n"
               r"numpy array: key 0x[0-9a-f]+ memory system device 0 "
               r"\[0x[0-9a-f]+, \+65536\) via DLPack\n")
    assert re.fullmatch(pattern, out), out


# Run by the venv's interpreter: a tensor and a buffer registered, hmr.info,
# and the libhmr the process actually mapped.
CHECK = """
import json, hmr, torch
with hmr.Domain() as d:
    mrs = [d.register(torch.zeros(4)), d.register(bytearray(4096))]
    done = [(m.iface, m.length) for m in mrs]
    for m in mrs:
        m.close()
info = hmr.info()
print(json.dumps({"file": hmr.__file__, "version": hmr.__version__,
                  "mrs": done, "info": [info["library_version"],
                                        info["header_version"],
                                        info["domains"]["software"]],
                  "libhmr": sorted({l.split()[-1] for l in
                                    open("/proc/self/maps")
                                    if "/libhmr.so" in l})}))
"""


def pip_install(tmp_path, env, src):
    """What the README says: a venv that sees Debian's numpy and torch,
    then pip install SRC (the package's folder).  pip as on a fresh
    machine: no configuration, and --no-index, so anything pip would have
    to download (a build backend, say) fails the test.  Returns the
    venv and pip's output."""
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv",
                    "--system-site-packages", venv], check=True)
    env = {k: v for k, v in env.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull,
               CFLAGS=os.environ.get("HMR_TEST_PYTHON_CFLAGS", ""))
    env.pop("PYTHONPATH", None)  # the installed package must stand alone
    pip = subprocess.run([venv / "bin" / "pip", "install", "-v",
                          "--no-index", src], env=env, cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    assert pip.returncode == 0, pip.stdout[-8000:]
    return venv, pip.stdout


def run_installed(venv, env, cwd):
    """CHECK in the venv; what it found, after checking what must hold
    wherever libhmr came from."""
    run = subprocess.run([venv / "bin" / "python", "-c", CHECK],
                         capture_output=True, text=True, cwd=cwd,
                         env={k: v for k, v in env.items()
                              if k != "PYTHONPATH"})
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    version = [int(v) for v in hmr.__version__.split(".")]
    assert found["file"].startswith(str(venv))
    assert found["version"] == hmr.__version__
    assert found["mrs"] == [["system", 16], ["system", 4096]]
    assert found["info"][:2] == [version, version]
    assert found["info"][2]["available"] is True
    assert len(found["libhmr"]) == 1, found["libhmr"]
    return found["libhmr"][0]


def copy_package(tmp_path):
    src = tmp_path / "python"
    shutil.copytree(os.path.join(os.environ["HMR_TEST_SOURCE_DIR"],
                                 "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info"))
    return src


def test_pip_installs_the_package_against_the_build_tree(tmp_path):
    build = os.environ["HMR_TEST_BUILD_DIR"]
    env = dict(os.environ, HMR_BUILD_DIR=build)
    env.pop("LD_LIBRARY_PATH")  # found through the extension's rpath
    venv, out = pip_install(tmp_path, env, copy_package(tmp_path))
    assert ("hmr: using the libhmr of the CMake build tree "
            f"{os.path.abspath(build)} (HMR_BUILD_DIR)") in out
    lib = run_installed(venv, env, tmp_path)
    assert os.path.dirname(lib) == os.path.realpath(build)


def test_pip_installs_the_package_against_an_installed_libhmr(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", os.environ["HMR_TEST_BUILD_DIR"],
                    "--prefix", prefix], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "HMR_BUILD_DIR"}
    env["PKG_CONFIG_PATH"] = str(prefix / "lib" / "pkgconfig")
    env["LD_LIBRARY_PATH"] = str(prefix / "lib")  # as ldconfig would
    venv, out = pip_install(tmp_path, env, copy_package(tmp_path))
    assert (f"hmr: using the installed libhmr {hmr.__version__} in "
            f"{prefix / 'lib'} (pkg-config hmr)") in out
    lib = run_installed(venv, env, tmp_path)
    assert os.path.dirname(lib) == os.path.realpath(prefix / "lib")


def test_pip_builds_and_ships_libhmr_when_none_is_installed(tmp_path):
    """The whole source tree, no libhmr anywhere pkg-config looks: the
    package builds its own and carries it.  The tree is then deleted and
    the package used from elsewhere, libhmr found beside the extension
    ($ORIGIN), not through LD_LIBRARY_PATH."""
    tree = tmp_path / "src"
    shutil.copytree(os.environ["HMR_TEST_SOURCE_DIR"], tree,
                    ignore=shutil.ignore_patterns("build*", ".git",
                                                  "__pycache__",
                                                  "*.egg-info"))
    (tmp_path / "no-pc").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in (
        "HMR_BUILD_DIR", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH")}
    env["PKG_CONFIG_LIBDIR"] = str(tmp_path / "no-pc")  # not even /usr's
    venv, out = pip_install(tmp_path, env, tree / "python")
    assert f"hmr: using a libhmr built from {tree} into " in out, out
    shutil.rmtree(tree)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    lib = run_installed(venv, env, elsewhere)
    package = os.path.dirname(lib)
    assert os.path.basename(lib) == "libhmr.so.0"
    assert package == os.path.join(
        venv, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}",
        "site-packages", "hmr")
    ext = [f for f in os.listdir(package) if f.startswith("_hmr.")]
    assert len(ext) == 1, ext
    ext = os.path.join(package, ext[0])
    dyn = subprocess.run(["readelf", "-d", ext], check=True,
                         capture_output=True, text=True).stdout
    assert re.search(r"\(RUNPATH\) +Library runpath: \[\$ORIGIN\]", dyn), dyn
    assert "Shared library: [libhmr.so.0]" in dyn, dyn
    ldd = subprocess.run(["ldd", ext], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert f"libhmr.so.0 => {lib} " in ldd, ldd


def test_readme_python_example_runs():
    with open(os.path.join(os.environ["HMR_TEST_SOURCE_DIR"],
                           "README.md")) as f:
        readme = f.read()
    code = re.search(r"```python\n(import hmr.*?)```", readme, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})  # pylint: disable=exec-used
