#!/usr/bin/env bash
# `ompfuse help CMD` prints exactly what `ompfuse CMD --help` prints, for
# every command `ompfuse --help` lists; an unknown one exits 2, and a typo
# of one (a letter left out, two swapped) names it.
#   help_cmd.sh OMPFUSE
set -u
B=$1
fail=0 n=0
cmds=$("$B" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}')
[ -n "$cmds" ] || { echo "FAIL: no commands in 'ompfuse --help'"; exit 1; }
for c in $cmds; do
  n=$((n + 1))
  a=$("$B" help "$c" 2>&1); ra=$?
  b=$("$B" "$c" --help 2>&1); rb=$?
  if [ "$a" != "$b" ] || [ $ra != 0 ] || [ $rb != 0 ]; then
    echo "FAIL: 'ompfuse help $c' (exit $ra) differs from 'ompfuse $c --help' (exit $rb)"
    fail=$((fail + 1))
  fi
done
"$B" help no-such-command >/dev/null 2>&1
[ $? = 2 ] || { echo "FAIL: 'ompfuse help no-such-command' did not exit 2"; fail=$((fail + 1)); }
for typo in comine:combine anlayze:analyze evalute:evaluate; do
  m=$("$B" "${typo%%:*}" 2>&1); r=$?
  case "$m" in *"did you mean '${typo#*:}'"*) ;; *) r=x ;; esac
  [ "$r" = 2 ] || { echo "FAIL: 'ompfuse ${typo%%:*}': exit $r, $m"; fail=$((fail + 1)); }
done
m=$("$B" xyzzy 2>&1)
case "$m" in *"did you mean"*) echo "FAIL: 'ompfuse xyzzy' suggests: $m"; fail=$((fail + 1)) ;; esac
echo "$n commands checked"
[ $fail = 0 ]
