/*
 * tool_bench.c -- the C side of bin/bench-client's tool measures: the first
 * PMIx_tool_init of OpenPMIx 4.2.2's libpmix in a fresh process, attaching to
 * the running job's server by its pid (PMIX_SERVER_PIDINFO), the same calls
 * io.pmix.benchmarks.ToolBenchmark makes with pmix-java's tool.
 *
 * Started by rank 0 of a client_bench job (its --tool option), with the
 * job's PMIx identity removed from its environment (so it attaches as a tool
 * and not as that rank):
 *   tool_bench --pid SERVER-PID --nspace JOB-NSPACE
 *
 * Prints (flushed):
 *   BENCH tool-exec-to-init <ns>  wall clock from $BENCH_T0 (ns since the
 *                                 epoch, stamped by the launching shell just
 *                                 before exec) to PMIx_tool_init's return
 *                                 (only when BENCH_T0 is set)
 *   BENCH tool-init <ns>          the PMIx_tool_init call alone
 * Then it checks that it reached the job's server (a namespace query whose
 * answer must name JOB-NSPACE) and finalizes. Exits 0 on success, 1 (with
 * "FAIL ..." on stderr) at the first failing call, 2 on a bad command line.
 *
 * Build: gcc -O2 -o tool_bench tool_bench.c $(pkg-config --cflags --libs pmix)
 */
#define _GNU_SOURCE
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_output.h"

static void check(pmix_status_t rc, const char *what)
{
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "FAIL tool %s: %s\n", what, PMIx_Error_string(rc));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    pid_t pid = 0;
    const char *nspace = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "--pid")) {
            pid = (pid_t) atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "--nspace")) {
            nspace = argv[i + 1];
        } else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (pid <= 0 || NULL == nspace) {
        fprintf(stderr, "usage: tool_bench --pid SERVER-PID --nspace JOB-NSPACE\n");
        return 2;
    }

    pmix_proc_t me;
    pmix_info_t attach;
    PMIX_INFO_LOAD(&attach, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    long long t = now_ns(CLOCK_MONOTONIC);
    check(PMIx_tool_init(&me, &attach, 1), "init");
    long long init_ns = now_ns(CLOCK_MONOTONIC) - t;
    const char *t0 = getenv("BENCH_T0");
    if (NULL != t0) {
        line("tool-exec-to-init", now_ns(CLOCK_REALTIME) - atoll(t0));
    }
    line("tool-init", init_ns);
    PMIX_INFO_DESTRUCT(&attach);

    /* attached to the job's server, not to some other one: it knows the job */
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NAMESPACES);
    check(rc, "query keys");
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    check(PMIx_Query_info(&q, 1, &results, &nresults), "query namespaces");
    int found = 0;
    for (size_t i = 0; i < nresults; i++) {
        if (0 == strcmp(results[i].key, PMIX_QUERY_NAMESPACES)
            && PMIX_STRING == results[i].value.type && NULL != results[i].value.data.string) {
            char *list = strdup(results[i].value.data.string), *save = NULL;
            for (char *ns = strtok_r(list, ",", &save); NULL != ns; ns = strtok_r(NULL, ",", &save)) {
                found |= 0 == strcmp(ns, nspace);
            }
            free(list);
        }
    }
    if (!found) {
        fprintf(stderr, "FAIL tool: the server's namespaces do not include %s\n", nspace);
        return 1;
    }
    PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&q);
    check(PMIx_tool_finalize(), "finalize");
    return 0;
}
