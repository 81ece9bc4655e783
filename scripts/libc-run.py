#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""libc-run.py: run a build's CTest cases under another C library.

    scripts/libc-run.py BUILD_DIR LIBC_DIR LABEL_REGEX [EXCLUDE_REGEX]

LIBC_DIR holds that libc's ld-linux-x86-64.so.2 and libc.so.6.  Each case
that `ctest -L LABEL_REGEX` would run (minus names matching EXCLUDE_REGEX)
runs as CTest would (its command, environment and working directory)
but through that loader, with LIBC_DIR first on the library path:
glibc is backward compatible, so our programs built on Debian 12 run on
a newer libc unchanged.  Every other library comes from this machine.
Only the test process itself runs on that libc: a program it executes
(python3, a shell) gets this machine's own.

A case passes with exit status 0; a skip (77) counts as a failure, as
in scripts/test.sh: whatever runs under Debian's libc runs here too.
Exit status 0 when every case passed.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def cases(build, label, exclude):
    cmd = ["ctest", "--show-only=json-v1", "-L", label]
    if exclude:
        cmd += ["-E", exclude]
    out = subprocess.run(cmd, cwd=build, check=True, capture_output=True,
                         text=True).stdout
    for t in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        # A case whose program was not built has no command: it fails.
        yield t["name"], t.get("command", ["/nonexistent"]), props


def run(libc, name, command, props):
    loader = os.path.join(libc, "ld-linux-x86-64.so.2")
    env = dict(os.environ)
    for kv in props.get("ENVIRONMENT", []):
        k, _, v = kv.partition("=")
        env[k] = v
    path = [libc, "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"]
    if env.get("LD_LIBRARY_PATH"):
        path.insert(1, env["LD_LIBRARY_PATH"])
    argv = [loader, "--library-path", ":".join(path)] + command
    try:
        p = subprocess.run(argv, cwd=props.get("WORKING_DIRECTORY"),
                           env=env, capture_output=True, text=True,
                           timeout=float(props.get("TIMEOUT", 60)))
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, out = "timeout", ""
    return name, rc, out


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    build, libc, label = sys.argv[1:4]
    exclude = sys.argv[4] if len(sys.argv) == 5 else ""
    todo = list(cases(build, label, exclude))
    if not todo:
        sys.exit("libc-run: no case has a label matching " + label)
    failed = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name, rc, out in pool.map(lambda c: run(libc, *c), todo):
            if rc == 0:
                continue
            failed.append(name)
            print("FAILED (%s): %s\n%s" % (rc, name, out[-3000:]))
    print("libc-run: %s: %d of %d passed" %
          (libc, len(todo) - len(failed), len(todo)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
