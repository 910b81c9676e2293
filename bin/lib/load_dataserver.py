"""load-dataserver driver (run by bin/load-dataserver, whose header says what it checks, and
pmix-testkit's LoadDataServerIT): one standalone pmix-dataserver, rounds of concurrent pmixrun
jobs (--dataserver) whose libpmix 4.2.2 ranks (ds_load pair) publish and wait for each other's
keys, some ranks SIGKILLed mid-request; after each round a verify job finds every key of the round
exactly as published (or, for a killed job's rank, not at all), removes them and finds none
left; the data server's fds, threads and live heap are sampled; then the per-uid cap: one
publish above it is refused, a flood past it evicts the flooder's own oldest items and the heap
stays bounded."""
import argparse, os, random, re, signal, subprocess, sys, threading, time

import soak
from soak import MIB, log

STATUS_TIMEOUT = "TIMEOUT"  # PMIx_Error_string of 4.2.2


def parse():
    p = argparse.ArgumentParser(prog="load-dataserver")
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--jobs", type=int, default=6, help="concurrent pmixrun jobs per round")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--keys", type=int, default=50, help="keys each rank publishes (one call)")
    p.add_argument("--bytes", type=int, default=256, help="bytes of each value")
    p.add_argument("--lookup-timeout", type=int, default=8,
                   help="PMIX_TIMEOUT of the waiting lookups")
    p.add_argument("--delay-ms", type=int, default=600,
                   help="publications spread over this many ms after init, so lookups wait")
    p.add_argument("--kills", type=int, default=2, help="jobs per round with a rank SIGKILLed")
    p.add_argument("--max-size", type=int, default=2 * MIB,
                   help="the data server's per-uid cap (--max-size)")
    p.add_argument("--flood-bytes", type=int, default=16384)
    p.add_argument("--flood-factor", type=float, default=3.0,
                   help="the flood publishes this many times the cap")
    p.add_argument("--heap-tolerance", type=float, default=1.0)
    p.add_argument("--settle", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--quick", action="store_true",
                   help="4 rounds of 4 jobs of 4 ranks, 20 keys each, 1 kill per round")
    soak.driver_arguments(p, "ds_load")
    a = p.parse_args()
    if a.quick:
        a.rounds, a.jobs, a.ranks, a.keys, a.kills = 4, 4, 4, 20, 1
    if a.jobs < 2 or a.kills >= a.jobs:
        p.error("--jobs >= 2 and --kills < --jobs needed")
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 31)
    a.dump_over = 0
    a.server_java_opts = ""
    return a


def children(pid):
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


class Run:
    def __init__(self, a):
        self.a = a
        self.tmp = os.path.join(a.out, "tmp")
        os.makedirs(self.tmp, exist_ok=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PMIX_")}
        self.env["TMPDIR"] = self.tmp

    def start_dataserver(self):
        a = self.a
        self.ds_log = open(os.path.join(a.out, "dataserver.txt"), "w")
        self.ds = subprocess.Popen(
            # no dead wood: Serial's full GC otherwise keeps freed space as int[] fillers the
            # class histogram counts (the cleared flood's 2 MiB stayed "live")
            [a.java, "-XX:+UseSerialGC", "-XX:MarkSweepDeadRatio=0", "-cp", a.cp,
             "io.pmix.dataserver.DataServer",
             "--port", "0", "--timeout", "0", "--max-size", str(a.max_size)],
            stdout=subprocess.PIPE, stderr=self.ds_log, stdin=subprocess.DEVNULL, text=True,
            env=self.env)
        line = self.ds.stdout.readline()
        m = re.search(r"listening on (\S+)", line)
        if not m:
            raise RuntimeError(f"the data server did not start: {line!r}")
        self.addr = m.group(1)
        return self.ds.pid

    def pmixrun(self, name, n, args, limit):
        a = self.a
        out = open(os.path.join(a.out, f"{name}.txt"), "w")
        cmd = [a.java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
               f"-Djava.io.tmpdir={self.tmp}", "-cp", a.cp, "io.pmix.testkit.PmixRun",
               "--dataserver", self.addr, "--timeout", str(limit), "-n", str(n), "--",
               a.client, *args]
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=self.env)
        p.out = out
        p.name = name
        return p

    def text(self, p):
        p.out.close()
        return soak.read(os.path.join(self.a.out, f"{p.name}.txt"))

    def one(self, name, n, args, limit=60):
        p = self.pmixrun(name, n, args, limit)
        rc = p.wait(timeout=limit + 30)
        return rc, self.text(p)


def killer(p, r, ranks, delay_ms, record):
    """Once the job's ranks run, SIGKILLs one of them at a random moment of the publication
    window (while it publishes, or waits in a lookup)."""
    deadline = time.monotonic() + 60
    while len(children(p.pid)) < ranks:
        if p.poll() is not None or time.monotonic() > deadline:
            record.append(None)
            return
        time.sleep(0.01)
    time.sleep(r.uniform(0.05, delay_ms * 1.5 / 1000))
    kids = children(p.pid)
    if not kids:
        record.append(None)
        return
    victim = r.choice(kids)
    try:
        os.kill(victim, signal.SIGKILL)
        record.append(victim)
    except OSError:
        record.append(None)


def main():
    a = parse()
    os.makedirs(os.path.join(a.out, "ctl"), exist_ok=True)  # idle_sample's jcmd command file
    rng = random.Random(a.seed)
    log(f"load-dataserver: seed {a.seed}; {a.rounds} rounds of {a.jobs} concurrent pmixrun jobs "
        f"x {a.ranks} ranks (libpmix 4.2.2), {a.keys} keys of {a.bytes} bytes per rank "
        f"(GLOBAL, INDEF), waiting lookups of the next job's keys (PMIX_TIMEOUT "
        f"{a.lookup_timeout} s), {a.kills} job(s) per round with a rank SIGKILLed; data server "
        f"cap {a.max_size} bytes per uid; files in {a.out}")
    run = Run(a)
    failures = []
    rows = []
    tally = {"published": 0, "lookups_ok": 0, "lookups_timeout": 0, "verified": 0,
             "victim_found": 0, "victim_missing": 0, "kills": 0}
    try:
        pid = run.start_dataserver()
        log(f"load-dataserver: data server pid {pid} at {run.addr}")
        base = None
        for rnd in range(-1, a.rounds):  # round -1: the warm-up, no kills
            tags = [f"R{rnd + 1}j{j}" for j in range(a.jobs)]
            victims = set(rng.sample(range(a.jobs), a.kills)) if rnd >= 0 else set()
            limit = a.lookup_timeout + 40
            procs, kills, threads = [], {}, []
            for j, tag in enumerate(tags):
                p = run.pmixrun(f"r{rnd + 1}-{tag}", a.ranks,
                                ["pair", tag, tags[(j + 1) % a.jobs], str(a.keys), str(a.bytes),
                                 str(a.lookup_timeout), str(a.delay_ms)], limit)
                procs.append(p)
                if j in victims:
                    kills[j] = []
                    t = threading.Thread(target=killer, args=(
                        p, random.Random(rng.random()), a.ranks, a.delay_ms, kills[j]),
                        daemon=True)
                    t.start()
                    threads.append(t)
            for t in threads:
                t.join()
            texts = []
            for p in procs:
                try:
                    p.wait(timeout=limit + 30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                    failures.append(f"round {rnd + 1}: {p.name} did not end")
                texts.append(run.text(p))
            killed = {j for j, k in kills.items() if k and k[0]}
            tally["kills"] += len(killed)
            published = {}
            for j, text in enumerate(texts):
                lines = text.splitlines()
                for r in range(a.ranks):
                    ok = any(l == f"PUBLISHED {tags[j]} r{r} SUCCESS" for l in lines)
                    published[(j, r)] = ok
                    if ok:
                        tally["published"] += 1
                if j in killed:
                    continue
                partner = (j + 1) % a.jobs
                look = [l for l in lines if l.startswith(f"LOOKUP {tags[partner]} ")]
                if len(look) != a.ranks * a.ranks:
                    failures.append(f"round {rnd + 1}: job {tags[j]} printed {len(look)} lookups, "
                                    f"want {a.ranks * a.ranks}: {text[-300:]!r}")
                for l in look:
                    w = l.split()
                    if w[3] == "OK":
                        tally["lookups_ok"] += 1
                    elif partner in killed and w[4] == STATUS_TIMEOUT:
                        tally["lookups_timeout"] += 1  # a killed job's rank never published
                    else:
                        failures.append(f"round {rnd + 1}: job {tags[j]}: {l}")
                if not all(published[(j, r)] for r in range(a.ranks)):
                    failures.append(f"round {rnd + 1}: job {tags[j]} (no kill) did not publish "
                                    f"every rank")
            for j in victims - killed:
                log(f"  round {rnd + 1}: job {tags[j]} ended before its kill")
            # every key of the round, exactly as published, then removed with none left
            rc, vtext = run.one(f"r{rnd + 1}-verify", 1,
                                ["verify", str(a.ranks), str(a.keys), str(a.bytes), *tags])
            for j, tag in enumerate(tags):
                for r in range(a.ranks):
                    m = re.search(rf"^VERIFY {tag} r{r} found (\d+) missing (\d+) wrong (\d+)$",
                                  vtext, re.M)
                    if not m:
                        failures.append(f"round {rnd + 1}: no VERIFY line for {tag} r{r}")
                        continue
                    found, missing, wrong = map(int, m.groups())
                    if wrong or found + missing != a.keys or found not in (0, a.keys):
                        failures.append(f"round {rnd + 1}: {m.group(0)}")
                    elif published[(j, r)] and found != a.keys:
                        failures.append(f"round {rnd + 1}: {tag} r{r} published but lost: "
                                        f"{m.group(0)}")
                    elif j not in killed and found != a.keys:
                        failures.append(f"round {rnd + 1}: {m.group(0)}")
                    elif j in killed:
                        tally["victim_found" if found else "victim_missing"] += 1
                    else:
                        tally["verified"] += found
                if f"CLEARED {tag} left 0" not in vtext:
                    failures.append(f"round {rnd + 1}: {tag} not cleared: {vtext[-300:]!r}")
            if rc != 0:
                failures.append(f"round {rnd + 1}: the verify job ended {rc}")
            s = soak.idle_sample(a, pid, base, f"round{rnd + 1}")
            if base is None:
                soak.idle_sample(a, pid, None, "warmup")
                base = soak.idle_sample(a, pid, None, "baseline")
                rows.append(("baseline", base))
            else:
                rows.append((f"round {rnd + 1}", s))
                for k in ("fds", "threads"):
                    if s[k] != base[k]:
                        failures.append(f"round {rnd + 1}: data server {k} {s[k]}, baseline "
                                        f"{base[k]}")
            log(f"  round {rnd + 1}: kills {sorted(tags[j] for j in killed) or '-'}; "
                f"heap {s['heap'] / MIB:.2f} MiB, threads {s['threads']}, fds {s['fds']}")
        # the cap: one publish larger than it is refused, a flood past it evicts its own
        rc, btext = run.one("cap-big", 1, ["big", str(a.max_size + 1)])
        big = re.search(r"^BIG (\S+) (-?\d+)$", btext, re.M)
        log(f"  cap: one publish of {a.max_size + 1} bytes: {big.group(0) if big else btext[-200:]}")
        if not big or big.group(1) != "OUT-OF-RESOURCE":
            failures.append(f"a publish above the cap was not refused with OUT_OF_RESOURCE: "
                            f"{btext[-300:]!r}")
        nflood = int(a.flood_factor * a.max_size / a.flood_bytes)
        rc, ftext = run.one("cap-flood", 1, ["flood", "flood", str(nflood), str(a.flood_bytes)])
        fl = re.search(r"^FLOOD flood published (\d+) failed (\d+) found (\d+) missing (\d+) "
                       r"wrong (\d+)$", ftext, re.M)
        full = soak.idle_sample(a, pid, base, "flooded")
        rows.append(("flooded", full))
        if not fl:
            failures.append(f"flood: {ftext[-300:]!r}")
        else:
            pub, fail, found, missing, wrong = map(int, fl.groups())
            held = found * a.flood_bytes
            log(f"  cap: flood of {nflood} x {a.flood_bytes} bytes ({nflood * a.flood_bytes / MIB:.1f}"
                f" MiB): published {pub}, failed {fail}, still found {found} ({held / MIB:.2f} MiB),"
                f" evicted {missing}, wrong {wrong}; heap {full['heap'] / MIB:.2f} MiB "
                f"(baseline {base['heap'] / MIB:.2f})")
            if pub != nflood or wrong or held > a.max_size or missing == 0:
                failures.append(f"flood: {fl.group(0)} (the cap holds {a.max_size} bytes)")
            if full["heap"] - base["heap"] > 2 * a.max_size + a.heap_tolerance * MIB:
                failures.append(f"flood: heap {full['heap'] / MIB:.2f} MiB, more than twice the "
                                f"cap over the baseline")
        rc, ctext = run.one("cap-clear", 1, ["clear", "1", str(nflood), "flood"])
        if "CLEARED flood left 0" not in ctext:
            failures.append(f"flood not cleared: {ctext[-300:]!r}")
        end = soak.idle_sample(a, pid, base, "end")
        rows.append(("end", end))
        for k in ("fds", "threads"):
            if end[k] != base[k]:
                failures.append(f"end: data server {k} {end[k]}, baseline {base[k]}")
        if end["heap"] - base["heap"] > a.heap_tolerance * MIB:
            failures.append(f"end: live heap {(end['heap'] - base['heap']) / 1024:.0f} KiB over "
                            f"the baseline")
        if run.ds.poll() is not None:
            failures.append(f"the data server ended ({run.ds.returncode})")
    except Exception as e:  # noqa: BLE001 - reported, and the server is stopped
        failures.append(f"driver: {e!r}")
    finally:
        if getattr(run, "ds", None) and run.ds.poll() is None:
            run.ds.terminate()
            try:
                run.ds.wait(timeout=15)
            except subprocess.TimeoutExpired:
                run.ds.kill()
                run.ds.wait()
    log()
    log(f"summary (seed {a.seed}; data server = its own JVM; heap = live bytes after a full GC):")
    log(f"  ranks that published {tally['published']}; waiting lookups answered "
        f"{tally['lookups_ok']}, timed out (a killed job's rank) {tally['lookups_timeout']}; "
        f"keys verified {tally['verified']}; jobs with a rank killed {tally['kills']}: their "
        f"ranks' keys found {tally['victim_found']}, never published {tally['victim_missing']}")
    log(f"  {'sample':<10}{'RSS MiB':>9}{'heap MiB':>10}{'threads':>9}{'fds':>6}")
    for label, s in rows:
        log(f"  {label:<10}{s['rss'] / MIB:>9.1f}{s['heap'] / MIB:>10.2f}{s['threads']:>9}"
            f"{s['fds']:>6}")
    if failures:
        log("load-dataserver: FAILED:")
        for f in failures:
            log(f"  {f}")
        return 1
    log("load-dataserver: no key lost or duplicated, every waiting lookup answered or timed "
        "out, the cap refused and evicted as it should, fds/threads/heap back to the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
