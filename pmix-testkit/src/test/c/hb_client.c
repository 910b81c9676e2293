/*
 * A pmixrun client for MonitorIT: rank 1 asks its server to monitor its heartbeats
 * (PMIx_Process_monitor with PMIX_MONITOR_HEARTBEAT, one-second windows, one drop allowed),
 * sends one heartbeat and then none; rank 0 waits (up to 60 s) for the
 * PMIX_MONITOR_HEARTBEAT_ALERT event the server raises about rank 1. Prints what libpmix answered:
 * "HB <rank> <step> <status>" and "HB <rank> alert <status> <source rank>".
 */
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;
static volatile int alerted = -1;

static void on_alert(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id; (void) info; (void) ninfo; (void) results; (void) nresults;
    printf("HB %u alert %d %u\n", me.rank, status, source->rank);
    fflush(stdout);
    if (0 == strcmp(source->nspace, me.nspace)) {
        alerted = (int) source->rank;
    }
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static volatile bool registered = false;
static void reg_done(pmix_status_t status, size_t ref, void *cbdata)
{
    (void) ref; (void) cbdata;
    printf("HB %u register %d\n", me.rank, status);
    registered = true;
}

int main(void)
{
    pmix_status_t rc, code = PMIX_MONITOR_HEARTBEAT_ALERT;
    pmix_info_t monitor, dirs[3];
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    uint32_t n;
    int i;

    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        fprintf(stderr, "PMIx_Init: %d\n", rc);
        return 1;
    }
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_alert, reg_done, NULL);
    while (!registered) {
        usleep(1000);
    }
    /* every rank listens before rank 1 starts being monitored */
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    printf("HB %u fence %d\n", me.rank, rc);

    if (1 == me.rank) {
        /* no window given: the server refuses the request */
        PMIX_INFO_LOAD(&monitor, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
        PMIX_INFO_LOAD(&dirs[0], PMIX_MONITOR_ID, "HB0", PMIX_STRING);
        rc = PMIx_Process_monitor(&monitor, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 1,
                                  &results, &nresults);
        printf("HB %u notime %d\n", me.rank, rc);

        PMIX_INFO_LOAD(&dirs[0], PMIX_MONITOR_ID, "HB1", PMIX_STRING);
        n = 1;
        PMIX_INFO_LOAD(&dirs[1], PMIX_MONITOR_HEARTBEAT_TIME, &n, PMIX_UINT32);
        PMIX_INFO_LOAD(&dirs[2], PMIX_MONITOR_HEARTBEAT_DROPS, &n, PMIX_UINT32);
        rc = PMIx_Process_monitor(&monitor, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 3,
                                  &results, &nresults);
        printf("HB %u monitor %d\n", me.rank, rc);
        fflush(stdout);
        PMIx_Heartbeat();
    }

    /* rank 1 itself is not told (the source of an event is not its target): it waits in the
     * fence, sending nothing */
    if (0 == me.rank) {
        for (i = 0; i < 60000 && 1 != alerted; i++) {
            usleep(1000);
        }
        printf("HB %u alerted-by %d\n", me.rank, alerted);
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    printf("HB %u fence %d\n", me.rank, rc);
    rc = PMIx_Finalize(NULL, 0);
    printf("HB %u finalize %d\n", me.rank, rc);
    return 0;
}
