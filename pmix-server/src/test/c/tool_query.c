/*
 * A small OpenPMIx 4.2.2 tool for pmix-server's tool tests: attaches to a server, prints the
 * identity it got and the answers to the queries it was asked to make, one "name=value" line
 * each, then finalizes.
 *
 * Usage: tool_query [--pid PID | --server-nspace NS | --uri URI | --system]
 *                   [--id NS:RANK] [--launcher] [QUERY...]
 *   --pid PID            connect to the server of that pid (PMIX_SERVER_PIDINFO)
 *   --server-nspace NS   connect to the server of that namespace (PMIX_SERVER_NSPACE)
 *   --uri URI            connect to that URI (PMIX_SERVER_URI)
 *   --system             connect to the system server (PMIX_CONNECT_TO_SYSTEM)
 *   --id NS:RANK         ask for this identity (PMIX_TOOL_NSPACE, PMIX_TOOL_RANK; flag 4/7)
 *   --launcher           connect as a launcher (PMIX_LAUNCHER; flags 6/7)
 *   QUERY is one of
 *     ns               pmix.qry.ns                        -> "ns=<list>"
 *     nsinfo           pmix.qry.nsinfo                    -> "nsinfo <ns> size=<n> ranks=<r,...> hosts=<h,...>"
 *     jobsize:NS       pmix.job.size with PMIX_NSPACE=NS  -> "jobsize=<n>"
 *     ptable:NS        pmix.qry.ptable, PMIX_NSPACE=NS    -> "ptable <ns>:<rank> host=<h> exe=<e> pid=<p> state=<s>" per proc
 *     lptable:NS       pmix.qry.lptable, PMIX_NSPACE=NS   -> "lptable ..." likewise
 *     spawn            pmix.qry.spawn                     -> "spawn=<list>"
 *     key:KEY          any other key, printed by type     -> "KEY=<value>" (strings and numbers)
 *     lookup:KEY       PMIx_Lookup of a published KEY     -> "lookup <KEY>=<string> proc=<ns>:<rank>"
 *   A query that fails prints "<query>:status=<code>".
 *
 * Output: "me=<nspace>:<rank>" first, then one line per answer, then "done".
 * Exit status: 0 on success, 1 if PMIx_tool_init failed, 2 on a usage error, 3 if a query failed.
 */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
    fprintf(stderr, "usage: tool_query [--pid PID|--server-nspace NS|--uri URI|--system] "
                    "[--id NS:RANK] [--launcher] [QUERY...]\n");
    exit(2);
}

static void print_procinfo(const char *what, pmix_value_t *v)
{
    pmix_proc_info_t *pi;
    size_t n;

    if (PMIX_DATA_ARRAY != v->type || NULL == v->data.darray
        || PMIX_PROC_INFO != v->data.darray->type) {
        printf("%s:type=%d\n", what, (int) v->type);
        return;
    }
    pi = (pmix_proc_info_t *) v->data.darray->array;
    for (n = 0; n < v->data.darray->size; n++) {
        printf("%s %s:%u host=%s exe=%s pid=%d state=%d\n", what, pi[n].proc.nspace,
               pi[n].proc.rank, NULL == pi[n].hostname ? "-" : pi[n].hostname,
               NULL == pi[n].executable_name ? "-" : pi[n].executable_name, (int) pi[n].pid,
               (int) pi[n].state);
    }
}

static void print_nsinfo(pmix_value_t *v)
{
    pmix_info_t *jobs, *job, *proc;
    size_t j, k, m;
    char ranks[4096], hosts[4096];

    if (PMIX_DATA_ARRAY != v->type || NULL == v->data.darray) {
        printf("nsinfo:type=%d\n", (int) v->type);
        return;
    }
    jobs = (pmix_info_t *) v->data.darray->array;
    for (j = 0; j < v->data.darray->size; j++) {
        const char *ns = "?";
        unsigned size = 0;
        ranks[0] = hosts[0] = '\0';
        if (PMIX_DATA_ARRAY != jobs[j].value.type) {
            continue;
        }
        job = (pmix_info_t *) jobs[j].value.data.darray->array;
        for (k = 0; k < jobs[j].value.data.darray->size; k++) {
            if (PMIX_CHECK_KEY(&job[k], PMIX_NSPACE)) {
                ns = job[k].value.data.string;
            } else if (PMIX_CHECK_KEY(&job[k], PMIX_JOB_SIZE)) {
                size = job[k].value.data.uint32;
            } else if (PMIX_CHECK_KEY(&job[k], PMIX_PROC_INFO_ARRAY)
                       && PMIX_DATA_ARRAY == job[k].value.type) {
                proc = (pmix_info_t *) job[k].value.data.darray->array;
                for (m = 0; m < job[k].value.data.darray->size; m++) {
                    char buf[512];
                    if (PMIX_CHECK_KEY(&proc[m], PMIX_RANK)) {
                        snprintf(buf, sizeof(buf), "%s%u", ranks[0] ? "," : "",
                                 proc[m].value.data.rank);
                        strncat(ranks, buf, sizeof(ranks) - strlen(ranks) - 1);
                    } else if (PMIX_CHECK_KEY(&proc[m], PMIX_HOSTNAME)) {
                        snprintf(buf, sizeof(buf), "%s%s", hosts[0] ? "," : "",
                                 proc[m].value.data.string);
                        strncat(hosts, buf, sizeof(hosts) - strlen(hosts) - 1);
                    }
                }
            }
        }
        printf("nsinfo %s size=%u ranks=%s hosts=%s\n", ns, size, ranks, hosts);
    }
}

static int run_lookup(const char *key)
{
    pmix_pdata_t pdata;
    pmix_status_t rc;

    PMIX_PDATA_CONSTRUCT(&pdata);
    snprintf(pdata.key, sizeof(pdata.key), "%s", key);
    rc = PMIx_Lookup(&pdata, 1, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("lookup:%s:status=%d\n", key, rc);
        return 3;
    }
    printf("lookup %s=%s proc=%s:%u\n", key,
           PMIX_STRING == pdata.value.type ? pdata.value.data.string : "?", pdata.proc.nspace,
           pdata.proc.rank);
    PMIX_PDATA_DESTRUCT(&pdata);
    return 0;
}

static int run_query(const char *q)
{
    pmix_query_t query;
    pmix_info_t *results = NULL;
    size_t nresults = 0, n;
    pmix_status_t rc;
    const char *colon = strchr(q, ':');
    char key[PMIX_MAX_KEYLEN + 1], what[64];
    char *arg = NULL;

    if (0 == strncmp(q, "lookup:", 7)) {
        return run_lookup(q + 7);
    }
    snprintf(what, sizeof(what), "%.*s", (int) (NULL == colon ? strlen(q) : (size_t)(colon - q)), q);
    if (NULL != colon) {
        arg = strdup(colon + 1);
    }
    if (0 == strcmp(what, "ns")) {
        snprintf(key, sizeof(key), "%s", PMIX_QUERY_NAMESPACES);
    } else if (0 == strcmp(what, "nsinfo")) {
        snprintf(key, sizeof(key), "%s", PMIX_QUERY_NAMESPACE_INFO);
    } else if (0 == strcmp(what, "jobsize")) {
        snprintf(key, sizeof(key), "%s", PMIX_JOB_SIZE);
    } else if (0 == strcmp(what, "ptable")) {
        snprintf(key, sizeof(key), "%s", PMIX_QUERY_PROC_TABLE);
    } else if (0 == strcmp(what, "lptable")) {
        snprintf(key, sizeof(key), "%s", PMIX_QUERY_LOCAL_PROC_TABLE);
    } else if (0 == strcmp(what, "spawn")) {
        snprintf(key, sizeof(key), "%s", PMIX_QUERY_SPAWN_SUPPORT);
    } else if (0 == strcmp(what, "key") && NULL != arg) {
        snprintf(key, sizeof(key), "%s", arg);
        free(arg);
        arg = NULL;
    } else {
        usage();
    }

    PMIX_QUERY_CONSTRUCT(&query);
    PMIX_ARGV_APPEND(rc, query.keys, key);
    if (NULL != arg) {
        PMIX_QUERY_QUALIFIERS_CREATE(&query, 1);
        PMIX_INFO_LOAD(&query.qualifiers[0], PMIX_NSPACE, arg, PMIX_STRING);
    }
    rc = PMIx_Query_info(&query, 1, &results, &nresults);
    if (PMIX_SUCCESS != rc) {
        printf("%s:status=%d\n", q, rc);
        PMIX_QUERY_DESTRUCT(&query);
        free(arg);
        return 3;
    }
    for (n = 0; n < nresults; n++) {
        pmix_value_t *v = &results[n].value;
        if (0 == strcmp(what, "ptable") || 0 == strcmp(what, "lptable")) {
            print_procinfo(what, v);
        } else if (0 == strcmp(what, "nsinfo")) {
            print_nsinfo(v);
        } else if (PMIX_STRING == v->type) {
            printf("%s=%s\n", 0 == strcmp(what, "key") ? results[n].key : what,
                   NULL == v->data.string ? "" : v->data.string);
        } else if (PMIX_UINT32 == v->type) {
            printf("%s=%u\n", 0 == strcmp(what, "key") ? results[n].key : what, v->data.uint32);
        } else {
            printf("%s:type=%d\n", results[n].key, (int) v->type);
        }
    }
    PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&query);
    free(arg);
    return 0;
}

int main(int argc, char **argv)
{
    pmix_info_t info[8];
    size_t ninfo = 0;
    pmix_proc_t me;
    pmix_status_t rc;
    pid_t pid;
    pmix_rank_t rank;
    bool yes = true;
    int i, status = 0;
    char idns[PMIX_MAX_NSLEN + 1];

    for (i = 1; i < argc && 0 == strncmp(argv[i], "--", 2); i++) {
        if (0 == strcmp(argv[i], "--pid") && i + 1 < argc) {
            pid = (pid_t) atoi(argv[++i]);
            PMIX_INFO_LOAD(&info[ninfo], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
            ninfo++;
        } else if (0 == strcmp(argv[i], "--server-nspace") && i + 1 < argc) {
            PMIX_INFO_LOAD(&info[ninfo], PMIX_SERVER_NSPACE, argv[++i], PMIX_STRING);
            ninfo++;
        } else if (0 == strcmp(argv[i], "--uri") && i + 1 < argc) {
            PMIX_INFO_LOAD(&info[ninfo], PMIX_SERVER_URI, argv[++i], PMIX_STRING);
            ninfo++;
        } else if (0 == strcmp(argv[i], "--system")) {
            PMIX_INFO_LOAD(&info[ninfo], PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
            ninfo++;
        } else if (0 == strcmp(argv[i], "--id") && i + 1 < argc) {
            char *c = strrchr(argv[++i], ':');
            if (NULL == c) {
                usage();
            }
            snprintf(idns, sizeof(idns), "%.*s", (int) (c - argv[i]), argv[i]);
            rank = (pmix_rank_t) strtoul(c + 1, NULL, 10);
            PMIX_INFO_LOAD(&info[ninfo], PMIX_TOOL_NSPACE, idns, PMIX_STRING);
            ninfo++;
            PMIX_INFO_LOAD(&info[ninfo], PMIX_TOOL_RANK, &rank, PMIX_PROC_RANK);
            ninfo++;
        } else if (0 == strcmp(argv[i], "--launcher")) {
            PMIX_INFO_LOAD(&info[ninfo], PMIX_LAUNCHER, &yes, PMIX_BOOL);
            ninfo++;
        } else {
            usage();
        }
        if (ninfo > 6) {
            usage();
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    rc = PMIx_tool_init(&me, ninfo > 0 ? info : NULL, ninfo);
    if (PMIX_SUCCESS != rc) {
        printf("init:status=%d\n", rc);
        return 1;
    }
    printf("me=%s:%u\n", me.nspace, me.rank);
    for (; i < argc; i++) {
        if (0 != run_query(argv[i])) {
            status = 3;
        }
    }
    rc = PMIx_tool_finalize();
    printf("done finalize=%d\n", rc);
    return status;
}
