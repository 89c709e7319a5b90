#!/usr/bin/python3
"""A private single-node Slurm cluster for tests, started and stopped by pid.

Everything lives under one directory DIR (nothing under /etc, no systemd):

  DIR/slurm.conf            generated; every client needs SLURM_CONF=DIR/slurm.conf
  DIR/munge/                munge key, seed and log (mode 0700: munged insists)
  DIR/run/                  munge socket (0755: munged insists) and pid files
  DIR/state/                StateSaveLocation
  DIR/spool/                SlurmdSpoolDir
  DIR/log/                  slurmctld.log, slurmd.log, jobcomp.txt, daemon stdout
  DIR/cluster.json          ports, pids and paths of this cluster

The three daemons run in the foreground (munged -F, slurmctld -D, slurmd -D)
in their own sessions, so the pid we get from fork is the daemon's pid; stop()
signals exactly those pids.  Ports are picked free below the kernel's
ephemeral range so two clusters (two test runs) can coexist.

Python:
    with Cluster(dir) as c:            # start(), wait for the node idle
        c.run(["sbatch", ...])         # env has SLURM_CONF
CLI:
    cluster.py start DIR | stop DIR | env DIR | check
"""
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import time

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo", "scontrol", "munge")
PACKAGES = "munge slurmctld slurmd slurm-client"


class ClusterError(RuntimeError):
    pass


def which_all():
    """Paths of the daemons and clients; missing ones are None."""
    found = {}
    for name in DAEMONS + CLIENTS:
        found[name] = shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    return found


def available():
    """(True, "") when a private cluster can be started here, else (False, why)."""
    missing = [n for n, p in which_all().items() if not p]
    if missing:
        return False, ("Slurm/munge programs not installed (%s missing); install them with "
                       "scripts/slurm-setup.sh (Debian packages: %s)" % (", ".join(missing), PACKAGES))
    if os.geteuid() != 0:
        return False, ("not running as root: slurmd must run as root to start jobs, and "
                       "the packages need root to install (scripts/slurm-setup.sh)")
    return True, ""


def slurm_version():
    try:
        # clients need a slurm.conf even for --version; the daemons do not
        s = subprocess.run(["slurmctld", "-V"], capture_output=True, text=True, timeout=10)
        m = subprocess.run(["munged", "-V"], capture_output=True, text=True, timeout=10)
        return "%s, %s" % (s.stdout.strip(), m.stdout.split(" (")[0].strip())
    except OSError:
        return "unknown"


def _port_free(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("0.0.0.0", port))  # slurmctld/slurmd listen on all addresses
        return True
    except OSError:
        return False
    finally:
        s.close()


def _pick_ports(n):
    # Below the ephemeral range (32768+): outgoing connections never hold them.
    ports = []
    rnd = random.Random(os.getpid() ^ int(time.time() * 1000))
    for _ in range(200):
        p = rnd.randrange(20000, 32000)
        if p not in ports and _port_free(p):
            ports.append(p)
            if len(ports) == n:
                return ports
    raise ClusterError("no free TCP ports found in 20000-32000 for slurmctld/slurmd")


def _node_line():
    """NodeName line from `slurmd -C` (what slurmd itself will detect)."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30)
    line = out.stdout.splitlines()[0] if out.stdout else ""
    if not line.startswith("NodeName="):
        raise ClusterError("`slurmd -C` gave no node description: %s" % (out.stderr.strip() or line))
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    return fields


def _alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return False
    return st[st.rfind(")") + 2] != "Z"


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            lines = f.readlines()
    except OSError:
        return "  (%s: none)\n" % path
    return "  --- %s (last %d lines)\n" % (path, n) + "".join("  " + l for l in lines[-n:])


class Cluster:
    def __init__(self, directory, boot_timeout=60.0):
        self.dir = os.path.abspath(directory)
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.boot_timeout = boot_timeout
        self.info = {}
        self._procs = {}  # daemon name -> Popen (when started by this process)
        self.hostname = socket.gethostname().split(".")[0]

    # ---- environment for clients ----------------------------------------
    @property
    def env(self):
        e = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        e["SLURM_CONF"] = self.conf
        return e

    def run(self, cmd, check=True, timeout=30, **kw):
        try:
            r = subprocess.run(cmd, env=self.env, capture_output=True, text=True,
                               timeout=timeout, **kw)
        except subprocess.TimeoutExpired:
            raise ClusterError("%s did not answer within %d s" % (" ".join(cmd), timeout))
        if check and r.returncode != 0:
            raise ClusterError("%s failed (exit %d): %s" % (" ".join(cmd), r.returncode,
                                                             (r.stderr or r.stdout).strip()))
        return r

    # ---- configuration --------------------------------------------------
    def _paths(self):
        d = self.dir
        return dict(munge=os.path.join(d, "munge"), run=os.path.join(d, "run"),
                    state=os.path.join(d, "state"), spool=os.path.join(d, "spool"),
                    log=os.path.join(d, "log"))

    def _write_config(self):
        p = self._paths()
        os.makedirs(self.dir, exist_ok=True)
        # munged checks that the socket's directory (and its parents) are
        # searchable by everyone and that the key directory is private.
        os.chmod(self.dir, 0o755)
        for k, mode in (("munge", 0o700), ("run", 0o755), ("state", 0o700),
                        ("spool", 0o755), ("log", 0o755)):
            os.makedirs(p[k], exist_ok=True)
            os.chmod(p[k], mode)
        sock = os.path.join(p["run"], "munge.socket")
        parent = os.path.dirname(self.dir)
        while parent != "/":
            if not os.stat(parent).st_mode & 0o001:
                raise ClusterError("munged refuses a socket under %s: that directory is not "
                                   "searchable by everyone (chmod o+x, or pick another cluster "
                                   "directory)" % parent)
            parent = os.path.dirname(parent)
        # AF_UNIX paths are limited to 108 bytes; slurmstepd puts sockets
        # "<host>_<jobid>.<step>" into the spool directory.
        if len(sock) > 100 or len(p["spool"]) + len(self.hostname) + 24 > 107:
            raise ClusterError("cluster directory %s is too long for Unix socket paths; "
                               "use a shorter one (e.g. under /tmp)" % self.dir)
        key = os.path.join(p["munge"], "munge.key")
        if not os.path.exists(key):
            with open(key, "wb") as f:
                f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        ctld_port, slurmd_port = _pick_ports(2)
        node = _node_line()
        nodeparts = " ".join("%s=%s" % (k, node[k]) for k in
                             ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket",
                              "ThreadsPerCore", "RealMemory") if k in node)
        conf = f"""# Generated by tests/slurm/cluster.py: a private single-node test cluster.
ClusterName=ompftest
SlurmctldHost={self.hostname}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={p["state"]}
SlurmdSpoolDir={p["spool"]}
SlurmctldPidFile={p["run"]}/slurmctld.pid
SlurmdPidFile={p["run"]}/slurmd.pid
SlurmctldLogFile={p["log"]}/slurmctld.log
SlurmdLogFile={p["log"]}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: processes are tracked by parent pid, tasks are not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# No slurmdbd, so no sacct: state comes from squeue and per-task marker
# files.  jobcomp/filetxt is only a test oracle (one line per finished job).
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={p["log"]}/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Start the next array task as soon as the node is free (default: ~3 s).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
# Finished jobs stay visible to squeue -t all / scontrol for 5 minutes.
MinJobAge=300
# scancel: SIGTERM, then SIGKILL after 2 s (default 30 s).
KillWait=2
InactiveLimit=0
NodeName={self.hostname} NodeAddr=127.0.0.1 {nodeparts} State=UNKNOWN
PartitionName=debug Nodes={self.hostname} Default=YES MaxTime=INFINITE State=UP
"""
        with open(self.conf + ".tmp", "w") as f:
            f.write(conf)
        os.rename(self.conf + ".tmp", self.conf)
        self.info = dict(dir=self.dir, conf=self.conf, munge_socket=sock,
                         slurmctld_port=ctld_port, slurmd_port=slurmd_port,
                         node=self.hostname, cpus=int(node.get("CPUs", "1")), pids={})

    def _save_info(self):
        path = os.path.join(self.dir, "cluster.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.info, f, indent=1)
        os.rename(path + ".tmp", path)

    def load_info(self):
        with open(os.path.join(self.dir, "cluster.json")) as f:
            self.info = json.load(f)
        return self.info

    # ---- start / stop ---------------------------------------------------
    def _spawn(self, name, cmd):
        out = open(os.path.join(self.dir, "log", name + ".out"), "ab")
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             env=self.env, start_new_session=True, close_fds=True)
        out.close()
        self._procs[name] = p
        self.info["pids"][name] = p.pid
        self._save_info()
        return p

    def _logs(self):
        L = self._paths()["log"]
        return (_tail(os.path.join(L, "munged.out"), 8)
                + _tail(os.path.join(L, "slurmctld.log"))
                + _tail(os.path.join(L, "slurmd.log"))
                + _tail(os.path.join(L, "slurmctld.out"), 8)
                + _tail(os.path.join(L, "slurmd.out"), 8))

    def _wait(self, what, cond, timeout, daemon=None):
        t0 = time.time()
        while time.time() - t0 < timeout:
            try:
                if cond():
                    return time.time() - t0
            except ClusterError:
                pass  # a client timing out while the daemon starts: ask again
            if daemon and not _alive(self.info["pids"][daemon]):
                self._reap()
                raise ClusterError("%s exited during start-up (waiting for %s)\n%s"
                                   % (daemon, what, self._logs()))
            time.sleep(0.1)
        raise ClusterError("timed out after %.0f s waiting for %s\n%s" % (timeout, what, self._logs()))

    def start(self):
        ok, why = available()
        if not ok:
            raise ClusterError(why)
        self._write_config()
        self._save_info()
        m = os.path.join(self.dir, "munge")
        r = os.path.join(self.dir, "run")
        try:
            self._spawn("munged", ["munged", "-F", "--socket=" + self.info["munge_socket"],
                                   "--key-file=" + os.path.join(m, "munge.key"),
                                   "--pid-file=" + os.path.join(r, "munged.pid"),
                                   "--log-file=" + os.path.join(m, "munged.log"),
                                   "--seed-file=" + os.path.join(m, "munged.seed")])
            sock = self.info["munge_socket"]
            self._wait("the munge socket", lambda: os.path.exists(sock), 15, "munged")
            self._spawn("slurmctld", ["slurmctld", "-D", "-f", self.conf])
            self._wait("slurmctld to answer", lambda: self.run(
                ["scontrol", "ping"], check=False, timeout=5).stdout.find("UP") >= 0,
                self.boot_timeout, "slurmctld")
            self._spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", self.hostname])
            self._wait("node %s to be idle in sinfo" % self.hostname, self.node_idle,
                       self.boot_timeout, "slurmd")
        except BaseException:
            self.stop()
            raise
        return self

    def node_idle(self):
        r = self.run(["sinfo", "-h", "-N", "-n", self.hostname, "-o", "%T"], check=False, timeout=10)
        return r.returncode == 0 and r.stdout.strip() == "idle"

    def _reap(self):
        for p in self._procs.values():
            p.poll()

    def jobs(self):
        """Job ids still known to slurmctld as pending/running/completing."""
        r = self.run(["squeue", "-h", "-r", "-o", "%i"], check=False, timeout=15)
        return r.stdout.split() if r.returncode == 0 else []

    def strays(self):
        """Processes started by this cluster that outlive it: daemons and any
        slurmstepd (identified by open files under DIR, e.g. slurmd.log)."""
        found = []
        me = os.getpid()
        for e in os.listdir("/proc"):
            if not e.isdigit() or int(e) == me:
                continue
            pid = int(e)
            if not _alive(pid):
                continue
            cmd = _cmdline(pid)
            hit = self.conf in cmd or self.dir + "/run/munge.socket" in cmd
            if not hit and "slurmstepd" in cmd:
                try:
                    fd = "/proc/%d/fd" % pid
                    hit = any(os.readlink(os.path.join(fd, x)).startswith(self.dir + "/")
                              for x in os.listdir(fd))
                except OSError:
                    pass
            if hit:
                found.append((pid, cmd.strip()))
        return found

    def stop(self, timeout=20.0):
        """Cancels every job, then SIGTERMs slurmd, slurmctld, munged (by
        pid), SIGKILL after timeout.  Returns the list of strays that had to
        be killed afterwards (should be empty)."""
        if not self.info:
            try:
                self.load_info()
            except OSError:
                return []
        pids = self.info.get("pids", {})
        if _alive(pids.get("slurmctld", -1)):
            try:
                self.run(["scancel", "--user=" + pwd.getpwuid(os.geteuid()).pw_name],
                         check=False, timeout=15)
                t0 = time.time()
                while self.jobs() and time.time() - t0 < timeout:
                    time.sleep(0.2)
            except ClusterError:
                pass  # controller not answering: the daemons are stopped anyway
        for name in ("slurmd", "slurmctld", "munged"):
            pid = pids.get(name)
            if not pid or not _alive(pid):
                continue
            # never signal a recycled pid: the daemon's command line names our files
            if self.conf not in _cmdline(pid) and self.dir not in _cmdline(pid):
                continue
            os.kill(pid, signal.SIGTERM)
            t0 = time.time()
            while _alive(pid) and time.time() - t0 < timeout:
                self._reap()
                time.sleep(0.05)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
                while _alive(pid):
                    self._reap()
                    time.sleep(0.05)
        self._reap()
        killed = []
        for pid, cmd in self.strays():
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append((pid, cmd))
            except ProcessLookupError:
                pass
        return killed

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def main(argv):
    if len(argv) >= 2 and argv[1] == "check":
        ok, why = available()
        print("ok: %s" % slurm_version() if ok else "unavailable: " + why)
        return 0 if ok else 1
    if len(argv) != 3 or argv[1] not in ("start", "stop", "env"):
        print("usage: cluster.py start DIR | stop DIR | env DIR | check", file=sys.stderr)
        return 2
    c = Cluster(argv[2])
    try:
        if argv[1] == "start":
            t0 = time.time()
            c.start()
            print("cluster up in %.1f s: %s, node %s (%d CPUs), ports %d/%d\nexport SLURM_CONF=%s"
                  % (time.time() - t0, slurm_version(), c.info["node"], c.info["cpus"],
                     c.info["slurmctld_port"], c.info["slurmd_port"], c.conf))
        elif argv[1] == "stop":
            killed = c.stop()
            for pid, cmd in killed:
                print("killed stray process %d: %s" % (pid, cmd))
            print("cluster in %s stopped" % c.dir)
        else:
            print("export SLURM_CONF=%s" % c.conf)
    except ClusterError as e:
        print("cluster.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
