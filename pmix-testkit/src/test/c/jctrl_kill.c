/*
 * A client for JobControlIT: after a fence, rank 0 asks PMIx_Job_control for one action on
 * processes of its job (argv[1]): "kill:R" (PMIX_JOB_CTRL_KILL of rank R; "*" is WILDCARD, the
 * whole job), "signal:R:SIG" (PMIX_JOB_CTRL_SIGNAL), "term" (PMIX_JOB_CTRL_TERMINATE without
 * targets), "term:R" (with a target), "preempt" (PMIX_JOB_CTRL_PREEMPTIBLE) or "none" (nothing:
 * someone else acts, a tool). An action prefixed with '+' ("+kill:1") is asked for before the
 * first fence instead (its target may not have connected yet). Rank W (argv[2], if given) then
 * waits in pause() for whatever ends
 * it; every other rank fences again among them all but W and finalizes. Each prints its
 * answers ("JCTRL <rank> <step> <status>") and every event it is told ("EVENT <rank> <status>
 * <source rank>").
 */
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

static void notified(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id; (void) info; (void) ninfo; (void) results; (void) nresults;
    printf("EVENT %u %d %d\n", me.rank, status, NULL == source ? -1 : (int) source->rank);
    fflush(stdout);
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static pmix_rank_t rank_of(const char *s)
{
    return 0 == strcmp(s, "*") ? PMIX_RANK_WILDCARD : (pmix_rank_t) strtoul(s, NULL, 10);
}

int main(int argc, char **argv)
{
    pmix_proc_t target;
    pmix_info_t dir;
    pmix_info_t *results = NULL;
    size_t nresults = 0, ntargets = 1;
    pmix_status_t rc;
    bool yes = true, early;
    char what[64];

    if (argc < 2) {
        fprintf(stderr, "usage: jctrl_kill ACTION\n");
        return 2;
    }
    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        fprintf(stderr, "PMIx_Init: %d\n", rc);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    PMIx_Register_event_handler(NULL, 0, NULL, 0, notified, NULL, NULL);
    early = '+' == argv[1][0];
    if (!early) {
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        printf("JCTRL %u fence1 %d\n", me.rank, rc);
    }
    if (0 == me.rank && 0 != strcmp(argv[1], "none")) {
        snprintf(what, sizeof(what), "%s", argv[1] + (early ? 1 : 0));
        char *arg = strchr(what, ':');
        if (NULL != arg) {
            *arg++ = '\0';
        }
        PMIX_LOAD_PROCID(&target, me.nspace, NULL == arg ? PMIX_RANK_WILDCARD : rank_of(arg));
        if (0 == strcmp(what, "kill")) {
            PMIX_INFO_LOAD(&dir, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
        } else if (0 == strcmp(what, "signal")) {
            char *sig = strchr(arg, ':');
            int signum = NULL == sig ? 10 : atoi(sig + 1);
            if (NULL != sig) {
                *sig = '\0';
            }
            PMIX_LOAD_PROCID(&target, me.nspace, rank_of(arg));
            PMIX_INFO_LOAD(&dir, PMIX_JOB_CTRL_SIGNAL, &signum, PMIX_INT);
        } else if (0 == strcmp(what, "term")) {
            PMIX_INFO_LOAD(&dir, PMIX_JOB_CTRL_TERMINATE, &yes, PMIX_BOOL);
            ntargets = NULL == arg ? 0 : 1;
        } else {
            PMIX_INFO_LOAD(&dir, PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
            ntargets = 0;
        }
        rc = PMIx_Job_control(0 < ntargets ? &target : NULL, ntargets, &dir, 1, &results,
                              &nresults);
        printf("JCTRL %u %s %d\n", me.rank, argv[1], rc);
    }
    if (early) {
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        printf("JCTRL %u fence1 %d\n", me.rank, rc);
    }
    if (argc > 2) {
        pmix_rank_t waiter = (pmix_rank_t) strtoul(argv[2], NULL, 10);
        pmix_value_t *size = NULL;
        pmix_proc_t job, *others;
        size_t n = 0;
        if (me.rank == waiter) {
            printf("JCTRL %u waiting\n", me.rank);
            for (;;) {
                pause();
            }
        }
        PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
        if (PMIX_SUCCESS != PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &size)) {
            fprintf(stderr, "no job size\n");
            return 1;
        }
        others = calloc(size->data.uint32, sizeof(pmix_proc_t));
        for (pmix_rank_t r = 0; r < size->data.uint32; r++) {
            if (r != waiter) {
                PMIX_LOAD_PROCID(&others[n], me.nspace, r);
                n++;
            }
        }
        rc = PMIx_Fence(others, n, NULL, 0);
    } else {
        rc = PMIx_Fence(NULL, 0, NULL, 0);
    }
    printf("JCTRL %u fence2 %d\n", me.rank, rc);
    rc = PMIx_Finalize(NULL, 0);
    printf("JCTRL %u finalize %d\n", me.rank, rc);
    return 0;
}
