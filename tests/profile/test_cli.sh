#!/usr/bin/env bash
# ompfuse show / export / import from the command line: help, usage errors,
# missing files, bad input, a truncated profile, and the CSV round trip.
set -u
B=$1
T=$(mktemp -d /tmp/ompf-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

# expect CODE LINES FRAGMENT -- command...: exit code, number of stderr
# lines (- for any), and a fragment of stderr.
expect() {
  local code=$1 lines=$2 frag=$3
  shift 4
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  local n
  n=$(wc -l <"$T/err")
  if [ "$rc" != "$code" ]; then bad "$* -> exit $rc, want $code ($(cat "$T/err"))"; return; fi
  if [ "$lines" != - ] && [ "$n" != "$lines" ]; then bad "$* -> $n stderr lines, want $lines"; return; fi
  if [ -n "$frag" ] && ! grep -qF -- "$frag" "$T/err"; then bad "$* -> stderr lacks '$frag': $(cat "$T/err")"; return; fi
  ok
}

for c in show export import; do
  "$B" "$c" --help >"$T/out" 2>&1 && grep -q "usage: ompfuse $c" "$T/out" && ok || bad "$c --help"
  expect 2 1 "unknown option '--bogus'" -- "$B" "$c" --bogus
done
expect 2 1 "no profile given" -- "$B" show
expect 2 1 "no profile given" -- "$B" export --csv
expect 2 1 "--csv" -- "$B" export x.ompf
expect 2 1 "no output" -- "$B" import --csv x.csv
expect 2 1 "--threads needs a positive count" -- "$B" import --csv x.csv -o y --threads 0
expect 2 1 "$T/none.ompf: cannot open" -- "$B" show "$T/none.ompf"
expect 2 1 "$T/none.ompf: cannot open" -- "$B" export --csv "$T/none.ompf"
expect 2 1 "$T/none.csv: cannot open" -- "$B" import --csv "$T/none.csv" -o "$T/x.ompf"

cat >"$T/a.csv" <<'CSV'
xu,type,kind,label,thread,cpu,start_ns,end_ns,perf::TASK-CLOCK,perf::PAGE-FAULTS
1,fib.c:12,task,0.1.4198400,0,3,100,200,12345,7
2,fib.c:12,task,0.1.4198400.1,1,2,150,300,,0.5
3,a.out+0x4011a0,loop-chunk,0.2.0,1,-1,310,400,99,
CSV
expect 0 0 "" -- "$B" import --csv "$T/a.csv" -o "$T/a.ompf" --program fib --threads 4
"$B" show "$T/a.ompf" >"$T/show" 2>&1 || bad "show a.ompf"
for want in "status: complete" "program          fib" "team_size        4" \
            "perf::TASK-CLOCK" "fib.c:12" "2 XUs" "a.out+0x4011a0 (unresolved)" \
            "XUs: 3" "loop-chunk" "threads (2)" "12345"; do
  grep -qF -- "$want" "$T/show" && ok || bad "show lacks '$want'"
done
"$B" export --csv "$T/a.ompf" >"$T/b.csv" && cmp -s "$T/a.csv" "$T/b.csv" && ok || bad "export to stdout differs from the imported CSV"
"$B" export --csv -o "$T/c.csv" "$T/a.ompf" && cmp -s "$T/a.csv" "$T/c.csv" && ok || bad "export -o differs"
ls "$T" | grep -q '\.tmp\.' && bad "temporary files left behind" || ok

# Imported run ids: a hash of the data, so the same CSV gives the same id
# (combine calls that one run given twice) and other data another one; no
# program is recorded without --program.
rid() { "$B" show "$1" | awk '$1 == "run_id" {print $2}'; }
expect 0 0 "" -- "$B" import --csv "$T/a.csv" -o "$T/a2.ompf" --program fib --threads 4
sed 's/12345/12346/' "$T/a.csv" >"$T/d.csv"
expect 0 0 "" -- "$B" import --csv "$T/d.csv" -o "$T/d.ompf"
r1=$(rid "$T/a.ompf"); r2=$(rid "$T/a2.ompf"); r3=$(rid "$T/d.ompf")
[ -n "$r1" ] && [ "$r1" != 0000000000000000 ] && [ "$r1" = "$r2" ] && [ "$r1" != "$r3" ] && ok \
  || bad "imported run ids: '$r1' '$r2' '$r3'"
"$B" show "$T/d.ompf" | grep -q '^ *program ' && bad "program recorded without --program" || ok

# Bad CSV: file:line:column and exit 2.
printf 'xu,type,kind,label,thread,cpu,start_ns,end_ns\n1,a:1,tsk,0,0,0,1,2\n' >"$T/bad.csv"
expect 2 1 "$T/bad.csv:2:7: column 'kind'" -- "$B" import --csv "$T/bad.csv" -o "$T/bad.ompf"
[ -e "$T/bad.ompf" ] && bad "bad import left an output" || ok

# Not a profile; a truncated profile is shown with a note.
expect 2 1 "not an ompfuse profile" -- "$B" show "$T/a.csv"
size=$(stat -c %s "$T/a.ompf")
head -c $((size - 10)) "$T/a.ompf" >"$T/cut.ompf"
"$B" show "$T/cut.ompf" >"$T/show" 2>"$T/err"; rc=$?
[ $rc = 0 ] && grep -q "TRUNCATED: truncated after 3 XUs" "$T/show" && grep -q "warning" "$T/err" && ok \
  || bad "show of a truncated profile (rc $rc): $(cat "$T/err")"
"$B" export --csv "$T/cut.ompf" >"$T/cut.csv" 2>/dev/null && cmp -s "$T/a.csv" "$T/cut.csv" && ok \
  || bad "export of a salvaged profile"
# Several files at once, one of them bad: the good one is still shown.
"$B" show "$T/a.ompf" "$T/none.ompf" >"$T/show" 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "XUs: 3" "$T/show" && ok || bad "show with one missing file (rc $rc)"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
