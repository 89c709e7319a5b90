#!/usr/bin/env bash
# Every subcommand that reads a file, table-driven, against inputs that are
# not a usable file: a FIFO (refused within 1 s: a hang is killed by
# timeout and fails), a directory, a device, a symlink loop, an empty file, and a
# file declaring more than a limit (a profile with 10^5 events, a CSV with
# 10^5 columns).  Each must exit 2 with one message naming the path (and
# the reason where it is fixed).
#   test_inputs.sh OMPFUSE TEST_PROFILE_LIMITS
set -u
B=$1 L=$2
T=$(mktemp -d /tmp/ompf-inputs-XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

cat >"$T/a.csv" <<'CSV'
xu,type,kind,label,thread,cpu,start_ns,end_ns,perf::TASK-CLOCK
1,fib.c:12,task,0.1,0,3,100,200,12345
2,fib.c:12,task,0.2,1,2,150,300,7
CSV
"$B" import --csv "$T/a.csv" -o "$T/a.ompf" || bad "import of the valid CSV"
sed 's/12345/12346/' "$T/a.csv" >"$T/b.csv"
"$B" import --csv "$T/b.csv" -o "$T/b.ompf" || bad "import of the second CSV"

# The bad inputs, each also under a .csv name (evaluate and report choose
# the reader by the suffix).
I=$T/in
mkdir -p "$I/dir" "$I/dir.csv"
for s in "" .csv; do
  mkfifo "$I/fifo$s"
  ln -s /dev/zero "$I/dev$s"
  ln -s "$I/loopb$s" "$I/loop$s"; ln -s "$I/loop$s" "$I/loopb$s"
  : >"$I/empty$s"
done
"$L" --write-events 100000 "$I/big" || bad "writing the 10^5-event profile"
/usr/bin/python3 -c "
import sys
sys.stdout.write('xu,type,kind,label,thread,cpu,start_ns,end_ns,' +
                 ','.join('e%d' % i for i in range(100000)) + '\n')" >"$I/big.csv"

# kind -> fragment the message must hold besides the path ("" = path only)
declare -A why=(
  [fifo]="not a regular file (a FIFO)"
  [dir]="not a regular file (a directory)"
  [dev]="not a regular file (a character device)"
  [loop]="Too many levels of symbolic links"
  [empty]=""
  [big]="OMPF_MAX_EVENTS"
)

# One reading command per line; @ is the input under test.  "csv" marks
# commands that read @ as CSV (the .csv inputs), "text" small text files
# (no "big" case: their size limit is tested with the format's own tests),
# "dirok" commands that accept a directory of profiles (the message then
# differs: only exit 2 and the path are checked).
cmds=(
  "prof|show @"
  "prof|export --csv @"
  "prof|export --format json @"
  "prof|export --format perfetto @"
  "prof|export --format otf2 -o $T/o.otf2 @"
  "prof|analyze @"
  "prof|analyze --html $T/page.html @"
  "prof|combine --strategy ctc -o $T/out.ompf @ $T/a.ompf"
  "prof|combine --strategy lgl -o $T/out.ompf $T/a.ompf @"
  "prof|clean -o $T/out.ompf @"
  "prof,dirok|evaluate --references @ $T/a.ompf -- $T/b.ompf"
  "prof,dirok|evaluate --references $T/a.ompf $T/b.ompf -- @"
  "prof,dirok|report -o $T/r.html --references @ $T/a.ompf -- $T/b.ompf"
  "prof|plan --events x,y --slots 2 --assume-compatible --pilot @ -o $T/p.txt"
  "prof|simulate --score @ $T/a.ompf"
  "prof|simulate --score $T/a.ompf @"
  "csv|import --csv @ -o $T/out.ompf"
  "csv,dirok|evaluate --references @ $T/a.ompf -- $T/b.ompf"
  "csv,dirok|report -o $T/r.html --references $T/a.ompf $T/b.ompf -- @"
  "text|simulate --show-model @"
  "text|simulate --model @ --plan-auto 2 -o $T/sim"
  "text|simulate --model builtin:zero --runs @ -o $T/sim"
  "text|run --plan @ --out $T/run -- /bin/true"
)

for c in "${cmds[@]}"; do
  flags=${c%%|*} cmd=${c#*|}
  for kind in fifo dir dev loop empty big; do
    in=$I/$kind
    case $flags in *csv*) in=$in.csv ;; esac
    case $flags in *text*) [ $kind = big ] && continue ;; esac
    line=${cmd//@/$in}
    # A FIFO must be refused within 1 s (issue #22).  The time is measured
    # around the command, so it includes starting the process, which under
    # ASan on a loaded 2-core machine can alone take a second now and then:
    # an attempt over 1 s is retried, up to 3 attempts, and the case fails
    # only when every attempt took longer.  A reader that blocks on the
    # FIFO takes longer every time (it is killed after 3 s), so no hang
    # passes; a slow start passes once one attempt is quick.
    tries=1
    [ $kind = fifo ] && tries=3
    for ((a = 1; a <= tries; a++)); do
      t0=${EPOCHREALTIME/./}
      # shellcheck disable=SC2086
      timeout $([ $kind = fifo ] && echo 3 || echo 10) "$B" $line >/dev/null 2>"$T/err"
      rc=$?
      ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
      [ $kind != fifo ] || [ $ms -le 1000 ] && break
    done
    if [ $rc = 124 ]; then bad "$line: hung (killed)"; continue; fi
    if [ $kind = fifo ] && [ $ms -gt 1000 ]; then
      bad "$line: took $ms ms to refuse a FIFO in each of $tries attempts, want <= 1000"; continue
    fi
    if [ $rc != 2 ]; then bad "$line: exit $rc, want 2: $(head -c 300 "$T/err")"; continue; fi
    if ! grep -qF -- "$in" "$T/err"; then bad "$line: message lacks the path: $(head -c 300 "$T/err")"; continue; fi
    frag=${why[$kind]}
    case "$flags,$kind" in *dirok*,dir) frag= ;; esac
    if [ -n "$frag" ] && ! grep -qF -- "$frag" "$T/err"; then
      bad "$line: message lacks '$frag': $(head -c 300 "$T/err")"; continue
    fi
    ok
  done
done
# "-" is no input (standard input, or "--csv -" where --csv takes no value):
# one message saying that inputs are files.
for cmd in "show -" "analyze --csv -" "export --csv -" \
           "combine --strategy lgl -o $T/out.ompf - $T/a.ompf"; do
  # shellcheck disable=SC2086
  (cd "$T" && "$B" $cmd >/dev/null 2>"$T/err"); rc=$?
  if [ $rc != 2 ] || ! grep -qF "not standard input" "$T/err"; then
    bad "$cmd: exit $rc, want 2 and 'not standard input': $(head -c 300 "$T/err")"
  else ok; fi
done
ls "$T" | grep -q '\.tmp\.' && bad "temporary files left behind" || ok
[ -e "$T/out.ompf" ] && bad "a refused input still produced an output" || ok

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
