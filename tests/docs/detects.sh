#!/bin/bash
# docs_self_contained_detects: self_contained.sh refuses each kind of
# citation planted in a copy of docs/ (not a git checkout: the find branch),
# and accepts the copy before planting.
#   detects.sh SELF_CONTAINED_SH SRCDIR
set -u
check=${1:?usage: detects.sh SELF_CONTAINED_SH SRCDIR}; src=${2:?}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs"
cp "$src/docs/semantics.md" "$src/docs/tool.md" "$tmp/docs/" || exit 2
bash "$check" "$tmp" >"$tmp/out" 2>&1 || { echo "clean copy refused:"; cat "$tmp/out"; exit 1; }
fail=0
n=0
for plant in "see SPEC"".md" "as SPEC ""§4 says" "SPEC ""section 8" "../""shared/x" \
             "/work""/shared/papers" "[x](semantics.md""#no-such-section)"; do
    n=$((n + 1))
    rm -f "$tmp"/docs/planted*.c
    printf '/* %s */\n' "$plant" >"$tmp/docs/planted$n.c"
    if bash "$check" "$tmp" >"$tmp/out" 2>&1; then
        echo "not detected: $plant"; fail=1
    elif ! grep -q "planted$n.c:1:" "$tmp/out"; then
        echo "detected without naming the file and line: $plant"; cat "$tmp/out"; fail=1
    fi
done
[ $fail = 0 ] && echo "all $n planted citations detected"
exit $fail
