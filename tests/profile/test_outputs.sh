#!/usr/bin/env bash
# Outputs and degenerate inputs of the subcommands:
#  - combine refuses an output that is one of its inputs (same path, a
#    symlink, a hard link; input untouched) and an input without XUs
#    (complete, or truncated to none) unless --allow-empty;
#  - simulate refuses an empty or comment-only model file;
#  - "<out>.tmp.<pid>" of dead processes is removed by the next command
#    writing <out>, a live process's is kept;
#  - a write failure (full disk: /dev/full, and as root a 64 KiB tmpfs)
#    exits 2 with the path and the reason, and leaves no output, no
#    0-byte file and no temporary file.
#   test_outputs.sh OMPFUSE
set -u
B=$1
T=$(mktemp -d /tmp/ompf-outputs-XXXXXX)
M=
cleanup() { [ -n "$M" ] && umount "$M" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

# expect CODE FRAGMENT -- command...
expect() {
  local code=$1 frag=$2
  shift 3
  timeout 60 "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" != "$code" ]; then bad "$* -> exit $rc, want $code: $(head -c 400 "$T/err")"; return 1; fi
  if [ -n "$frag" ] && ! grep -qF -- "$frag" "$T/err"; then bad "$* -> stderr lacks '$frag': $(head -c 400 "$T/err")"; return 1; fi
  ok
}

mk() { # mk NAME SEED: a 50-XU profile with events e1, e2
  /usr/bin/python3 -c "
import random; random.seed($2)
print('xu,type,kind,label,thread,cpu,start_ns,end_ns,e1,e2')
for r in range(50):
    print('%d,a:1,task,0.%d,0,0,%d,%d,%d,%d' % (r, r, r * 10, r * 10 + 5,
          random.randint(1, 100), random.randint(1, 100)))" >"$T/$1.csv"
  "$B" import --csv "$T/$1.csv" -o "$T/$1.ompf" || bad "import $1"
}
mk a 1; mk b 2; mk c 3

# ---- combine: output is an input --------------------------------------
cp "$T/a.ompf" "$T/a.keep"
ln -s a.ompf "$T/a.sym"
ln "$T/a.ompf" "$T/a.hard"
for o in "$T/a.ompf" "$T/a.sym" "$T/a.hard"; do
  for s in ctc lgl; do
    expect 2 "is input 1 ($T/a.ompf)" -- "$B" combine --strategy $s -o "$o" "$T/a.ompf" "$T/b.ompf"
    expect 2 "is input 2 ($T/a.ompf)" -- "$B" combine --strategy $s --force -o "$o" "$T/b.ompf" "$T/a.ompf"
  done
done
cmp -s "$T/a.ompf" "$T/a.keep" && ok || bad "combine changed its input"
expect 0 "" -- "$B" combine --strategy lgl -q -o "$T/ab.ompf" "$T/a.ompf" "$T/b.ompf"

# ---- combine: inputs without XUs ----------------------------------------
head -1 "$T/a.csv" >"$T/none.csv"
"$B" import --csv "$T/none.csv" -o "$T/none.ompf" || bad "import of a header-only CSV"
expect 2 "$T/none.ompf has no XUs; " -- "$B" combine --strategy ctc -o "$T/x.ompf" "$T/a.ompf" "$T/none.ompf"
[ -e "$T/x.ompf" ] && bad "refused combine wrote its output" || ok
# Truncated so that no XU survives: keep the file up to its first XUS chunk.
/usr/bin/python3 - "$T/b.ompf" "$T/cut.ompf" <<'PY' || bad "cutting the profile"
import struct, sys
d = open(sys.argv[1], 'rb').read()
hs = struct.unpack_from('<I', d, 12)[0]            # header size
off = hs
while off + 32 <= len(d):
    typ, = struct.unpack_from('<I', d, off)
    if typ == 5:                                       # XUS
        break
    stored, = struct.unpack_from('<Q', d, off + 8)
    off += 32 + stored
open(sys.argv[2], 'wb').write(d[:off + 10])
PY
"$B" show "$T/cut.ompf" 2>/dev/null | grep -q "TRUNCATED: truncated after 0 XUs" && ok \
  || bad "the cut profile is not a truncation to 0 XUs: $("$B" show "$T/cut.ompf" 2>&1 | head -3)"
expect 2 "has no XUs (its truncated file salvaged none)" -- \
  "$B" combine --strategy ctc -o "$T/x.ompf" "$T/a.ompf" "$T/cut.ompf"
# (--force: the header-only CSV records another team size)
expect 0 "" -- "$B" combine --strategy ctc --allow-empty --force -q -o "$T/x.ompf" "$T/a.ompf" "$T/none.ompf"
[ -s "$T/x.ompf" ] && ok || bad "--allow-empty wrote nothing"

# ---- simulate: empty model ----------------------------------------------
: >"$T/empty.model"
printf '# only a comment\n\n   # another\n' >"$T/comment.model"
for m in empty comment; do
  expect 2 "$T/$m.model: the model file sets nothing" -- \
    "$B" simulate --model "$T/$m.model" --plan-auto 2 -o "$T/sim-$m"
  expect 2 "the model file sets nothing" -- "$B" simulate --show-model "$T/$m.model"
  [ -e "$T/sim-$m/truth.ompf" ] && bad "simulate wrote a truth for an empty model" || ok
done
printf 'xus = 40\n' >"$T/one.model"
expect 0 "" -- "$B" simulate --show-model "$T/one.model"

# ---- stale temporary files ------------------------------------------------
sleep 0 & dead=$!; wait $dead
for out in x.csv y.ompf z.ompf p.txt r.html; do
  echo stale >"$T/$out.tmp.$dead"
  echo live >"$T/$out.tmp.$$"
  echo other >"$T/$out.tmp.12ab"
done
expect 0 "removed $T/x.csv.tmp.$dead, left by process $dead, which is gone" -- \
  "$B" export --csv -o "$T/x.csv" "$T/a.ompf"
expect 0 "removed $T/y.ompf.tmp.$dead" -- "$B" import --csv "$T/a.csv" -o "$T/y.ompf"
expect 0 "removed $T/z.ompf.tmp.$dead" -- "$B" combine --strategy ctc -q -o "$T/z.ompf" "$T/a.ompf" "$T/b.ompf"
expect 0 "removed $T/p.txt.tmp.$dead" -- "$B" plan --events x,y --slots 2 --assume-compatible -o "$T/p.txt"
expect 0 "removed $T/r.html.tmp.$dead" -- "$B" report -q -o "$T/r.html" --references "$T/a.ompf" "$T/b.ompf" -- "$T/c.ompf"
for out in x.csv y.ompf z.ompf p.txt r.html; do
  [ -e "$T/$out.tmp.$dead" ] && bad "$out.tmp.$dead (dead writer) was kept" || ok
  [ -e "$T/$out.tmp.$$" ] && ok || bad "$out.tmp.$$ (live writer) was removed"
  [ -e "$T/$out.tmp.12ab" ] && ok || bad "$out.tmp.12ab (not a pid) was removed"
  rm -f "$T/$out.tmp.$$" "$T/$out.tmp.12ab"
done

# ---- write failures ---------------------------------------------------------
full() { # full CODE FRAGMENT -- command... with stdout on /dev/full
  local code=$1 frag=$2
  shift 3
  "$@" >/dev/full 2>"$T/err"
  local rc=$?
  if [ $rc != "$code" ] || ! grep -qF -- "$frag" "$T/err"; then
    bad "$* >/dev/full -> exit $rc, want $code with '$frag': $(head -c 300 "$T/err")"
  else ok; fi
}
nospc="No space left on device"
full 2 "standard output: write failed: $nospc" -- "$B" export --csv "$T/a.ompf"
full 2 "standard output: write failed: $nospc" -- "$B" show "$T/a.ompf"
full 2 "$nospc" -- "$B" report -o - --references "$T/a.ompf" "$T/b.ompf" -- "$T/c.ompf"
full 2 "$nospc" -- "$B" evaluate --csv - --references "$T/a.ompf" "$T/b.ompf" -- "$T/c.ompf"
full 2 "standard output: cannot write the plan: $nospc" -- "$B" plan --events x,y --slots 2 --assume-compatible
full 2 "standard output: write failed: $nospc" -- "$B" simulate --show-model builtin:low

if [ "$(id -u)" = 0 ]; then
  M=$T/small
  mkdir -p "$M"
  if mount -t tmpfs -o size=64k tmpfs "$M"; then
    # A profile and CSV larger than 64 KiB.
    /usr/bin/python3 -c "
print('xu,type,kind,label,thread,cpu,start_ns,end_ns,e1,e2')
for r in range(20000): print('%d,a:1,task,0.%d,0,0,%d,%d,%d,%d' % (r, r, r, r + 1, r * 7919 % 10007, r * 31 % 997))" >"$T/big.csv"
    "$B" import --csv "$T/big.csv" -o "$T/big.ompf" || bad "import big"
    "$B" import --csv "$T/big.csv" -o "$T/big2.ompf" --program other || bad "import big2"
    expect 2 "$M/i.ompf.tmp." -- "$B" import --csv "$T/big.csv" -o "$M/i.ompf"
    grep -qF "$nospc" "$T/err" && ok || bad "import: no reason: $(cat "$T/err")"
    expect 2 "$M/e.csv" -- "$B" export --csv -o "$M/e.csv" "$T/big.ompf"
    grep -qF "$nospc" "$T/err" && ok || bad "export: no reason: $(cat "$T/err")"
    expect 2 "$M/c.ompf" -- "$B" combine --strategy ctc --force -q -o "$M/c.ompf" "$T/big.ompf" "$T/big2.ompf"
    grep -qF "$nospc" "$T/err" && ok || bad "combine: no reason: $(cat "$T/err")"
    # The disk filled up completely: even small outputs fail.
    cat /dev/zero >"$M/fill" 2>/dev/null
    expect 2 "$M/r.html" -- "$B" report -q -o "$M/r.html" --references "$T/a.ompf" "$T/b.ompf" -- "$T/c.ompf"
    grep -qF "$nospc" "$T/err" && ok || bad "report: no reason: $(cat "$T/err")"
    expect 2 "$M/e.csv" -- "$B" evaluate -q --csv "$M/e.csv" --references "$T/a.ompf" "$T/b.ompf" -- "$T/c.ompf"
    grep -qF "$nospc" "$T/err" && ok || bad "evaluate: no reason: $(cat "$T/err")"
    expect 2 "$M/p.txt" -- "$B" plan --events x,y --slots 2 --assume-compatible -o "$M/p.txt"
    grep -qF "$nospc" "$T/err" && ok || bad "plan: no reason: $(cat "$T/err")"
    expect 2 "$M/s" -- "$B" simulate -q --model builtin:zero --plan-auto 2 -o "$M/s"
    grep -qF "$nospc" "$T/err" && ok || bad "simulate: no reason: $(cat "$T/err")"
    rm -f "$M/fill"
    # simulate created its directory, but no file may be left in it.
    [ -z "$(find "$M/s" -type f 2>/dev/null)" ] && ok || bad "simulate left files: $(ls -la "$M/s")"
    rmdir "$M/s" 2>/dev/null
    [ -z "$(ls -A "$M")" ] && ok || bad "the full disk holds leftovers: $(ls -la "$M")"
  else
    bad "mount of a tmpfs failed although running as root"
  fi
else
  echo "note: not root: the tmpfs part (import, export -o, combine on a full disk) did not run"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
