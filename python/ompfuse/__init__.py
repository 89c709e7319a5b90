"""Read ompfuse profiles (.ompf) into pandas.

    import ompfuse
    p = ompfuse.read("run.ompf")
    p.metadata      # dict: program, mode, run_id, strategy, ...
    p.argv          # the run's command line as a list
    p.events        # DataFrame: name, status, reason, unit, source
    p.constructs    # DataFrame: name (file:line), kind, file, line, ...
    p.threads       # DataFrame per thread: os_tid; total, gap, ... per event
                    # (p.threads["gap"]: the gap of every thread and event)
    p.xus           # DataFrame: one row per XU, one column per event
    p.parts         # DataFrame: one row per XU part (xu, part, thread,
                    # start_ns, end_ns): suspended tasks ran in several

    runs = ompfuse.read_many("campaign/")   # every .ompf below, or a list
    runs.xus        # all XUs, with columns path, run_id, mode in front

Event columns: exact counts are integers (uint64, or pandas' nullable
UInt64 when some values are missing: <NA>); estimated or fractional
values are float64 with NaN for missing.  The profile is read by the
`ompfuse` program itself (`ompfuse export --csv --metadata`), so there is
one reader of the format; see docs/dependencies.md for why.
"""
from ._read import Profile, Profiles, find_ompfuse, read, read_many

__all__ = ["Profile", "Profiles", "find_ompfuse", "read", "read_many"]
__version__ = "0.1.0"
