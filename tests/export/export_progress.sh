#!/bin/sh
# The progress line of ompfuse export (forced with OMPFUSE_PROGRESS=always:
# stderr is no terminal here): MB written per format, profiles read when
# there are several, the line erased at the end; the output is the same
# byte for byte as without it.  Usage: export_progress.sh OMPFUSE PROFILE DIR
set -u
B="$1" P="$2" W="$3" fails=0
mkdir -p "$W" || exit 1
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in csv json perfetto; do
    OMPFUSE_PROGRESS=always "$B" export --format "$f" -o "$W/p.$f" "$P" 2>"$W/err" ||
        fail "$f: exit $?"
    grep -q "ompfuse export $f: [0-9]* MB written" "$W/err" || { fail "$f: no progress line"; cat "$W/err"; }
    tail -c 1 "$W/err" | od -c | grep -q '\\r' || fail "$f: line not erased (no final \\r)"
    OMPFUSE_PROGRESS=never "$B" export --format "$f" -o "$W/q.$f" "$P" 2>"$W/err" ||
        fail "$f: exit $? without progress"
    [ -s "$W/err" ] && fail "$f: OMPFUSE_PROGRESS=never printed: $(cat "$W/err")"
    cmp -s "$W/p.$f" "$W/q.$f" || fail "$f: output differs with the progress line"
done
OMPFUSE_PROGRESS=always "$B" export --format json -o "$W/two.json" "$P" "$P" 2>"$W/err"
grep -q "ompfuse export: reading: [0-9]/2 profiles" "$W/err" || fail "no reading line for 2 profiles"
[ "$fails" = 0 ] && echo "export_progress: all passed"
exit "$fails"
