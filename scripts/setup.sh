#!/usr/bin/env bash
# Installs everything ompfuse needs on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are skipped by apt-get.
# Why each package is here: docs/dependencies.md.
set -euo pipefail

PKGS=(
  clang-19 libomp-19-dev libclang-rt-19-dev   # OpenMP toolchain + runtime with OMPT dispatch, sanitizers, libFuzzer
  cmake make pkg-config gcc                    # build (gcc: .ci/run also builds with it, -Werror)
  libpfm4-dev                                  # event names -> perf_event encodings
  libhwloc-dev                                 # CPU -> core / NUMA node
  libzstd-dev zlib1g-dev                       # profile chunk compression, crc32
  libcmocka-dev                                # C unit tests
  python3-numpy python3-scipy python3-pot      # independent oracles in tests (EMD, Spearman)
  python3-pandas                               # python/ompfuse (profiles as DataFrames); tests: CSV loads with pandas.read_csv
  chromium                                     # headless rendering test of the HTML report (eval_report_render)
  libdw-dev                                    # construct -> file:line / function (elfutils libdw)
  binutils                                     # tests: objdump, addr2line as an oracle
  strace                                       # tests: which commands execute themselves again (cli_thp)
  libopen-trace-format2-dev                    # ompfuse export --format otf2 (built when present)
  otf2-tools python3-otf2                      # tests: OTF2 exports read back by otf2-print and python3-otf2
)

bash "$(dirname "$0")/install-packages.sh" setup.sh "${PKGS[@]}"
echo "setup.sh: all dependencies present"
