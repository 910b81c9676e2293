/*
 * pmix_client_check.c -- one configurable PMIx client for interop tests and
 * benchmarks, written against the public client API of the C library
 * (OpenPMIx 4.2.2). Every rank of a job runs it with the same flags.
 *
 * USAGE
 *   pmix_client_check [options] STEP-FLAGS...
 *
 *   Step flags run in the order given; a flag may be repeated. Each step
 *   prints one STEP line (--cycle one per iteration plus its own, --bench
 *   its BENCH lines first), and the program stops at the first failing
 *   step. All ranks of the job must be given the same step list.
 *
 *   Exit status: 0 all steps passed; 1 a step failed (its FAIL line is the
 *   last line of this rank); 2 bad command line; the --abort status when
 *   PMIx_Abort returned to the aborting rank. The program does not
 *   finalize on its own (except inside --cycle and a self-initialized
 *   --bench): leaving out --finalize tests a client that just exits.
 *
 *   --init            PMIx_Init; also reads pmix.job.size and pmix.lpeers
 *                     (rank WILDCARD) for the steps below
 *   --get-job-keys    PMIx_Get of the standard job/node/proc keys, each with
 *                     the proc a 4.2.2 client needs:
 *                       rank WILDCARD : pmix.job.size, pmix.univ.size,
 *                         pmix.local.size, pmix.lpeers, pmix.jobid,
 *                         pmix.nspace (+ optional pmix.max.size,
 *                         pmix.num.nodes, pmix.job.napps, pmix.lldr,
 *                         pmix.node.size, pmix.app.size, pmix.aldr,
 *                         pmix.tmpdir, pmix.wdir)
 *                       own rank      : pmix.lrank, pmix.nrank, pmix.appnum,
 *                         pmix.hname, pmix.nodeid (+ optional pmix.grank,
 *                         pmix.apprank)
 *                       rank INVALID  : pmix.rank (4.2.2 answers NOT_FOUND
 *                         for the own rank, see docs/libpmix-facts.md)
 *                     Required keys must exist with the standard type;
 *                     optional ones are reported as NOT-FOUND when missing.
 *                     Consistency checks: rank < job size <= univ size,
 *                     pmix.rank == own rank, pmix.nspace == own nspace,
 *                     lpeers contains own rank and has local.size entries,
 *                     lrank < local.size.
 *   --put             PMIx_Put, values computed from rank (and cycle):
 *                       LOCAL : "test.str.<rank>" STRING, "test.bool" BOOL
 *                       REMOTE: "test.u32" UINT32, "test.dbl" DOUBLE
 *                       GLOBAL: "test.bo" BYTE_OBJECT, "test.i64" INT64,
 *                               "test.gstr" STRING
 *   --commit          PMIx_Commit
 *   --fence           PMIx_Fence over the namespace, no data collection
 *   --fence-collect   same with PMIX_COLLECT_DATA=true
 *   --get-peers       PMIx_Get of every rank's keys (own rank included) and
 *                     comparison with the value computed from that rank:
 *                     GLOBAL keys of every rank, LOCAL keys of ranks in
 *                     pmix.lpeers, REMOTE keys of ranks not in it. With
 *                     --strict-scope the out-of-scope keys of other ranks
 *                     (REMOTE keys of local peers, LOCAL keys of remote
 *                     ones) must give PMIX_ERR_NOT_FOUND, as with a 4.2.2
 *                     server.
 *   --publish         rank 0 publishes "svc.<nspace>" = "svc-value-<nspace>"
 *                     (after --publish-delay MS, default 0, so that the
 *                     waiting lookups of the other ranks are really parked)
 *   --lookup          ranks != 0 look it up with PMIX_WAIT (and
 *                     PMIX_TIMEOUT); rank 0 looks it up without waiting;
 *                     value and publisher (rank 0) are checked
 *   --unpublish       barrier (plain fence), then rank 0 unpublishes and
 *                     checks that a lookup now gives NOT_FOUND
 *   --event-send      ranks != 0 register a handler for the event code,
 *                     then a barrier (plain fence), then rank 0 notifies
 *                     the code with range NAMESPACE and the info
 *                     "test.event.data" = "event-from-<nspace>-0". The
 *                     barrier makes sure nobody registers too late.
 *   --event-wait      ranks != 0 wait (PMIX_TIMEOUT seconds) for that event
 *                     and check code, source and data; rank 0 passes
 *   --query           PMIx_Query_info(pmix.qry.ns); own nspace must be listed
 *   --abort           all ranks pass a barrier (plain fence) first; then
 *                     rank --abort-rank prints its OK line and calls
 *                     PMIx_Abort(--abort-status, msg, whole namespace) and,
 *                     if that returns, exits with the abort status without
 *                     finalizing; every other rank blocks in a fence without
 *                     timeout (it is expected to be killed and prints
 *                     nothing; if the fence returns, the step FAILs)
 *   --cycle N         N times: init, put, commit, fence-collect, get-peers,
 *                     finalize (each init after a finalize is preceded by
 *                     the RE-INIT BARRIER). Must be used while not
 *                     initialized. One line per iteration ("cycle.<i>") and
 *                     a final "cycle" line.
 *   --sleep MS        sleep MS milliseconds
 *   --finalize        PMIx_Finalize
 *   --bench           benchmark (inits itself when not initialized and then
 *                     also finalizes itself): times PMIx_Init, a fence without
 *                     data, a fence collecting --bench-bytes per proc
 *                     (default 1024; put GLOBAL + commit happen before the
 *                     timed fence), the first PMIx_Get of a peer's key, and
 *                     --bench-gets (default 1000) gets of that key, a
 *                     publish + lookup of one's own key, its unpublish,
 *                     and (when it inited itself) PMIx_Finalize, then
 *                     (after the re-init barrier, untimed) one whole cycle
 *                     timed as one ("cycle"): PMIx_Init, PMIx_Put of a
 *                     GLOBAL key, PMIx_Commit, a collecting fence,
 *                     PMIx_Get of the next rank's key, PMIx_Finalize.
 *                     Fences are averaged over --bench-iters (default 20)
 *                     after one warm-up.
 *
 *   Options (anywhere on the line, they apply to all steps):
 *   --timeout SEC     PMIX_TIMEOUT for gets, fences, lookup, event wait
 *                     (default 30)
 *   --abort-rank R    (default 0)       --abort-status S  (default 42)
 *   --event-code C    (default PMIX_EXTERNAL_ERR_BASE - 1 = -3001)
 *   --bench-iters K, --bench-gets G, --bench-bytes B
 *   --publish-delay MS          (default 0)
 *   --strict-scope              (see --get-peers)
 *   --cycle-barrier file|none   re-init barrier (default file)
 *   --cycle-keys                --cycle also puts test.cycle.<i> (GLOBAL, the
 *                               iteration number) in iteration i: keys named
 *                               after the cycle show whether a server carries
 *                               a rank's data from one cycle into the next
 *   --barrier-dir DIR (default $PMIX_SERVER_TMPDIR, else $TMPDIR, else /tmp)
 *   --barrier-id ID   names the barrier file instead of the parent's pid,
 *                     for ranks started through their own wrappers (bin/soak)
 *
 * OUTPUT (stdout, line buffered; one line per step)
 *   STEP <name> OK usec=<duration> [key=value ...]
 *   STEP <name> FAIL <status-name>(<code>) usec=<duration> [key=value ...]
 *   BENCH <name> <microseconds>       (--bench only, one line per measure:
 *                                     init, fence, fence-collect, get-first,
 *                                     gets, publish-lookup, unpublish, and
 *                                     when --bench inited itself finalize
 *                                     and cycle; fence values are per
 *                                     fence, "gets" is the total of all gets)
 *   <status-name> is PMIx_Error_string() with blanks turned into '_', or,
 *   for checks made by this program, VALUE-MISMATCH(-1), TYPE-MISMATCH(-1),
 *   UNEXPECTED-RETURN(-1), BAD-STATE(-1). Values are printed as
 *   <key>@<self|wild|invalid>=<TYPE>:<value> (the proc used for the get;
 *   TYPE is PMIx_Data_type_string() without "PMIX_"; byte objects as
 *   <size>:<hex of the first 16 bytes>); blanks in strings are printed as
 *   '_'. BENCH lines come from every rank (aggregate them yourself).
 *   Diagnostics that do not fit go to stderr.
 *
 * RE-INIT BARRIER
 *   libpmix 4.2.2 (as a server) removes a finalizing client from every
 *   pending fence of its namespace. A fast rank that re-inits and enters a
 *   fence while a slow rank is still finalizing would see that fence
 *   complete early with PMIX_ERR_PARTIAL_SUCCESS (observed with
 *   --cycle-barrier none at N=8). So every PMIx_Init that follows a
 *   PMIx_Finalize of this process (--init, --cycle iterations, --bench)
 *   first passes a barrier outside PMIx: a counter file
 *   "<barrier-dir>/pmixcheck-<nspace>-<ppid>.barrier" (<ppid> is the
 *   --barrier-id when given) under flock(2),
 *   bounded by --timeout; the last rank to leave the last barrier removes
 *   it. All ranks must run the same step list. --cycle-barrier none turns
 *   it off (to show the defect). Values put in cycle i use salt i+1, so
 *   stale data from an earlier cycle is detected.
 *
 * BUILD
 *   gcc -O2 -Wall -o pmix_client_check pmix_client_check.c \
 *       $(pkg-config --cflags --libs pmix) -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

/* ------------------------------------------------------------------ */
/* configuration and state                                             */
/* ------------------------------------------------------------------ */

typedef enum {
    S_INIT,
    S_GET_JOB_KEYS,
    S_PUT,
    S_COMMIT,
    S_FENCE,
    S_FENCE_COLLECT,
    S_GET_PEERS,
    S_PUBLISH,
    S_LOOKUP,
    S_UNPUBLISH,
    S_EVENT_SEND,
    S_EVENT_WAIT,
    S_QUERY,
    S_ABORT,
    S_CYCLE,
    S_SLEEP,
    S_FINALIZE,
    S_BENCH
} step_kind_t;

static const struct {
    const char *flag;
    step_kind_t kind;
    bool has_arg;
} step_flags[] = {
    {"--init", S_INIT, false},
    {"--get-job-keys", S_GET_JOB_KEYS, false},
    {"--put", S_PUT, false},
    {"--commit", S_COMMIT, false},
    {"--fence", S_FENCE, false},
    {"--fence-collect", S_FENCE_COLLECT, false},
    {"--get-peers", S_GET_PEERS, false},
    {"--publish", S_PUBLISH, false},
    {"--lookup", S_LOOKUP, false},
    {"--unpublish", S_UNPUBLISH, false},
    {"--event-send", S_EVENT_SEND, false},
    {"--event-wait", S_EVENT_WAIT, false},
    {"--query", S_QUERY, false},
    {"--abort", S_ABORT, false},
    {"--cycle", S_CYCLE, true},
    {"--sleep", S_SLEEP, true},
    {"--finalize", S_FINALIZE, false},
    {"--bench", S_BENCH, false},
};

typedef struct {
    step_kind_t kind;
    const char *name; /* flag without the dashes */
    long arg;
} step_t;

static int opt_timeout = 30;
static long opt_abort_rank = 0;
static int opt_abort_status = 42;
static pmix_status_t opt_event_code = PMIX_EXTERNAL_ERR_BASE - 1;
static int opt_bench_iters = 20;
static int opt_bench_gets = 1000;
static int opt_bench_bytes = 1024;
static bool opt_cycle_barrier = true;
static bool opt_strict_scope = false;
static bool opt_cycle_keys = false;
static long opt_publish_delay = 0;
static const char *opt_barrier_dir = NULL;
static const char *opt_barrier_id = NULL;

/* re-init barrier bookkeeping (see RE-INIT BARRIER) */
static bool need_barrier;   /* a PMIx_Finalize happened since the last barrier */
static long barrier_round;  /* rounds passed so far */
static long barrier_total;  /* rounds the whole step list will need */

static pmix_proc_t me;
static bool initialized;
static uint32_t job_size;
static bool *is_local;     /* [job_size], from pmix.lpeers */
static bool locality_known;

/* event reception */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond = PTHREAD_COND_INITIALIZER;
static bool ev_registered;
static size_t ev_handler_id;
static int ev_count;
static pmix_status_t ev_code;
static pmix_proc_t ev_source;
static char ev_data[256];

/* ------------------------------------------------------------------ */
/* output                                                              */
/* ------------------------------------------------------------------ */

static long long now_usec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void status_token(pmix_status_t rc, char *buf, size_t len)
{
    const char *s = PMIx_Error_string(rc);
    size_t i;
    snprintf(buf, len, "%s", NULL == s ? "UNKNOWN" : s);
    for (i = 0; buf[i]; i++) {
        if (' ' == buf[i] || '\t' == buf[i]) {
            buf[i] = '_';
        }
    }
}

static void step_ok(const char *name, long long usec, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void step_ok(const char *name, long long usec, const char *fmt, ...)
{
    va_list ap;
    printf("STEP %s OK usec=%lld", name, usec);
    if (NULL != fmt && '\0' != fmt[0]) {
        putchar(' ');
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
    }
    putchar('\n');
    fflush(stdout);
}

/* prints the FAIL line and terminates the process */
static void step_fail_named(const char *name, const char *status_name, int code, long long usec,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6), noreturn));
static void step_fail_named(const char *name, const char *status_name, int code, long long usec,
                            const char *fmt, ...)
{
    va_list ap;
    printf("STEP %s FAIL %s(%d) usec=%lld", name, status_name, code, usec);
    if (NULL != fmt && '\0' != fmt[0]) {
        putchar(' ');
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
    }
    putchar('\n');
    fflush(stdout);
    fflush(stderr);
    _exit(1);
}

#define step_fail(name, rc, usec, ...)                                   \
    do {                                                                 \
        char _st[96];                                                    \
        status_token((rc), _st, sizeof(_st));                            \
        step_fail_named((name), _st, (int) (rc), (usec), __VA_ARGS__);   \
    } while (0)

/* "TYPE:value" with blanks replaced, for reports */
static void fmt_value(const pmix_value_t *v, char *buf, size_t len)
{
    const char *tn = PMIx_Data_type_string(v->type);
    char val[320];
    size_t i;

    if (NULL != tn && 0 == strncmp(tn, "PMIX_", 5)) {
        tn += 5;
    }
    switch (v->type) {
    case PMIX_BOOL: snprintf(val, sizeof(val), "%s", v->data.flag ? "true" : "false"); break;
    case PMIX_BYTE: snprintf(val, sizeof(val), "%u", (unsigned) v->data.byte); break;
    case PMIX_STRING: snprintf(val, sizeof(val), "%s", v->data.string ? v->data.string : "(null)"); break;
    case PMIX_SIZE: snprintf(val, sizeof(val), "%zu", v->data.size); break;
    case PMIX_PID: snprintf(val, sizeof(val), "%ld", (long) v->data.pid); break;
    case PMIX_INT: snprintf(val, sizeof(val), "%d", v->data.integer); break;
    case PMIX_INT8: snprintf(val, sizeof(val), "%d", (int) v->data.int8); break;
    case PMIX_INT16: snprintf(val, sizeof(val), "%d", (int) v->data.int16); break;
    case PMIX_INT32: snprintf(val, sizeof(val), "%" PRId32, v->data.int32); break;
    case PMIX_INT64: snprintf(val, sizeof(val), "%" PRId64, v->data.int64); break;
    case PMIX_UINT: snprintf(val, sizeof(val), "%u", v->data.uint); break;
    case PMIX_UINT8: snprintf(val, sizeof(val), "%u", (unsigned) v->data.uint8); break;
    case PMIX_UINT16: snprintf(val, sizeof(val), "%u", (unsigned) v->data.uint16); break;
    case PMIX_UINT32: snprintf(val, sizeof(val), "%" PRIu32, v->data.uint32); break;
    case PMIX_UINT64: snprintf(val, sizeof(val), "%" PRIu64, v->data.uint64); break;
    case PMIX_FLOAT: snprintf(val, sizeof(val), "%.9g", (double) v->data.fval); break;
    case PMIX_DOUBLE: snprintf(val, sizeof(val), "%.17g", v->data.dval); break;
    case PMIX_STATUS: snprintf(val, sizeof(val), "%d", v->data.status); break;
    case PMIX_PROC_RANK: snprintf(val, sizeof(val), "%" PRIu32, v->data.rank); break;
    case PMIX_PROC:
        if (NULL != v->data.proc) {
            snprintf(val, sizeof(val), "%s:%" PRIu32, v->data.proc->nspace, v->data.proc->rank);
        } else {
            snprintf(val, sizeof(val), "(null)");
        }
        break;
    case PMIX_BYTE_OBJECT: {
        size_t k, off;
        off = (size_t) snprintf(val, sizeof(val), "%zu:", v->data.bo.size);
        for (k = 0; k < v->data.bo.size && k < 16 && off + 3 < sizeof(val); k++) {
            off += (size_t) snprintf(val + off, sizeof(val) - off, "%02x",
                                     (unsigned char) v->data.bo.bytes[k]);
        }
        if (v->data.bo.size > 16 && off + 3 < sizeof(val)) {
            snprintf(val + off, sizeof(val) - off, "..");
        }
        break;
    }
    case PMIX_DATA_ARRAY:
        snprintf(val, sizeof(val), "%zu-elements",
                 NULL == v->data.darray ? (size_t) 0 : v->data.darray->size);
        break;
    default: snprintf(val, sizeof(val), "?"); break;
    }
    snprintf(buf, len, "%s:%s", NULL == tn ? "?" : tn, val);
    for (i = 0; buf[i]; i++) {
        if (' ' == buf[i] || '\t' == buf[i] || '\n' == buf[i]) {
            buf[i] = '_';
        }
    }
}

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static void load_timeout(pmix_info_t *info)
{
    int t = opt_timeout;
    PMIX_INFO_LOAD(info, PMIX_TIMEOUT, &t, PMIX_INT);
}

static void require_init(const char *name)
{
    if (!initialized) {
        step_fail_named(name, "BAD-STATE", -1, 0, "reason=not-initialized");
    }
}

/* parse "0,1,5-7" style rank lists (ranges accepted for robustness) */
static int parse_peers(const char *s, bool *mark, uint32_t size, uint32_t *count)
{
    const char *p = s;
    *count = 0;
    while (NULL != p && '\0' != *p) {
        char *end;
        unsigned long a = strtoul(p, &end, 10), b;
        if (end == p) {
            return -1;
        }
        b = a;
        if ('-' == *end) {
            p = end + 1;
            b = strtoul(p, &end, 10);
            if (end == p) {
                return -1;
            }
        }
        for (unsigned long r = a; r <= b; r++) {
            if (r >= size) {
                return -1;
            }
            if (NULL != mark) {
                mark[r] = true;
            }
            (*count)++;
        }
        p = end;
        if (',' == *p) {
            p++;
        } else if ('\0' != *p) {
            return -1;
        }
    }
    return 0;
}

/* job size and locality after init; failures are reported by the caller */
static pmix_status_t load_job_basics(char *why, size_t len)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    uint32_t n;

    PMIX_PROC_LOAD(&wild, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (PMIX_SUCCESS != rc) {
        snprintf(why, len, "key=%s@wild", PMIX_JOB_SIZE);
        return rc;
    }
    if (PMIX_UINT32 != v->type) {
        snprintf(why, len, "key=%s@wild type=%s", PMIX_JOB_SIZE, PMIx_Data_type_string(v->type));
        PMIX_VALUE_RELEASE(v);
        return PMIX_ERR_TYPE_MISMATCH;
    }
    job_size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    free(is_local);
    is_local = calloc(job_size + 1, sizeof(bool));
    locality_known = false;
    v = NULL;
    rc = PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &v);
    if (PMIX_SUCCESS == rc && PMIX_STRING == v->type && NULL != v->data.string
        && 0 == parse_peers(v->data.string, is_local, job_size, &n)) {
        locality_known = true;
    }
    if (NULL != v) {
        PMIX_VALUE_RELEASE(v);
    }
    if (!locality_known) {
        /* no usable pmix.lpeers: treat every rank as local (single node) */
        for (n = 0; n < job_size; n++) {
            is_local[n] = true;
        }
    }
    if (me.rank < job_size) {
        is_local[me.rank] = true;
    }
    return PMIX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* test data, computed from rank and salt                              */
/* ------------------------------------------------------------------ */

enum { NTKEYS = 7 };
static const struct {
    const char *key; /* "%u" is replaced by the rank */
    pmix_scope_t scope;
    pmix_data_type_t type;
} tkeys[NTKEYS] = {
    {"test.str.%u", PMIX_LOCAL, PMIX_STRING},
    {"test.bool", PMIX_LOCAL, PMIX_BOOL},
    {"test.u32", PMIX_REMOTE, PMIX_UINT32},
    {"test.dbl", PMIX_REMOTE, PMIX_DOUBLE},
    {"test.bo", PMIX_GLOBAL, PMIX_BYTE_OBJECT},
    {"test.i64", PMIX_GLOBAL, PMIX_INT64},
    {"test.gstr", PMIX_GLOBAL, PMIX_STRING},
};

static const char *scope_name(pmix_scope_t s)
{
    switch (s) {
    case PMIX_LOCAL: return "LOCAL";
    case PMIX_REMOTE: return "REMOTE";
    case PMIX_GLOBAL: return "GLOBAL";
    default: return "?";
    }
}

static void tkey_name(int idx, uint32_t rank, char *buf, size_t len)
{
    if (NULL != strstr(tkeys[idx].key, "%u")) {
        snprintf(buf, len, "test.str.%" PRIu32, rank);
    } else {
        snprintf(buf, len, "%s", tkeys[idx].key);
    }
}

/* fills *v (which the caller destructs with PMIx_Value_destruct) */
static void tkey_value(int idx, uint32_t rank, int salt, pmix_value_t *v)
{
    char s[PMIX_MAX_NSLEN + 64];
    PMIX_VALUE_CONSTRUCT(v);
    switch (idx) {
    case 0:
        snprintf(s, sizeof(s), "str-%s-%" PRIu32 "-%d", me.nspace, rank, salt);
        PMIx_Value_load(v, s, PMIX_STRING);
        break;
    case 1: {
        bool b = 0 == (rank + (uint32_t) salt) % 2;
        PMIx_Value_load(v, &b, PMIX_BOOL);
        break;
    }
    case 2: {
        uint32_t u = 1000u + rank * 7u + (uint32_t) salt * 100003u;
        PMIx_Value_load(v, &u, PMIX_UINT32);
        break;
    }
    case 3: {
        double d = rank * 1.5 + 0.25 + salt;
        PMIx_Value_load(v, &d, PMIX_DOUBLE);
        break;
    }
    case 4: {
        pmix_byte_object_t bo;
        size_t len = 8 + (rank + (uint32_t) salt) % 8, k;
        char bytes[16];
        for (k = 0; k < len; k++) {
            bytes[k] = (char) ((rank * 31u + k * 7u + (uint32_t) salt) & 0xffu);
        }
        bo.bytes = bytes;
        bo.size = len;
        PMIx_Value_load(v, &bo, PMIX_BYTE_OBJECT);
        break;
    }
    case 5: {
        int64_t i = -((int64_t) rank + 1) * INT64_C(10000000007) - salt;
        PMIx_Value_load(v, &i, PMIX_INT64);
        break;
    }
    case 6:
        snprintf(s, sizeof(s), "glob-%" PRIu32 "-%d", rank, salt);
        PMIx_Value_load(v, s, PMIX_STRING);
        break;
    }
}

static bool value_equal(const pmix_value_t *a, const pmix_value_t *b)
{
    if (a->type != b->type) {
        return false;
    }
    switch (a->type) {
    case PMIX_STRING:
        return NULL != a->data.string && NULL != b->data.string
               && 0 == strcmp(a->data.string, b->data.string);
    case PMIX_BOOL: return a->data.flag == b->data.flag;
    case PMIX_UINT32: return a->data.uint32 == b->data.uint32;
    case PMIX_DOUBLE: return a->data.dval == b->data.dval;
    case PMIX_INT64: return a->data.int64 == b->data.int64;
    case PMIX_BYTE_OBJECT:
        return a->data.bo.size == b->data.bo.size
               && (0 == a->data.bo.size
                   || 0 == memcmp(a->data.bo.bytes, b->data.bo.bytes, a->data.bo.size));
    default: return false;
    }
}

/* put + nothing else; returns a status and fills why on error */
static pmix_status_t do_put(int salt, char *why, size_t len)
{
    for (int i = 0; i < NTKEYS; i++) {
        char key[64];
        pmix_value_t v;
        pmix_status_t rc;
        tkey_name(i, me.rank, key, sizeof(key));
        tkey_value(i, me.rank, salt, &v);
        rc = PMIx_Put(tkeys[i].scope, key, &v);
        PMIx_Value_destruct(&v);
        if (PMIX_SUCCESS != rc) {
            snprintf(why, len, "key=%s scope=%s", key, scope_name(tkeys[i].scope));
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

/* returns PMIX_SUCCESS, a PMIx error, or PMIX_ERROR with *mismatch set */
static pmix_status_t do_get_peers(int salt, int *ngets, int *nlocal, int *nremote, bool *mismatch,
                                  char *why, size_t len)
{
    pmix_info_t info[1];
    *ngets = *nlocal = *nremote = 0;
    *mismatch = false;
    PMIX_INFO_CONSTRUCT(&info[0]);
    load_timeout(&info[0]);
    for (uint32_t p = 0; p < job_size; p++) {
        pmix_proc_t peer;
        bool local = is_local[p];
        PMIX_PROC_LOAD(&peer, me.nspace, p);
        if (local) {
            (*nlocal)++;
        } else {
            (*nremote)++;
        }
        for (int i = 0; i < NTKEYS; i++) {
            char key[64], got[400], want[400];
            pmix_value_t *v = NULL, exp;
            pmix_status_t rc;
            tkey_name(i, p, key, sizeof(key));
            if ((PMIX_LOCAL == tkeys[i].scope && !local)
                || (PMIX_REMOTE == tkeys[i].scope && local)) {
                /* the key is out of scope for us: with --strict-scope it must
                 * not be found (own proc excepted: its own data is all there) */
                if (opt_strict_scope && p != me.rank) {
                    rc = PMIx_Get(&peer, key, info, 1, &v);
                    (*ngets)++;
                    if (PMIX_ERR_NOT_FOUND != rc) {
                        char st[96];
                        status_token(rc, st, sizeof(st));
                        snprintf(why, len,
                                 "peer=%" PRIu32 " key=%s scope=%s local=%d got=%s(%d) "
                                 "want=NOT-FOUND(%d)",
                                 p, key, scope_name(tkeys[i].scope), (int) local, st, rc,
                                 PMIX_ERR_NOT_FOUND);
                        if (PMIX_SUCCESS == rc) {
                            PMIX_VALUE_RELEASE(v);
                        }
                        *mismatch = true;
                        PMIX_INFO_DESTRUCT(&info[0]);
                        return PMIX_ERROR;
                    }
                }
                continue;
            }
            rc = PMIx_Get(&peer, key, info, 1, &v);
            (*ngets)++;
            if (PMIX_SUCCESS != rc) {
                snprintf(why, len, "peer=%" PRIu32 " key=%s scope=%s local=%d", p, key,
                         scope_name(tkeys[i].scope), (int) local);
                PMIX_INFO_DESTRUCT(&info[0]);
                return rc;
            }
            tkey_value(i, p, salt, &exp);
            if (!value_equal(v, &exp)) {
                fmt_value(v, got, sizeof(got));
                fmt_value(&exp, want, sizeof(want));
                snprintf(why, len, "peer=%" PRIu32 " key=%s got=%s want=%s", p, key, got, want);
                *mismatch = true;
                PMIx_Value_destruct(&exp);
                PMIX_VALUE_RELEASE(v);
                PMIX_INFO_DESTRUCT(&info[0]);
                return PMIX_ERROR;
            }
            PMIx_Value_destruct(&exp);
            PMIX_VALUE_RELEASE(v);
        }
    }
    PMIX_INFO_DESTRUCT(&info[0]);
    return PMIX_SUCCESS;
}

static pmix_status_t do_fence(bool collect)
{
    pmix_info_t info[2];
    size_t n = 0;
    pmix_status_t rc;
    bool yes = true;
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    load_timeout(&info[n++]);
    if (collect) {
        PMIX_INFO_LOAD(&info[n], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        n++;
    }
    rc = PMIx_Fence(NULL, 0, info, n);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc;
}

/* ---- barrier outside PMIx before a re-init (see RE-INIT BARRIER) ---- */

static char barrier_path[768];

static void barrier_setup(void)
{
    const char *dir = opt_barrier_dir;
    if (NULL == dir) {
        dir = getenv("PMIX_SERVER_TMPDIR");
    }
    if (NULL == dir || '\0' == dir[0]) {
        dir = getenv("TMPDIR");
    }
    if (NULL == dir || '\0' == dir[0]) {
        dir = "/tmp";
    }
    if (NULL != opt_barrier_id) {
        snprintf(barrier_path, sizeof(barrier_path), "%s/pmixcheck-%s-%s.barrier", dir, me.nspace,
                 opt_barrier_id);
    } else {
        snprintf(barrier_path, sizeof(barrier_path), "%s/pmixcheck-%s-%ld.barrier", dir,
                 me.nspace, (long) getppid());
    }
}

static long barrier_rw(int fd, long add)
{
    char buf[64] = "";
    long v;
    ssize_t n;
    flock(fd, add ? LOCK_EX : LOCK_SH);
    n = pread(fd, buf, sizeof(buf) - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    v = strtol(buf, NULL, 10) + add;
    if (add) {
        int len = snprintf(buf, sizeof(buf), "%ld\n", v);
        if (pwrite(fd, buf, (size_t) len, 0) != len) {
            v = -1;
        }
    }
    flock(fd, LOCK_UN);
    return v;
}

/* returns 0, or -1 on timeout / I/O error. The counter reaches
 * (round+1)*size when every rank has arrived at that round; after the last
 * round a second counter, "<path>.out", counts the ranks that left, and the
 * last one removes both files. */
static int barrier_wait(long round, bool last, char *why, size_t len)
{
    int fd = open(barrier_path, O_RDWR | O_CREAT, 0644);
    long target = (round + 1) * (long) job_size, v;
    long long deadline = now_usec() + (long long) opt_timeout * 1000000LL;
    useconds_t pause = 500;
    if (fd < 0) {
        snprintf(why, len, "barrier-open=%s errno=%d", barrier_path, errno);
        return -1;
    }
    v = barrier_rw(fd, 1);
    while (v >= 0 && v < target) {
        if (now_usec() > deadline) {
            snprintf(why, len, "barrier-timeout count=%ld want=%ld file=%s", v, target,
                     barrier_path);
            close(fd);
            return -1;
        }
        /* back off from 0.5 ms to 20 ms: at N=1024 on 2 cores, 1024 ranks
         * polling every 0.5 ms starved the ranks still finalizing (load
         * 280, the barrier timed out) */
        usleep(pause);
        pause = pause < 20000 ? pause + pause / 4 : 20000;
        v = barrier_rw(fd, 0);
    }
    close(fd);
    if (v < 0) {
        snprintf(why, len, "barrier-io file=%s", barrier_path);
        return -1;
    }
    if (last) {
        char outp[800];
        int ofd;
        snprintf(outp, sizeof(outp), "%s.out", barrier_path);
        ofd = open(outp, O_RDWR | O_CREAT, 0644);
        if (ofd >= 0) {
            if (barrier_rw(ofd, 1) == (long) job_size) {
                unlink(barrier_path);
                unlink(outp);
            }
            close(ofd);
        }
    }
    return 0;
}

/* called before every PMIx_Init; fails the step on timeout */
static void reinit_barrier(const char *name, long long t0)
{
    char why[1024] = "";
    if (!need_barrier) {
        return;
    }
    need_barrier = false;
    if (!opt_cycle_barrier) {
        return;
    }
    if ('\0' == barrier_path[0]) {
        barrier_setup();
    }
    if (0 != barrier_wait(barrier_round, barrier_round == barrier_total - 1, why, sizeof(why))) {
        step_fail(name, PMIX_ERR_TIMEOUT, now_usec() - t0, "phase=barrier %s", why);
    }
    barrier_round++;
}

/* ------------------------------------------------------------------ */
/* steps                                                               */
/* ------------------------------------------------------------------ */

static void run_init(const char *name)
{
    long long t0 = now_usec();
    char why[256] = "";
    pmix_status_t rc;

    if (initialized) {
        step_fail_named(name, "BAD-STATE", -1, 0, "reason=already-initialized");
    }
    reinit_barrier(name, t0);
    long long t1 = now_usec();
    rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "call=PMIx_Init");
    }
    initialized = true;
    long long t_init = now_usec() - t1;
    rc = load_job_basics(why, sizeof(why));
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "nspace=%s rank=%" PRIu32 " %s", me.nspace, me.rank,
                  why);
    }
    uint32_t nl = 0;
    for (uint32_t i = 0; i < job_size; i++) {
        nl += is_local[i] ? 1 : 0;
    }
    step_ok(name, t_init, "nspace=%s rank=%" PRIu32 " size=%" PRIu32 " local=%" PRIu32
            " locality=%s", me.nspace, me.rank, job_size, nl,
            locality_known ? "lpeers" : "assumed");
}

enum { WHO_WILD, WHO_SELF, WHO_INVALID };

static void run_get_job_keys(const char *name)
{
    static const struct {
        const char *key;
        int who;
        pmix_data_type_t type;
        bool required;
    } jk[] = {
        {PMIX_JOB_SIZE, WHO_WILD, PMIX_UINT32, true},
        {PMIX_UNIV_SIZE, WHO_WILD, PMIX_UINT32, true},
        {PMIX_LOCAL_SIZE, WHO_WILD, PMIX_UINT32, true},
        {PMIX_LOCAL_PEERS, WHO_WILD, PMIX_STRING, true},
        {PMIX_JOBID, WHO_WILD, PMIX_STRING, true},
        {PMIX_NSPACE, WHO_WILD, PMIX_STRING, true},
        {PMIX_RANK, WHO_INVALID, PMIX_PROC_RANK, true},
        {PMIX_LOCAL_RANK, WHO_SELF, PMIX_UINT16, true},
        {PMIX_NODE_RANK, WHO_SELF, PMIX_UINT16, true},
        {PMIX_APPNUM, WHO_SELF, PMIX_UINT32, true},
        {PMIX_HOSTNAME, WHO_SELF, PMIX_STRING, true},
        {PMIX_NODEID, WHO_SELF, PMIX_UINT32, true},
        {PMIX_MAX_PROCS, WHO_WILD, PMIX_UINT32, false},
        {PMIX_NUM_NODES, WHO_WILD, PMIX_UINT32, false},
        {PMIX_JOB_NUM_APPS, WHO_WILD, PMIX_UINT32, false},
        {PMIX_LOCALLDR, WHO_WILD, PMIX_PROC_RANK, false},
        {PMIX_NODE_SIZE, WHO_WILD, PMIX_UINT32, false},
        {PMIX_APP_SIZE, WHO_WILD, PMIX_UINT32, false},
        {PMIX_APPLDR, WHO_WILD, PMIX_PROC_RANK, false},
        {PMIX_TMPDIR, WHO_WILD, PMIX_STRING, false},
        {PMIX_WDIR, WHO_WILD, PMIX_STRING, false},
        {PMIX_GLOBAL_RANK, WHO_SELF, PMIX_PROC_RANK, false},
        {PMIX_APP_RANK, WHO_SELF, PMIX_PROC_RANK, false},
    };
    static const char *who_name[] = {"wild", "self", "invalid"};
    enum { NJK = sizeof(jk) / sizeof(jk[0]) };
    pmix_value_t *vals[NJK];
    char line[8192] = "";
    size_t off = 0;
    long long t0 = now_usec();
    int found = 0, missing_opt = 0;

    require_init(name);
    memset(vals, 0, sizeof(vals));
    for (size_t i = 0; i < NJK; i++) {
        pmix_proc_t p;
        pmix_status_t rc;
        char vs[256];
        pmix_rank_t r = WHO_WILD == jk[i].who   ? PMIX_RANK_WILDCARD
                        : WHO_SELF == jk[i].who ? me.rank
                                                : PMIX_RANK_INVALID;
        PMIX_PROC_LOAD(&p, me.nspace, r);
        rc = PMIx_Get(&p, jk[i].key, NULL, 0, &vals[i]);
        if (PMIX_SUCCESS != rc) {
            vals[i] = NULL;
            if (jk[i].required) {
                step_fail(name, rc, now_usec() - t0, "key=%s@%s %s", jk[i].key,
                          who_name[jk[i].who], line);
            }
            missing_opt++;
            if (off < sizeof(line)) {
                off += (size_t) snprintf(line + off, sizeof(line) - off, "%s%s@%s=NOT-FOUND",
                                         0 == off ? "" : " ", jk[i].key, who_name[jk[i].who]);
            }
            continue;
        }
        found++;
        fmt_value(vals[i], vs, sizeof(vs));
        if (vals[i]->type != jk[i].type) {
            step_fail_named(name, "TYPE-MISMATCH", -1, now_usec() - t0, "key=%s@%s got=%s want=%s",
                            jk[i].key, who_name[jk[i].who], vs,
                            PMIx_Data_type_string(jk[i].type));
        }
        if (off < sizeof(line)) {
            off += (size_t) snprintf(line + off, sizeof(line) - off, "%s%s@%s=%s",
                                     0 == off ? "" : " ", jk[i].key, who_name[jk[i].who], vs);
        }
    }
    long long usec = now_usec() - t0;

    /* consistency checks (indices follow the table above) */
    uint32_t jsize = vals[0]->data.uint32, usize = vals[1]->data.uint32;
    uint32_t lsize = vals[2]->data.uint32, npeers = 0;
    const char *bad = NULL;
    char detail[256] = "";
    bool *mark = calloc(jsize + 1, sizeof(bool));
    if (jsize < 1 || me.rank >= jsize) {
        bad = "rank-vs-job-size";
    } else if (usize < jsize) {
        bad = "univ-size-below-job-size";
    } else if (vals[6]->data.rank != me.rank) {
        bad = "pmix.rank-differs";
    } else if (0 != strcmp(vals[5]->data.string, me.nspace)) {
        bad = "pmix.nspace-differs";
    } else if (0 != parse_peers(vals[3]->data.string, mark, jsize, &npeers)) {
        bad = "lpeers-unparsable";
    } else if (!mark[me.rank]) {
        bad = "lpeers-lacks-own-rank";
    } else if (npeers != lsize) {
        bad = "lpeers-count-differs-from-local-size";
    } else if (vals[7]->data.uint16 >= lsize) {
        bad = "lrank-not-below-local-size";
    } else if ('\0' == vals[10]->data.string[0]) {
        bad = "empty-hostname";
    }
    free(mark);
    if (NULL != bad) {
        snprintf(detail, sizeof(detail), "check=%s", bad);
        step_fail_named(name, "VALUE-MISMATCH", -1, usec, "%s %s", detail, line);
    }
    for (size_t i = 0; i < NJK; i++) {
        if (NULL != vals[i]) {
            PMIX_VALUE_RELEASE(vals[i]);
        }
    }
    step_ok(name, usec, "found=%d missing-optional=%d %s", found, missing_opt, line);
}

static void run_put(const char *name, int salt)
{
    long long t0 = now_usec();
    char why[256] = "";
    pmix_status_t rc;
    require_init(name);
    rc = do_put(salt, why, sizeof(why));
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "%s", why);
    }
    step_ok(name, now_usec() - t0, "keys=%d", NTKEYS);
}

static void run_commit(const char *name)
{
    long long t0 = now_usec();
    pmix_status_t rc;
    require_init(name);
    rc = PMIx_Commit();
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "call=PMIx_Commit");
    }
    step_ok(name, now_usec() - t0, NULL);
}

static void run_fence(const char *name, bool collect)
{
    long long t0 = now_usec();
    pmix_status_t rc;
    require_init(name);
    rc = do_fence(collect);
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "collect=%d", (int) collect);
    }
    step_ok(name, now_usec() - t0, "collect=%d", (int) collect);
}

static void run_get_peers(const char *name)
{
    long long t0 = now_usec();
    char why[1024] = "";
    int ngets, nlocal, nremote;
    bool mismatch;
    pmix_status_t rc;
    require_init(name);
    rc = do_get_peers(0, &ngets, &nlocal, &nremote, &mismatch, why, sizeof(why));
    if (mismatch) {
        step_fail_named(name, "VALUE-MISMATCH", -1, now_usec() - t0, "%s", why);
    }
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "%s", why);
    }
    step_ok(name, now_usec() - t0, "peers=%" PRIu32 " local=%d remote=%d gets=%d", job_size, nlocal,
            nremote, ngets);
}

static void svc_key(char *buf, size_t len)
{
    snprintf(buf, len, "svc.%s", me.nspace);
}

static void svc_value(char *buf, size_t len)
{
    snprintf(buf, len, "svc-value-%s", me.nspace);
}

static void run_publish(const char *name)
{
    long long t0 = now_usec();
    char key[PMIX_MAX_KEYLEN + 1], val[PMIX_MAX_NSLEN + 32];
    pmix_info_t info;
    pmix_status_t rc;
    require_init(name);
    if (0 != me.rank) {
        step_ok(name, now_usec() - t0, "role=none");
        return;
    }
    if (opt_publish_delay > 0) {
        usleep((useconds_t) opt_publish_delay * 1000u);
    }
    svc_key(key, sizeof(key));
    svc_value(val, sizeof(val));
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, key, val, PMIX_STRING);
    rc = PMIx_Publish(&info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "key=%s", key);
    }
    step_ok(name, now_usec() - t0, "role=publisher key=%s", key);
}

/* one lookup of the service key; wait selects PMIX_WAIT */
static pmix_status_t lookup_svc(bool wait, pmix_pdata_t *pd)
{
    pmix_info_t info[2];
    size_t n = 0;
    int zero = 0;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_status_t rc;

    svc_key(key, sizeof(key));
    PMIX_PDATA_CONSTRUCT(pd);
    PMIX_LOAD_KEY(pd->key, key);
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    if (wait) {
        PMIX_INFO_LOAD(&info[n], PMIX_WAIT, &zero, PMIX_INT);
        n++;
        load_timeout(&info[n++]);
    }
    rc = PMIx_Lookup(pd, 1, 0 == n ? NULL : info, n);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc;
}

static void run_lookup(const char *name)
{
    long long t0 = now_usec();
    pmix_pdata_t pd;
    pmix_status_t rc;
    char want[PMIX_MAX_NSLEN + 32], got[256];
    bool wait = 0 != me.rank;

    require_init(name);
    rc = lookup_svc(wait, &pd);
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "key=%s wait=%d", pd.key, (int) wait);
    }
    svc_value(want, sizeof(want));
    fmt_value(&pd.value, got, sizeof(got));
    if (PMIX_STRING != pd.value.type || NULL == pd.value.data.string
        || 0 != strcmp(pd.value.data.string, want)) {
        step_fail_named(name, "VALUE-MISMATCH", -1, now_usec() - t0, "key=%s got=%s want=STRING:%s",
                        pd.key, got, want);
    }
    if (0 != strcmp(pd.proc.nspace, me.nspace) || 0 != pd.proc.rank) {
        step_fail_named(name, "VALUE-MISMATCH", -1, now_usec() - t0,
                        "key=%s publisher=%s:%" PRIu32 " want=%s:0", pd.key, pd.proc.nspace,
                        pd.proc.rank, me.nspace);
    }
    step_ok(name, now_usec() - t0, "key=%s wait=%d value=%s publisher=%s:%" PRIu32, pd.key,
            (int) wait, got, pd.proc.nspace, pd.proc.rank);
    PMIX_PDATA_DESTRUCT(&pd);
}

static void run_unpublish(const char *name)
{
    long long t0 = now_usec();
    char key[PMIX_MAX_KEYLEN + 1];
    char *keys[2] = {key, NULL};
    pmix_pdata_t pd;
    pmix_status_t rc;

    require_init(name);
    rc = do_fence(false); /* everybody is done looking up */
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "phase=barrier");
    }
    if (0 != me.rank) {
        step_ok(name, now_usec() - t0, "role=none");
        return;
    }
    svc_key(key, sizeof(key));
    rc = PMIx_Unpublish(keys, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "phase=unpublish key=%s", key);
    }
    rc = lookup_svc(false, &pd);
    PMIX_PDATA_DESTRUCT(&pd);
    if (PMIX_ERR_NOT_FOUND != rc) {
        char st[96];
        status_token(rc, st, sizeof(st));
        step_fail_named(name, "UNEXPECTED-RETURN", -1, now_usec() - t0,
                        "phase=lookup-after-unpublish key=%s got=%s(%d) want=NOT-FOUND(%d)", key,
                        st, rc, PMIX_ERR_NOT_FOUND);
    }
    step_ok(name, now_usec() - t0, "role=publisher key=%s", key);
}

static void ev_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) results;
    (void) nresults;
    pthread_mutex_lock(&ev_lock);
    ev_count++;
    ev_code = status;
    if (NULL != source) {
        PMIX_PROC_LOAD(&ev_source, source->nspace, source->rank);
    }
    ev_data[0] = '\0';
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], "test.event.data") && PMIX_STRING == info[i].value.type
            && NULL != info[i].value.data.string) {
            snprintf(ev_data, sizeof(ev_data), "%s", info[i].value.data.string);
        }
    }
    pthread_cond_broadcast(&ev_cond);
    pthread_mutex_unlock(&ev_lock);
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void ensure_handler(const char *name, long long t0)
{
    pmix_status_t code = opt_event_code, rc;
    if (ev_registered) {
        return;
    }
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, ev_handler, NULL, NULL);
    if (rc < 0) {
        step_fail(name, rc, now_usec() - t0, "call=PMIx_Register_event_handler code=%d", code);
    }
    ev_handler_id = (size_t) rc;
    ev_registered = true;
}

static void event_payload(char *buf, size_t len)
{
    snprintf(buf, len, "event-from-%s-0", me.nspace);
}

static void run_event_send(const char *name)
{
    long long t0 = now_usec();
    pmix_status_t rc;
    require_init(name);
    if (0 != me.rank) {
        ensure_handler(name, t0);
    }
    rc = do_fence(false); /* every receiver has its handler now */
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "phase=barrier");
    }
    if (0 != me.rank) {
        step_ok(name, now_usec() - t0, "role=receiver handler=%zu", ev_handler_id);
        return;
    }
    char payload[PMIX_MAX_NSLEN + 32];
    pmix_info_t info;
    event_payload(payload, sizeof(payload));
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, "test.event.data", payload, PMIX_STRING);
    rc = PMIx_Notify_event(opt_event_code, &me, PMIX_RANGE_NAMESPACE, &info, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS != rc && PMIX_OPERATION_SUCCEEDED != rc) {
        step_fail(name, rc, now_usec() - t0, "call=PMIx_Notify_event code=%d", opt_event_code);
    }
    step_ok(name, now_usec() - t0, "role=sender code=%d range=NAMESPACE", opt_event_code);
}

static void run_event_wait(const char *name)
{
    long long t0 = now_usec();
    struct timespec ts;
    char want[PMIX_MAX_NSLEN + 32];
    require_init(name);
    if (0 == me.rank) {
        step_ok(name, now_usec() - t0, "role=sender");
        return;
    }
    ensure_handler(name, t0);
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += opt_timeout;
    pthread_mutex_lock(&ev_lock);
    while (0 == ev_count) {
        if (ETIMEDOUT == pthread_cond_timedwait(&ev_cond, &ev_lock, &ts)) {
            break;
        }
    }
    int count = ev_count;
    pmix_status_t code = ev_code;
    pmix_proc_t src = ev_source;
    char data[256];
    snprintf(data, sizeof(data), "%s", ev_data);
    pthread_mutex_unlock(&ev_lock);
    if (0 == count) {
        step_fail(name, PMIX_ERR_TIMEOUT, now_usec() - t0, "code=%d waited=%ds", opt_event_code,
                  opt_timeout);
    }
    event_payload(want, sizeof(want));
    if (code != opt_event_code || 0 != strcmp(src.nspace, me.nspace) || 0 != src.rank
        || 0 != strcmp(data, want)) {
        step_fail_named(name, "VALUE-MISMATCH", -1, now_usec() - t0,
                        "code=%d source=%s:%" PRIu32 " data=%s want-code=%d want-source=%s:0 "
                        "want-data=%s",
                        code, src.nspace, src.rank, data[0] ? data : "(none)", opt_event_code,
                        me.nspace, want);
    }
    step_ok(name, now_usec() - t0, "role=receiver code=%d source=%s:%" PRIu32 " data=%s count=%d",
            code, src.nspace, src.rank, data, count);
}

static void run_query(const char *name)
{
    long long t0 = now_usec();
    pmix_query_t *q;
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc;
    char list[1024] = "";
    bool listed = false;

    require_init(name);
    PMIX_QUERY_CREATE(q, 1);
    q[0].keys = calloc(2, sizeof(char *));
    q[0].keys[0] = strdup(PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info(q, 1, &results, &nresults);
    PMIX_QUERY_FREE(q, 1);
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "key=%s", PMIX_QUERY_NAMESPACES);
    }
    for (size_t i = 0; i < nresults; i++) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_QUERY_NAMESPACES)
            && PMIX_STRING == results[i].value.type && NULL != results[i].value.data.string) {
            char *copy = strdup(results[i].value.data.string), *save = NULL, *tok;
            snprintf(list, sizeof(list), "%s", results[i].value.data.string);
            for (tok = strtok_r(copy, ",", &save); NULL != tok; tok = strtok_r(NULL, ",", &save)) {
                if (0 == strcmp(tok, me.nspace)) {
                    listed = true;
                }
            }
            free(copy);
        }
    }
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }
    for (size_t i = 0; list[i]; i++) {
        if (' ' == list[i]) {
            list[i] = '_';
        }
    }
    if (!listed) {
        step_fail_named(name, "VALUE-MISMATCH", -1, now_usec() - t0,
                        "key=%s nresults=%zu namespaces=%s want=%s", PMIX_QUERY_NAMESPACES,
                        nresults, list[0] ? list : "(none)", me.nspace);
    }
    step_ok(name, now_usec() - t0, "key=%s namespaces=%s", PMIX_QUERY_NAMESPACES, list);
}

static void run_abort(const char *name)
{
    long long t0 = now_usec();
    pmix_status_t rc;
    require_init(name);
    rc = do_fence(false); /* everybody is up before anybody aborts */
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "phase=barrier");
    }
    if ((long) me.rank == opt_abort_rank) {
        char msg[128];
        snprintf(msg, sizeof(msg), "pmix_client_check abort test from rank %" PRIu32, me.rank);
        /* reported before the call: the host may kill us before it returns */
        step_ok(name, now_usec() - t0, "role=aborter status=%d phase=calling-PMIx_Abort",
                opt_abort_status);
        rc = PMIx_Abort(opt_abort_status, msg, NULL, 0);
        fprintf(stderr, "pmix_client_check: PMIx_Abort returned %d\n", rc);
        fflush(stderr);
        _exit(0 == (opt_abort_status & 0xff) ? 1 : (opt_abort_status & 0xff));
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0); /* no timeout: we expect to be killed */
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "role=bystander phase=fence");
    }
    step_fail_named(name, "UNEXPECTED-RETURN", -1, now_usec() - t0,
                    "role=bystander phase=fence reason=fence-completed-without-aborter");
}

static void run_sleep(const char *name, long ms)
{
    long long t0 = now_usec();
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (0 != nanosleep(&ts, &ts) && EINTR == errno) {
    }
    step_ok(name, now_usec() - t0, "ms=%ld", ms);
}

static void run_finalize(const char *name)
{
    long long t0 = now_usec();
    pmix_status_t rc;
    require_init(name);
    rc = PMIx_Finalize(NULL, 0);
    initialized = false;
    need_barrier = true;
    if (PMIX_SUCCESS != rc) {
        step_fail(name, rc, now_usec() - t0, "call=PMIx_Finalize");
    }
    step_ok(name, now_usec() - t0, NULL);
}

static void run_cycle(const char *name, long n)
{
    long long t_all = now_usec();
    char iname[64];
    for (long i = 0; i < n; i++) {
        long long t0 = now_usec();
        char why[1024] = "";
        int ngets, nl, nr;
        bool mismatch;
        pmix_status_t rc;
        const char *phase;
        snprintf(iname, sizeof(iname), "%s.%ld", name, i);
        if (initialized) {
            step_fail_named(iname, "BAD-STATE", -1, 0, "reason=already-initialized");
        }
        reinit_barrier(iname, t0);
        phase = "init";
        rc = PMIx_Init(&me, NULL, 0);
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        initialized = true;
        rc = load_job_basics(why, sizeof(why));
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        phase = "put";
        rc = do_put((int) i + 1, why, sizeof(why));
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        if (opt_cycle_keys) {
            char ckey[64];
            pmix_value_t cv;
            snprintf(ckey, sizeof(ckey), "test.cycle.%ld", i);
            PMIX_VALUE_CONSTRUCT(&cv);
            cv.type = PMIX_UINT32;
            cv.data.uint32 = (uint32_t) i;
            rc = PMIx_Put(PMIX_GLOBAL, ckey, &cv);
            if (PMIX_SUCCESS != rc) {
                snprintf(why, sizeof(why), "key=%s", ckey);
                goto fail;
            }
        }
        phase = "commit";
        rc = PMIx_Commit();
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        phase = "fence-collect";
        rc = do_fence(true);
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        phase = "get-peers";
        rc = do_get_peers((int) i + 1, &ngets, &nl, &nr, &mismatch, why, sizeof(why));
        if (mismatch) {
            step_fail_named(iname, "VALUE-MISMATCH", -1, now_usec() - t0, "phase=%s %s", phase,
                            why);
        }
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        phase = "finalize";
        rc = PMIx_Finalize(NULL, 0);
        initialized = false;
        need_barrier = true;
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        step_ok(iname, now_usec() - t0, "gets=%d", ngets);
        continue;
    fail:
        step_fail(iname, rc, now_usec() - t0, "phase=%s %s", phase, why);
    }
    step_ok(name, now_usec() - t_all, "iterations=%ld barrier=%s", n,
            opt_cycle_barrier ? "file" : "none");
}

/* ---- benchmark ---- */

static void bench_line(const char *what, long long usec)
{
    printf("BENCH %s %lld\n", what, usec);
    fflush(stdout);
}

static void run_bench(const char *name)
{
    long long t0 = now_usec(), t;
    bool own_init = !initialized;
    char why[256] = "";
    pmix_status_t rc;
    const char *phase = "init";
    int iters = opt_bench_iters < 1 ? 1 : opt_bench_iters;
    long long sum;

    if (own_init) {
        reinit_barrier(name, t0);
        t = now_usec();
        rc = PMIx_Init(&me, NULL, 0);
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        initialized = true;
        bench_line("init", now_usec() - t);
        rc = load_job_basics(why, sizeof(why));
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
    }

    phase = "fence";
    rc = do_fence(false); /* warm-up */
    if (PMIX_SUCCESS != rc) {
        goto fail;
    }
    sum = 0;
    for (int i = 0; i < iters; i++) {
        t = now_usec();
        rc = do_fence(false);
        sum += now_usec() - t;
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
    }
    bench_line("fence", sum / iters);

    phase = "fence-collect";
    {
        char *blob = malloc((size_t) opt_bench_bytes + 1);
        sum = 0;
        for (int i = -1; i < iters; i++) { /* i == -1: warm-up */
            pmix_value_t v;
            pmix_byte_object_t bo;
            for (int k = 0; k < opt_bench_bytes; k++) {
                blob[k] = (char) ((me.rank + (uint32_t) k + (uint32_t) i) & 0xff);
            }
            bo.bytes = blob;
            bo.size = (size_t) opt_bench_bytes;
            PMIX_VALUE_CONSTRUCT(&v);
            PMIx_Value_load(&v, &bo, PMIX_BYTE_OBJECT);
            rc = PMIx_Put(PMIX_GLOBAL, "bench.blob", &v);
            PMIx_Value_destruct(&v);
            if (PMIX_SUCCESS != rc) {
                free(blob);
                goto fail;
            }
            rc = PMIx_Commit();
            if (PMIX_SUCCESS != rc) {
                free(blob);
                goto fail;
            }
            t = now_usec();
            rc = do_fence(true);
            if (i >= 0) {
                sum += now_usec() - t;
            }
            if (PMIX_SUCCESS != rc) {
                free(blob);
                goto fail;
            }
        }
        free(blob);
        bench_line("fence-collect", sum / iters);
    }

    phase = "get";
    {
        pmix_proc_t peer;
        pmix_info_t info;
        pmix_value_t *v = NULL;
        PMIX_PROC_LOAD(&peer, me.nspace, (me.rank + 1) % job_size);
        PMIX_INFO_CONSTRUCT(&info);
        load_timeout(&info);
        t = now_usec();
        rc = PMIx_Get(&peer, "bench.blob", &info, 1, &v);
        bench_line("get-first", now_usec() - t);
        if (PMIX_SUCCESS != rc) {
            PMIX_INFO_DESTRUCT(&info);
            goto fail;
        }
        if (PMIX_BYTE_OBJECT != v->type || (size_t) opt_bench_bytes != v->data.bo.size) {
            PMIX_VALUE_RELEASE(v);
            PMIX_INFO_DESTRUCT(&info);
            step_fail_named(name, "VALUE-MISMATCH", -1, now_usec() - t0,
                            "phase=get key=bench.blob peer=%" PRIu32, peer.rank);
        }
        PMIX_VALUE_RELEASE(v);
        t = now_usec();
        for (int i = 0; i < opt_bench_gets; i++) {
            v = NULL;
            rc = PMIx_Get(&peer, "bench.blob", &info, 1, &v);
            if (PMIX_SUCCESS != rc) {
                PMIX_INFO_DESTRUCT(&info);
                goto fail;
            }
            PMIX_VALUE_RELEASE(v);
        }
        bench_line("gets", now_usec() - t);
        PMIX_INFO_DESTRUCT(&info);
    }

    /* publish + lookup of one's own key (the data service's round trips), then unpublish */
    {
        char key[PMIX_MAX_KEYLEN + 1];
        pmix_info_t pub;
        pmix_pdata_t pd;
        char *keys[2];
        phase = "publish";
        snprintf(key, sizeof(key), "bench.pub.%" PRIu32, me.rank);
        PMIX_INFO_CONSTRUCT(&pub);
        PMIX_INFO_LOAD(&pub, key, "v", PMIX_STRING);
        t = now_usec();
        rc = PMIx_Publish(&pub, 1);
        PMIX_INFO_DESTRUCT(&pub);
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        phase = "lookup";
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, key);
        rc = PMIx_Lookup(&pd, 1, NULL, 0);
        long long pair = now_usec() - t;
        if (PMIX_SUCCESS != rc || PMIX_STRING != pd.value.type
            || 0 != strcmp("v", pd.value.data.string)) {
            PMIX_PDATA_DESTRUCT(&pd);
            snprintf(why, sizeof(why), "key=%.200s", key);
            if (PMIX_SUCCESS == rc) {
                rc = PMIX_ERR_BAD_PARAM;
            }
            goto fail;
        }
        PMIX_PDATA_DESTRUCT(&pd);
        bench_line("publish-lookup", pair);
        phase = "unpublish";
        keys[0] = key;
        keys[1] = NULL;
        t = now_usec();
        rc = PMIx_Unpublish(keys, NULL, 0);
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }
        bench_line("unpublish", now_usec() - t);
    }

    if (own_init) {
        phase = "finalize";
        t = now_usec();
        rc = PMIx_Finalize(NULL, 0);
        if (PMIX_SUCCESS == rc) {
            bench_line("finalize", now_usec() - t);
        }
        initialized = false;
        need_barrier = true;
        if (PMIX_SUCCESS != rc) {
            goto fail;
        }

        /* one whole cycle, timed as one: init, put, commit, collecting
         * fence, get of the next rank's key, finalize (after the re-init
         * barrier, which is not timed) */
        reinit_barrier(name, t0);
        {
            pmix_proc_t peer;
            pmix_info_t info;
            pmix_value_t cv, *v = NULL;
            long long cyc;
            t = now_usec();
            phase = "cycle-init";
            rc = PMIx_Init(&me, NULL, 0);
            if (PMIX_SUCCESS != rc) {
                goto fail;
            }
            initialized = true;
            phase = "cycle-put";
            PMIX_VALUE_CONSTRUCT(&cv);
            cv.type = PMIX_UINT32;
            cv.data.uint32 = me.rank;
            rc = PMIx_Put(PMIX_GLOBAL, "bench.cycle", &cv);
            if (PMIX_SUCCESS != rc) {
                goto fail;
            }
            phase = "cycle-commit";
            rc = PMIx_Commit();
            if (PMIX_SUCCESS != rc) {
                goto fail;
            }
            phase = "cycle-fence";
            rc = do_fence(true);
            if (PMIX_SUCCESS != rc) {
                goto fail;
            }
            phase = "cycle-get";
            PMIX_PROC_LOAD(&peer, me.nspace, (me.rank + 1) % job_size);
            PMIX_INFO_CONSTRUCT(&info);
            load_timeout(&info);
            rc = PMIx_Get(&peer, "bench.cycle", &info, 1, &v);
            PMIX_INFO_DESTRUCT(&info);
            if (PMIX_SUCCESS != rc) {
                goto fail;
            }
            if (PMIX_UINT32 != v->type || peer.rank != v->data.uint32) {
                PMIX_VALUE_RELEASE(v);
                step_fail_named(name, "VALUE-MISMATCH", -1, now_usec() - t0,
                                "phase=cycle-get key=bench.cycle peer=%" PRIu32, peer.rank);
            }
            PMIX_VALUE_RELEASE(v);
            phase = "cycle-finalize";
            rc = PMIx_Finalize(NULL, 0);
            cyc = now_usec() - t;
            initialized = false;
            need_barrier = true;
            if (PMIX_SUCCESS != rc) {
                goto fail;
            }
            bench_line("cycle", cyc);
        }
    }
    step_ok(name, now_usec() - t0, "size=%" PRIu32 " iters=%d bytes=%d gets=%d", job_size, iters,
            opt_bench_bytes, opt_bench_gets);
    return;
fail:
    step_fail(name, rc, now_usec() - t0, "phase=%s %s", phase, why);
}

/* ------------------------------------------------------------------ */
/* main                                                                */
/* ------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: pmix_client_check [--timeout SEC] [--abort-rank R] [--abort-status S]\n"
            "         [--event-code C] [--bench-iters K] [--bench-gets G] [--bench-bytes B]\n"
            "         [--cycle-barrier file|none] [--cycle-keys] [--barrier-dir DIR]\n"
            "         [--barrier-id ID] [--strict-scope]\n"
            "         [--publish-delay MS]\n"
            "         STEPS: --init --get-job-keys --put --commit --fence --fence-collect\n"
            "                --get-peers --publish --lookup --unpublish --event-send\n"
            "                --event-wait --query --abort --cycle N --sleep MS --finalize\n"
            "                --bench\n");
    exit(2);
}

int main(int argc, char **argv)
{
    step_t *steps = calloc((size_t) argc + 1, sizeof(step_t));
    int nsteps = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool matched = false;
        if (0 == strcmp(a, "--strict-scope")) {
            opt_strict_scope = true;
            continue;
        }
        if (0 == strcmp(a, "--cycle-keys")) {
            opt_cycle_keys = true;
            continue;
        }
        for (size_t k = 0; k < sizeof(step_flags) / sizeof(step_flags[0]); k++) {
            if (0 == strcmp(a, step_flags[k].flag)) {
                steps[nsteps].kind = step_flags[k].kind;
                steps[nsteps].name = a + 2;
                if (step_flags[k].has_arg) {
                    if (i + 1 >= argc) {
                        usage();
                    }
                    steps[nsteps].arg = atol(argv[++i]);
                }
                nsteps++;
                matched = true;
                break;
            }
        }
        if (matched) {
            continue;
        }
        if (i + 1 >= argc) {
            usage();
        }
        if (0 == strcmp(a, "--timeout")) {
            opt_timeout = atoi(argv[++i]);
        } else if (0 == strcmp(a, "--abort-rank")) {
            opt_abort_rank = atol(argv[++i]);
        } else if (0 == strcmp(a, "--abort-status")) {
            opt_abort_status = atoi(argv[++i]);
        } else if (0 == strcmp(a, "--event-code")) {
            opt_event_code = atoi(argv[++i]);
        } else if (0 == strcmp(a, "--bench-iters")) {
            opt_bench_iters = atoi(argv[++i]);
        } else if (0 == strcmp(a, "--bench-gets")) {
            opt_bench_gets = atoi(argv[++i]);
        } else if (0 == strcmp(a, "--bench-bytes")) {
            opt_bench_bytes = atoi(argv[++i]);
        } else if (0 == strcmp(a, "--cycle-barrier")) {
            opt_cycle_barrier = 0 != strcmp(argv[++i], "none");
        } else if (0 == strcmp(a, "--barrier-dir")) {
            opt_barrier_dir = argv[++i];
        } else if (0 == strcmp(a, "--barrier-id")) {
            opt_barrier_id = argv[++i];
        } else if (0 == strcmp(a, "--publish-delay")) {
            opt_publish_delay = atol(argv[++i]);
        } else {
            usage();
        }
    }
    if (0 == nsteps) {
        usage();
    }
    /* how many re-init barriers will this step list pass? (same on every
     * rank, so that the last one can clean up) */
    {
        bool init = false, fin = false;
        for (int s = 0; s < nsteps; s++) {
            switch (steps[s].kind) {
            case S_INIT:
                barrier_total += fin ? 1 : 0;
                fin = false;
                init = true;
                break;
            case S_FINALIZE:
                init = false;
                fin = true;
                break;
            case S_CYCLE:
                for (long i = 0; i < steps[s].arg; i++) {
                    barrier_total += fin ? 1 : 0;
                    fin = true;
                }
                break;
            case S_BENCH:
                if (!init) {
                    barrier_total += fin ? 1 : 0;
                    barrier_total += 1; /* the timed cycle after its finalize */
                    fin = true;
                }
                break;
            default: break;
            }
        }
    }

    for (int s = 0; s < nsteps; s++) {
        const char *nm = steps[s].name;
        switch (steps[s].kind) {
        case S_INIT: run_init(nm); break;
        case S_GET_JOB_KEYS: run_get_job_keys(nm); break;
        case S_PUT: run_put(nm, 0); break;
        case S_COMMIT: run_commit(nm); break;
        case S_FENCE: run_fence(nm, false); break;
        case S_FENCE_COLLECT: run_fence(nm, true); break;
        case S_GET_PEERS: run_get_peers(nm); break;
        case S_PUBLISH: run_publish(nm); break;
        case S_LOOKUP: run_lookup(nm); break;
        case S_UNPUBLISH: run_unpublish(nm); break;
        case S_EVENT_SEND: run_event_send(nm); break;
        case S_EVENT_WAIT: run_event_wait(nm); break;
        case S_QUERY: run_query(nm); break;
        case S_ABORT: run_abort(nm); break;
        case S_CYCLE: run_cycle(nm, steps[s].arg); break;
        case S_SLEEP: run_sleep(nm, steps[s].arg); break;
        case S_FINALIZE: run_finalize(nm); break;
        case S_BENCH: run_bench(nm); break;
        }
    }
    free(steps);
    free(is_local);
    return 0;
}
