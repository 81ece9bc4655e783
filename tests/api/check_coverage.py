#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# check_coverage.py: doc/fi_mr-coverage.md agrees with the tests and build.
"""Check doc/fi_mr-coverage.md against the test sources and a build tree.

Usage: check_coverage.py BUILD_DIR [--ctest CTEST] [--doc DOC] [--tests DIR]
       check_coverage.py --self-test

Every table row of the document is

    | ID | statement | status | where | tests |

where ID is a letter and a number (F12, L3, V7), status one of STATUSES,
`where` backquoted paths of the source tree (or "none: <reason>"), and
`tests` backquoted CTest names as `ctest -N` lists them in BUILD_DIR.  A
case inside a VM suite is written `suite:case`: the suite must be a CTest
entry and the case name must appear in a program or script under
tests/vm/.  The document's "Counts:" line must match the rows.

A test names the rows it checks with a tag: a comment line of its own,

    /* fi_mr: F114 F116 */        (C)      # fi_mr: F114        (CMake, sh)

directly above the line that names the case: `HMR_TEST(name)`, a CMake
`add_test(NAME name`, a VM program's line holding the case's name as a
string (or the format string that prints it), a VM script's
`run_case name`.  A row that is "tested" or "partial" must have tags,
every test it cites must carry its tag, and every case tagged with it
must be cited; a row that is "untested" or "not implemented" must have no
tag (its cited tests, if any, show a refusal, not the statement).  So a
row whose tests are gone, or a row left "not implemented" when tests now
check it, fails.  A CTest name matches a tagged case of its own name, or
of the name behind a prefix the build adds (`ze_direct_` + case,
`reloc_` + case).  --tests reads the tags from another copy of tests/.

Exits 0 when everything holds; otherwise 1 and one line per problem.
"""
import os
import re
import subprocess
import sys

STATUSES = ("tested", "partial", "untested", "not implemented")
WITH_TAGS = ("tested", "partial")
ROW = re.compile(r"^\|\s*([A-Z]+[0-9]+)\s*\|")
TICKED = re.compile(r"`([^`]+)`")
COUNTS = re.compile(r"^Counts: (.*)$", re.M)
TEST_LINE = re.compile(r"^\s*Test\s+#\d+: (\S+)", re.M)
ID = r"[A-Z]+[0-9]+"
TAG = re.compile(r"^\s*(?:/\*|\*|//|#)\s*fi_mr:\s*(%s(?:[ ,]+%s)*)[ ,]*"
                 r"(?:\*/)?\s*$" % (ID, ID))
# What names the case on the line below a tag, most specific first.
CASE_LINE = (re.compile(r"^HMR_TEST\((\w+)\)"),
             re.compile(r"^\s*add_test\(NAME (\w+)"),
             re.compile(r"^\s*run_case (\w+)"),
             re.compile(r"\"([a-z%][a-z0-9_%]*)\""))
TAGGED_FILES = (".c", ".h", ".sh", ".py", "CMakeLists.txt")
SRC = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def ctest_names(build, ctest):
    out = subprocess.run([ctest, "--test-dir", build, "-N"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit("check_coverage: %s -N failed: %s" % (ctest, out.stderr))
    return set(TEST_LINE.findall(out.stdout))


def vm_sources(tests):
    """The text of every program and script of the VM suites."""
    text = []
    for root, _, files in os.walk(os.path.join(tests, "vm")):
        for name in sorted(files):
            if name.endswith((".c", ".sh")):
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    text.append(f.read())
    return "\n".join(text)


def format_matches(fmt, case):
    """case is what the format string fmt prints ("verbs_x_%s_lands" for
    verbs_x_thunk_lands; "%s_off" for rxe_dmabuf_cuda_off)."""
    pattern = re.escape(fmt).replace(re.escape("%s"), "[a-z0-9_]+")
    return re.fullmatch(pattern, case) is not None


def vm_case_known(case, vm_text):
    """The case name is in a VM program, as it is or as a format string."""
    if re.search(r"\b%s\b" % re.escape(case), vm_text):
        return True
    return any(format_matches(fmt, case) for fmt in
               set(re.findall(r'"([a-z0-9_]*%s[a-z0-9_%]*)"', vm_text)))


def tags_in(text, path, vm, tags, problems):
    """Add each tag of one file's text to tags (ID -> [(case, vm, at)])."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = TAG.match(line)
        if not m:
            continue
        at = "%s:%d" % (path, i + 1)
        below = lines[i + 1] if i + 1 < len(lines) else ""
        case = None
        for pattern in CASE_LINE:
            found = pattern.search(below)
            if found:
                case = found.group(1)
                break
        if not case:
            problems.append("%s: the tag is not directly above a line "
                            "naming a case" % at)
            continue
        for rid in re.findall(ID, m.group(1)):
            tags.setdefault(rid, []).append((case, vm, at))


def source_tags(tests, problems):
    """Every tag under the tests folder."""
    tags = {}
    for root, dirs, files in os.walk(tests):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(TAGGED_FILES):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            rel = os.path.relpath(path, os.path.dirname(tests))
            vm = rel.startswith(os.path.join("tests", "vm") + os.sep)
            tags_in(text, rel, vm, tags, problems)
    return tags


def cites_case(cited, case, vm):
    """The cited test (a CTest name or suite:case) is the tagged case."""
    suite, _, sub = cited.partition(":")
    if vm != bool(sub):
        return False
    if vm:
        return sub == case or ("%s" in case and format_matches(case, sub))
    return suite == case or suite.endswith("_" + case)


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


def check_tags(rid, status, cited, tagged, problems):
    """The row's status and cited tests against the cases tagged rid."""
    if status not in WITH_TAGS:
        for case, _, at in tagged:
            problems.append("%s: %s, but %s is tagged %s (%s)"
                            % (rid, status, case, rid, at))
        return
    if not tagged:
        problems.append("%s: %s, but no test is tagged %s"
                        % (rid, status, rid))
    for name in cited:
        if not any(cites_case(name, c, vm) for c, vm, _ in tagged):
            problems.append("%s: cites %s, which is not tagged %s"
                            % (rid, name, rid))
    for case, vm, at in tagged:
        if not any(cites_case(name, case, vm) for name in cited):
            problems.append("%s: %s is tagged %s (%s) but not cited"
                            % (rid, case, rid, at))


def check_row(cells, names, vm_text, src, problems, counts, tags):
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
    if status in WITH_TAGS and not cited:
        problems.append("%s: %s but cites no test" % (rid, status))
    for name in cited:
        suite, _, case = name.partition(":")
        if suite not in names:
            problems.append("%s: test %s is not in ctest -N" % (rid, suite))
        if case and not vm_case_known(case, vm_text):
            problems.append("%s: VM case %s is in no tests/vm program"
                            % (rid, case))
    if tags is not None:
        check_tags(rid, status, cited, tags.get(rid, []), problems)


def check(doc_text, names, vm_text, src, tags=None):
    """Every problem of the document, as lines; empty when it holds.
    tags: ID -> [(case, vm, where)], or None to leave tags unchecked."""
    problems, seen = [], set()
    counts = dict.fromkeys(STATUSES, 0)
    for line in doc_text.splitlines():
        if not ROW.match(line):
            continue
        cells = split_row(line)
        if cells[0] in seen:
            problems.append("%s: the ID is used twice" % cells[0])
        seen.add(cells[0])
        check_row(cells, names, vm_text, src, problems, counts, tags)
    for rid in sorted(set(tags or {}) - seen):
        for case, _, at in tags[rid]:
            problems.append("%s: %s is tagged %s, a row the document does "
                            "not have" % (at, case, rid))
    want = "%d statements: %s" % (
        sum(counts.values()),
        ", ".join("%d %s" % (counts[s], s) for s in STATUSES))
    found = COUNTS.search(doc_text)
    if not found or found.group(1).strip().rstrip(".") != want:
        problems.append("the Counts: line should read \"Counts: %s.\"" % want)
    return problems


def differs(got, want):
    """Say so, and be true, when a self-test case got what it did not
    want."""
    if got == want:
        return False
    print("self-test: got %r\nwant %r" % (got, want))
    return True


def self_test_tags(src):
    """The tag rules, on a document and sources of a few lines."""
    doc = ("| F1 | a | tested | `tests` | `a_case` `ze_direct_b_case` |\n"
           "| F2 | b | not implemented | none: x | |\n"
           "| F3 | c | partial | `tests` | `a_case` `vm_x:v_one_lands` |\n"
           "| F4 | d | tested | `tests` | `c_case` |\n"
           "| F5 | e | untested | `tests` | |\n"
           "Counts: 5 statements: 2 tested, 1 partial, 1 untested, "
           "1 not implemented.\n")
    sources = ("/* fi_mr: F1 F3 */\nHMR_TEST(a_case)\n{\n}\n"
               "/* fi_mr: F1, F2 */\nHMR_TEST(b_case)\n"
               "/* fi_mr: F4 */\nHMR_TEST(d_case)\n"
               "/* fi_mr: F6 */\nHMR_TEST(e_case)\n"
               "/* fi_mr: F4 */\n\nHMR_TEST(f_case)\n")
    vm = "\t/* fi_mr: F3 */\n\tvm_case(\"v_%s_lands\", ok, \"\");\n"
    tags, problems = {}, []
    tags_in(sources, "t.c", False, tags, problems)
    tags_in(vm, "tests/vm/v.c", True, tags, problems)
    names = {"a_case", "ze_direct_b_case", "c_case", "vm_x"}
    problems += check(doc, names, vm, src, tags)
    want = ["t.c:11: the tag is not directly above a line naming a case",
            "F2: not implemented, but b_case is tagged F2 (t.c:5)",
            "F4: cites c_case, which is not tagged F4",
            "F4: d_case is tagged F4 (t.c:7) but not cited",
            "t.c:9: e_case is tagged F6, a row the document does not have"]
    if differs(problems, want):
        return 1
    gone = check(doc, names, vm, src, {"F3": tags["F3"], "F4": tags["F4"]})
    if "F1: tested, but no test is tagged F1" not in gone:
        print("self-test: a tested row without tags went unnoticed: %r"
              % gone)
        return 1
    return 0


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
    src = SRC
    got = check(doc, {"real_test", "vm_x"},
                'CASE case_one "route_%s_lands"', src)
    want = ["F2: test gone_test is not in ctest -N",
            "F4: no/such/file.c does not exist",
            "F4: VM case case_two is in no tests/vm program",
            "F5: partial but cites no test"]
    if differs(got, want):
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
    if self_test_tags(src):
        return 1
    print("self-test: the checker reports missing tests, files, VM cases, "
          "wrong counts, and tags that disagree with a row")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    args = argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    build, ctest, doc = args[0], "ctest", None
    src = SRC
    tests = os.path.join(src, "tests")
    rest = args[1:]
    while rest:
        opt, val = rest[0], rest[1] if len(rest) > 1 else None
        if opt == "--ctest" and val:
            ctest = val
        elif opt == "--doc" and val:
            doc = val
        elif opt == "--tests" and val:
            tests = os.path.abspath(val)
        else:
            print(__doc__)
            return 2
        rest = rest[2:]
    doc = doc or os.path.join(src, "doc", "fi_mr-coverage.md")
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    names = ctest_names(build, ctest)
    problems = []
    tags = source_tags(tests, problems)
    problems += check(text, names, vm_sources(tests), src, tags)
    for p in problems:
        print("%s: %s" % (os.path.basename(doc), p))
    if problems:
        print("%d problems; the build has %d tests" % (len(problems),
                                                      len(names)))
        return 1
    print("%s: every cited test exists and carries its row's tag; every "
          "tag is cited (%d tests in the build, %d rows tagged)"
          % (os.path.basename(doc), len(names), len(tags)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
