#!/usr/bin/env bash
# Huge pages for commands that read large profiles (cli/heap.h): where the
# kernel's THP mode is "madvise", `show` and `combine` with >= 16 MB of
# input files execute themselves once more with GLIBC_TUNABLES
# glibc.malloc.hugetlb=1; not with small inputs, not with OMPFUSE_NO_THP,
# not when GLIBC_TUNABLES already names hugetlb.  Either
# way the output is the same bytes.
#   thp.sh OMPFUSE BENCH_FUSION WORKDIR
set -u
B=$1 GEN=$2 W=$3
fail=0
rm -rf "$W" && mkdir -p "$W" || exit 1
"$GEN" --generate-only --runs 2 --xus 1000000 --bc-steps 1 --bc-xus 1 "$W/in" >/dev/null || {
  echo "FAIL: cannot generate inputs"; exit 1; }
big=("$W/in/lgl0.ompf" "$W/in/lgl1.ompf" "$W/in/lgl0.ompf" "$W/in/lgl1.ompf")
size=$(stat -c %s "${big[@]}" | awk '{s += $1} END {print s}')
[ "$size" -ge $((16 << 20)) ] || { echo "FAIL: inputs only $size bytes"; exit 1; }
mode=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
want=1
case "$mode" in *"[madvise]"*) want=2 ;; esac
echo "THP mode: ${mode:-none}; a large input should give $want execve"

# execs CASE EXPECTED ENV... -- ARGS: counts the execve calls that succeed
execs() {
  local name=$1 exp=$2; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  # LeakSanitizer cannot run under ptrace: off under strace (the plain
  # runs below keep it)
  env "${envs[@]}" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -v -s 4096 -e trace=execve -o "$W/trace" "$B" "$@" \
    >"$W/$name.out" 2>"$W/$name.err"
  echo $? >"$W/$name.rc"
  local n
  n=$(grep -c 'execve(.*= 0$' "$W/trace")
  if [ "$n" != "$exp" ]; then
    echo "FAIL: $name: $n execve, expected $exp"; sed 's/^/  /' "$W/trace"; fail=$((fail + 1))
  fi
  # -v shows each execve's environment: the second one sets the tunable
  if [ "$exp" = 2 ] && ! grep -q 'glibc.malloc.hugetlb=1' "$W/trace"; then
    echo "FAIL: $name: the second execve does not set glibc.malloc.hugetlb=1"; fail=$((fail + 1))
  fi
}
execs show-big "$want" X=1 -- show "${big[@]}"
execs show-nothp 1 OMPFUSE_NO_THP=1 -- show "${big[@]}"
execs show-small 1 X=1 -- show "$W/in/bc0.ompf"
execs show-tunables 1 GLIBC_TUNABLES=glibc.malloc.hugetlb=0 -- show "${big[@]}"
execs combine-big "$want" X=1 -- combine --strategy lgl -q -o "$W/thp.ompf" "$W/in/lgl0.ompf" \
  "$W/in/lgl1.ompf" "$W/in/lgl0.ompf" "$W/in/lgl1.ompf" --force
execs combine-nothp 1 OMPFUSE_NO_THP=1 -- combine --strategy lgl -q -o "$W/plain.ompf" \
  "$W/in/lgl0.ompf" "$W/in/lgl1.ompf" "$W/in/lgl0.ompf" "$W/in/lgl1.ompf" --force
for c in show-big combine-big; do
  o=${c%-big}
  p=$([ "$o" = show ] && echo show-nothp || echo combine-nothp)
  if [ "$(cat "$W/$c.rc")" != "$(cat "$W/$p.rc")" ] || ! cmp -s "$W/$c.out" "$W/$p.out"; then
    echo "FAIL: $c: exit $(cat "$W/$c.rc") or output differs from $p (exit $(cat "$W/$p.rc"))"
    fail=$((fail + 1))
  fi
done
if ! cmp -s "$W/thp.ompf" "$W/plain.ompf"; then
  echo "FAIL: combine wrote different files with and without huge pages"
  sed 's/^/  /' "$W/combine-big.err" "$W/combine-nothp.err"; fail=$((fail + 1))
fi
for c in show-big combine-big; do
  [ "$(cat "$W/$c.rc")" = 0 ] || { echo "FAIL: $c exited $(cat "$W/$c.rc")"; fail=$((fail + 1)); }
done
# and without strace (under ASan with leak detection): the executed-again
# process exits 0 with the same output
"$B" show "${big[@]}" >"$W/plain-show.out" 2>"$W/plain-show.err"
rc=$?
if [ $rc != 0 ] || ! cmp -s "$W/plain-show.out" "$W/show-nothp.out"; then
  echo "FAIL: show without strace: exit $rc or different output"; sed 's/^/  /' "$W/plain-show.err"
  fail=$((fail + 1))
fi
[ $fail = 0 ] && echo "cli_thp: all checks passed" || echo "$fail failure(s)"
exit $((fail > 0))
