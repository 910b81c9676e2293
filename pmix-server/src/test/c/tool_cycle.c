/*
 * Cycles PMIx_tool_init / PMIx_tool_finalize against a server found by its pid, for
 * pmix-server's tool lifecycle test: every cycle is a new tool connection (flag 3, a fresh
 * identity from the server) that must leave nothing behind on the server.
 *
 * Usage: tool_cycle PID N [--query]
 *   PID      the server's pid (PMIX_SERVER_PIDINFO)
 *   N        number of init/finalize cycles
 *   --query  also query pmix.qry.ns in every cycle
 *
 * Output: "cycle <i> me=<nspace>:<rank>" for the first and the last cycle, then "cycles=<N>".
 * Exit status: 0 on success, 1 if an init failed, 2 on a usage error, 3 if a query failed,
 * 4 if a finalize failed.
 */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    pmix_info_t info;
    pmix_proc_t me;
    pmix_status_t rc;
    pid_t pid;
    int n, i;
    int query;

    if (argc < 3) {
        fprintf(stderr, "usage: tool_cycle PID N [--query]\n");
        return 2;
    }
    pid = (pid_t) atoi(argv[1]);
    n = atoi(argv[2]);
    query = argc > 3 && 0 == strcmp(argv[3], "--query");
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 0; i < n; i++) {
        PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
        rc = PMIx_tool_init(&me, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        if (PMIX_SUCCESS != rc) {
            printf("cycle %d init:status=%d\n", i, rc);
            return 1;
        }
        if (0 == i || n - 1 == i) {
            printf("cycle %d me=%s:%u\n", i, me.nspace, me.rank);
        }
        if (query) {
            pmix_query_t q;
            pmix_info_t *results = NULL;
            size_t nresults = 0;
            PMIX_QUERY_CONSTRUCT(&q);
            PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NAMESPACES);
            rc = PMIx_Query_info(&q, 1, &results, &nresults);
            PMIX_QUERY_DESTRUCT(&q);
            if (PMIX_SUCCESS != rc || 1 != nresults) {
                printf("cycle %d query:status=%d n=%zu\n", i, rc, nresults);
                return 3;
            }
            PMIX_INFO_FREE(results, nresults);
        }
        rc = PMIx_tool_finalize();
        if (PMIX_SUCCESS != rc) {
            printf("cycle %d finalize:status=%d\n", i, rc);
            return 4;
        }
    }
    printf("cycles=%d\n", n);
    return 0;
}
