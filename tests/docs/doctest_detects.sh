#!/usr/bin/env bash
# The README/guide doctest (doctest.py) can fail: a changed command, a
# changed output line, a failing command, a changed word in a masked block
# are each caught, in a small document and in copies of README.md and
# docs/guide.md; --update rewrites a stale output so that it passes again.
#   doctest_detects.sh PYTHON DOCTEST.PY BUILD_DIR SOURCE_DIR
set -u
PY=$1 DT=$2 BUILD=$3 SRC=$4
T=$(mktemp -d /tmp/ompf-doctest-detect-XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
# want RC WHAT DOC [args]: the checker's exit status on DOC
want() {
  local rc=$1 what=$2
  shift 2
  "$PY" "$DT" "$BUILD" "$@" >"$T/log" 2>&1
  local got=$?
  if [ $got = "$rc" ]; then pass=$((pass + 1)); else bad "$what: exit $got, want $rc"; sed 's/^/    /' "$T/log" >&2; fi
}

cat >"$T/doc.md" <<'MD'
Planning is deterministic, so its output is compared exactly:

<!-- doctest: plan -->
```
$ ompfuse plan --events perf::TASK-CLOCK,perf::CPU-CLOCK,perf::PAGE-FAULTS --slots 2 --for lgl --references 0 --assume-compatible -o p.txt
ompfuse plan: 3 events, 2 slots (from --slots), compatibility assumed
  lgl/ctc:    2 disjoint sets
  total:      2 runs -> p.txt
$ grep -c '^lgl' p.txt
2
```

A script block: every command must succeed.

<!-- doctest: files -->
```sh
test -s p.txt        # the plan was written
```

Masked numbers:

<!-- doctest: masked mask=numbers -->
```
$ echo "run 12 took 3.25 s, id 9fa3c2"
run 7 took 0.5 s, id 0e1
```
MD
want 0 "unchanged document" "$T/doc.md"
grep -q "ok: ompfuse plan" "$T/log" && pass=$((pass + 1)) || bad "the plan command was not run"

sed 's/  lgl\/ctc:    2 disjoint sets/  lgl\/ctc:    3 disjoint sets/' "$T/doc.md" >"$T/out.md"
want 1 "changed output line" "$T/out.md"
grep -q "output differs" "$T/log" && pass=$((pass + 1)) || bad "no diff shown"

sed 's/--slots 2 --for lgl/--slots 3 --for lgl/' "$T/doc.md" >"$T/cmd.md"
want 1 "changed command" "$T/cmd.md"

sed 's/test -s p.txt /test -s none.txt/' "$T/doc.md" >"$T/script.md"
want 1 "failing script command" "$T/script.md"

sed 's/^run 7 took/run 7 lasted/' "$T/doc.md" >"$T/word.md"
want 1 "changed word in a masked block" "$T/word.md"

sed 's/^\$ echo "run 12/$ echo "step 12/' "$T/doc.md" >"$T/mcmd.md"
want 1 "changed command in a masked block" "$T/mcmd.md"

# --update: the stale output is replaced by what the command prints now
cp "$T/out.md" "$T/upd.md"
want 1 "--update (reports the stale output it rewrites)" "$T/upd.md" --update
grep -q "  lgl/ctc:    2 disjoint sets" "$T/upd.md" && pass=$((pass + 1)) || bad "--update did not rewrite the output"
want 0 "updated document" "$T/upd.md"

# The real documents: a changed command, a changed shown output.
sed 's/--slots 2 --for lgl --references 0 -o lgl.plan/--slots 2 --for lgl --references 1 -o lgl.plan/' \
  "$SRC/README.md" >"$T/README.md"
cmp -s "$SRC/README.md" "$T/README.md" && bad "README.md: the fused-only plan command was not found to change"
want 1 "README.md with a changed command" "$T/README.md" --only readme-fused-only
sed 's/^  references: 6 sets x 3 repeats = 18 runs/  references: 6 sets x 3 repeats = 19 runs/' \
  "$SRC/docs/guide.md" >"$T/guide.md"
cmp -s "$SRC/docs/guide.md" "$T/guide.md" && bad "guide.md: the plan output line was not found to change"
want 1 "guide.md with a changed output" "$T/guide.md" --only guide-plan
want 0 "guide.md's plan block as it is" "$SRC/docs/guide.md" --only guide-plan

echo "$pass passed, $fail failed"
[ $fail = 0 ]
