#!/usr/bin/env bash
# cmake --install into a temporary prefix; a C program compiled and linked
# against the installed libompfprofile through pkg-config; the installed
# OMPT tool, named by pkg-config's variable, records a bundled program; the
# installed ompfuse reads that profile; the installed Python package finds
# the installed program and reads it too.
# usage: export_install.sh BUILD_DIR SOURCE_DIR PROG CC [EXTRA_CFLAGS]
set -u
build=$1 src=$2 prog=$3 cc=$4 extra=${5:-}
P=$(mktemp -d /tmp/ompf-install-XXXXXX)
trap 'rm -rf "$P"' EXIT
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

cmake --install "$build" --prefix "$P" >"$P/install.log" 2>&1 || { cat "$P/install.log"; exit 1; }
for f in bin/ompfuse lib/libompfuse.so lib/libompfprofile.so include/ompfuse/profile.h \
         include/ompfuse/export.h lib/pkgconfig/ompfuse.pc share/man/man1/ompfuse.1 \
         share/man/man1/ompfuse-export.1; do
  [ -e "$P/$f" ] || bad "not installed: $f"
done
export PKG_CONFIG_PATH=$P/lib/pkgconfig
tool=$(pkg-config --variable=tool ompfuse) && [ "$tool" = "$P/lib/libompfuse.so" ] \
  || bad "pkg-config tool variable: '$tool'"
exe=$(pkg-config --variable=ompfuse ompfuse)
pydir=$(pkg-config --variable=pythondir ompfuse)
[ -f "$pydir/ompfuse/__init__.py" ] || bad "python package not in $pydir"
grep -q "ompfuse export" "$P/share/man/man1/ompfuse-export.1" || bad "export man page"

# the installed tool records a bundled program (named through pkg-config)
OMP_NUM_THREADS=2 OMP_TOOL_LIBRARIES=$tool OMPFUSE_EVENTS=perf::TASK-CLOCK \
  OMPFUSE_OUTPUT=$P/fib.ompf "$prog" 10 >/dev/null || bad "program under the installed tool"
n=$("$exe" show "$P/fib.ompf" | awk '$1 == "XUs:" {print $2}')
[ -n "$n" ] && [ "$n" -gt 0 ] || bad "installed ompfuse show: '$n' XUs"

# a C program against the installed library, through pkg-config only
"$cc" $extra $(pkg-config --cflags ompfuse) -o "$P/install_prog" "$src/tests/export/install_prog.c" \
  $(pkg-config --libs ompfuse) -Wl,-rpath,"$P/lib" || bad "compile/link against the install"
out=$("$P/install_prog" "$P/fib.ompf" "$P/fib.json") || bad "install_prog failed"
[ "$out" = "XUs: $n events: 1" ] || bad "install_prog says '$out', show says $n XUs"
ldd "$P/install_prog" | grep -q "$P/lib/libompfprofile.so" || bad "not linked to the installed .so"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['profiles'][0]['xus']) == int(sys.argv[2])" \
  "$P/fib.json" "$n" || bad "JSON written by install_prog"

# the installed Python package finds the installed program by itself
env -u OMPFUSE PATH=/usr/bin:/bin PYTHONPATH=$pydir /usr/bin/python3 -c "
import sys, ompfuse
assert ompfuse.__file__.startswith(sys.argv[1]), ompfuse.__file__
assert ompfuse.find_ompfuse() == sys.argv[2], ompfuse.find_ompfuse()
assert len(ompfuse.read(sys.argv[3]).xus) == int(sys.argv[4])
" "$pydir" "$exe" "$P/fib.ompf" "$n" || bad "installed python package"
[ $fail = 0 ] && echo "install into $P: ok ($n XUs)"
exit $fail
