#!/bin/sh
# ompfuse simulate from the command line: usage errors, outputs, and
# byte-identical files for the same seed.  Usage: sim_cli.sh OMPFUSE WORKDIR
set -u
B="$1"
W="$2"
rm -rf "$W"
mkdir -p "$W"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

expect() { # expect CODE DESCRIPTION -- command...
    want="$1"; what="$2"; shift 3
    "$@" >"$W/out" 2>"$W/err"
    got=$?
    [ "$got" = "$want" ] || { fail "$what: exit $got, want $want"; cat "$W/err"; }
}

expect 0 "--help" -- "$B" simulate --help
grep -q "usage: ompfuse simulate" "$W/out" || fail "--help text"
expect 2 "no arguments" -- "$B" simulate
expect 2 "unknown option" -- "$B" simulate --bogus
[ "$(wc -l <"$W/err")" = 1 ] || fail "unknown option: not one line"
grep -q "bogus" "$W/err" || fail "unknown option not named"
expect 2 "missing model file" -- "$B" simulate --model "$W/none.txt" --plan-auto 4 -o "$W/x"
grep -q "none.txt" "$W/err" || fail "missing model file not named"
expect 2 "unknown builtin" -- "$B" simulate --model builtin:nope --plan-auto 4 -o "$W/x"
expect 2 "bad --set" -- "$B" simulate --model builtin:low --set xus=-1 --plan-auto 4 -o "$W/x"
expect 2 "both plans" -- "$B" simulate --model builtin:low --runs p --plan-auto 4 -o "$W/x"
printf 'run 1 ev0,ev1\nwalk 1 ev2\n' >"$W/bad.plan"
expect 2 "bad plan" -- "$B" simulate --model builtin:low --runs "$W/bad.plan" -o "$W/x"
grep -q "bad.plan:2" "$W/err" || fail "bad plan line not named"
expect 0 "--list-models" -- "$B" simulate --list-models
grep -q "builtin:high" "$W/out" || fail "--list-models lacks high"
expect 0 "--show-model" -- "$B" simulate --show-model builtin:high
grep -q "^run_sigma *= 0.3" "$W/out" || fail "--show-model lacks run_sigma = 0.3"

# A small model file and a plan in the campaign format.
cat >"$W/model.txt" <<'M'
# small model for tests
name = clitest
xus = 200
types = 4
threads = 4
events = 8
pmu_slots = 4
run_sigma = 0.2
M
cat >"$W/plan.txt" <<'P'
# fusion runs
run 1 ev0,ev1,ev2,ev3
run 1 ev0,ev4,ev5,ev6
lgl 1 ev7
reference 2 ev0,ev1,ev4,ev7
hem 1 all
hem-delta 1 all
P
for d in a b; do
    expect 0 "simulate $d" -- "$B" simulate --model "$W/model.txt" --runs "$W/plan.txt" \
        -o "$W/$d" --seed 5
done
expect 0 "simulate c" -- "$B" simulate --model "$W/model.txt" --runs "$W/plan.txt" -o "$W/c" --seed 6
for f in run-001.ompf run-002.ompf lgl-001.ompf reference-001.ompf reference-002.ompf \
         hem-001.ompf hem-delta-001.ompf truth.ompf runs.tsv plan.txt model.txt; do
    [ -s "$W/a/$f" ] || { fail "missing output $f"; continue; }
    cmp -s "$W/a/$f" "$W/b/$f" || fail "$f differs with the same seed"
done
cmp -s "$W/a/truth.ompf" "$W/c/truth.ompf" && fail "truth.ompf identical with another seed"
cmp -s "$W/a/run-001.ompf" "$W/c/run-001.ompf" && fail "run-001.ompf identical with another seed"
[ "$(wc -l <"$W/a/runs.tsv")" = 8 ] || fail "runs.tsv: want header + 7 runs"
ls "$W/a" | grep -q tmp && fail "temporary files left behind"

# Scoring: exact runs score 0, HEM does not; other simulations are refused.
expect 0 "--score" -- "$B" simulate --score "$W/a/truth.ompf" "$W/a/run-001.ompf" "$W/a/hem-001.ompf"
awk '$1 ~ /run-001/ { if ($7 != 0 || $9 != 0) bad = 1; seen = 1 }
     $1 ~ /hem-001/ { if ($7 <= 0) bad = 1; seen++ }
     END { exit !(seen == 2 && !bad) }' "$W/out" || { fail "--score values"; cat "$W/out"; }
expect 2 "--score foreign" -- "$B" simulate --score "$W/a/truth.ompf" "$W/c/run-001.ompf"
grep -q "not in the truth" "$W/err" || fail "--score foreign message"

# --plan-auto writes lgl, bc, ref and hem groups.
expect 0 "--plan-auto" -- "$B" simulate --model "$W/model.txt" --plan-auto 4 --ref-repeats 2 \
    -o "$W/auto" --truth-skip-references
for f in lgl-001.ompf bc-001.ompf reference-001.ompf hem-001.ompf hem-delta-001.ompf truth.ompf; do
    [ -s "$W/auto/$f" ] || fail "--plan-auto: missing $f"
done
grep -q "^bc 1 " "$W/auto/plan.txt" || fail "--plan-auto plan lacks bc lines"
# The written plan is a valid plan for the same model.
expect 0 "replay plan.txt" -- "$B" simulate --model "$W/auto/model.txt" --runs "$W/auto/plan.txt" \
    -o "$W/replay" --no-truth
[ -e "$W/replay/truth.ompf" ] && fail "--no-truth wrote truth.ompf"
cmp -s "$W/auto/bc-002.ompf" "$W/replay/bc-002.ompf" || fail "replayed plan gives other profiles"

# "# group:" names only the fusion runs after it: reference and HEM runs are
# named by their role, so lgl-*.ompf holds exactly the fusion runs.
cat >"$W/groups.plan" <<'P'
# group: lgl
run 1 ev0,ev1,ev2,ev3
run 1 ev4,ev5,ev6,ev7
reference 2 ev0,ev4
hem 1 all
hem-delta 1 all
# group: bc
run 1 ev0,ev1,ev2,ev3
# group: ref
reference 1 ev1,ev5
P
expect 0 "grouped plan" -- "$B" simulate --model "$W/model.txt" --runs "$W/groups.plan" \
    -o "$W/groups" --no-truth
got=$(cd "$W/groups" && ls *.ompf | tr '\n' ' ')
want="bc-001.ompf hem-001.ompf hem-delta-001.ompf lgl-001.ompf lgl-002.ompf reference-001.ompf reference-002.ompf reference-003.ompf "
[ "$got" = "$want" ] || fail "role files not named by role: got '$got', want '$want'"
awk -F'\t' 'NR > 1 && $3 != "run" && $4 != "" { bad = 1 } END { exit bad }' "$W/groups/runs.tsv" ||
    fail "runs.tsv gives a group to a non-fusion run"
for f in "$W"/auto/lgl-*.ompf "$W"/auto/bc-*.ompf; do
    "$B" show "$f" 2>/dev/null | grep -qi "mode.*reference\|mode.*hem" && fail "$f is not a fusion run"
done

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "sim_cli: all checks passed"
