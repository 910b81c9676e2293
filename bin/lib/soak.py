"""soak driver (run by bin/soak, whose header says what it checks, and pmix-testkit's SoakIT): one
long-lived pmixrun server; phases of C client, Java client and tool init/finalize cycles and of
spawned jobs against it; the server's RSS, threads, fds and live heap sampled between segments; a
phase is flat when its resources come back to their start values. Also the agent each rank of the
job runs (--agent), which starts the cyclers on command."""
import argparse, json, os, random, select, shlex, subprocess, sys, time

from textfiles import read

PHASES = ["c", "java", "tool", "jobs"]
# Threads the JDK starts and stops by itself, as many as it needs at the moment: the dynamic JIT
# compiler threads and the pool of "process reaper" threads that wait for child processes (one
# per running process, idle ones kept 60 s; the jobs phase's count varies with how many of a
# job's processes overlap the next's). Counted ("jvm"), not judged.
JVM_DYNAMIC = ("C1 CompilerThre", "C2 CompilerThre", "process reaper")
MIB = 1024 * 1024


def driver_arguments(p, client):
    """The arguments every reliability driver takes (DriverScript.quickCommand passes them): its
    output directory, its C client, the java and jcmd to run and sample the server with, and the
    class path of pmix-testkit and its dependencies."""
    p.add_argument("--out", required=True)
    p.add_argument("--client", required=True, help=client)
    p.add_argument("--java", default="java")
    p.add_argument("--cp", required=True, help="class path of pmix-testkit and its dependencies")
    p.add_argument("--jcmd", default="jcmd")


def parse():
    p = argparse.ArgumentParser(prog="soak")
    p.add_argument("--cycles", type=int, default=10000, help="cycles per phase, all ranks")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--sample-every", type=int, default=1000,
                   help="cycles (all ranks) between two idle samples")
    p.add_argument("--warmup", type=int, default=100,
                   help="cycles per phase before the start sample")
    p.add_argument("--c-tool-cycles", type=int, default=1000,
                   help="attach/query/detach cycles of the C tool pps (libpmix 4.2.2) after the "
                        "Java tool's; 0: none")
    p.add_argument("--jobs", type=int, default=1000,
                   help="cycles of the jobs phase: a tool attaches, spawns a job of --ranks C "
                        "clients (init, put, commit, fence, get, finalize), waits for its end, "
                        "detaches")
    p.add_argument("--phases", default="c,java,tool,jobs")
    p.add_argument("--seed", type=int, default=None, help="the order of the phases")
    p.add_argument("--heap-tolerance", type=float, default=0.5,
                   help="MiB the lowest live heap (after a full GC) of the second half's samples "
                        "may exceed the first half's")
    p.add_argument("--rss-tolerance", type=float, default=8.0,
                   help="MiB the RSS outside the Java heap may grow from the middle to the end "
                        "sample")
    p.add_argument("--settle", type=float, default=10.0,
                   help="seconds an idle sample waits for fds and threads to return to the start")
    p.add_argument("--server-java-opts", default="",
                   help="more JVM options for the server (e.g. -XX:NativeMemoryTracking=summary: "
                        "then each sample's histogram file also holds VM.native_memory summary, and "
                        "histograms/LABEL.smaps the server's /proc/PID/smaps)")
    p.add_argument("--dump-over", type=float, default=0,
                   help="MiB: when the live heap at a sample exceeds the phase's start by this "
                        "much, write a heap dump (histograms/LABEL.hprof) once per phase; 0: never")
    p.add_argument("--quick", action="store_true",
                   help="400 cycles per phase, 80 jobs, samples every 100, 40 pps runs")
    driver_arguments(p, "pmix_client_check")
    p.add_argument("--pps", default="pps")
    a = p.parse_args()
    if a.quick:
        a.cycles, a.sample_every, a.warmup = 400, 100, 40
        a.c_tool_cycles = min(a.c_tool_cycles, 40)
        # 80: a leak of 35 KiB per job (seen: pmixrun kept every ended spawned job) is 1.4 MiB
        # over the second half, above the heap tolerance
        a.jobs = min(a.jobs, 80)
    if a.cycles < 2 or a.jobs < 2 or a.sample_every < 1 or a.ranks < 1 or a.warmup < 1:
        p.error("--cycles >= 2, --jobs >= 2, --sample-every >= 1, --warmup >= 1 and --ranks >= 1 "
                "needed")
    return a


def log(*args):
    print(*args, flush=True)


# ---- the agent: one per rank, a process of the pmixrun job ----

def agent(argv):
    """Reads "PHASE SEGMENT CYCLES" lines from its control FIFO, runs that many cycles of that
    phase's cycler (inheriting this rank's PMIx environment) and reports "RANK SEGMENT RC"."""
    ctl, done, outdir, client, java, cp = argv
    rank = os.environ.get("PMIX_RANK", "?")
    with open(done, "w") as dout:
        dout.write(f"hello {rank} {os.environ.get('PMIX_NAMESPACE', '?')}\n")
        dout.flush()
        return agent_loop(ctl, dout, rank, outdir, client, java, cp)


def agent_loop(ctl, dout, rank, outdir, client, java, cp):
    with open(ctl) as cin:
        for line in cin:
            phase, seg, cycles = line.split()
            out = os.path.join(outdir, f"{phase}-{seg}.rank{rank}.txt")
            if phase == "c":
                cmd = [client, "--timeout", "30", "--barrier-dir", outdir, "--barrier-id",
                       f"{phase}-{seg}", "--cycle", cycles]
            else:
                cmd = [java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
                       "-cp", cp, "io.pmix.testkit.soak.SoakJavaClient", "--cycles", cycles,
                       "--barrier-dir", outdir, "--barrier-id", f"{phase}-{seg}"]
            with open(out, "w") as f:
                rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
            dout.write(f"{rank} {seg} {rc}\n")
            dout.flush()
    return 0


# ---- sampling the server ----

def sample(pid):
    s = {"rss": 0, "fds": 0, "threads": 0, "jvmdyn": 0}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                s["rss"] = int(line.split()[1]) * 1024
    s["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue  # ended meanwhile
        if name.startswith(JVM_DYNAMIC):
            s["jvmdyn"] += 1
        else:
            s["threads"] += 1
    return s


def thread_names(pid):
    names = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/comm") as f:
                n = f.read().strip()
        except OSError:
            continue
        names[n] = names.get(n, 0) + 1
    return names


def heap_after_gc(a, pid, label):
    """(live, committed): the bytes of live objects in the server's JVM, as jcmd
    GC.class_histogram counts them after the full collection it makes first (its Total line), and
    the heap the JVM has committed then (GC.heap_info: the generations' totals; RSS follows it).
    (-1, -1) if jcmd fails. (GC.heap_info's "used" after a GC.run is no measure of live objects:
    it moved by 0.3 to 2 MiB between samples whose live objects were identical, with what threads
    allocated since.) The histogram is kept, to see what grew when a phase is not flat."""
    cmds = os.path.join(a.out, "ctl", "jcmd.txt")
    with open(cmds, "w") as f:
        f.write("GC.class_histogram\nGC.heap_info\n")
        if "NativeMemoryTracking" in a.server_java_opts:
            f.write("VM.native_memory summary\n")
    try:
        r = subprocess.run([a.jcmd, str(pid), "-f", cmds], capture_output=True, text=True,
                           timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return -1, -1, [None, None]
    hdir = os.path.join(a.out, "histograms")
    os.makedirs(hdir, exist_ok=True)
    with open(os.path.join(hdir, label + ".txt"), "w") as f:
        f.write(r.stdout)
    live, committed = -1, 0
    heap_range = [None, None]
    for line in r.stdout.splitlines():
        w = line.split()
        if len(w) == 3 and w[0] == "Total":
            live = int(w[2])
        # "def new generation   total 116224K, used 2067K [...]", "tenured generation ..."
        if "generation" in line and "total" in w:
            v = w[w.index("total") + 1].rstrip(",")
            committed += int(v[:-1]) * {"K": 1024, "M": MIB, "G": 1024 * MIB}[v[-1]]
            # "[0x...start, 0x...top, 0x...end)": the generation's reserved addresses
            lo = int(line[line.index("[") + 1:].split(",")[0], 16)
            hi = int(line[:line.rindex(")")].split(",")[-1], 16)
            heap_range[0] = lo if heap_range[0] is None else min(lo, heap_range[0])
            heap_range[1] = hi if heap_range[1] is None else max(hi, heap_range[1])
    return live, committed, heap_range


def heap_rss(pid, heap_range):
    """The resident bytes of the Java heap's mappings (/proc/PID/smaps): RSS minus this is the
    memory outside the heap, where a native leak would show. The heap's own RSS grows with the
    pages of its (large, by default 1/64 of the RAM) committed generations that the collector has
    touched so far, up to the committed size: not a leak (with -Xmx64m the RSS stays flat)."""
    lo, hi = heap_range
    if lo is None:
        return -1
    total = 0
    inside = False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            w = line.split()
            if "-" in w[0] and len(w) >= 5 and not w[0].endswith(":"):
                start, end = (int(x, 16) for x in w[0].split("-"))
                inside = start >= lo and end <= hi
            elif inside and w[0] == "Rss:":
                total += int(w[1]) * 1024
    return total


def idle_sample(a, pid, base, label):
    """A sample with nothing connected: waits up to --settle s for the fds and threads to come
    back to the start values (the server closes a peer when it sees the socket's end, a moment
    after the process exited), then counts the live heap (a full GC)."""
    deadline = time.monotonic() + a.settle
    s = sample(pid)
    while base is not None and (s["fds"] != base["fds"] or s["threads"] != base["threads"]) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
        s = sample(pid)
    s["heap"], s["committed"], heap_range = heap_after_gc(a, pid, label)
    if a.dump_over > 0 and base is not None and not base.get("dumped") \
            and s["heap"] - base["heap"] > a.dump_over * MIB:
        base["dumped"] = True
        subprocess.run([a.jcmd, str(pid), "GC.heap_dump",
                        os.path.join(a.out, "histograms", label + ".hprof")],
                       capture_output=True, timeout=120)
    s["rss"] = sample(pid)["rss"]  # after the GC, which may give memory back
    if "NativeMemoryTracking" in a.server_java_opts:
        # beside the histogram (and its VM.native_memory summary): the mappings at this moment,
        # to tell what RSS outside the heap is made of (code cache, metaspace, malloc arenas)
        with open(f"/proc/{pid}/smaps") as src, \
                open(os.path.join(a.out, "histograms", label + ".smaps"), "w") as dst:
            dst.write(src.read())
    hr = heap_rss(pid, heap_range)
    s["nonheap"] = s["rss"] - hr if hr >= 0 else -1
    return s


# ---- the driver ----

class Driver:
    def __init__(self, a):
        self.a = a
        self.ctl = []
        self.done_fd = -1
        self.peak = {}

    def start(self):
        a = self.a
        d = os.path.join(a.out, "ctl")
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        self.tmp = os.path.join(a.out, "tmp")
        os.makedirs(self.tmp, exist_ok=True)
        done = os.path.join(d, "done")
        os.mkfifo(done)
        # O_RDWR: never EOF while agents come and go, and the open does not wait for a writer.
        self.done_fd = os.open(done, os.O_RDWR | os.O_NONBLOCK)
        self.buf = b""
        ctls = []
        for r in range(a.ranks):
            ctls.append(os.path.join(d, f"rank{r}"))
            os.mkfifo(ctls[-1])
        wrap = os.path.join(d, "agent.sh")
        with open(wrap, "w") as f:
            f.write("#!/bin/sh\nexec python3 %s --agent %s/rank\"$PMIX_RANK\" %s\n" % (
                shlex.quote(os.path.abspath(__file__)), shlex.quote(d), " ".join(
                    shlex.quote(x) for x in (done, a.out, a.client, a.java, a.cp))))
        os.chmod(wrap, 0o755)
        self.state = os.path.join(a.out, "state.json")
        if os.path.exists(self.state):
            os.remove(self.state)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PMIX_")}
        env["TMPDIR"] = self.tmp
        self.env = env
        # bin/pmixrun's JVM options (without its class-data sharing archive: start-up speed), and
        # -XX:MarkSweepDeadRatio=0: Serial's full collections otherwise leave up to 5 % of the old
        # generation as dead wood (int[] fillers the class histogram counts as live; seen as a
        # +1.4 MiB sawtooth in the live heap), with it the live heap after jcmd's full GC is exact
        cmd = [a.java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
               "-XX:MarkSweepDeadRatio=0",
               f"-Djava.io.tmpdir={self.tmp}", *a.server_java_opts.split(), "-cp", a.cp,
               "io.pmix.testkit.PmixRun",
               "--tool-support", "--report-state", self.state,
               *getattr(a, "pmixrun_args", []),  # bin/fuzz-server's handshake bounds
               "-n", str(a.ranks), "--", wrap]
        self.log = open(os.path.join(a.out, "pmixrun.txt"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)
        self.pid = self.proc.pid
        # Each agent says hello with its namespace first (ranks' PMIX_NAMESPACE: the job's).
        hellos = {}
        deadline = time.monotonic() + 120
        while len(hellos) < a.ranks:
            r, _, _ = select.select([self.done_fd], [], [], 0.5)
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the agents did not start; see " + self.log.name)
            if r:
                for line in self.lines():
                    w = line.split()
                    if w[0] == "hello":
                        hellos[int(w[1])] = w[2]
        self.nspace = hellos[0]
        for c in ctls:
            while True:
                try:
                    self.ctl.append(os.open(c, os.O_WRONLY | os.O_NONBLOCK))
                    break
                except OSError:  # ENXIO: that agent has not opened its end yet
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("the agents did not start; see " + self.log.name)
                    time.sleep(0.05)
            os.set_blocking(self.ctl[-1], True)
        return self.pid

    def lines(self):
        self.buf += os.read(self.done_fd, 65536)
        out = []
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            out.append(line.decode())
        return out

    def segment(self, phase, seg, cycles):
        """Runs one segment: every rank `cycles` cycles (the tool phase: one tool JVM). Returns
        (ok, detail); samples the server every second meanwhile for the peaks."""
        a = self.a
        if phase in ("tool", "jobs"):
            return self.tool_segment(phase, seg, cycles)
        for fd in self.ctl:
            os.write(fd, f"{phase} {seg} {cycles}\n".encode())
        rcs = {}
        deadline = time.monotonic() + 60 + cycles * 0.5
        while len(rcs) < a.ranks:
            r, _, _ = select.select([self.done_fd], [], [], 1.0)
            self.note_peak(phase)
            if self.proc.poll() is not None:
                return False, "pmixrun ended (status %d) in the segment" % self.proc.returncode
            if time.monotonic() > deadline:
                return False, "segment did not end in time (ranks done: %s)" % sorted(rcs)
            if r:
                for line in self.lines():
                    rank, s, rc = line.split()
                    if s == seg:
                        rcs[int(rank)] = int(rc)
        bad = []
        for rank, rc in sorted(rcs.items()):
            text = read(os.path.join(a.out, f"{phase}-{seg}.rank{rank}.txt"))
            if phase == "c":
                okline = [l for l in text.splitlines()
                          if l.startswith("STEP cycle OK") and f" iterations={cycles} " in l + " "]
            else:
                okline = [l for l in text.splitlines()
                          if l.startswith("SOAK java") and l.endswith(f" cycles={cycles} OK")]
            if rc != 0 or not okline:
                last = text.strip().splitlines()[-1:] or ["(no output)"]
                bad.append(f"rank {rank} rc={rc}: {last[0][:200]}")
        return (not bad), "; ".join(bad)

    def tool_segment(self, phase, seg, cycles):
        a = self.a
        out = os.path.join(a.out, f"{phase}-{seg}.txt")
        cmd = [a.java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
               "-cp", a.cp, "io.pmix.testkit.soak.SoakTool", "--cycles", str(cycles),
               "--pid", str(self.pid), "--nspace", self.nspace]
        if phase == "jobs":
            # The spawned ranks' output goes to pmixrun's (pmixrun.txt): counted in spawned_ok.
            cmd += ["--job-size", str(a.ranks), "--", a.client, "--timeout", "30", "--init",
                    "--put", "--commit", "--fence-collect", "--get-peers", "--finalize"]
        with open(out, "w") as f:
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=self.env)
            rc = self.wait(p, 60 + cycles * (5 if phase == "jobs" else 0.5), phase)
        text = read(out)
        if rc != 0 or f"SOAK tool cycles={cycles} OK" not in text:
            last = text.strip().splitlines()[-1:] or ["(no output)"]
            return False, f"tool rc={rc}: {last[0][:200]}"
        return True, ""

    def spawned_ok(self):
        """The spawned ranks that finalized (their STEP lines reach pmixrun's output)."""
        self.log.flush()
        return sum(1 for l in read(self.log.name).splitlines() if l.startswith("STEP finalize OK"))

    def c_tools(self, n):
        """n runs of libpmix's pps --pid (attach, query the jobs, detach); each must list the
        job's namespace."""
        bad = 0
        first = ""
        for i in range(n):
            try:
                r = subprocess.run([self.a.pps, "--pid", str(self.pid)], capture_output=True,
                                   text=True, timeout=30, env=self.env, stdin=subprocess.DEVNULL)
                ok = r.returncode == 0 and self.nspace in r.stdout + r.stderr
                why = f"rc={r.returncode} {(r.stdout + r.stderr).strip()[:200]}"
            except subprocess.TimeoutExpired:
                ok, why = False, "hung 30 s"
            if not ok:
                bad += 1
                first = first or f"pps run {i}: {why}"
            if i % 20 == 0:
                self.note_peak("tool")
        return bad, first

    def wait(self, p, limit, phase):
        deadline = time.monotonic() + limit
        while True:
            try:
                return p.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                self.note_peak(phase)
                if time.monotonic() > deadline:
                    p.kill()
                    p.wait()
                    return -9

    def note_peak(self, phase):
        try:
            s = sample(self.pid)
        except OSError:
            return
        pk = self.peak.setdefault(phase, dict(s))
        for k, v in s.items():
            pk[k] = max(pk[k], v)

    def finish(self):
        for fd in self.ctl:
            os.close(fd)  # the agents see EOF and exit 0: the job ends
        self.ctl = []
        rc = self.wait(self.proc, 60, "end")
        os.close(self.done_fd)
        self.log.close()
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.terminate()  # pmixrun stops its job and cleans up
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def segments(total, every, ranks, per_rank):
    """Splits `total` cycles into segments of about `every`; for the client phases each segment
    is a multiple of the rank count (every rank runs the same number)."""
    unit = ranks if per_rank else 1
    every = max(unit, every - every % unit)
    total = max(unit, total - total % unit)
    out = []
    left = total
    while left > 0:
        n = min(every, left)
        out.append(n)
        left -= n
    return out


def check_state(path, ranks, clients_ran):
    """The server's counters at the job's end: no peer still connected and no tool peer left,
    every rank finalized its last cycle (nfinalized == nlocalprocs, procCount 0; nfinalized 0 when
    no client phase ran: the agents never connect), nothing left after deregistration."""
    try:
        with open(path) as f:
            st = json.load(f)
    except (OSError, ValueError) as e:
        return [f"no state report ({e})"]
    problems = []
    before = st.get("beforeDeregister", {})
    for p in before.get("peers", []):
        if p.get("role") != "client" or p.get("state") != "tombstone":
            problems.append(f"peer left: {p}")
    nss = before.get("namespaces", [])
    if len(nss) != 1:
        problems.append(f"namespaces before deregistration: {nss}")
    for ns in nss:
        want = ranks if clients_ran else 0
        if ns.get("nfinalized") != want or ns.get("nlocalprocs") != ranks:
            problems.append(f"namespace {ns.get('nspace')}: nfinalized {ns.get('nfinalized')} "
                            f"nlocalprocs {ns.get('nlocalprocs')}")
        for r in ns.get("ranks", []):
            if r.get("procCount") != 0:
                problems.append(f"rank {r.get('rank')} procCount {r.get('procCount')}")
    after = st.get("afterDeregister", {})
    if after.get("peers") or after.get("namespaces"):
        problems.append(f"left after deregistration: {after}")
    return problems


def tsv(f, phase, label, cycles, s):
    f.write("\t".join(str(x) for x in (phase, label, cycles, s["rss"], s["nonheap"], s["heap"],
                                       s["committed"], s["threads"], s["jvmdyn"], s["fds"]))
            + "\n")
    f.flush()


def fmt(s):
    heap = f"{s['heap'] / MIB:.2f}" if s.get("heap", -1) >= 0 else "?"
    return (f"{s['rss'] / MIB:>9.1f}{s['nonheap'] / MIB:>9.1f}{heap:>10}{s['threads']:>9}"
            f"{s['jvmdyn']:>5}{s['fds']:>6}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--agent":
        return agent(sys.argv[2:])
    a = parse()
    phases = [p for p in a.phases.split(",") if p]
    if any(p not in PHASES for p in phases):
        log(f"soak: unknown phase in {a.phases} (known: {','.join(PHASES)})")
        return 2
    # Nothing else is random: the cycles are the same every run.
    if a.seed is not None:
        random.Random(a.seed).shuffle(phases)
    seed = f"seed {a.seed} (the phase order)" if a.seed is not None else "not randomised"
    os.makedirs(a.out, exist_ok=True)
    log(f"soak: {seed}, phases {','.join(phases)}, {a.cycles} cycles per phase ({a.ranks} "
        f"ranks for the clients, one tool JVM), idle sample every {a.sample_every}, warm-up "
        f"{a.warmup}, C tool runs {a.c_tool_cycles}, tolerances: fds and threads equal to the "
        f"start, lowest live heap of the second half +{a.heap_tolerance} MiB over the first's, "
        f"RSS outside the heap +{a.rss_tolerance} MiB from middle "
        f"to end; files in {a.out}")
    d = Driver(a)
    failures = []
    results = {}
    samples = open(os.path.join(a.out, "samples.tsv"), "w")
    samples.write("phase\tsample\tcycles\trss\trss_outside_heap\tlive_heap\tcommitted_heap\t"
                  "threads\tjdk_pool_threads\tfds\n")
    try:
        pid = d.start()
        log(f"soak: server pid {pid} (pmixrun --tool-support, one job of {a.ranks} agent ranks; "
            f"namespace {d.nspace})")
        for phase in phases:
            per_rank = phase in ("c", "java")
            total_cycles = a.jobs if phase == "jobs" else a.cycles
            every = max(1, a.sample_every // 10) if phase == "jobs" else a.sample_every
            t0 = time.monotonic()
            unit = a.ranks if per_rank else 1
            warmup = max(1, a.warmup // 10) if phase == "jobs" else a.warmup
            warm = segments(warmup, warmup, a.ranks, per_rank)[0]
            ok, why = d.segment(phase, "warmup", warm // unit)
            if not ok:
                failures.append(f"{phase} warm-up: {why}")
                log(f"soak: {phase} warm-up FAILED: {why}")
                continue
            # two samples: the first attach of jcmd starts the JVM's attach listener thread
            idle_sample(a, pid, None, f"{phase}-warmup")
            start = idle_sample(a, pid, None, f"{phase}-start")
            rows = [("start", 0, start)]
            tsv(samples, phase, "start", 0, start)
            segs = segments(total_cycles, every, a.ranks, per_rank)
            total = sum(segs)
            done = 0
            middle = None
            seg_fail = None
            for i, n in enumerate(segs):
                ok, why = d.segment(phase, str(i), n // a.ranks if per_rank else n)
                if not ok:
                    seg_fail = f"{phase} segment {i} (cycles {done}..{done + n}): {why}"
                    break
                done += n
                s = idle_sample(a, pid, start, f"{phase}-{done}")
                tsv(samples, phase, str(i), done, s)
                log(f"  {phase}: {done:>6}/{total} cycles  rss {s['rss'] / MIB:.1f} MiB (outside "
                    f"the heap {s['nonheap'] / MIB:.1f})  heap "
                    f"{s['heap'] / MIB:.2f} MiB (committed {s['committed'] / MIB:.0f})  threads "
                    f"{s['threads']}(+{s['jvmdyn']} jdk)  fds {s['fds']}")
                rows.append(("s", done, s))
                if middle is None and done * 2 >= total:
                    middle = (done, s)
            ctool_bad, ctool_first = 0, ""
            if phase == "tool" and a.c_tool_cycles > 0 and seg_fail is None:
                ctool_bad, ctool_first = d.c_tools(a.c_tool_cycles)
                s = idle_sample(a, pid, start, "tool-pps")
                tsv(samples, phase, "pps", a.c_tool_cycles, s)
                rows.append(("pps", a.c_tool_cycles, s))
                log(f"  tool: {a.c_tool_cycles} pps runs, {ctool_bad} failed  rss "
                    f"{s['rss'] / MIB:.1f} MiB  threads {s['threads']}  fds {s['fds']}")
            wall = time.monotonic() - t0
            problems = []
            if phase == "jobs":
                # every spawned rank's finalize line, warm-up jobs included
                want = (done + warm) * a.ranks
                got = d.spawned_ok()
                if got != want:
                    problems.append(f"{got} spawned ranks finalized, want {want}")
            if seg_fail:
                problems.append(seg_fail)
            if ctool_bad:
                problems.append(f"{ctool_bad} of {a.c_tool_cycles} pps runs failed; first: "
                                f"{ctool_first}")
            end = rows[-1][2]
            for _, c, s in rows[1:]:
                if s["fds"] != start["fds"]:
                    problems.append(f"fds {s['fds']} at cycle {c}, start {start['fds']}")
                    break
            for _, c, s in rows[1:]:
                if s["threads"] != start["threads"]:
                    problems.append(f"threads {s['threads']} at cycle {c}, start "
                                    f"{start['threads']}: {thread_names(pid)}")
                    break
            if middle is not None and len(rows) > 2:
                m = middle[1]
                # The lowest live heap of each half: a leak raises the floor; a sawtooth (JNA's
                # Memory objects awaiting their cleaner; before -XX:MarkSweepDeadRatio=0 Serial's
                # int[] fillers, +0.3 MiB per 1,000 cycles and back every few thousand) does not.
                first = [s["heap"] for _, c, s in rows[1:] if c <= middle[0]]
                second = [s["heap"] for _, c, s in rows[1:] if c > middle[0]]
                if not second:
                    second = [end["heap"]]
                if min(first + second) < 0:
                    problems.append("heap not measured (jcmd failed)")
                elif min(second) - min(first) > a.heap_tolerance * MIB:
                    problems.append(f"live heap grew {(min(second) - min(first)) / 1024:.0f} KiB "
                                    f"from the first half's lowest sample to the second half's")
                if m["nonheap"] < 0 or end["nonheap"] < 0:
                    problems.append("RSS outside the heap not measured")
                elif end["nonheap"] - m["nonheap"] > a.rss_tolerance * MIB:
                    problems.append(f"RSS outside the heap grew "
                                    f"{(end['nonheap'] - m['nonheap']) / MIB:.1f} MiB from "
                                    f"middle to end")
            results[phase] = (start, middle, end, done, wall, problems, d.peak.get(phase))
            failures += [f"{phase}: {p}" for p in problems]
            verdict = "flat" if not problems else "NOT FLAT/FAILED"
            detail = "" if not problems else ": " + "; ".join(problems)
            log(f"soak: {phase} phase {verdict} ({done} cycles, {wall:.0f} s){detail}")
        rc = d.finish()
        if rc != 0:
            failures.append(f"pmixrun ended with status {rc} (see {d.log.name})")
        for p in check_state(d.state, a.ranks, any(p in ("c", "java") for p in results)):
            failures.append(f"state report: {p}")
    except Exception as e:  # noqa: BLE001 - reported, and the server is stopped
        failures.append(f"driver: {e!r}")
    finally:
        d.kill()
        samples.close()
    log()
    log(f"summary ({seed}; server = pmixrun's JVM, pid {getattr(d, 'pid', '?')}"
        f"; samples idle; heap = live bytes after a full GC; all samples in samples.tsv):")
    log(f"  {'phase':<6}{'sample':<8}{'cycles':>7}{'RSS MiB':>9}{'non-heap':>9}{'heap MiB':>10}"
        f"{'threads':>9}{'jdk':>5}{'fds':>6}")
    for phase, (start, middle, end, done, wall, problems, peak) in results.items():
        log(f"  {phase:<6}{'start':<8}{0:>7}{fmt(start)}")
        if middle:
            log(f"  {phase:<6}{'middle':<8}{middle[0]:>7}{fmt(middle[1])}")
        log(f"  {phase:<6}{'end':<8}{done:>7}{fmt(end)}")
        if peak:
            log(f"  {phase:<6}{'peak':<8}{'(busy)':>7}{peak['rss'] / MIB:>9.1f}{'':>19}"
                f"{peak['threads']:>9}{peak['jvmdyn']:>5}{peak['fds']:>6}")
        log(f"  {phase:<6}verdict: {'FLAT' if not problems else 'NOT FLAT'} ({wall:.0f} s)")
    log("  (non-heap: RSS outside the Java heap's mappings, judged; heap: live objects after a "
        "full GC, judged; threads: the server JVM's, judged, without the threads the JDK starts "
        "and stops as it needs them (JIT compilers, process reapers), shown as jdk; peak: the "
        "highest values sampled each second while cycling)")
    if failures:
        log("soak: FAILED:")
        for f in failures:
            log(f"  {f}")
        return 1
    log("soak: every cycle succeeded, every phase flat, state report counters exact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
