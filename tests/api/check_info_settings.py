#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# check_info_settings.py: hmr_info's settings table keeps its columns.
"""Run hmr_info and check its settings table.

Usage: check_info_settings.py HMR_INFO

Each line of the table is "  NAME  VALUE  (SOURCE)".  Every value must
start in one column and every source in one column, whatever the length
of a name (FI_MR_CUDA_CACHE_MONITOR_ENABLED) or of a value (a library's
path, set here through HMR_ROCR_LIBRARY, which hmr_info only prints).
Exits 0 when they line up, else 1 naming the lines that do not.
"""
import os
import re
import subprocess
import sys

HEADER = "settings (value, where it came from):"
LINE = re.compile(r"^  (\S+)( +)(\S.*?)( +)\((default|environment|api)\)$")
LONG_VALUE = "/nonexistent/a/library/path/longer/than/any/default/libx.so.1"


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    env = dict(os.environ, HMR_ROCR_LIBRARY=LONG_VALUE)
    out = subprocess.run([argv[1]], capture_output=True, text=True,
                         env=env, check=False).stdout.splitlines()
    if HEADER not in out:
        print("no settings table in:\n" + "\n".join(out))
        return 1
    rows = []
    for line in out[out.index(HEADER) + 1:]:
        if not line.startswith("  "):
            break
        m = LINE.match(line)
        if not m:
            print("not NAME VALUE (SOURCE): %r" % line)
            return 1
        rows.append((line, m.start(3), m.start(5) - 1, m.group(1)))
    names = {r[3] for r in rows}
    for name in ("FI_MR_CUDA_CACHE_MONITOR_ENABLED", "HMR_ROCR_LIBRARY",
                 "HMR_LOG_LEVEL"):
        if name not in names:
            print("the table lacks %s:\n%s" % (name,
                                               "\n".join(r[0] for r in rows)))
            return 1
    bad = 0
    for what, col in (("value", 1), ("source", 2)):
        want = rows[0][col]
        for row in rows:
            if row[col] != want:
                print("%s of %s at column %d, not %d: %r"
                      % (what, row[3], row[col], want, row[0]))
                bad = 1
    if bad:
        return 1
    print("%d settings: values at column %d, sources at column %d"
          % (len(rows), rows[0][1], rows[0][2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
