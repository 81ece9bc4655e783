# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""The package: stubs and docstrings for everything public, the sample,
and pip install against a build tree."""
import ast
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


def pip_install(tmp_path, env):
    """What the README says: a venv that sees Debian's numpy and torch,
    then pip install ./python; no package index, nothing system-wide."""
    src = tmp_path / "python"
    shutil.copytree(os.path.join(os.environ["HMR_TEST_SOURCE_DIR"],
                                 "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info"))
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv",
                    "--system-site-packages", venv], check=True)
    env = dict(env, CFLAGS=os.environ.get("HMR_TEST_PYTHON_CFLAGS", ""))
    env.pop("PYTHONPATH", None)  # the installed package must stand alone
    subprocess.run([venv / "bin" / "pip", "install", "-q", "--no-index",
                    src], check=True, env=env, cwd=tmp_path)
    check = ("import hmr, torch; d = hmr.Domain(); "
             "m = d.register(torch.zeros(4)); "
             "print(hmr.__file__, hmr.__version__, m.iface, m.length); "
             "m.close(); d.close()")
    out = subprocess.run([venv / "bin" / "python", "-c", check], check=True,
                         capture_output=True, text=True, env=env,
                         cwd=tmp_path).stdout.split()
    assert out[0].startswith(str(venv)) and out[1:] == [
        hmr.__version__, "system", "16"]


def test_pip_installs_the_package_against_the_build_tree(tmp_path):
    env = dict(os.environ, HMR_BUILD_DIR=os.environ["HMR_TEST_BUILD_DIR"])
    env.pop("LD_LIBRARY_PATH")  # found through the extension's rpath
    pip_install(tmp_path, env)


def test_pip_installs_the_package_against_an_installed_libhmr(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", os.environ["HMR_TEST_BUILD_DIR"],
                    "--prefix", prefix], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "HMR_BUILD_DIR"}
    env["PKG_CONFIG_PATH"] = str(prefix / "lib" / "pkgconfig")
    env["LD_LIBRARY_PATH"] = str(prefix / "lib")  # as ldconfig would
    pip_install(tmp_path, env)


def test_readme_python_example_runs():
    with open(os.path.join(os.environ["HMR_TEST_SOURCE_DIR"],
                           "README.md")) as f:
        readme = f.read()
    code = re.search(r"```python\n(import hmr.*?)```", readme, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})  # pylint: disable=exec-used
