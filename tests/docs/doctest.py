#!/usr/bin/env python3
"""Runs the commands that README.md and docs/guide.md show and compares the
outputs they show with what the commands print now, so that a stale
command or output fails the build (ctest docs_doctest_*).

    doctest.py BUILD_DIR FILE.md [--only NAME,...] [--update] [--keep DIR]

A code block takes part when the line before its opening fence is a marker:

    <!-- doctest: NAME [mask=none|decimals|numbers] [rc=any] [skip=TEXT] -->

- A block whose lines start with "$ " is a transcript: each "$ " line (with
  its "\\" continuation lines) is a command, the lines up to the next "$ "
  line are what it prints (stdout and stderr, as a terminal shows them).
  Any other block is a script: every line (with continuations) is a
  command that must exit 0; what it prints is not compared.
- Commands run with bash, one after the other through all the marked
  blocks of the file, in one fresh directory that holds `build` (a link to
  BUILD_DIR) and links to the bundled benchmarks (`./cg`, `./mg`,
  `./knapsack`); BUILD_DIR/bin comes first on PATH.  `export` carries
  over to the next command, as in a shell, and `cd` too, within its block:
  each block starts in that directory.
- Comparison: a line "..." stands for any number of lines, "..." inside a
  line for any text.  The repository's path is written /work/main on both
  sides.  mask=decimals compares every number with a decimal point (times,
  EPD, rates) only as "a number", mask=numbers every number (counts of a
  run: XUs, events, timings); both then ignore how many blanks separate
  words, since columns widen with their numbers.  mask=none compares
  text exactly (planning, listings: this machine gives the same each time).
- rc=any: a transcript command may fail (the guide shows error messages);
  without it every command must exit 0.  skip=TEXT: commands containing
  TEXT are not run (a Slurm launch), listed in the output as skipped.
- --update writes what the commands printed into the file, for each
  transcript block without "..." lines; the others are left for an edit by
  hand (the failure shows the new output).  The exit status is still that
  of the check, 1 when an output was stale.

Exit: 0 every marked block matches, 1 a mismatch or a failed command (each
shown with a diff), 2 usage error or no marked block.
"""
import difflib
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!--\s*doctest:\s*(.*?)\s*-->\s*$")
DOC_ROOT = "/work/main"  # how the docs write the repository's path


def parse_marker(text):
    words = shlex.split(text)
    if not words or "=" in words[0]:
        raise ValueError(f"marker without a name: {text!r}")
    opts = {"name": words[0], "mask": "none", "rc": "0", "skip": None}
    for w in words[1:]:
        k, _, v = w.partition("=")
        if k not in opts or k == "name":
            raise ValueError(f"unknown marker option {w!r}")
        opts[k] = v
    if opts["mask"] not in ("none", "decimals", "numbers"):
        raise ValueError(f"mask must be none, decimals or numbers: {text!r}")
    return opts


def blocks_of(lines):
    """(marker options, first line index of the body, body lines) per block."""
    out = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m:
            i += 1
            continue
        opts = parse_marker(m.group(1))
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            raise ValueError(f"line {i + 1}: marker not followed by a code fence")
        j = i + 2
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j >= len(lines):
            raise ValueError(f"line {i + 1}: code block never closed")
        out.append((opts, i + 2, lines[i + 2:j]))
        i = j + 1
    return out


def join_continued(lines, k):
    """The command starting at lines[k] with its '\\' continuations; (text, next k)."""
    parts = [lines[k]]
    while parts[-1].rstrip().endswith("\\") and k + 1 < len(lines):
        k += 1
        parts.append(lines[k])
    return "\n".join(parts), k + 1


def split_block(body):
    """[(command, expected output lines or None)]."""
    if any(l.startswith("$ ") for l in body):
        cmds = []
        k = 0
        while k < len(body):
            if not body[k].startswith("$ "):
                raise ValueError(f"output before the first command: {body[k]!r}")
            text, k = join_continued(body, k)
            text = text[2:]
            exp = []
            while k < len(body) and not body[k].startswith("$ "):
                exp.append(body[k])
                k += 1
            cmds.append((text, exp))
        return cmds
    cmds = []
    k = 0
    while k < len(body):
        if not body[k].strip() or body[k].lstrip().startswith("#"):
            k += 1
            continue
        text, k = join_continued(body, k)
        cmds.append((text, None))
    return cmds


class Shell:
    """Runs commands one by one; cd and export carry over."""

    def __init__(self, work, build):
        self.work = work
        self.cwd = work
        self.envfile = os.path.join(work, ".doctest-env")
        env = {k: v for k, v in os.environ.items() if not k.startswith("OMPFUSE_")}
        env["PATH"] = os.path.join(build, "bin") + os.pathsep + env.get("PATH", "")
        env["OMPFUSE_PROGRESS"] = "never"
        env["HOME"] = work
        with open(self.envfile, "w") as f:
            for k, v in env.items():
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
                    f.write(f"export {k}={shlex.quote(v)}\n")

    def run(self, cmd):
        state = os.path.join(self.work, ".doctest-state")
        script = (f"source {shlex.quote(self.envfile)}\ncd {shlex.quote(self.cwd)} || exit 97\n"
                  f"{cmd}\n__rc=$?\npwd > {shlex.quote(state)}\n"
                  f"export -p > {shlex.quote(self.envfile)}\nexit $__rc\n")
        p = subprocess.run(["bash", "-c", script], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env={"PATH": "/usr/bin:/bin"},
                           timeout=900)
        try:
            with open(state) as f:
                self.cwd = f.read().strip() or self.cwd
            os.unlink(state)
        except FileNotFoundError:
            pass
        return p.returncode, p.stdout.decode("utf-8", "replace")


def normalise(text, mask, work, repo):
    text = text.replace(work + "/", "").replace(work, ".")
    text = text.replace(repo, DOC_ROOT)
    lines = [l.rstrip() for l in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    if mask != "none":
        # numbers: 1 and 0.9997 alike (a column prints either), and
        # hexadecimal words with a digit (run ids, build ids, addresses),
        # which differ by run as counts do
        num = r"\d+\.\d+" if mask == "decimals" else r"\d+\.\d+(?:e[+-]?\d+)?|\b(?:0x)?[0-9a-f]*\d[0-9a-f]*\b"
        lines = [" ".join(re.sub(num, "#", l).split()) for l in lines]
    return lines


def matches(expected, actual):
    pat = []
    for l in expected:
        if l.strip() == "...":
            pat.append(r"(?:[^\n]*\n)*?")
        else:
            pat.append(r"[^\n]*?".join(re.escape(p) for p in l.split("...")) + r"\n")
    return re.fullmatch("".join(pat), "".join(a + "\n" for a in actual)) is not None


def main(argv):
    args = argv[1:]
    update = "--update" in args
    only = None
    keep = None
    rest = []
    k = 0
    while k < len(args):
        if args[k] == "--update":
            pass
        elif args[k] == "--only" and k + 1 < len(args):
            only = set(args[k + 1].split(","))
            k += 1
        elif args[k] == "--keep" and k + 1 < len(args):
            keep = args[k + 1]
            k += 1
        else:
            rest.append(args[k])
        k += 1
    if len(rest) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    build, doc = os.path.abspath(rest[0]), rest[1]
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(doc) as f:
        lines = f.read().split("\n")
    try:
        blocks = blocks_of(lines)
    except ValueError as e:
        print(f"{doc}: {e}", file=sys.stderr)
        return 2
    if only:
        blocks = [b for b in blocks if b[0]["name"] in only]
    if not blocks:
        print(f"{doc}: no marked block", file=sys.stderr)
        return 2
    work = keep or tempfile.mkdtemp(prefix="ompf-doctest-")
    os.makedirs(work, exist_ok=True)
    work = os.path.realpath(work)
    os.symlink(build, os.path.join(work, "build"))
    for b in ("cg", "mg", "knapsack"):
        os.symlink(os.path.join(build, "bin", b), os.path.join(work, b))
    try:
        return check(doc, lines, blocks, build, work, repo, update)
    finally:
        if not keep:
            subprocess.run(["rm", "-rf", work])


def check(doc, lines, blocks, build, work, repo, update):
    sh = Shell(work, build)
    failed = ran = 0
    edits = []  # (first line, last line, new lines) for --update
    for opts, start, body in blocks:
        try:
            cmds = split_block(body)
        except ValueError as e:
            print(f"{doc}:{start}: block {opts['name']}: {e}", file=sys.stderr)
            return 2
        sh.cwd = work
        new_body = []
        can_update = not any(l.strip() == "..." for l in body)
        for cmd, exp in cmds:
            if opts["skip"] and opts["skip"] in cmd:
                print(f"[{opts['name']}] skipped: {cmd}")
                continue
            rc, out = sh.run(cmd)
            ran += 1
            got = normalise(out, opts["mask"], work, repo)
            bad = []
            if rc != 0 and (exp is None or opts["rc"] != "any"):
                bad.append(f"exit {rc}")
            if exp is not None:
                want = normalise("\n".join(exp), opts["mask"], work, repo)
                if not matches(want, got):
                    diff = difflib.unified_diff(want, got, "shown", "printed now", lineterm="")
                    bad.append("output differs:\n" + "\n".join(diff))
                new_body.append("$ " + cmd)
                new_body += normalise(out, "none", work, repo)
            state = "FAIL" if bad else "ok"
            print(f"[{opts['name']}] {state}: {cmd.splitlines()[0]}")
            for b in bad:
                print("    " + b.replace("\n", "\n    "))
            if not bad:
                continue
            failed += 1
            if rc != 0 and exp is None:
                print("    " + "\n    ".join(normalise(out, "none", work, repo)[-20:]))
        if update and can_update and cmds and cmds[0][1] is not None:
            edits.append((start, start + len(body), new_body))
    if update and edits:
        for a, b, new in reversed(edits):
            lines[a:b] = new
        with open(doc, "w") as f:
            f.write("\n".join(lines))
        print(f"{doc}: {len(edits)} block(s) rewritten")
    print(f"{doc}: {len(blocks)} blocks, {ran} commands, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    # a ctest timeout sends SIGTERM: leave through main's clean-up
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main(sys.argv))
