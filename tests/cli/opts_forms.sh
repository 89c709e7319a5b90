#!/usr/bin/env bash
# One option parser for every subcommand (cli/opts.h): the same option
# forms give the same parsed options in every command that has them.
#   opts_forms.sh OMPFUSE
#
# Part 1, a table: each row is a command, the options it must parse to
# (what OMPFUSE_DEBUG_OPTS=1 prints, one NAME=VALUE line per option, then
# the operands; compared after a stable sort by name, so that only the
# order within one name counts), and the forms that must all give it:
# -j2, -j 2, --jobs=2, --jobs 2, a unique prefix, a bundle (-qo F),
# options after the operands.  run and campaign stop at their first operand
# (a program's own command line follows), so they have no "after" form.
# Part 2: the same forms without the test aid, by their effect.
set -u
B=$1
T=$(mktemp -d /tmp/ompf-opts-XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

parsed() { # args... -> the sorted dump, or "exit N: stderr"
  OMPFUSE_DEBUG_OPTS=1 "$B" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ $rc != 0 ] || [ -s "$T/out" ]; then
    echo "exit $rc: $(cat "$T/err" "$T/out")"
    return
  fi
  sort -s -t= -k1,1 "$T/err"
}

# CMD | expected lines (space-separated) | form | form ...
rows=0
while IFS='|' read -r cmd want forms; do
  case "$cmd" in '#'* | '') continue ;; esac
  rows=$((rows + 1))
  want=$(tr ' ' '\n' <<<"$want" | sed '/^$/d' | sort -s -t= -k1,1)
  IFS='|' read -r -a fs <<<"$forms"
  for f in "${fs[@]}"; do
    # shellcheck disable=SC2086  # a form is words split on spaces
    got=$(parsed $cmd $f)
    if [ "$got" = "$want" ]; then
      pass=$((pass + 1))
    else
      bad "ompfuse $cmd $f: parsed as [$(echo $got)], want [$(echo $want)]"
    fi
  done
done <<'TABLE'
# -j N: every command with --jobs
evaluate|jobs=2 references references=R1 references=R2 operand=T|-j2 -r R1 R2 -- T|-j 2 -r R1 R2 -- T|--jobs=2 -r R1 R2 -- T|--jobs 2 -r R1 R2 -- T|--jo=2 -r R1 R2 -- T|T -r R1 R2 -j2|T -r R1 R2 --jobs 2
report|jobs=2 output=r.html references references=R targets targets=T|-j2 -o r.html -r R -- T|-j 2 -or.html -r R -t T|--jobs=2 --output=r.html -r R -- T|--jobs 2 --out r.html -r R -- T|-o r.html -r R -- T -j2|-r R -- T --jo=2 --outp=r.html
run|jobs=2 plan=P operand=prog operand=-x|-j2 --plan P prog -x|-j 2 --plan=P prog -x|--jobs=2 --pl P prog -x|--jo 2 --plan P -- prog -x
campaign|jobs=2 out=D|-j2 -o D|-j 2 --out=D|--jobs=2 -oD|--jo 2 --ou D
# -q and -o bundled, prefixes, options after operands
evaluate|quiet jobs=2 references references=R operand=T|-qj2 -r R -- T|-q -j 2 -r R -- T|T --qu -r R --jobs=2
report|quiet output=r.html references references=R targets targets=T|-qo r.html -r R -- T|-qor.html -r R -- T|-r R -- T --quiet -o r.html|--qui --outpu=r.html -r R -t T
run|quiet jobs=1 plan=P operand=prog|-qj1 --plan P prog|-q -j1 --plan=P prog|--qu --jobs=1 --pla=P prog
clean|quiet output=F operand=in.ompf|-qo F in.ompf|-q -o F in.ompf|-qoF in.ompf|in.ompf -qo F|in.ompf --quiet --output=F|--qu --out F in.ompf
combine|quiet output=F strategy=lgl operand=a operand=b|-qo F --strategy lgl a b|a b -qo F --strat=lgl|--strat lgl a --qu b --outp=F|-q -oF a b --strategy=lgl
simulate|quiet output=D model=builtin:zero plan-auto=4|-qo D --model builtin:zero --plan-auto 4|--mod=builtin:zero --plan-a 4 --output D --quiet|-q --plan-auto=4 -oD --model=builtin:zero
simulate|score quiet operand=T operand=P|--score T P -q|T P --sc -q|-q T --score P
plan|output=P events=all references=0|-o P --events all --references 0|--ev=all --ref 0 --out=P|-oP --references=0 --events=all
events|pmu=perf probe|--pmu perf --probe|--pmu=perf --pro|--probe --pmu perf
export|format=json output=F operand=a operand=b|--format json -o F a b|a b --form=json --out=F|-oF a --format=json b|--fo json a b -o F
analyze|by=thread output=F operand=p|--by thread -o F p|p --by=thread --out F|-oF p --b thread
import|csv=C output=F program=x|--csv C -o F --program x|--cs C -oF --prog=x|--output=F --program x --csv=C
show|no-resolve operand=a operand=b|--no-resolve a b|a --no-res b|a b --no|--no-resolve -- a b
TABLE
[ $rows -ge 15 ] || bad "only $rows table rows read"

# Bad options: one line naming the option, exit 2, in every command.
for c in events plan run campaign combine clean evaluate report analyze show export import simulate; do
  "$B" $c --bogus-option >"$T/out" 2>"$T/err"
  rc=$?
  if [ $rc = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "ompfuse $c: unknown option '--bogus-option'" "$T/err"; then
    pass=$((pass + 1))
  else
    bad "$c --bogus-option: exit $rc: $(cat "$T/err")"
  fi
done
"$B" combine --s lgl a b >"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q "'--s' is ambiguous (--strategy, --seed, --strict)" "$T/err" &&
  pass=$((pass + 1)) || bad "ambiguous prefix: $(cat "$T/err")"
"$B" clean in.ompf -o >"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q "option '-o' needs a value" "$T/err" &&
  pass=$((pass + 1)) || bad "missing value: $(cat "$T/err")"
"$B" clean -qx in.ompf >"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q "unknown option '-x'" "$T/err" &&
  pass=$((pass + 1)) || bad "unknown letter in a bundle: $(cat "$T/err")"

# Part 2: the forms have their effect without the test aid, and data goes
# to stdout alone ('-o -', '--csv', '--json' pipe cleanly).
cat >"$T/a.csv" <<'CSV'
xu,type,kind,label,thread,cpu,start_ns,end_ns,perf::CPU-CLOCK
1,fib.c:7,task,0.1.77,0,1,10,90,800
2,fib.c:7,task,0.1.77.1,1,0,20,60,300
CSV
effect() { # description, then the command; exit 0 and no stderr
  local what=$1
  shift
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ $rc = 0 ] && [ ! -s "$T/err" ]; then pass=$((pass + 1)); else bad "$what: exit $rc: $(cat "$T/err")"; fi
}
effect "import, prefixes and -oF" "$B" import --cs "$T/a.csv" -o"$T/A.ompf" --prog=fib
grep -q "program          fib" <("$B" show "$T/A.ompf") && pass=$((pass + 1)) || bad "import --prog=fib not recorded"
effect "show, option after the operand" "$B" show "$T/A.ompf" --no-res
grep -q "status: complete" "$T/out" && pass=$((pass + 1)) || bad "show output"
effect "export, options after the operand" "$B" export "$T/A.ompf" --form=csv -o -
cmp -s "$T/out" "$T/a.csv" && pass=$((pass + 1)) || bad "export --form=csv -o - is not the CSV alone"
effect "analyze --json -o -" "$B" analyze "$T/A.ompf" --js -o -
/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" &&
  pass=$((pass + 1)) || bad "analyze --json -o - is not JSON alone"
effect "analyze --csv" "$B" analyze --cs "$T/A.ompf"
head -1 "$T/out" | grep -q '^profile,group,' && pass=$((pass + 1)) || bad "analyze --csv stdout"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
