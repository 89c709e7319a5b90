#!/usr/bin/env bash
# Counts up to 2^64-1 are exact through import -> .ompf -> export (CSV,
# JSON, the Python reader) and through combine, table-driven over the
# edges of a double (2^53 +- 1) and of a uint64; cells out of range or
# of the wrong syntax are refused with file:line:column (issue #22).
#   test_exact.sh OMPFUSE PYTHON_SOURCE_DIR
set -u
B=$1 PY=$2
T=$(mktemp -d /tmp/ompf-exact-XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

vals=(0 1 9007199254740991 9007199254740992 9007199254740993 9223372036854775808
      18446744073709551614 18446744073709551615)
n=${#vals[@]}
# Two event columns: the values in order and reversed (so that each XU
# mixes small and large counts), plus a missing cell and a fraction in a
# third column.  Written as export writes it, so the text must come back
# byte for byte.
{
  echo "xu,type,kind,label,thread,cpu,start_ns,end_ns,up,down,other"
  for ((i = 0; i < n; i++)); do
    o=$([ $((i % 2)) = 0 ] && echo "" || echo 0.5)
    echo "$((i + 1)),f.c:$((i % 3 + 1)),task,0.$((i + 1)),$((i % 2)),-1,$((10 * i)),$((10 * i + 5)),${vals[i]},${vals[n - 1 - i]},$o"
  done
} >"$T/a.csv"

"$B" import --csv "$T/a.csv" -o "$T/a.ompf" --program p 2>"$T/err" || bad "import: $(cat "$T/err")"
"$B" export --csv "$T/a.ompf" -o "$T/b.csv" || bad "export"
cmp -s "$T/a.csv" "$T/b.csv" && ok || bad "CSV -> import -> export differs: $(diff "$T/a.csv" "$T/b.csv" | head -5)"
"$B" import --csv "$T/b.csv" -o "$T/b.ompf" --program p && "$B" export --csv "$T/b.ompf" -o "$T/c.csv" ||
  bad "second import/export"
cmp -s "$T/b.csv" "$T/c.csv" && ok || bad "export -> import -> export differs"

# JSON carries every count as digits.
"$B" export --format json "$T/a.ompf" -o "$T/a.json" || bad "json export"
/usr/bin/python3 - "$T/a.json" "${vals[@]}" <<'PY' && ok || bad "JSON values"
import json, sys
d = json.load(open(sys.argv[1]))  # Python ints are exact
want = [int(v) for v in sys.argv[2:]]
got = [x["values"][0] for x in d["profiles"][0]["xus"]]
down = [x["values"][1] for x in d["profiles"][0]["xus"]]
if got != want or down != want[::-1]:
    sys.exit("json: %r / %r, want %r" % (got, down, want))
PY

# The Python reader: exact integers, not floats.
OMPFUSE=$B PYTHONPATH=$PY /usr/bin/python3 - "$T/a.ompf" "${vals[@]}" <<'PY' && ok || bad "Python reader"
import sys
import ompfuse
p = ompfuse.read(sys.argv[1])
want = [int(v) for v in sys.argv[2:]]
for col, w in (("up", want), ("down", want[::-1])):
    got = [int(v) for v in p.xus[col]]
    if got != w or str(p.xus[col].dtype) not in ("uint64", "UInt64"):
        sys.exit("%s: %r (%s), want %r" % (col, got, p.xus[col].dtype, w))
PY

# combine copies the counts of each event from the run that measured it.
cut -d, -f1-9 "$T/a.csv" >"$T/u.csv"
cut -d, -f1-8,10,11 "$T/a.csv" >"$T/d.csv"
"$B" import --csv "$T/u.csv" -o "$T/u.ompf" --program p &&
  "$B" import --csv "$T/d.csv" -o "$T/d.ompf" --program p || bad "import of the halves"
# (bc needs an event both runs count; all strategies copy values in fuse.c)
for s in ctc lgl; do
  "$B" combine --strategy $s -o "$T/f.ompf" "$T/u.ompf" "$T/d.ompf" >/dev/null 2>"$T/err" ||
    { bad "combine $s: $(cat "$T/err")"; continue; }
  "$B" export --csv "$T/f.ompf" -o "$T/f.csv" || bad "export of the fused profile"
  cmp -s "$T/a.csv" "$T/f.csv" && ok || bad "combine $s: $(diff "$T/a.csv" "$T/f.csv" | head -5)"
done

# Refused cells: column, cell -> message fragment; each at line 3 of a
# copy of a.csv, with its column number checked.
cols=(xu type kind label thread cpu start_ns end_ns up down other)
refuse=(
  "up|18446744073709551616|above 2^64-1"
  "up|99999999999999999999999|above 2^64-1"
  "up|0x10|is not a number"
  "up|+5|is not a number"
  "up| 5|is not a number"
  "up|nan|is not a number"
  "up|-9007199254740993|below -2^53"
  "up|1e999|beyond the range"
  "xu|18446744073709551616|"
  "xu|1.5|"
  "xu|-1|"
  "xu|0x10|"
  "thread|+1|"
  "start_ns|1e3|"
  "end_ns|-5|"
)
for r in "${refuse[@]}"; do
  IFS='|' read -r col cell frag <<<"$r"
  k=0
  for ((j = 0; j < ${#cols[@]}; j++)); do [ "${cols[j]}" = "$col" ] && k=$j; done
  awk -F, -v OFS=, -v k=$((k + 1)) -v c="$cell" 'NR == 3 { $k = c } { print }' "$T/a.csv" >"$T/r.csv"
  # column: 1 + the lengths of the fields before it, each with its comma
  colno=$(awk -F, -v k=$((k + 1)) 'NR == 3 { c = 1; for (i = 1; i < k; i++) c += length($i) + 1; print c }' "$T/r.csv")
  "$B" import --csv "$T/r.csv" -o "$T/r.ompf" >/dev/null 2>"$T/err"
  rc=$?
  if [ $rc != 2 ]; then bad "cell '$cell' in $col: exit $rc, want 2"; continue; fi
  grep -qF -- "$T/r.csv:3:$colno:" "$T/err" || { bad "cell '$cell' in $col: no r.csv:3:$colno: in $(cat "$T/err")"; continue; }
  [ -z "$frag" ] || grep -qF -- "$frag" "$T/err" || { bad "cell '$cell': lacks '$frag': $(cat "$T/err")"; continue; }
  [ -e "$T/r.ompf" ] && { bad "cell '$cell': an output was written"; continue; }
  ok
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
