/*
 * PMIx_Group_construct / PMIx_Group_destruct among every rank of the job (issue #16), built
 * against Debian's 4.2.2 headers and run with any libpmix.so.2 (4.2.2 to master):
 *   1. "grp.ctx" with pmix.grp.actxid: prints the context id and the membership the reply gave
 *      (4.2.2's reply carries no membership: "members -");
 *   2. "grp.local" without it (purely local: the server alone completes it), then both
 *      destructed.
 * With --die, the last rank exits 3 without PMIx_Finalize; the others wait until the server tells
 * them (PMIX_ERR_PROC_ABORTED or PMIX_PROC_TERMINATED), then construct a group naming it: the
 * construct must fail (not hang), and they print the status.
 * Each step prints one line per rank; a failure prints FAILED and exits 1.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;
static volatile int member_died = 0;

static void died(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                 size_t ninfo, pmix_info_t results[], size_t nresults,
                 pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void) id; (void) status; (void) source; (void) info; (void) ninfo; (void) results;
    (void) nresults;
    member_died = 1;
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void fail(const char *what, pmix_status_t rc) {
    printf("rank %u %s FAILED: %s\n", me.rank, what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static void construct(const char *grp, pmix_proc_t *procs, size_t n, bool ctx) {
    pmix_info_t info[1];
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Group_construct(grp, procs, n, info, ctx ? 1 : 0, &results, &nresults);
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Group_construct", rc);
    }
    long long ctxid = -1;
    long members = -1;
    for (size_t i = 0; i < nresults; i++) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) {
            ctxid = (long long) results[i].value.data.size;
        } else if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_MEMBERSHIP)) {
            members = (long) results[i].value.data.darray->size;
        }
    }
    if (members >= 0) {
        printf("rank %u construct %s ok ctxid %lld members %ld\n", me.rank, grp, ctxid, members);
    } else {
        printf("rank %u construct %s ok ctxid %lld members -\n", me.rank, grp, ctxid);
    }
    fflush(stdout);
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }
}

static void destruct(const char *grp) {
    pmix_status_t rc = PMIx_Group_destruct(grp, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Group_destruct", rc);
    }
    printf("rank %u destruct %s ok\n", me.rank, grp);
    fflush(stdout);
}

int main(int argc, char **argv) {
    bool die = argc > 1 && 0 == strcmp(argv[1], "--die");
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Init", rc);
    }
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Get job size", rc);
    }
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    pmix_proc_t *procs;
    PMIX_PROC_CREATE(procs, n);
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&procs[r], me.nspace, r);
    }
    if (die) {
        pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED, PMIX_PROC_TERMINATED};
        rc = PMIx_Register_event_handler(codes, 2, NULL, 0, died, NULL, NULL);
        if (rc < 0) {
            fail("PMIx_Register_event_handler", rc);
        }
        /* every rank has registered before the last one dies */
        rc = PMIx_Fence(&wild, 1, NULL, 0);
        if (PMIX_SUCCESS != rc) {
            fail("PMIx_Fence", rc);
        }
        if (me.rank == n - 1) {
            printf("rank %u exits before the construct\n", me.rank);
            fflush(stdout);
            _exit(3);
        }
        for (int i = 0; i < 3000 && !member_died; i++) {
            usleep(10000);
        }
        if (!member_died) {
            fail("waiting for the death event", PMIX_ERR_TIMEOUT);
        }
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Group_construct("grp.die", procs, n, NULL, 0, &results, &nresults);
        printf("rank %u construct with a dead member: %s\n", me.rank, PMIx_Error_string(rc));
        fflush(stdout);
    } else {
        construct("grp.ctx", procs, n, true);
        construct("grp.local", procs, n, false);
        destruct("grp.local");
        destruct("grp.ctx");
    }
    PMIX_PROC_FREE(procs, n);
    rc = PMIx_Finalize(NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Finalize", rc);
    }
    printf("rank %u done\n", me.rank);
    return 0;
}
