/*
 * pmix_connect_spawn.c -- the libpmix (OpenPMIx 4.2.2) twin of the Java test client
 * io.pmix.testkit.ConnectSpawnMain: the same steps, the same output lines
 * "CS <rank> <step> OK|FAIL [detail]", so one test drives either against any server.
 *
 *   connect | disconnect      over the whole own namespace
 *   connect-timeout           rank 0 connects with ranks 0 and 1, pmix.timeout 1 s, while rank 1
 *                             stays away (sleeping): passes on PMIX_ERR_TIMEOUT
 *   connect-lost-halt         rank 1 exits without finalizing while rank 0 connects with ranks
 *                             0 and 1: passes when the connect fails (prints the status)
 *   spawn N CMD ARGS...       (last step) rank 0 spawns N copies of CMD and reads the child's
 *                             pmix.job.size with PMIX_OPTIONAL (from the spawn reply only)
 *
 * Build: gcc pmix_connect_spawn.c $(pkg-config --cflags --libs pmix)
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

static void say(const char *step, const char *verdict, const char *detail)
{
    printf("CS %u %s %s%s%s\n", me.rank, step, verdict, detail[0] ? " " : "", detail);
    fflush(stdout);
}

static int connect2(pmix_status_t *out, bool timeout)
{
    pmix_proc_t procs[2];
    pmix_info_t info;
    uint32_t secs = 1;
    PMIX_LOAD_PROCID(&procs[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&procs[1], me.nspace, 1);
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &secs, PMIX_UINT32);
    *out = PMIx_Connect(procs, 2, timeout ? &info : NULL, timeout ? 1 : 0);
    return 0;
}

int main(int argc, char **argv)
{
    pmix_status_t rc;
    pmix_proc_t wild;
    char detail[512];

    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    snprintf(detail, sizeof(detail), "%s:%u", me.nspace, me.rank);
    say("init", "OK", detail);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);

    for (int i = 1; i < argc; i++) {
        const char *step = argv[i];
        if (0 == strcmp(step, "connect") || 0 == strcmp(step, "disconnect")) {
            rc = ('c' == step[0]) ? PMIx_Connect(&wild, 1, NULL, 0)
                                  : PMIx_Disconnect(&wild, 1, NULL, 0);
            snprintf(detail, sizeof(detail), "status=%d %s", rc, PMIx_Error_string(rc));
            say(step, PMIX_SUCCESS == rc ? "OK" : "FAIL", PMIX_SUCCESS == rc ? "" : detail);
            if (PMIX_SUCCESS != rc) {
                return 1;
            }
        } else if (0 == strcmp(step, "connect-timeout")) {
            if (0 != me.rank) {
                usleep(2500 * 1000);
                continue;
            }
            connect2(&rc, true);
            snprintf(detail, sizeof(detail), "status=%d %s", rc, PMIx_Error_string(rc));
            say(step, PMIX_ERR_TIMEOUT == rc ? "OK" : "FAIL", detail);
            if (PMIX_ERR_TIMEOUT != rc) {
                return 1;
            }
        } else if (0 == strcmp(step, "connect-lost-halt")) {
            if (0 != me.rank) {
                /* long enough for a JVM rank 0 to start and be waiting in its connect */
                usleep(3000 * 1000);
                _exit(0);
            }
            connect2(&rc, false);
            snprintf(detail, sizeof(detail), "status=%d %s", rc, PMIx_Error_string(rc));
            say(step, PMIX_SUCCESS != rc ? "OK" : "FAIL", detail);
            if (PMIX_SUCCESS == rc) {
                return 1;
            }
        } else if (0 == strcmp(step, "spawn") && i + 2 < argc) {
            int n = atoi(argv[i + 1]);
            char **cmd = &argv[i + 2];
            i = argc;
            if (0 != me.rank) {
                continue;
            }
            pmix_app_t app;
            pmix_nspace_t child;
            pmix_proc_t cw;
            pmix_value_t *val = NULL;
            pmix_info_t opt;
            bool yes = true;
            PMIX_APP_CONSTRUCT(&app);
            app.cmd = strdup(cmd[0]);
            int argcount = 0;
            while (NULL != cmd[argcount]) {
                argcount++;
            }
            app.argv = calloc(argcount + 1, sizeof(char *));
            for (int k = 0; k < argcount; k++) {
                app.argv[k] = strdup(cmd[k]);
            }
            app.maxprocs = n;
            rc = PMIx_Spawn(NULL, 0, &app, 1, child);
            if (PMIX_SUCCESS != rc) {
                snprintf(detail, sizeof(detail), "status=%d %s", rc, PMIx_Error_string(rc));
                say(step, "FAIL", detail);
                return 1;
            }
            PMIX_LOAD_PROCID(&cw, child, PMIX_RANK_WILDCARD);
            PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
            rc = PMIx_Get(&cw, PMIX_JOB_SIZE, &opt, 1, &val);
            if (PMIX_SUCCESS != rc || NULL == val) {
                snprintf(detail, sizeof(detail), "nspace=%s get status=%d %s", child, rc,
                         PMIx_Error_string(rc));
                say(step, "FAIL", detail);
                return 1;
            }
            snprintf(detail, sizeof(detail), "nspace=%s job.size=%u", child, val->data.uint32);
            say(step, "OK", detail);
            PMIX_VALUE_RELEASE(val);
            PMIX_APP_DESTRUCT(&app);
        } else {
            fprintf(stderr, "unknown step %s\n", step);
            return 2;
        }
    }
    rc = PMIx_Finalize(NULL, 0);
    say("finalize", PMIX_SUCCESS == rc ? "OK" : "FAIL", "");
    return PMIX_SUCCESS == rc ? 0 : 1;
}
