/*
 * A small OpenPMIx 4.2.2 client for pmix-server's integration tests. It exercises the path a real
 * MPI process takes at start-up and prints one "name=value" line per job key it read, so the Java
 * test can check the values against what it registered.
 *
 * Usage: server_it_client MODE
 *   full       init, job keys, put (local, global, remote), commit, fence with data collection,
 *              get of every peer's keys, finalize
 *   init       init and finalize only
 *   die-fence  the others enter the fence, then rank 0 exits without finalizing; the others
 *              report the status they got ("fence_status=<n>")
 *   die-before rank 0 exits without finalizing before anyone fences; the others then fence
 *   early-get  rank 0 asks rank 1 for a key rank 1 commits only after a delay (PMIX_TIMEOUT 10)
 *   cycle      init/finalize twice in the same process
 *   pubsub     rank 0 publishes "svc.<nspace>", every rank looks it up (waiting for it), rank 0
 *              unpublishes after a fence; then an abort request with status 42 for nobody
 *   events     every rank registers for event -31337; rank 0 notifies it (range namespace);
 *              the others print what they received ("event=<code> source=<nspace>:<rank>")
 *   remote     like full, for a job whose ranks 2 and 3 live on another node: gets test.glob of
 *              every rank (ranks 2 and 3 come from the host's fence data or direct modex) and
 *              test.loc of the local ranks
 *
 * Exit status 0 when every step succeeded, otherwise the number of the failed step.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

#define CHECK(step, rc, what)                                                          \
    do {                                                                               \
        if (PMIX_SUCCESS != (rc)) {                                                    \
            fprintf(stderr, "rank %u: %s failed: %s (%d)\n", me.rank, what,            \
                    PMIx_Error_string(rc), (int) (rc));                                \
            exit(step);                                                                \
        }                                                                              \
    } while (0)

static volatile int event_seen = 0;

static void evhandler(size_t evhdlr_registration_id, pmix_status_t status,
                      const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                      pmix_info_t results[], size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) evhdlr_registration_id;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    printf("event=%d source=%s:%u\n", (int) status, source->nspace, source->rank);
    event_seen = 1;
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void print_value(const char *name, const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_UINT32:
        printf("%s=%u\n", name, v->data.uint32);
        break;
    case PMIX_UINT16:
        printf("%s=%u\n", name, (unsigned) v->data.uint16);
        break;
    case PMIX_PROC_RANK:
        printf("%s=%u\n", name, v->data.rank);
        break;
    case PMIX_STRING:
        printf("%s=%s\n", name, v->data.string);
        break;
    default:
        printf("%s=<type %d>\n", name, (int) v->type);
    }
}

static void get_job_key(int step, const pmix_proc_t *p, const char *key, const char *name)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    CHECK(step, rc, key);
    print_value(name, v);
    PMIX_VALUE_RELEASE(v);
}

static void put_commit(int step)
{
    char buf[64];
    pmix_value_t v;
    pmix_status_t rc;

    snprintf(buf, sizeof buf, "rank%u-local", me.rank);
    PMIX_VALUE_LOAD(&v, buf, PMIX_STRING);
    rc = PMIx_Put(PMIX_LOCAL, "test.loc", &v);
    PMIX_VALUE_DESTRUCT(&v);
    CHECK(step, rc, "put local");

    v.type = PMIX_UINT32;
    v.data.uint32 = 1000 + me.rank;
    rc = PMIx_Put(PMIX_GLOBAL, "test.glob", &v);
    CHECK(step, rc, "put global");

    snprintf(buf, sizeof buf, "rank%u-remote", me.rank);
    PMIX_VALUE_LOAD(&v, buf, PMIX_STRING);
    rc = PMIx_Put(PMIX_REMOTE, "test.rem", &v);
    PMIX_VALUE_DESTRUCT(&v);
    CHECK(step, rc, "put remote");

    rc = PMIx_Commit();
    CHECK(step + 1, rc, "commit");
}

static void check_peer(int step, uint32_t r)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    char want[64];

    PMIX_LOAD_PROCID(&p, me.nspace, r);
    rc = PMIx_Get(&p, "test.glob", NULL, 0, &v);
    CHECK(step, rc, "get test.glob");
    if (PMIX_UINT32 != v->type || 1000 + r != v->data.uint32) {
        fprintf(stderr, "rank %u: rank %u test.glob wrong (type %d)\n", me.rank, r, v->type);
        exit(step);
    }
    PMIX_VALUE_RELEASE(v);

    rc = PMIx_Get(&p, "test.loc", NULL, 0, &v);
    CHECK(step + 1, rc, "get test.loc");
    snprintf(want, sizeof want, "rank%u-local", r);
    if (PMIX_STRING != v->type || 0 != strcmp(want, v->data.string)) {
        fprintf(stderr, "rank %u: rank %u test.loc wrong\n", me.rank, r);
        exit(step + 1);
    }
    PMIX_VALUE_RELEASE(v);
    printf("peer%u=ok\n", r);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "full";
    pmix_status_t rc;
    pmix_proc_t wild;
    pmix_info_t info;
    bool collect = true;
    uint32_t size, r;
    pmix_value_t *v = NULL;

    setvbuf(stdout, NULL, _IOLBF, 0);
    rc = PMIx_Init(&me, NULL, 0);
    CHECK(10, rc, "PMIx_Init");
    printf("nspace=%s\nrank=%u\n", me.nspace, me.rank);

    if (0 == strcmp(mode, "init")) {
        rc = PMIx_Finalize(NULL, 0);
        CHECK(11, rc, "PMIx_Finalize");
        printf("done\n");
        return 0;
    }
    if (0 == strcmp(mode, "cycle")) {
        rc = PMIx_Finalize(NULL, 0);
        CHECK(11, rc, "PMIx_Finalize 1");
        rc = PMIx_Init(&me, NULL, 0);
        CHECK(12, rc, "PMIx_Init 2");
        rc = PMIx_Finalize(NULL, 0);
        CHECK(13, rc, "PMIx_Finalize 2");
        printf("done\n");
        return 0;
    }

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    CHECK(20, rc, "get job size");
    size = v->data.uint32;
    printf("job_size=%u\n", size);
    PMIX_VALUE_RELEASE(v);
    get_job_key(21, &wild, PMIX_UNIV_SIZE, "univ_size");
    get_job_key(22, &wild, PMIX_LOCAL_SIZE, "local_size");
    get_job_key(23, &wild, PMIX_LOCAL_PEERS, "local_peers");
    get_job_key(24, &me, PMIX_LOCAL_RANK, "local_rank");
    get_job_key(25, &me, PMIX_NODE_RANK, "node_rank");
    get_job_key(26, &me, PMIX_HOSTNAME, "hostname");
    get_job_key(27, &wild, PMIX_JOBID, "jobid");
    get_job_key(28, &wild, PMIX_LOCALLDR, "local_leader");
    get_job_key(29, &wild, PMIX_NUM_NODES, "num_nodes");

    if (0 == strcmp(mode, "early-get")) {
        if (1 == me.rank) {
            sleep(1);
            put_commit(40);
        } else if (0 == me.rank) {
            pmix_proc_t p;
            uint32_t tmo = 10;
            PMIX_LOAD_PROCID(&p, me.nspace, 1);
            PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &tmo, PMIX_UINT32);
            rc = PMIx_Get(&p, "test.glob", &info, 1, &v);
            CHECK(42, rc, "early get");
            printf("early_get=%u\n", v->data.uint32);
            PMIX_VALUE_RELEASE(v);
        }
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &info, 1);
        CHECK(43, rc, "fence");
        rc = PMIx_Finalize(NULL, 0);
        CHECK(90, rc, "PMIx_Finalize");
        printf("done\n");
        return 0;
    }

    if (0 == strcmp(mode, "events")) {
        pmix_status_t code = -31337;
        int i;
        rc = PMIx_Register_event_handler(&code, 1, NULL, 0, evhandler, NULL, NULL);
        if (rc < 0) {
            CHECK(80, rc, "register event handler");
        }
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(81, rc, "fence 1");
        if (0 == me.rank) {
            rc = PMIx_Notify_event(code, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
            CHECK(82, rc, "notify");
        } else {
            for (i = 0; i < 500 && !event_seen; i++) {
                usleep(10000);
            }
            if (!event_seen) {
                fprintf(stderr, "rank %u: no event\n", me.rank);
                exit(83);
            }
        }
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(84, rc, "fence 2");
        rc = PMIx_Finalize(NULL, 0);
        CHECK(90, rc, "PMIx_Finalize");
        printf("done\n");
        return 0;
    }

    if (0 == strcmp(mode, "pubsub")) {
        pmix_info_t pub;
        pmix_pdata_t pd;
        char key[PMIX_MAX_KEYLEN + 1];
        char *keys[2];
        snprintf(key, sizeof key, "svc.%s", me.nspace);
        if (0 == me.rank) {
            PMIX_INFO_LOAD(&pub, key, "tcp://somewhere:1234", PMIX_STRING);
            rc = PMIx_Publish(&pub, 1);
            CHECK(70, rc, "publish");
        }
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(71, rc, "fence 1");
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, key);
        rc = PMIx_Lookup(&pd, 1, NULL, 0);
        CHECK(72, rc, "lookup");
        if (PMIX_STRING != pd.value.type) {
            exit(73);
        }
        printf("lookup=%s\nowner=%s:%u\n", pd.value.data.string, pd.proc.nspace, pd.proc.rank);
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(74, rc, "fence 2");
        if (0 == me.rank) {
            keys[0] = key;
            keys[1] = NULL;
            rc = PMIx_Unpublish(keys, NULL, 0);
            CHECK(75, rc, "unpublish");
        }
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(76, rc, "fence 3");
        PMIX_PDATA_DESTRUCT(&pd);
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, key);
        rc = PMIx_Lookup(&pd, 1, NULL, 0);
        printf("lookup_after=%d\n", (int) rc);
        rc = PMIx_Abort(42, "test abort", NULL, 0);
        printf("abort=%d\n", (int) rc);
        rc = PMIx_Finalize(NULL, 0);
        CHECK(90, rc, "PMIx_Finalize");
        printf("done\n");
        return 0;
    }

    put_commit(30);

    if (0 == strcmp(mode, "remote")) {
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &info, 1);
        CHECK(50, rc, "fence");
        for (r = 0; r < size; r++) {
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, me.nspace, r);
            rc = PMIx_Get(&p, "test.glob", NULL, 0, &v);
            CHECK(60, rc, "get test.glob");
            printf("glob%u=%u\n", r, v->data.uint32);
            PMIX_VALUE_RELEASE(v);
        }
        rc = PMIx_Finalize(NULL, 0);
        CHECK(90, rc, "PMIx_Finalize");
        printf("done\n");
        return 0;
    }

    if (0 == strcmp(mode, "die-fence") || 0 == strcmp(mode, "die-before")) {
        bool before = 0 == strcmp(mode, "die-before");
        if (0 == me.rank) {
            if (!before) {
                sleep(1); /* the others are in the fence by now */
            }
            printf("dying\n");
            fflush(stdout);
            _exit(0);
        }
        if (before) {
            sleep(1); /* let the server see rank 0 go first */
        }
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &info, 1);
        printf("fence_status=%d\n", (int) rc);
        rc = PMIx_Finalize(NULL, 0);
        CHECK(90, rc, "PMIx_Finalize");
        printf("done\n");
        return 0;
    }

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    CHECK(50, rc, "fence");
    PMIX_INFO_DESTRUCT(&info);

    for (r = 0; r < size; r++) {
        check_peer(60, r);
    }

    rc = PMIx_Finalize(NULL, 0);
    CHECK(90, rc, "PMIx_Finalize");
    printf("done\n");
    return 0;
}
