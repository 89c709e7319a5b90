#!/usr/bin/env bash
# Every writing subcommand with -o naming a character device (a private
# copy of /dev/null made with mknod, never the real one) and a FIFO: the
# node must still be that node afterwards (writers used to rename their
# temporary over it: as root /dev/null became a regular file), the data
# must arrive through it, and nothing "<node>.tmp.<pid>" is left.  The
# OMPT tool refuses such an OMPFUSE_OUTPUT with one line and leaves the
# program's output and exit status alone.  Needs root (mknod).
#   test_special_outputs.sh OMPFUSE PROG_FIB
set -u
B=$1 FIB=$2
T=$(mktemp -d /tmp/ompf-special-XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
[ "$(id -u)" = 0 ] || { echo "needs root (mknod)"; exit 1; }

cat >"$T/a.csv" <<'CSV'
xu,type,kind,label,thread,cpu,start_ns,end_ns,perf::TASK-CLOCK,perf::PAGE-FAULTS
1,fib.c:12,task,0.1,0,3,100,200,12345,3
2,fib.c:12,task,0.2,1,2,150,300,7,4
CSV
"$B" import --csv "$T/a.csv" -o "$T/a.ompf" --program fib || bad "import of the valid CSV"
sed 's/12345/12346/' "$T/a.csv" >"$T/b.csv"
"$B" import --csv "$T/b.csv" -o "$T/b.ompf" --program fib || bad "import of the second CSV"

# name | command line with OUT where the output goes | what the data holds
cases=(
  "export-csv|export --csv $T/a.ompf -o OUT|perf::TASK-CLOCK"
  "export-json|export --format json $T/a.ompf -o OUT|\"events\""
  "export-perfetto|export --format perfetto $T/a.ompf -o OUT|traceEvents"
  "import|import --csv $T/a.csv -o OUT --program fib|OMPF"
  "combine|combine --strategy ctc -o OUT $T/a.ompf $T/b.ompf|OMPF"
  "plan|plan --events perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CPU-CLOCK --slots 2 -o OUT|reference"
  "analyze-html|analyze --html OUT $T/a.ompf|<html"
)

check_node() { # path kind(c|p) case
  if [ "$2" = c ] && [ ! -c "$1" ]; then bad "$3: $1 is no longer a character device"; return; fi
  if [ "$2" = p ] && [ ! -p "$1" ]; then bad "$3: $1 is no longer a FIFO"; return; fi
  ok
  local left
  left=$(ls "$(dirname "$1")" | grep -c "^$(basename "$1")\.tmp\." || true)
  [ "$left" = 0 ] && ok || bad "$3: $left temporary file(s) left beside $1"
}

for c in "${cases[@]}"; do
  IFS='|' read -r name cmd want <<<"$c"
  # a character device: the private /dev/null takes the data
  dev=$T/dev-$name
  mknod -m 666 "$dev" c 1 3
  # shellcheck disable=SC2086
  out=$("$B" ${cmd//OUT/$dev} 2>&1)
  rc=$?
  [ $rc = 0 ] && ok || bad "$name to a device: exit $rc: $out"
  check_node "$dev" c "$name"
  # a FIFO: a reader on the other end gets the data
  fifo=$T/fifo-$name
  mkfifo "$fifo"
  timeout 60 cat "$fifo" >"$T/got-$name" &
  reader=$!
  # shellcheck disable=SC2086
  out=$(timeout 60 "$B" ${cmd//OUT/$fifo} 2>&1)
  rc=$?
  wait $reader
  [ $rc = 0 ] && ok || bad "$name to a FIFO: exit $rc: $out"
  check_node "$fifo" p "$name"
  if grep -aq -- "$want" "$T/got-$name"; then ok; else
    bad "$name: the FIFO's reader did not get the data ('$want' missing; $(wc -c <"$T/got-$name") bytes)"
  fi
done

# The tool: OMPFUSE_OUTPUT naming a device gets one line, no profile, and
# the program's output and status unchanged.
dev=$T/dev-tool
mknod -m 666 "$dev" c 1 3
plain=$(OMP_NUM_THREADS=2 "$FIB" 2>/dev/null)
prc=$?
got=$(OMP_NUM_THREADS=2 OMP_TOOL_LIBRARIES="$(dirname "$B")/../lib/libompfuse.so" \
      OMPFUSE_OUTPUT="$dev" OMPFUSE_EVENTS=perf::TASK-CLOCK "$FIB" 2>"$T/tool.err")
trc=$?
[ "$got" = "$plain" ] && [ $trc = $prc ] && ok ||
  bad "tool: program output or status changed ($trc vs $prc)"
check_node "$dev" c tool
if grep -q "not a file: no profile is written there" "$T/tool.err"; then ok; else
  bad "tool: no message: $(cat "$T/tool.err")"
fi

echo "special outputs: $pass passed, $fail failed"
[ $fail = 0 ]
