"""chaos-kill driver (run by bin/chaos-kill): jobs of N C clients under pmixrun and under the C host
server on libpmix, random ranks SIGKILLed at random moments, invariants checked per trial."""
import argparse, json, os, random, signal, subprocess, sys, time

from textfiles import read

PHASES = ["init", "fence", "get", "finalize", "any"]


def parse():
    p = argparse.ArgumentParser(prog="chaos-kill")
    p.add_argument("--trials", type=int, default=50)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--servers", default="java,c")
    p.add_argument("--job-timeout", type=int, default=40, help="launcher --timeout (s)")
    p.add_argument("--client-timeout", type=int, default=10, help="client PMIX_TIMEOUT (s)")
    p.add_argument("--out", required=True)
    p.add_argument("--client", required=True)
    p.add_argument("--chost", required=True)
    p.add_argument("--pmixrun", required=True, nargs="+")
    return p.parse_args()


def plan(seed, trial, n):
    """The trial's victims and moments, from the seed alone (so --seed replays it)."""
    r = random.Random(seed * 100003 + trial)
    phase = r.choice(PHASES)
    nvict = 1 if r.random() < 0.75 else 2
    victims = sorted(r.sample(range(n), nvict))
    # in init: within the first 40 ms of the rank's life (PMIx_Init takes a few ms)
    top = 0.04 if phase == "init" else 0.25
    delays = [r.uniform(0, top) for _ in victims]
    return phase, victims, delays


# The victim's trigger: kill after this STEP line appeared in its output (None: after its start).
TRIGGER = {"init": None, "fence": "STEP commit OK", "get": "STEP fence-collect OK",
           "finalize": "STEP get-peers OK", "any": None}


def steps(ct):
    return ["--timeout", str(ct), "--init", "--put", "--commit", "--sleep", "300",
            "--fence-collect", "--get-peers", "--sleep", "300", "--finalize",
            # alive a little after finalize, so that a late kill still lands
            "--sleep", "200"]


def run_trial(a, server, trial, phase, victims, delays):
    d = os.path.join(a.out, f"t{trial:03d}-{server}")
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    wrap = os.path.join(d, "rank.sh")
    with open(wrap, "w") as f:
        f.write('#!/bin/sh\necho $$ > "$CHAOS_DIR/pid.$PMIX_RANK"\n'
                'exec "$CHAOS_CLIENT" "$@" > "$CHAOS_DIR/out.$PMIX_RANK" 2>&1\n')
    os.chmod(wrap, 0o755)
    env = dict(os.environ, CHAOS_DIR=d, CHAOS_CLIENT=a.client)
    state = os.path.join(d, "state.json")
    if server == "java":
        cmd = a.pmixrun + ["-n", str(a.n), "--timeout", str(a.job_timeout), "--report-state",
                           state, "--", wrap] + steps(a.client_timeout)
    else:
        cmd = [a.chost, "-n", str(a.n), "--timeout", str(a.job_timeout), "--", wrap] + steps(
            a.client_timeout)
    lo = open(os.path.join(d, "launcher.out"), "w")
    le = open(os.path.join(d, "launcher.err"), "w")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=lo, stderr=le, env=env, start_new_session=True)
    killed = {}  # rank -> what its output showed when it was killed
    pending = list(zip(victims, delays))
    armed = {}
    hard = a.job_timeout + 20
    while proc.poll() is None and time.monotonic() - t0 < hard:
        now = time.monotonic()
        for v, dl in list(pending):
            pidf = os.path.join(d, f"pid.{v}")
            pid_s = read(pidf).strip()
            if not pid_s:
                continue
            trig = TRIGGER[phase]
            if v not in armed:
                if trig is None or trig in read(os.path.join(d, f"out.{v}")):
                    # "any": anywhere in the rank's first 0.75 s (it lives >= 0.8 s)
                    armed[v] = now + (dl * 3 if phase == "any" else dl)
                continue
            if now >= armed[v]:
                try:
                    os.kill(int(pid_s), signal.SIGKILL)
                    out = read(os.path.join(d, f"out.{v}"))
                    last = [l for l in out.splitlines() if l.startswith("STEP")]
                    killed[v] = last[-1].split()[1] if last else "(before init)"
                except ProcessLookupError:
                    killed[v] = "(already exited)"
                pending.remove((v, dl))
        time.sleep(0.002)
    hung_launcher = proc.poll() is None
    if hung_launcher:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    wall = time.monotonic() - t0
    lo.close(); le.close()
    # every rank process left behind (a hang) is killed by its pid
    for r in range(a.n):
        pid_s = read(os.path.join(d, f"pid.{r}")).strip()
        if pid_s:
            try:
                os.kill(int(pid_s), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    return judge(a, server, d, proc.returncode, hung_launcher, wall, phase, victims, killed, state)


def rank_outcome(text):
    lines = [l for l in text.splitlines() if l.startswith("STEP")]
    if any(l.startswith("STEP finalize OK") for l in lines):
        return "completed"
    if any(" FAIL " in l for l in lines):
        return "errored"
    return "ended-by-launcher"


def judge(a, server, d, rc, hung, wall, phase, victims, killed, state):
    problems = []
    out = {r: read(os.path.join(d, f"out.{r}")) for r in range(a.n)}
    lout, lerr = read(os.path.join(d, "launcher.out")), read(os.path.join(d, "launcher.err"))
    survivors = {}
    for r in range(a.n):
        if r in victims:
            continue
        survivors[r] = rank_outcome(out[r])
    if server == "java" and os.path.exists(state):
        codes = json.load(open(state))["job"]["exitCodes"]
        timed_out = json.load(open(state))["job"]["timedOut"]
    else:
        codes, timed_out = None, rc == 124
    # a survivor the launcher had to kill at its --timeout was hung
    if timed_out or hung:
        for r, o in survivors.items():
            if o == "ended-by-launcher":
                survivors[r] = "hung"
    ended = not hung and not timed_out
    outcome = "ended" if ended else "hung"
    if ended and rc == 0 and any(k not in ("(already exited)",) for k in killed.values()):
        problems.append("exit status 0 although a rank was killed")
    # the status must name a killed rank
    named = False
    for v in killed:
        if server == "java":
            if f"rank {v}" in lerr or f"rank={v}" in lerr or f":{v} " in lerr:
                named = True
        else:
            if f"HOST CHILD rank={v} " in lout and "exit=137" in lout:
                named = True
    if ended and killed and not named:
        problems.append("no message names the killed rank")
    if not killed:
        problems.append("no rank was killed (victim exited first)")
    nsurv_err = sum(1 for o in survivors.values() if o != "completed")
    counters = "-"
    if server == "java":
        counters = check_counters(state, out, killed, survivors, problems)
    return dict(server=server, rc=rc, wall=wall, outcome=outcome, killed=killed,
                survivors=survivors, named=named, counters=counters, problems=problems,
                nsurv_err=nsurv_err, dir=d)


def check_counters(state, out, killed, survivors, problems):
    if not os.path.exists(state):
        problems.append("no state report")
        return "none"
    j = json.load(open(state))
    b = j["beforeDeregister"]
    if b is None:
        problems.append("state report has no beforeDeregister snapshot")
        return "none"
    peers = [p for p in b["peers"] if p["role"] == "client"]
    ranks = {p["rank"] for p in peers}
    fin = {p["rank"] for p in peers if p["state"] == "tombstone"}
    lost = {p["rank"] for p in peers if p["state"] == "lost"}
    other = [p for p in peers if p["state"] not in ("tombstone", "lost")]
    ns = b["namespaces"][0] if b["namespaces"] else {}
    # what the ranks' own output shows: connected = init OK; finalized = finalize OK
    inited = {r for r, t in out.items() if "STEP init OK" in t}
    finalized = {r for r, t in out.items() if "STEP finalize OK" in t}
    # A rank SIGKILLed inside PMIx_Init or PMIx_Finalize (a victim, or a survivor the launcher
    # ended because a victim died) may have got there on the server's side without printing it.
    unsure = {v for v, k in killed.items() if k in ("(before init)", "get-peers")}
    unsure |= {r for r, o in survivors.items() if o in ("ended-by-launcher", "hung")}
    ok = True
    if len(peers) != len(ranks) or not inited <= ranks or not ranks - inited <= unsure:
        problems.append(f"peers {sorted(ranks)} but ranks {sorted(inited)} printed init OK")
        ok = False
    if not finalized <= fin or not fin - finalized <= unsure:
        problems.append(f"finalized peers {sorted(fin)} != ranks that finalized {sorted(finalized)}")
        ok = False
    if ns.get("nfinalized") != len(fin):
        problems.append(f"nfinalized {ns.get('nfinalized')} != tombstones {len(fin)}")
        ok = False
    if not lost <= set(killed) | (inited - finalized) | unsure:
        problems.append(f"lost {sorted(lost)} includes ranks that finalized")
        ok = False
    if other:
        problems.append(f"peers neither finalized nor lost after the job: {other}")
        ok = False
    a = j["afterDeregister"]
    if a is not None and (a["peers"] or a["namespaces"]):
        problems.append("state left after deregistration")
        ok = False
    return (f"peers={len(peers)} fin={len(fin)} lost={len(lost)} "
            f"(init-ok={len(inited)} fin-ok={len(finalized)}) " + ("exact" if ok else "WRONG"))


def main():
    a = parse()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31)
    print(f"chaos-kill: seed {seed} (replay with --seed {seed}), {a.trials} trials, "
          f"-n {a.n}, servers {a.servers}", flush=True)
    servers = a.servers.split(",")
    rows, bad = [], 0
    for t in range(a.trials):
        phase, victims, delays = plan(seed, t, a.n)
        res = {}
        for s in servers:
            res[s] = run_trial(a, s, t, phase, victims, delays)
        rows.append((t, phase, victims, res))
        line = f"trial {t:3d} phase={phase:<8} victims={victims}"
        for s in servers:
            r = res[s]
            kinds = {}
            for o in r["survivors"].values():
                kinds[o] = kinds.get(o, 0) + 1
            line += (f" | {s}: {r['outcome']} rc={r['rc']} {r['wall']:.1f}s killed-at="
                     f"{','.join(f'{k}:{v}' for k, v in r['killed'].items())} survivors="
                     f"{','.join(f'{k}={v}' for k, v in sorted(kinds.items()))}")
            if s == "java":
                line += f" counters: {r['counters']}"
            if r["problems"]:
                line += f" PROBLEMS({s}): {'; '.join(r['problems'])}"
                if s == "java":
                    bad += 1
        print(line, flush=True)
    print()
    print(f"summary (seed {seed}, {a.trials} trials, -n {a.n}):")
    print(f"  {'server':<8}{'ended w/ status':>16}{'named rank':>12}{'hung':>6}"
          f"{'surv completed':>16}{'surv errored':>14}{'surv ended':>12}{'surv hung':>11}"
          f"{'counters exact':>16}{'max wall s':>12}")
    for s in servers:
        rs = [r[3][s] for r in rows]
        sv = [o for r in rs for o in r["survivors"].values()]
        print(f"  {('pmixrun' if s == 'java' else 'C host'):<8}"
              f"{sum(r['outcome'] == 'ended' for r in rs):>16}{sum(r['named'] for r in rs):>12}"
              f"{sum(r['outcome'] == 'hung' for r in rs):>6}{sv.count('completed'):>16}"
              f"{sv.count('errored'):>14}{sv.count('ended-by-launcher'):>12}{sv.count('hung'):>11}"
              f"{(str(sum('exact' in r['counters'] for r in rs)) if s == 'java' else '-'):>16}"
              f"{max(r['wall'] for r in rs):>12.1f}")
    print("  (surv ended = killed by the launcher once the job failed; hung = still blocked when "
          "the launcher's --timeout fired)")
    print(f"pmixrun trials with a broken invariant: {bad}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
