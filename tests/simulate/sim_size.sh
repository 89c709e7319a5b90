#!/bin/sh
# ompfuse simulate's size check and progress line: a plan that would write
# more than --max-size is refused with an estimate before anything is
# written (the estimate checked against what --yes then writes), and the
# progress line counts runs.  Usage: sim_size.sh OMPFUSE WORKDIR
set -u
B="$1" W="$2" fails=0
rm -rf "$W" && mkdir -p "$W" || exit 1
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The issue's case: builtin:low with --plan-auto 2 wrote 1.5 GB silently
# (the timeout bounds what a build without the check would write).
timeout 120 "$B" simulate --model builtin:low --plan-auto 2 -o "$W/big" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" = 2 ] || fail "over 1 GB: exit $rc, want 2"
grep -q "would write about 1\.[0-9]* GB in 1636 files" "$W/err" || { fail "no GB estimate"; cat "$W/err"; }
grep -q -- "--yes" "$W/err" || fail "refusal does not name --yes"
[ ! -e "$W/big" ] || { fail "refused, but $W/big was created"; rm -rf "$W/big"; }

cat >"$W/model.txt" <<'M'
name = sizetest
xus = 3000
types = 4
threads = 4
events = 8
pmu_slots = 4
M
cat >"$W/plan.txt" <<'P'
run 2 ev0,ev1,ev2,ev3
run 1 ev4
reference 2 ev0,ev4,ev5,ev6
hem 1 all
P
# Under the limit: no message, files written.
"$B" simulate --model "$W/model.txt" --runs "$W/plan.txt" -o "$W/small" -q 2>"$W/err"
[ $? = 0 ] || fail "small: exit $?"
[ -s "$W/err" ] && { fail "small: unexpected message"; cat "$W/err"; }
[ -f "$W/small/truth.ompf" ] || fail "small: no truth.ompf"

# A limit below the estimate: refused with the estimate, nothing written.
"$B" simulate --model "$W/model.txt" --runs "$W/plan.txt" -o "$W/lim" --max-size 10K \
    2>"$W/err"
[ $? = 2 ] || fail "--max-size 10K: exit not 2"
[ ! -e "$W/lim" ] || fail "--max-size 10K: $W/lim created"
grep -q "in 7 files" "$W/err" || { fail "file count (6 runs + truth)"; cat "$W/err"; }
est=$(sed -n 's/.*would write about \([0-9.]*\) \([kMG]\)B.*/\1 \2/p' "$W/err")
[ -n "$est" ] || fail "no estimate in: $(cat "$W/err")"

# --yes writes it; the estimate is within 25 % of what was written.
"$B" simulate --model "$W/model.txt" --runs "$W/plan.txt" -o "$W/lim" --max-size 10K --yes \
    -q 2>"$W/err"
[ $? = 0 ] || fail "--yes: exit not 0"
[ -f "$W/lim/truth.ompf" ] || fail "--yes: nothing written"
actual=$(cat "$W"/lim/*.ompf | wc -c)
echo "estimate $est, written $actual bytes"
echo "$est $actual" | awk '{ m = $2 == "k" ? 1e3 : $2 == "M" ? 1e6 : 1e9; e = $1 * m;
    r = e / $3; if (r < 0.75 || r > 1.25) { print "ratio " r; exit 1 } }' ||
    fail "estimate $est vs $actual bytes written"
cmp -s "$W/lim/truth.ompf" "$W/small/truth.ompf" || fail "the estimate changed the output"

"$B" simulate --model "$W/model.txt" --runs "$W/plan.txt" -o "$W/x" --max-size 12Q 2>"$W/err"
[ $? = 2 ] || fail "bad --max-size accepted"
grep -q "12Q" "$W/err" || fail "bad --max-size not named"

# The progress line: runs done of the total (forced: stderr is no terminal).
OMPFUSE_PROGRESS=always "$B" simulate --model "$W/model.txt" --runs "$W/plan.txt" \
    -o "$W/p" 2>"$W/err"
grep -q "ompfuse simulate: [1-6]/6 runs (" "$W/err" || { fail "no progress line"; od -c "$W/err" | head; }
OMPFUSE_PROGRESS=never "$B" simulate --model "$W/model.txt" --runs "$W/plan.txt" \
    -o "$W/p" 2>"$W/err"
grep -q "runs (" "$W/err" && fail "progress line with OMPFUSE_PROGRESS=never"

[ "$fails" = 0 ] && echo "sim_size: all passed"
exit "$fails"
