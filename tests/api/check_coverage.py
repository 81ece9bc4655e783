#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# check_coverage.py: doc/fi_mr-coverage.md cites only tests that exist.
"""Check doc/fi_mr-coverage.md against a build tree.

Usage: check_coverage.py BUILD_DIR [--ctest CTEST] [--doc DOC]
       check_coverage.py --self-test

Every table row of the document is

    | ID | statement | status | where | tests |

where ID is a letter and a number (F12, L3, V7), status one of STATUSES,
`where` backquoted paths of the source tree (or "none: <reason>"), and
`tests` backquoted CTest names as `ctest -N` lists them in BUILD_DIR.  A
case inside a VM suite is written `suite:case`: the suite must be a CTest
entry and the case name must appear in a program or script under
tests/vm/.  The document's "Counts:" line must match the rows.

Exits 0 when everything holds; otherwise 1 and one line per problem
(a test named in the document that the build does not have, above all).
"""
import os
import re
import subprocess
import sys

STATUSES = ("tested", "partial", "untested", "not implemented")
ROW = re.compile(r"^\|\s*([A-Z]+[0-9]+)\s*\|")
TICKED = re.compile(r"`([^`]+)`")
COUNTS = re.compile(r"^Counts: (.*)$", re.M)
TEST_LINE = re.compile(r"^\s*Test\s+#\d+: (\S+)", re.M)


def ctest_names(build, ctest):
    out = subprocess.run([ctest, "--test-dir", build, "-N"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit("check_coverage: %s -N failed: %s" % (ctest, out.stderr))
    return set(TEST_LINE.findall(out.stdout))


def vm_sources(src):
    """The text of every program and script of the VM suites."""
    text = []
    for root, _, files in os.walk(os.path.join(src, "tests", "vm")):
        for name in files:
            if name.endswith((".c", ".sh")):
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    text.append(f.read())
    return "\n".join(text)


def vm_case_known(case, vm_text):
    """The case name is in a VM program, as it is or as the format string
    that prints it ("verbs_x_%s_lands" for verbs_x_thunk_lands)."""
    if re.search(r"\b%s\b" % re.escape(case), vm_text):
        return True
    for fmt in set(re.findall(r'"([a-z0-9_]*%s[a-z0-9_%]*)"', vm_text)):
        pattern = re.escape(fmt).replace(re.escape("%s"), "[a-z0-9]+")
        if re.fullmatch(pattern, case):
            return True
    return False


def split_row(line):
    """The cells of a table row; a `|` inside backquotes is text."""
    cells, cur, ticked = [], "", False
    for ch in line.strip()[1:]:
        if ch == "`":
            ticked = not ticked
        if ch == "|" and not ticked:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return cells


def check_row(cells, names, vm_text, src, problems, counts):
    rid = cells[0]
    if len(cells) != 5:
        problems.append("%s: %d cells, want 5" % (rid, len(cells)))
        return
    _, statement, status, where, tests = cells
    status = status.strip("*")
    if status not in STATUSES:
        problems.append("%s: status %r is not one of %s"
                        % (rid, status, ", ".join(STATUSES)))
        return
    counts[status] += 1
    if not statement:
        problems.append("%s: no statement" % rid)
    paths = TICKED.findall(where)
    if not paths and not where.startswith("none"):
        problems.append("%s: where names no file and says no reason" % rid)
    for path in paths:
        if src and not os.path.exists(os.path.join(src, path)):
            problems.append("%s: %s does not exist" % (rid, path))
    cited = TICKED.findall(tests)
    if status in ("tested", "partial") and not cited:
        problems.append("%s: %s but cites no test" % (rid, status))
    for name in cited:
        suite, _, case = name.partition(":")
        if suite not in names:
            problems.append("%s: test %s is not in ctest -N" % (rid, suite))
        if case and not vm_case_known(case, vm_text):
            problems.append("%s: VM case %s is in no tests/vm program"
                            % (rid, case))


def check(doc_text, names, vm_text, src):
    """Every problem of the document, as lines; empty when it holds."""
    problems, seen = [], set()
    counts = dict.fromkeys(STATUSES, 0)
    for line in doc_text.splitlines():
        if not ROW.match(line):
            continue
        cells = split_row(line)
        if cells[0] in seen:
            problems.append("%s: the ID is used twice" % cells[0])
        seen.add(cells[0])
        check_row(cells, names, vm_text, src, problems, counts)
    want = "%d statements: %s" % (
        sum(counts.values()),
        ", ".join("%d %s" % (counts[s], s) for s in STATUSES))
    found = COUNTS.search(doc_text)
    if not found or found.group(1).strip().rstrip(".") != want:
        problems.append("the Counts: line should read \"Counts: %s.\"" % want)
    return problems


def self_test():
    """The checker catches what it is for (so its test can fail)."""
    doc = ("| ID | s | status | where | tests |\n"
           "| F1 | a | tested | `tests` | `real_test` `vm_x:case_one` |\n"
           "| F2 | b | tested | `tests` | `gone_test` |\n"
           "| F3 | c | not implemented | none: no reason needed | |\n"
           "| F4 | d | tested | `no/such/file.c` | `vm_x:case_two` |\n"
           "| F5 | e | partial | none: x | |\n"
           "| F6 | f | tested | `tests` | `vm_x:route_thunk_lands` |\n"
           "Counts: 6 statements: 4 tested, 1 partial, 0 untested, "
           "1 not implemented.\n")
    src = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    got = check(doc, {"real_test", "vm_x"},
                'CASE case_one "route_%s_lands"', src)
    want = ["F2: test gone_test is not in ctest -N",
            "F4: no/such/file.c does not exist",
            "F4: VM case case_two is in no tests/vm program",
            "F5: partial but cites no test"]
    if got != want:
        print("self-test: got %r\nwant %r" % (got, want))
        return 1
    bad = doc.replace("Counts: 6", "Counts: 7")
    if not check(bad, {"real_test", "gone_test", "vm_x"},
                 "case_one case_two", src)[-1].startswith("the Counts:"):
        print("self-test: a wrong Counts: line went unnoticed")
        return 1
    if check(doc, {"real_test", "vm_x"}, 'CASE case_one "route_%s_x"',
             src)[-1].find("route_thunk_lands") < 0:
        print("self-test: a case no format string prints went unnoticed")
        return 1
    print("self-test: the checker reports missing tests, files, VM cases "
          "and wrong counts")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    args = argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    build, ctest, doc = args[0], "ctest", None
    src = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    rest = args[1:]
    while rest:
        opt, val = rest[0], rest[1] if len(rest) > 1 else None
        if opt == "--ctest" and val:
            ctest = val
        elif opt == "--doc" and val:
            doc = val
        else:
            print(__doc__)
            return 2
        rest = rest[2:]
    doc = doc or os.path.join(src, "doc", "fi_mr-coverage.md")
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    names = ctest_names(build, ctest)
    problems = check(text, names, vm_sources(src), src)
    for p in problems:
        print("%s: %s" % (os.path.basename(doc), p))
    if problems:
        print("%d problems; the build has %d tests" % (len(problems),
                                                      len(names)))
        return 1
    print("%s: every cited test exists (%d tests in the build)"
          % (os.path.basename(doc), len(names)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
