"""bench-nested: the same libpmix 4.2.2 benchmark clients (pmix_client_check --bench) as N*M ranks
of one Open MPI 4.1 mpirun job directly, and as N nested pmixrun nodes of M ranks each under that
mpirun (issue #17), alternating run by run. Prints, per figure, the median over runs of the
slowest rank (init) or of the ranks' median (the others), both sides and the ratio nested/direct.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

FIGURES = ["init", "fence", "fence-collect", "get-first", "gets", "publish-lookup", "unpublish",
           "finalize"]


def run(cmd, timeout):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout, env=clean_env())
    if p.returncode != 0:
        sys.exit("bench-nested: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stdout[-4000:]))
    per = {}
    for line in p.stdout.splitlines():
        f = line.split()
        # pmixrun without --tag-output prints the client's lines as they are
        if len(f) == 3 and f[0] == "BENCH":
            per.setdefault(f[1], []).append(int(f[2]))
    return per


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith(("PMIX_", "OMPI_"))}


def summary(per, ranks):
    out = {}
    for k in FIGURES:
        v = per.get(k, [])
        if len(v) != ranks:
            continue
        out[k] = max(v) if k == "init" else statistics.median(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--per-node", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    n = a.nodes * a.per_node
    with tempfile.TemporaryDirectory(prefix="bench-nested-") as tmp:
        exe = os.path.join(tmp, "pmix_client_check")
        cflags = subprocess.check_output(["pkg-config", "--cflags", "--libs", "pmix"], text=True).split()
        subprocess.check_call(["gcc", "-O2", "-o", exe,
                               os.path.join(root, "pmix-testkit/src/main/c/pmix_client_check.c")] + cflags)
        # The cycle measure's re-init barrier is a file: one every rank of every node sees (each
        # nested node has a tmpdir of its own, the default barrier directory).
        bench = [exe, "--bench", "--bench-iters", str(a.iters),
                 "--barrier-dir", tmp, "--barrier-id", "bench-nested"]
        mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
        direct = mpirun + ["-n", str(n)] + bench
        nested = mpirun + ["-n", str(a.nodes), os.path.join(root, "bin/pmixrun"),
                           "-n", str(a.per_node), "--"] + bench
        # One untimed nested run first: pmixrun's class-data sharing archive is made then.
        run(nested, 600)
        results = {"direct": [], "nested": []}
        for i in range(a.runs):
            for side, cmd in (("direct", direct), ("nested", nested)):
                results[side].append(summary(run(cmd, 600), n))
        load = open("/proc/loadavg").read().split()[:3]
        print("bench-nested: %d ranks: mpirun -n %d directly vs mpirun -n %d pmixrun -n %d; "
              "%d runs each, alternating; load %s" % (n, n, a.nodes, a.per_node, a.runs, " ".join(load)))
        print("| figure (us) | direct | nested | nested/direct |")
        print("|---|---|---|---|")
        for k in FIGURES:
            d = [r[k] for r in results["direct"] if k in r]
            m = [r[k] for r in results["nested"] if k in r]
            if not d or not m:
                print("| %s | %s | %s | - |" % (k, "-" if not d else int(statistics.median(d)),
                                                "-" if not m else int(statistics.median(m))))
                continue
            dm, mm = statistics.median(d), statistics.median(m)
            print("| %s%s | %d | %d | %.2f |" % (k, " (slowest rank)" if k == "init" else "",
                                                 dm, mm, mm / dm if dm else float("nan")))


if __name__ == "__main__":
    main()
