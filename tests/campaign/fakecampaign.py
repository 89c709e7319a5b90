"""Helpers of the campaign tests that drive `ompfuse run` and `ompfuse
campaign` with fakeprog (tests/campaign/fakeprog.c): checks, the
environment, plans and fakeprog's log."""
import collections
import os

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def env(fake, **kw):
    """This environment with fakeprog as the tool (any existing file will
    do: fakeprog writes the profiles itself), fakeprog's switches cleared,
    then kw."""
    e = dict(os.environ)
    e["OMPFUSE_TOOL"] = fake
    for k in ("FAKE_FAIL", "FAKE_HANG", "FAKE_PLAIN_FAIL", "FAKE_SPAWN_MS", "FAKE_SLEEP_MS",
              "OMPFUSE_PMU_SLOTS"):
        e.pop(k, None)
    e.update({k: str(v) for k, v in kw.items()})
    return e


def write_plan(path, lines):
    with open(path, "w") as f:
        f.write("# test plan\n# slots: 2\n" + "".join(l + "\n" for l in lines))


def log_entries(path, pids=None):
    """Counter of (what, name) in fakeprog's log; pids (a dict), when
    given, gets the last pid of each."""
    c = collections.Counter()
    if os.path.exists(path):
        for l in open(path):
            what, name, pid = l.split()
            c[(what, name)] += 1
            if pids is not None:
                pids[(what, name)] = int(pid)
    return c
