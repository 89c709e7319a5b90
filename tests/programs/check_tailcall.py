#!/usr/bin/python3
"""Checks how a function of a built program ends its task creation: with a
call (return address inside the program) or with a tail jump (codeptr_ra
inside libomp).  Guards the purpose of prog_listing11 / _sibcall.

usage: check_tailcall.py OBJDUMP BINARY FUNCTION call|jmp"""
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in ("call", "jmp"):
        sys.exit(__doc__)
    objdump, binary, func, want = sys.argv[1:]
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", binary], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(rf"^[0-9a-f]+ <{re.escape(func)}>:\n(.*?)(?:\n\n|\Z)", out, re.M | re.S)
    if not m:
        sys.exit(f"FAIL: function {func} not found in {binary}")
    kinds = re.findall(r"\s(call|jmp)\s+[0-9a-f]+ <__kmpc_omp_task@plt>", m.group(1))
    print(f"{binary}: {func} reaches __kmpc_omp_task by {kinds}")
    if kinds != [want]:
        sys.exit(f"FAIL: expected exactly one {want} to __kmpc_omp_task")
    print("PASS")


if __name__ == "__main__":
    main()
