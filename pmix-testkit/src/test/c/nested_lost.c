/*
 * A client for NestedIT's lost-rank tests: every rank registers a handler for
 * PMIX_ERR_PROC_ABORTED and passes a fence of the whole job (a barrier across the nested nodes).
 * Then rank V (argv[2]) is lost as argv[1] says: "die" (it SIGKILLs itself) or "node" (it
 * SIGKILLs its parent, its node's pmixrun, and then itself). Every other rank enters a fence of
 * the whole job, prints how it ended ("FENCE <rank> <status>"), waits at most 20 s for the
 * event and prints it ("EVENT <rank> <status> <source rank> <affected ranks, comma separated>",
 * or "EVENT <rank> none"), then finalizes and exits 0. A rank whose pmixrun is gone exits 1 at
 * once after its fence (nobody would end it).
 */
#include <pmix.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static char seen[1024];

static void add_rank(char *buf, size_t size, pmix_rank_t r)
{
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "%s%u", 0 == n ? "" : ",", r);
}

static void notified(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id; (void) results; (void) nresults;
    char affected[512] = "";
    for (size_t i = 0; i < ninfo; i++) {
        if (0 == strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROCS)
            && PMIX_DATA_ARRAY == info[i].value.type && NULL != info[i].value.data.darray) {
            pmix_proc_t *p = (pmix_proc_t *) info[i].value.data.darray->array;
            affected[0] = '\0';
            for (size_t k = 0; k < info[i].value.data.darray->size; k++) {
                add_rank(affected, sizeof(affected), p[k].rank);
            }
            break;
        }
        if (0 == strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROC) && PMIX_PROC == info[i].value.type
            && '\0' == affected[0]) {
            add_rank(affected, sizeof(affected), info[i].value.data.proc->rank);
        }
    }
    pthread_mutex_lock(&lock);
    if ('\0' == seen[0]) {
        snprintf(seen, sizeof(seen), "EVENT %u %d %d %s", me.rank, status,
                 NULL == source ? -1 : (int) source->rank, affected[0] ? affected : "-");
        pthread_cond_broadcast(&cond);
    }
    pthread_mutex_unlock(&lock);
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: nested_lost die|node VICTIM\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *how = argv[1];
    pmix_rank_t victim = (pmix_rank_t) atoi(argv[2]);
    pid_t parent = getppid();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("INIT %d\n", rc);
        return 1;
    }
    pmix_status_t code = PMIX_ERR_PROC_ABORTED;
    PMIx_Register_event_handler(&code, 1, NULL, 0, notified, NULL, NULL);
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Fence(&all, 1, NULL, 0);
    printf("READY %u %d\n", me.rank, rc);
    if (me.rank == victim) {
        usleep(300 * 1000); /* the others are in their fence */
        if (0 == strcmp(how, "node")) {
            kill(getppid(), SIGKILL);
        }
        kill(getpid(), SIGKILL);
    }
    rc = PMIx_Fence(&all, 1, NULL, 0);
    printf("FENCE %u %d\n", me.rank, rc);
    if (getppid() != parent) {
        _exit(1); /* our pmixrun is gone: nobody is left to end us */
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 20;
    pthread_mutex_lock(&lock);
    while ('\0' == seen[0]) {
        if (0 != pthread_cond_timedwait(&cond, &lock, &ts)) {
            break;
        }
    }
    if ('\0' == seen[0]) {
        printf("EVENT %u none\n", me.rank);
    } else {
        printf("%s\n", seen);
    }
    pthread_mutex_unlock(&lock);
    PMIx_Finalize(NULL, 0);
    return 0;
}
