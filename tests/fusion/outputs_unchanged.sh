#!/usr/bin/env bash
# Outputs of 'ompfuse combine' (every strategy) stay byte for byte what the
# code before issue 20's scaling work wrote (main at 7885831): inputs come
# from bench_fusion --generate-only (deterministic), each strategy fuses them
# through the CLI, and the SHA-256 of every output file and of its printed
# report must equal the digests in outputs_unchanged.sha256, which were made
# with the binary built from 7885831 (--record regenerates them: only ever
# with that old binary).
#   outputs_unchanged.sh OMPFUSE BENCH_FUSION DIGESTS TAG WORKDIR [--record]
# TAG: 1e4 (3 runs x 10^4 XUs) or 1e6 (3 runs x 10^6 XUs; BC 2 steps x
# 5x10^5 XUs per type, 2 types).
set -euo pipefail
ompfuse=$1 bench=$2 digests=$3 tag=$4 work=$5 record=${6:-}
case $tag in
  1e4) sizes=(--runs 3 --xus 10000 --bc-steps 2 --bc-xus 5000) ;;
  1e6) sizes=(--runs 3 --xus 1000000 --bc-steps 2 --bc-xus 500000) ;;
  *) echo "outputs_unchanged: unknown size $tag" >&2; exit 2 ;;
esac
rm -rf "$work"
mkdir -p "$work"
"$bench" --generate-only "${sizes[@]}" "$work/in" >/dev/null
cd "$work/in"
lines=()
for f in lgl0 lgl1 lgl2 bc0 bc1 bc2; do
  lines+=("$tag input $f $(sha256sum <"$f.ompf" | cut -d' ' -f1)")
done
fuse() { # name strategy inputs...
  local name=$1 strat=$2
  shift 2
  "$ompfuse" combine --strategy "$strat" -o "../$name.ompf" "$@" >"../$name.txt"
  lines+=("$tag output $name.ompf $(sha256sum <"../$name.ompf" | cut -d' ' -f1)")
  lines+=("$tag report $name.txt $(sha256sum <"../$name.txt" | cut -d' ' -f1)")
}
for s in lgl ctc random; do fuse "lgl_$s" "$s" lgl0.ompf lgl1.ompf lgl2.ompf; done
for s in bc bc-unlabeled lgl ctc random; do fuse "bc_$s" "$s" bc0.ompf bc1.ompf bc2.ompf; done
fuse bc_order_given bc --order given --seed 7 bc2.ompf bc0.ompf bc1.ompf
fuse bcu_seed bc-unlabeled --seed 12345 bc1.ompf bc0.ompf bc2.ompf
if [ "$record" = --record ]; then
  { grep -v "^$tag " "$digests" 2>/dev/null || true; printf '%s\n' "${lines[@]}"; } \
    | sort >"$digests.new"
  mv "$digests.new" "$digests"
  echo "recorded ${#lines[@]} digests for $tag in $digests"
  exit 0
fi
bad=0
for l in "${lines[@]}"; do
  key=${l% *}
  want=$(grep -F "$key " "$digests" | cut -d' ' -f4 || true)
  if [ -z "$want" ]; then
    echo "FAIL: no recorded digest for '$key'" >&2; bad=1
  elif [ "$want" != "${l##* }" ]; then
    echo "FAIL: $key differs from the output of the old code" >&2; bad=1
  fi
done
[ $bad = 0 ] && echo "ok: ${#lines[@]} inputs, outputs and reports of $tag equal the old code's"
rm -rf "$work"
exit $bad
