#!/usr/bin/env python3
"""Mutation testing by a hand-written list: make mutate.

Each mutant of mutation/mutants.txt replaces one exact piece of a source
file. The tree is copied once to a scratch directory (the working tree is
never touched); for each mutant the piece is replaced there, the packages
it names are tested, and the file is put back. A mutant is killed when its
tests fail, and survives when they pass. The unmutated tests are run first
on the same copy: a mutant can only be killed by a suite that passes
without it.

A mutant whose piece is not in its file, or is there more than once, is an
error: the list no longer fits the code, and a mutant that changes nothing
would count as survived (or as killed by a build error elsewhere). The
script says which, and exits 2 before testing anything.

A mutant marked "expect: survive" is a control: a change that keeps the
behaviour (an equivalent mutant). It must survive; if it is reported killed
the verdicts of this run cannot be trusted, and the script exits 3.

Usage: mutation/mutate.py [-list FILE] [-only NAME-REGEX] [-v]
Exit: 0 every mutant killed (and every control survived); 1 some survived;
2 the list does not fit the code (a piece not found, or a mutant that does
not build); 3 a control was killed, or the suite fails without any mutant.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FIELDS = ("mutant", "file", "old", "new", "packages", "run", "expect", "why")


def parse(path):
    """Reads the mutant list: blocks of "key: value" lines, each starting
    with "mutant:"; blank lines and lines starting with "#" are skipped.
    old and new are taken as written, with no escapes: either on their own
    line after "old: " / "new: ", or, for several lines, as the lines that
    follow a bare "old:" / "new:", each starting with "|" and one space (the
    text is what follows; a line of only "|" is an empty line)."""
    mutants, cur, block = [], None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if block is not None and (line == "|" or line.startswith("| ")):
            cur[block].append(line[2:])
            continue
        if block is not None:
            if not cur[block]:
                sys.exit(f"{path}:{n}: {block}: of mutant {cur['name']} has no \"| \" lines")
            cur[block] = "\n".join(cur[block])
            block = None
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        key = key.strip()
        if not sep or key not in FIELDS:
            sys.exit(f"{path}:{n}: want key: value with key one of {', '.join(FIELDS)}; got {line!r}")
        value = value[1:] if value.startswith(" ") else value
        if key == "mutant":
            cur = {"name": value.strip(), "line": n}
            mutants.append(cur)
            continue
        if cur is None:
            sys.exit(f"{path}:{n}: {key}: before the first mutant:")
        if key in cur:
            sys.exit(f"{path}:{n}: a second {key}: for mutant {cur['name']}")
        if key in ("old", "new") and value == "":
            cur[key], block = [], key
            continue
        cur[key] = value if key in ("old", "new") else value.strip()
    if block is not None:
        cur[block] = "\n".join(cur[block])
    names = set()
    for m in mutants:
        where = f"{path}:{m['line']}"
        for key in ("file", "old", "new", "packages"):
            if key not in m:
                sys.exit(f"{where}: mutant {m['name']} has no {key}:")
        if m["old"] == m["new"]:
            sys.exit(f"{where}: mutant {m['name']}: old and new are the same")
        if m["name"] in names:
            sys.exit(f"{where}: a second mutant named {m['name']}")
        names.add(m["name"])
        if m.get("expect", "killed") not in ("killed", "survive"):
            sys.exit(f"{where}: mutant {m['name']}: expect: is killed or survive")
    return mutants


def copy_tree(root, dst):
    """Copies the files git knows (tracked, and untracked not ignored)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=root, check=True, capture_output=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        rel = os.fsdecode(f)
        src = os.path.join(root, rel)
        if not os.path.lexists(src):
            continue  # deleted in the working tree
        d = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copy2(src, d, follow_symlinks=False)


def go_test(scratch, packages, run, verbose):
    """Tests the packages one after the other, in the order given, and
    stops at the first that fails: list the fast package first."""
    start = time.monotonic()
    out = ""
    for pkg in packages.split():
        args = ["go", "test", "-count=1", "-failfast"]
        if run:
            args += ["-run", run]
        p = subprocess.run(args + [pkg], cwd=scratch, capture_output=True, text=True)
        out += p.stdout + p.stderr
        if verbose:
            sys.stdout.write(p.stdout + p.stderr)
        if p.returncode != 0:
            return p.returncode, out, time.monotonic() - start
    return 0, out, time.monotonic() - start


def first_failure(output):
    """The first failing test, its deepest subtest named (TestScripts/x)."""
    best, depth = "", -1
    for line in output.splitlines():
        s = line.strip()
        if s.startswith("--- FAIL"):
            d = len(line) - len(line.lstrip())
            if best and d <= depth:
                break
            best, depth = s, d
        elif best:
            break
        elif "[build failed]" in s or s.startswith("FAIL\t"):
            return s
    if best:
        return best
    return output.strip().splitlines()[-1] if output.strip() else ""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description="Run the hand-written mutants of the list.")
    ap.add_argument("-list", default=os.path.join(here, "mutants.txt"))
    ap.add_argument("-only", default="", help="run only the mutants whose name matches this regular expression")
    ap.add_argument("-v", action="store_true", help="show the output of every go test")
    opt = ap.parse_args()

    mutants = parse(opt.list)
    if opt.only:
        mutants = [m for m in mutants if re.search(opt.only, m["name"])]
    # Every pattern must fit the code before anything runs.
    bad = []
    for m in mutants:
        path = os.path.join(root, m["file"])
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            bad.append(f"{opt.list}:{m['line']}: mutant {m['name']}: {e}")
            continue
        n = text.count(m["old"])
        if n != 1:
            what = "is not in" if n == 0 else f"is {n} times in"
            bad.append(f"{opt.list}:{m['line']}: mutant {m['name']}: its old text {what} {m['file']}: {m['old']!r}")
    if bad:
        print("\n".join(bad), file=sys.stderr)
        print(f"mutate: {len(bad)} mutant(s) no longer fit the code: fix their old: text", file=sys.stderr)
        return 2

    # Stopped, it removes its scratch copy all the same (see finally).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    scratch = tempfile.mkdtemp(prefix="orchestrate-mutate-")
    try:
        copy_tree(root, scratch)
        # The suite must pass unmutated, package set by package set.
        for key in sorted({(pkg, m.get("run", "")) for m in mutants for pkg in m["packages"].split()}):
            code, out, took = go_test(scratch, key[0], key[1], opt.v)
            if code != 0:
                print(f"mutate: the tests fail without any mutant ({key[0]} -run {key[1] or '.'}):\n{out}", file=sys.stderr)
                return 3
            print(f"baseline  {key[0]} -run {key[1] or '.'}: pass ({took:.0f}s)")
        killed = survived = 0
        controls_killed = []
        survivors = []
        broken = []
        for m in mutants:
            path = os.path.join(scratch, m["file"])
            with open(path, encoding="utf-8") as f:
                orig = f.read()
            with open(path, "w", encoding="utf-8") as f:
                f.write(orig.replace(m["old"], m["new"], 1))
            try:
                b = subprocess.run(["go", "build", "./..."], cwd=scratch, capture_output=True, text=True)
                if b.returncode != 0:
                    # A mutant that does not build kills nothing: fix it.
                    broken.append(m["name"])
                    print(f"BROKEN    {m['name']}: it does not build:\n{b.stderr}")
                    continue
                code, out, took = go_test(scratch, m["packages"], m.get("run", ""), opt.v)
            finally:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(orig)
            control = m.get("expect") == "survive"
            if code != 0:
                verdict = "KILLED"
                if control:
                    controls_killed.append(m["name"])
                else:
                    killed += 1
            else:
                verdict = "survived"
                if not control:
                    survived += 1
                    survivors.append(m)
            label = " (control)" if control else ""
            detail = first_failure(out) if code != 0 else ""
            print(f"{verdict:8}  {m['name']}{label} ({took:.0f}s) {detail}")
        total = killed + survived
        print(f"\nmutate: {killed}/{total} mutants killed")
        for m in survivors:
            print(f"  survived: {m['name']} ({m['file']}): {m.get('why', '')}")
        if broken:
            print(f"mutate: mutant(s) that do not build, fix them: {', '.join(broken)}", file=sys.stderr)
            return 2
        if controls_killed:
            print(f"mutate: control(s) killed, so the verdicts cannot be trusted: {', '.join(controls_killed)}", file=sys.stderr)
            return 3
        return 0 if survived == 0 else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
