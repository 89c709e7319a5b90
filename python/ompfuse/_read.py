"""The reader: runs `ompfuse export --csv --metadata` into a temporary
directory and loads both files (CSV with pandas' C parser, metadata with
json)."""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import warnings

import numpy as np
import pandas as pd

# Fixed CSV columns and their types (docs/export.md).
_FIXED = {"xu": "uint64", "type": str, "kind": str, "label": str, "thread": "uint32",
          "cpu": "int32", "start_ns": "uint64", "end_ns": "uint64"}


def find_ompfuse(hint=None):
    """The ompfuse program: hint, $OMPFUSE, the installed one, the build
    tree next to this source tree, or PATH."""
    cands = [hint, os.environ.get("OMPFUSE")]
    try:
        from ._install import OMPFUSE
        cands.append(OMPFUSE)
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    cands.append(os.path.join(here, "..", "..", "build", "bin", "ompfuse"))
    cands.append(shutil.which("ompfuse"))
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise FileNotFoundError("ompfuse program not found: set OMPFUSE=/path/to/ompfuse "
                            "or install it (README: Install)")


def _event_column(col, status):
    """One event column as pandas parsed it (int64, or float64 when some
    values are fractional or missing) -> exact integers where the CSV has
    integers (the export prints a value as an integer exactly when it is
    integral and |v| <= 9.2e18, and not -0), else float64."""
    if col.dtype.kind == "O":  # no rows: pandas could not tell
        col = col.astype("float64")
    if status == "estimated" or col.dtype.kind in "iu":
        if col.dtype.kind == "i" and status != "estimated" and (col >= 0).all():
            return col.astype("uint64")
        return col.astype("float64") if status == "estimated" else col
    present = col.dropna()
    ints = ((present % 1 == 0) & (present.abs() <= 9.2e18) &
            ~((present == 0) & np.signbit(present))).all()
    if not ints:
        return col
    return col.astype("Int64" if (present < 0).any() else "UInt64")


def _rounded(col):
    """Whether pandas may have rounded a count of this column: float64 with
    values beyond 2^53, or text (integers beyond 2^63 next to missing
    values or fractions).  Rare: most columns keep pandas' fast parse."""
    if col.dtype.kind == "O":
        return len(col) > 0
    return col.dtype.kind == "f" and (col.abs() >= 2.0 ** 53).any()


def _exact_counts(text, name, col, status):
    """Column name again, from its text: UInt64 with the exact counts when
    every cell is empty or a count up to 2^64-1, else float64 (correctly
    rounded by float())."""
    if status != "estimated" and text.str.fullmatch(r"[0-9]*").all():
        return pd.Series(pd.array([int(t) if t else pd.NA for t in text], dtype="UInt64"),
                         index=col.index, name=name)
    return _event_column(pd.Series([float(t) if t else np.nan for t in text],
                                   index=col.index, name=name, dtype="float64"), status)


class Profile:
    """One profile: metadata (dict), events, constructs, threads, xus
    (DataFrames), path, truncated and salvage_note; argv, the recorded
    command line as a list."""

    @property
    def argv(self):
        """The program's command line as a list ([] when not recorded): the
        metadata value "argv" joins the arguments with the unit separator
        (\\x1f), which no argument contains in practice, unlike spaces."""
        a = self.metadata.get("argv", "")
        return a.split("\x1f") if a else []

    def __init__(self, path, meta, xus):
        self.path = path
        self.truncated = meta["truncated"]
        self.salvage_note = meta["salvage_note"]
        self.metadata = dict(meta["metadata"])
        self.events = pd.DataFrame(meta["events"],
                                   columns=["index", "name", "status", "reason", "unit",
                                            "source", "perf_type", "config", "config1",
                                            "config2", "flags"]).set_index("index")
        self.sources = pd.DataFrame(meta["sources"], columns=["index", "run_id", "path"])
        self.constructs = pd.DataFrame(meta["constructs"],
                                       columns=["index", "name", "kind", "file", "line",
                                                "function", "module", "build_id",
                                                "offset"]).set_index("index")
        names = list(self.events["name"])
        rows = []
        for t in meta.get("threads", []):
            r = {("index", ""): t["index"], ("os_tid", ""): t["os_tid"]}
            for what in ("total", "gap", "enabled_ns", "running_ns"):
                for n, v in zip(names, t[what]):
                    r[(what, n)] = float("nan") if v is None else v
            rows.append(r)
        # columns (what, event): threads["gap"] is the gap per event
        self.threads = pd.DataFrame(rows, columns=pd.MultiIndex.from_tuples(
            [("index", ""), ("os_tid", "")] +
            [(w, n) for w in ("total", "gap", "enabled_ns", "running_ns") for n in names]))
        self.threads.index = self.threads.pop(("index", "")).astype("int64")
        self.threads.index.name = "thread"
        self.xus = xus
        self._exe, self._parts = None, None

    @property
    def parts(self):
        """One row per XU part (a task suspended and resumed ran in
        several, each on one thread): xu, part (0, 1, ... in time order),
        thread, start_ns, end_ns.  An XU whose parts the profile does not
        record is one row spanning start_ns..end_ns.  Read on first use
        (from `ompfuse export --format json`)."""
        if self._parts is None:
            r = subprocess.run([self._exe, "export", "--format", "json", "--no-resolve",
                                self.path], capture_output=True, text=True)
            if r.returncode != 0:
                raise OSError(r.stderr.strip() or "ompfuse export failed (%d)" % r.returncode)
            rows = []
            for x in json.loads(r.stdout)["profiles"][0]["xus"]:
                ps = x.get("part_list") or [[x["thread"], x["start_ns"], x["end_ns"]]]
                rows.extend((x["id"], k, t, a, b) for k, (t, a, b) in enumerate(ps))
            cols = ["xu", "part", "thread", "start_ns", "end_ns"]
            self._parts = pd.DataFrame(rows, columns=cols).astype(
                {"xu": "uint64", "part": "uint32", "thread": "uint32", "start_ns": "uint64",
                 "end_ns": "uint64"})
        return self._parts

    def __repr__(self):
        return "<ompfuse.Profile %s: %s, %d XUs, %d events%s>" % (
            self.path, self.metadata.get("mode", "?"), len(self.xus), len(self.events),
            ", TRUNCATED" if self.truncated else "")


def read(path, ompfuse=None, resolve=True):
    """Reads one profile.  resolve (as `ompfuse export` does by default)
    runs addr2line on constructs the profile has not placed yet.  Raises
    OSError with ompfuse's message when the file cannot be read; a
    truncated profile is read up to its last complete chunk, with a
    warning (.truncated, .salvage_note)."""
    exe = find_ompfuse(ompfuse)
    with tempfile.TemporaryDirectory(prefix="ompfuse-py-") as tmp:
        csv, meta = os.path.join(tmp, "xus.csv"), os.path.join(tmp, "meta.json")
        args = [exe, "export", "--csv", "-o", csv, "--metadata", meta]
        if not resolve:
            args.append("--no-resolve")
        r = subprocess.run(args + [os.fspath(path)], capture_output=True, text=True)
        if r.returncode != 0:
            raise OSError(r.stderr.strip() or "ompfuse export failed (%d)" % r.returncode)
        with open(meta) as f:
            m = json.load(f)["profiles"][0]
        status = {e["name"]: e["status"] for e in m["events"]}
        # round_trip: correctly rounded, so every value is the profile's
        # double; an empty cell (only) is missing
        df = pd.read_csv(csv, dtype={c: t for c, t in _FIXED.items() if t is str},
                         keep_default_na=False, na_values={c: [""] for c in status},
                         float_precision="round_trip")
        for c, t in _FIXED.items():
            df[c] = df[c].astype(t)
        # the rare columns pandas may have rounded, read again as text at
        # once (one more parse of the file, not one per column)
        again = [n for n in df.columns[len(_FIXED):] if _rounded(df[n])]
        text = pd.read_csv(csv, usecols=again, dtype=str, keep_default_na=False) \
            if again else None
        for name in df.columns[len(_FIXED):]:
            df[name] = _exact_counts(text[name], name, df[name], status.get(name)) \
                if name in again else _event_column(df[name], status.get(name))
    if m["truncated"]:
        warnings.warn("%s: %s" % (os.fspath(path), m["salvage_note"]), stacklevel=2)
    p = Profile(os.fspath(path), m, df)
    p._exe = exe
    return p


class Profiles(list):
    """Profiles of a campaign; .xus stacks their XUs."""

    @property
    def xus(self):
        frames = []
        for p in self:
            d = p.xus.copy()
            d.insert(0, "mode", p.metadata.get("mode"))
            d.insert(0, "run_id", p.metadata.get("run_id"))
            d.insert(0, "path", p.path)
            frames.append(d)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    @property
    def metadata(self):
        """One row per profile: path and its metadata."""
        return pd.DataFrame([dict(path=p.path, **p.metadata) for p in self])


def read_many(paths, ompfuse=None, resolve=True):
    """Reads several profiles: a list of files, a directory (every .ompf
    below it, sorted), or a glob pattern."""
    if isinstance(paths, (str, os.PathLike)):
        p = os.fspath(paths)
        if os.path.isdir(p):
            paths = sorted(glob.glob(os.path.join(p, "**", "*.ompf"), recursive=True))
        else:
            paths = sorted(glob.glob(p)) or [p]
    return Profiles(read(p, ompfuse, resolve) for p in paths)
