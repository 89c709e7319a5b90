"""What the Slurm tests share: ok/FAIL lines with a failure list, and the
campaign manifest (DIR/manifest.tsv) as a list of dicts."""
import os

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def manifest(d):
    rows = []
    for l in open(os.path.join(d, "manifest.tsv")):
        if not l.startswith("#"):
            f = l.rstrip("\n").split("\t")
            rows.append(dict(index=int(f[0]), role=f[1], repeat=int(f[2]), events=f[3],
                             status=f[4], exit=f[5], profile=f[7],
                             node=f[8] if len(f) > 8 else None))
    return rows
