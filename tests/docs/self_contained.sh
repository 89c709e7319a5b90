#!/bin/bash
# docs_self_contained: the repository explains itself.  No file may cite the
# founding specification that lives outside the repository (its name, or its
# sections: the word SPEC followed by a section sign or "section") or a path
# outside the tree; the semantics are in docs/semantics.md.  Every link to a
# section of that page must name one of its headings.
#   self_contained.sh SRCDIR
# Files: `git ls-files` when SRCDIR is a git checkout, else every regular
# file outside .git and build directories.  Exit 0 clean, 1 findings, 2 usage.
# The patterns are split so that this script does not match itself.
set -u
src=${1:?usage: self_contained.sh SRCDIR}
cd "$src" || exit 2

if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
   [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
    mapfile -d '' files < <(git ls-files -z)
else
    mapfile -d '' files < <(find . \( -name .git -o -name 'build*' \) -prune \
                               -o -type f -print0)
fi
[ ${#files[@]} -gt 0 ] || { echo "no files under $src" >&2; exit 2; }

bad=0
# Citations of the outside specification ("--model SPEC" is a metavariable
# and "SPECIAL" a word: neither is matched by these patterns).
spec_md="SPEC"".md"
spec_sec="SPEC ""§"
spec_word="SPEC ""section"
outside="../""shared"
outside_abs="/work""/shared"
hits=$(grep -nIF -e "$spec_md" -e "$spec_sec" -e "$spec_word" \
            -e "$outside" -e "$outside_abs" -- "${files[@]}" 2>/dev/null)
if [ -n "$hits" ]; then
    echo "cites something outside the repository (say it in docs/semantics.md and link there):"
    echo "$hits"
    bad=1
fi

# Links to sections of docs/semantics.md must name one of its headings
# (GitHub's anchor: lower case, punctuation dropped, spaces to hyphens).
sem=docs/semantics.md
if [ ! -f "$sem" ]; then
    echo "$sem is missing"
    bad=1
else
    anchors=$(sed -n 's/^##* \(.*\)$/\1/p' "$sem" |
              tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g')
    while IFS= read -r ref; do
        file=${ref%%:*}; rest=${ref#*:}; line=${rest%%:*}
        anchor=${ref##*semantics.md#}
        if ! grep -qxF -- "$anchor" <<<"$anchors"; then
            echo "$file:$line: link to semantics.md#$anchor, which is no heading of $sem"
            bad=1
        fi
    done < <(grep -noIE 'semantics\.md#[a-z0-9_-]+' -- "${files[@]}" 2>/dev/null)
fi
exit $bad
