/*
 * client_bench.c -- the C side of bin/bench-client: client-side latencies of
 * OpenPMIx 4.2.2's libpmix, measured by a client of a real server (the test
 * kit's C host server, pmix_host_server.c), the same sequence of calls
 * io.pmix.benchmarks.ClientBenchmark makes with pmix-java's client, so that
 * the two print comparable lines.
 *
 * Run as every rank of a 2-proc job:
 *   pmix_host_server -n 2 -- client_bench [--gets G] [--fences F] [--dmodex R]
 *                                          [--cycles C] [--tool CMD]
 * With --tool, rank 0 runs "sh -c CMD sh SERVER-PID NSPACE" after the fences
 * (see run_tool): bin/bench-client's command that starts tool_bench.c or
 * io.pmix.benchmarks.ToolBenchmark, which print the tool-* lines.
 *
 * Each measure prints one or more lines "BENCH <metric> <nanoseconds>" (per
 * rank; batch lines are the average time of one operation in that batch):
 *   exec-to-init  wall clock from $BENCH_T0 (ns since the epoch, stamped by
 *                 the launching shell just before exec) to PMIx_Init's
 *                 return: process start-up included (only when BENCH_T0 set)
 *   init          the first PMIx_Init call
 *   get-job       PMIx_Get of PMIX_JOB_SIZE (job data, local), per batch
 *   get-peer      PMIx_Get of a peer's key after a collecting fence (data
 *                 local), per batch
 *   get-dmodex    the first PMIx_Get of a peer's freshly committed key after
 *                 a fence without data: one round trip to the server, per
 *                 round
 *   get-first     the first PMIx_Get of a peer's freshly committed key after
 *                 a collecting fence (local with a shared-memory gds, a round
 *                 trip with hash), per round (as many rounds as --dmodex)
 *   fence         PMIx_Fence of the job without data, per batch
 *   fence-collect PMIx_Fence with PMIX_COLLECT_DATA, 1 KiB committed by
 *                 each rank, per batch
 *   fence-each, fence-collect-each
 *                 the same fences one by one: a line per timed fence, printed
 *                 after the batches (the batch mean carries the slowest few;
 *                 the median of these does not), each value printed twice
 *                 (bench_output.h's line_checked)
 *   init-warm     PMIx_Init again after a PMIx_Finalize, per cycle
 *   finalize      the last PMIx_Finalize
 * Batches: 10 after a warm-up of a tenth of the operations. Exits 0 on
 * success, 1 (with "FAIL ..." on stderr) at the first failing call.
 *
 * Build: gcc -O2 -o client_bench client_bench.c $(pkg-config --cflags --libs pmix)
 */
#define _GNU_SOURCE
#include <pmix.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_output.h"
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#define BATCHES 10

static pmix_proc_t me;

static void check(pmix_status_t rc, const char *what)
{
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "FAIL rank %u %s: %s\n", me.rank, what, PMIx_Error_string(rc));
        exit(1);
    }
}

static void get_once(const pmix_proc_t *p, const char *key)
{
    pmix_value_t *v = NULL;
    check(PMIx_Get(p, key, NULL, 0, &v), key);
    PMIX_VALUE_RELEASE(v);
}

/* ops operations split into a warm-up of ops/10 and BATCHES timed batches;
 * with `each` (the fences), every timed operation is also printed on its own
 * as "<metric>-each", after the batches (ClientBenchmark does the same). */
static void batches(const char *metric, int ops, const pmix_proc_t *p, const char *key,
                    const pmix_info_t *finfo, size_t nfinfo, int each)
{
    int per = ops / BATCHES < 1 ? 1 : ops / BATCHES;
    long long *ops_ns = each ? calloc((size_t) per * BATCHES, sizeof(long long)) : NULL;
    char each_metric[64];
    if (each && NULL == ops_ns) {
        fprintf(stderr, "FAIL rank %u %s: out of memory\n", me.rank, metric);
        exit(1);
    }
    for (int b = -1; b < BATCHES; b++) {
        long long t = now_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < per; i++) {
            long long o = NULL != ops_ns && b >= 0 ? now_ns(CLOCK_MONOTONIC) : 0;
            if (NULL != key) {
                get_once(p, key);
            } else {
                check(PMIx_Fence(NULL, 0, finfo, nfinfo), metric);
            }
            if (NULL != ops_ns && b >= 0) {
                ops_ns[b * per + i] = now_ns(CLOCK_MONOTONIC) - o;
            }
        }
        if (b >= 0) { /* b == -1 is the warm-up */
            line(metric, (now_ns(CLOCK_MONOTONIC) - t) / per);
        }
    }
    if (NULL != ops_ns) {
        snprintf(each_metric, sizeof(each_metric), "%s-each", metric);
        for (int i = 0; i < per * BATCHES; i++) {
            line_checked(each_metric, ops_ns[i]);
        }
        free(ops_ns);
    }
}

static void put_commit(const char *key, const char *text)
{
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, text, PMIX_STRING);
    check(PMIx_Put(PMIX_GLOBAL, key, &v), "put");
    PMIX_VALUE_DESTRUCT(&v);
    check(PMIx_Commit(), "commit");
}

/* Runs "sh -c TOOL sh SERVER-PID NSPACE" and waits for it: the tool command
 * (given by bin/bench-client) stamps the clock and execs the tool. The server
 * is our parent under every launcher the script uses (each forks its ranks
 * itself). The job's PMIx identity and the server's URIs are removed from the
 * tool's environment, so it attaches by pid as a tool and not as this rank;
 * the tmpdir and MCA variables stay (where the server's rendezvous files are,
 * the job's data-store choice). */
static void run_tool(const char *tool)
{
    char ppid[32];
    snprintf(ppid, sizeof(ppid), "%d", (int) getppid());
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "FAIL rank %u fork of the tool: %s\n", me.rank, strerror(errno));
        exit(1);
    }
    if (0 == pid) {
        char **names = NULL;
        size_t n = 0;
        for (char **e = environ; NULL != *e; e++) {
            n++;
        }
        names = calloc(n + 1, sizeof(char *));
        n = 0;
        for (char **e = environ; NULL != e && NULL != *e; e++) {
            if (0 == strncmp(*e, "PMIX_", 5) && 0 != strncmp(*e, "PMIX_MCA_", 9)
                && 0 != strncmp(*e, "PMIX_SERVER_TMPDIR=", 19)
                && 0 != strncmp(*e, "PMIX_SYSTEM_TMPDIR=", 19)) {
                names[n++] = strndup(*e, strcspn(*e, "="));
            }
        }
        for (size_t i = 0; i < n; i++) {
            unsetenv(names[i]);
        }
        execl("/bin/sh", "sh", "-c", tool, "sh", ppid, me.nspace, (char *) NULL);
        fprintf(stderr, "FAIL rank %u exec of the tool: %s\n", me.rank, strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (EINTR != errno) {
            fprintf(stderr, "FAIL rank %u waiting for the tool: %s\n", me.rank, strerror(errno));
            exit(1);
        }
    }
    if (!WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
        fprintf(stderr, "FAIL rank %u the tool ended with status 0x%x\n", me.rank, status);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int gets = 100000, fences = 1000, dmodex = 100, cycles = 20;
    const char *tool = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "--gets")) {
            gets = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "--fences")) {
            fences = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "--dmodex")) {
            dmodex = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "--cycles")) {
            cycles = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "--tool")) {
            tool = argv[i + 1];
        } else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }

    long long t = now_ns(CLOCK_MONOTONIC);
    check(PMIx_Init(&me, NULL, 0), "init");
    long long init_ns = now_ns(CLOCK_MONOTONIC) - t;
    const char *t0 = getenv("BENCH_T0");
    if (NULL != t0) {
        line("exec-to-init", now_ns(CLOCK_REALTIME) - atoll(t0));
    }
    line("init", init_ns);

    pmix_proc_t job, peer;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&peer, me.nspace, 1 - me.rank);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);

    /* job key: in the job data every client holds after init */
    batches("get-job", gets, &job, PMIX_JOB_SIZE, NULL, 0, 0);

    /* peer key, local after a collecting fence */
    put_commit("bench.peer", "a value of a peer, 32 bytes long");
    check(PMIx_Fence(NULL, 0, &collect, 1), "fence");
    batches("get-peer", gets, &peer, "bench.peer", NULL, 0, 0);

    /* first get of a fresh peer key: a direct modex through the server */
    for (int r = 0; r < dmodex; r++) {
        char key[64];
        snprintf(key, sizeof(key), "bench.dm.%d", r);
        put_commit(key, "a value of a peer, 32 bytes long");
        check(PMIx_Fence(NULL, 0, NULL, 0), "fence");
        t = now_ns(CLOCK_MONOTONIC);
        get_once(&peer, key);
        line("get-dmodex", now_ns(CLOCK_MONOTONIC) - t);
    }

    /* first get of a fresh peer key after a collecting fence: local on ds21/ds12,
     * a round trip to the server on hash */
    for (int r = 0; r < dmodex; r++) {
        char key[64];
        snprintf(key, sizeof(key), "bench.ff.%d", r);
        put_commit(key, "a value of a peer, 32 bytes long");
        check(PMIx_Fence(NULL, 0, &collect, 1), "fence");
        t = now_ns(CLOCK_MONOTONIC);
        get_once(&peer, key);
        line("get-first", now_ns(CLOCK_MONOTONIC) - t);
    }

    /* fences: without data, then collecting 1 KiB per rank */
    check(PMIx_Fence(NULL, 0, NULL, 0), "fence");
    batches("fence", fences, NULL, NULL, NULL, 0, 1);
    char blob[1024];
    memset(blob, 'x', sizeof(blob));
    pmix_byte_object_t bo = {.bytes = blob, .size = sizeof(blob)};
    pmix_value_t bv;
    bv.type = PMIX_BYTE_OBJECT;
    bv.data.bo = bo;
    check(PMIx_Put(PMIX_GLOBAL, "bench.blob", &bv), "put blob");
    check(PMIx_Commit(), "commit");
    batches("fence-collect", fences, NULL, NULL, &collect, 1, 1);

    /* the tool's init: rank 0 starts a tool that attaches to this job's server; the
     * other rank waits in the fence that follows */
    if (NULL != tool && 0 == me.rank) {
        run_tool(tool);
    }

    /* re-init after finalize; no fence in a cycle, so no rank waits on one finalizing */
    check(PMIx_Fence(NULL, 0, NULL, 0), "fence");
    for (int c = 0; c < cycles; c++) {
        check(PMIx_Finalize(NULL, 0), "finalize");
        t = now_ns(CLOCK_MONOTONIC);
        check(PMIx_Init(&me, NULL, 0), "re-init");
        line("init-warm", now_ns(CLOCK_MONOTONIC) - t);
    }
    t = now_ns(CLOCK_MONOTONIC);
    check(PMIx_Finalize(NULL, 0), "finalize");
    line("finalize", now_ns(CLOCK_MONOTONIC) - t);
    return 0;
}
