#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# check_coverage_stale.py: check_coverage.py fails on a stale coverage doc.
"""Run check_coverage.py on a stale copy of doc/fi_mr-coverage.md.

Usage: check_coverage_stale.py BUILD_DIR CTEST FLIP UNTAG

Two ways a row goes stale, made on copies: the row FLIP, tested, is marked
"not implemented" while its tests keep their tags (the Counts: line is
corrected, so that only the tags can tell), and the tag of the row UNTAG
is removed from a copy of tests/ while the document still says tested.
The checker must exit 1 and name both rows, and nothing else; the real
document and sources must pass.  Prints what the checker printed.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import check_coverage as cc  # noqa: E402


def run(build, ctest, doc, tests):
    out = subprocess.run([sys.executable, os.path.join(HERE,
                                                       "check_coverage.py"),
                          build, "--ctest", ctest, "--doc", doc,
                          "--tests", tests],
                         capture_output=True, text=True, check=False)
    return out.returncode, out.stdout + out.stderr


def flip(text, rid):
    """The document with row rid "not implemented" and counts to match."""
    lines, old = text.splitlines(keepends=True), None
    for i, line in enumerate(lines):
        if cc.ROW.match(line) and cc.split_row(line)[0] == rid:
            cells = cc.split_row(line)
            old = cells[2]
            cells[2] = "not implemented"
            lines[i] = "| " + " | ".join(cells) + " |\n"
    if old not in cc.WITH_TAGS:
        sys.exit("stale: row %s is %r, not tested or partial" % (rid, old))
    text = "".join(lines)
    counts = dict.fromkeys(cc.STATUSES, 0)
    for line in text.splitlines():
        if cc.ROW.match(line):
            counts[cc.split_row(line)[2].strip("*")] += 1
    want = "Counts: %d statements: %s." % (
        sum(counts.values()),
        ", ".join("%d %s" % (counts[s], s) for s in cc.STATUSES))
    return cc.COUNTS.sub(want, text, count=1)


def untag(tests, rid):
    """Remove rid from every tag under tests; how many tags held it."""
    removed = 0
    for root, _, files in os.walk(tests):
        for name in files:
            if not name.endswith(cc.TAGGED_FILES):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines(keepends=True)
            changed = False
            for i, line in enumerate(lines):
                m = cc.TAG.match(line)
                ids = re.findall(cc.ID, m.group(1)) if m else []
                if rid not in ids:
                    continue
                ids.remove(rid)
                removed += 1
                changed = True
                lines[i] = (line[:m.start(1)] + " ".join(ids) +
                            line[m.end(1):]) if ids else ""
            if changed:
                with open(path, "w", encoding="utf-8") as f:
                    f.write("".join(lines))
    return removed


def main(argv):
    if len(argv) != 5:
        print(__doc__)
        return 2
    build, ctest, flip_id, untag_id = argv[1:]
    real_doc = os.path.join(SRC, "doc", "fi_mr-coverage.md")
    rc, out = run(build, ctest, real_doc, os.path.join(SRC, "tests"))
    if rc != 0:
        print(out + "stale: the real document must pass first")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        tests = os.path.join(tmp, "tests")
        shutil.copytree(os.path.join(SRC, "tests"), tests,
                        ignore=shutil.ignore_patterns("corpus", "*.bin"))
        if not untag(tests, untag_id):
            print("stale: no tag holds %s to remove" % untag_id)
            return 1
        doc = os.path.join(tmp, "fi_mr-coverage.md")
        with open(real_doc, encoding="utf-8") as f:
            text = flip(f.read(), flip_id)
        with open(doc, "w", encoding="utf-8") as f:
            f.write(text)
        rc, out = run(build, ctest, doc, tests)
    print(out, end="")
    problems = [line.split(": ", 1)[1] for line in out.splitlines()
                if line.startswith("fi_mr-coverage.md: ")]
    want = ["%s: not implemented, but " % flip_id,
            "%s: tested, but no test is tagged %s" % (untag_id, untag_id),
            "%s: cites " % untag_id]
    missing = [w for w in want if not any(p.startswith(w) for p in problems)]
    other = [p for p in problems
             if not p.startswith((flip_id + ":", untag_id + ":"))]
    if rc != 1 or missing or other:
        print("stale: want exit 1 (got %d), lines starting %r (missing %r) "
              "and no others (got %r)" % (rc, want, missing, other))
        return 1
    print("stale: the checker failed on %s marked not implemented with its "
          "tags left, and on %s's tags removed" % (flip_id, untag_id))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
