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
 *   spawn-connect N CMD...    (last step, one-process job) spawn with CS_PEER_NS=<own nspace>
 *                             in the child's environment, then connect-peer with the child
 *   connect-peer              connect the own namespace with $CS_PEER_NS, read its job size
 *                             with PMIX_OPTIONAL, disconnect, say whether its data was dropped
 *   spawn-reqd CMD            rank 0 spawns one CMD with pmix.bindto=core flagged PMIX_INFO_REQD:
 *                             passes when the spawn fails (prints the status)
 *   spawn-apps NA CMDA... + NB CMDB...
 *                             (last step) rank 0 spawns both apps in one PMIx_Spawn (CS_APP=A /
 *                             CS_APP=B, app B in cwd "/", step app-info appended to each) with
 *                             pmix.mapby/rankby slot and pmix.bindto none; prints the
 *                             child's job size and app 1's pmix.app.size (appnum qualifier)
 *   app-info                  prints pmix.appnum, pmix.apprank, pmix.app.size, the job size,
 *                             $CS_APP, the working directory and lang=c. App keys are asked of
 *                             rank WILDCARD: libpmix 4.2.2 looks a valid rank's keys up in that
 *                             rank's own data only, and answers app keys for WILDCARD from the
 *                             app array of the caller's pmix.appnum (or a PMIX_APPNUM qualifier)
 *   app-all                   prints every rank's pmix.appnum:pmix.apprank (asked of that rank)
 *                             and every app's pmix.app.size@pmix.aldr (rank WILDCARD with a
 *                             PMIX_APPNUM qualifier), and the own pmix.lpeers: what every rank
 *                             of a job must see alike (C only)
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

/* Connects the own namespace with peer (both whole), reads the peer's job size with
 * PMIX_OPTIONAL (held locally only after the connect reply), disconnects, and tells whether the
 * peer's job data is gone ("dropped", the hash GDS) or not ("kept", a shared-memory GDS). */
static int connect_peer(const char *peer)
{
    pmix_proc_t both[2];
    pmix_info_t opt;
    bool yes = true;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    char detail[512];

    PMIX_LOAD_PROCID(&both[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&both[1], peer, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    rc = PMIx_Connect(both, 2, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        snprintf(detail, sizeof(detail), "connect status=%d %s", rc, PMIx_Error_string(rc));
        say("connect-peer", "FAIL", detail);
        return 1;
    }
    rc = PMIx_Get(&both[1], PMIX_JOB_SIZE, &opt, 1, &val);
    if (PMIX_SUCCESS != rc || NULL == val) {
        snprintf(detail, sizeof(detail), "peer=%s get status=%d %s", peer, rc, PMIx_Error_string(rc));
        say("connect-peer", "FAIL", detail);
        return 1;
    }
    snprintf(detail, sizeof(detail), "peer=%s peer.size=%u", peer, val->data.uint32);
    PMIX_VALUE_RELEASE(val);
    say("connect-peer", "OK", detail);
    rc = PMIx_Disconnect(both, 2, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        snprintf(detail, sizeof(detail), "disconnect status=%d %s", rc, PMIx_Error_string(rc));
        say("disconnect-peer", "FAIL", detail);
        return 1;
    }
    val = NULL;
    rc = PMIx_Get(&both[1], PMIX_JOB_SIZE, &opt, 1, &val);
    if (PMIX_SUCCESS == rc) {
        /* what a client on a shared-memory GDS (ds21, mpirun's default) sees: the server's
         * segment still has it; with the hash GDS the disconnect dropped it */
        PMIX_VALUE_RELEASE(val);
        say("disconnect-peer", "OK", "kept");
        return 0;
    }
    snprintf(detail, sizeof(detail), "dropped status=%d", rc);
    say("disconnect-peer", "OK", detail);
    return 0;
}

/* A uint32/rank-valued key of proc (own rank or WILDCARD), with info; -1 if absent. */
static long get_num(const pmix_proc_t *proc, const char *key, const pmix_info_t *info, size_t ninfo)
{
    pmix_value_t *val = NULL;
    long out = -1;
    if (PMIX_SUCCESS != PMIx_Get(proc, key, info, ninfo, &val) || NULL == val) {
        return -1;
    }
    if (PMIX_UINT32 == val->type) {
        out = val->data.uint32;
    } else if (PMIX_PROC_RANK == val->type) {
        out = val->data.rank;
    } else if (PMIX_UINT16 == val->type) {
        out = val->data.uint16;
    }
    PMIX_VALUE_RELEASE(val);
    return out;
}

/* Fills app from "N CMD ARGS..." (cmd[0..count)), appending the step app-info. */
static void make_app(pmix_app_t *app, char **cmd, int count, const char *label, const char *cwd)
{
    char envvar[32];
    PMIX_APP_CONSTRUCT(app);
    app->maxprocs = atoi(cmd[0]);
    app->cmd = strdup(cmd[1]);
    app->argv = calloc(count + 1, sizeof(char *));
    for (int k = 1; k < count; k++) {
        app->argv[k - 1] = strdup(cmd[k]);
    }
    app->argv[count - 1] = strdup("app-info");
    snprintf(envvar, sizeof(envvar), "CS_APP=%s", label);
    app->env = calloc(2, sizeof(char *));
    app->env[0] = strdup(envvar);
    if (NULL != cwd) {
        app->cwd = strdup(cwd);
    }
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
            char marker[4096];
            const char *dir = getenv("PMIX_SERVER_TMPDIR");
            snprintf(marker, sizeof(marker), "%s/cs-%s.connecting", dir ? dir : "/tmp", me.nspace);
            if (0 != me.rank) {
                /* vanish once rank 0 waits in its connect: it drops the marker just before
                 * (same name as ConnectSpawnMain's); then a second more */
                for (int k = 0; k < 3000 && 0 != access(marker, F_OK); k++) {
                    usleep(20 * 1000);
                }
                usleep(1000 * 1000);
                _exit(0);
            }
            FILE *f = fopen(marker, "w");
            if (NULL != f) {
                fclose(f);
            }
            connect2(&rc, false);
            unlink(marker);
            snprintf(detail, sizeof(detail), "status=%d %s", rc, PMIx_Error_string(rc));
            say(step, PMIX_SUCCESS != rc ? "OK" : "FAIL", detail);
            if (PMIX_SUCCESS == rc) {
                return 1;
            }
        } else if (0 == strcmp(step, "connect-peer")) {
            const char *peer = getenv("CS_PEER_NS");
            if (NULL == peer) {
                say(step, "FAIL", "CS_PEER_NS is not set");
                return 1;
            }
            /* who spawned us, if the host says (PMIX_PARENT_ID in the job data) */
            pmix_value_t *pv = NULL;
            if (PMIX_SUCCESS == (rc = PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &pv))
                && PMIX_PROC == pv->type) {
                snprintf(detail, sizeof(detail), "%s:%u", pv->data.proc->nspace,
                         pv->data.proc->rank);
                PMIX_VALUE_RELEASE(pv);
            } else {
                snprintf(detail, sizeof(detail), "none (%s)", PMIx_Error_string(rc));
            }
            say("parent", "OK", detail);
            if (0 != connect_peer(peer)) {
                return 1;
            }
        } else if ((0 == strcmp(step, "spawn") || 0 == strcmp(step, "spawn-connect"))
                   && i + 2 < argc) {
            bool then_connect = (0 == strcmp(step, "spawn-connect"));
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
            if (then_connect) {
                char envvar[PMIX_MAX_NSLEN + 16];
                snprintf(envvar, sizeof(envvar), "CS_PEER_NS=%s", me.nspace);
                app.env = calloc(2, sizeof(char *));
                app.env[0] = strdup(envvar);
            }
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
            say("spawn", "OK", detail);
            PMIX_VALUE_RELEASE(val);
            PMIX_APP_DESTRUCT(&app);
            if (then_connect && 0 != connect_peer(child)) {
                return 1;
            }
        } else if (0 == strcmp(step, "spawn-reqd") && i + 1 < argc) {
            const char *cmd = argv[++i];
            if (0 != me.rank) {
                continue;
            }
            pmix_app_t app;
            pmix_info_t reqd;
            pmix_nspace_t child;
            PMIX_APP_CONSTRUCT(&app);
            app.cmd = strdup(cmd);
            app.argv = calloc(2, sizeof(char *));
            app.argv[0] = strdup(cmd);
            app.maxprocs = 1;
            PMIX_INFO_LOAD(&reqd, PMIX_BINDTO, "core", PMIX_STRING);
            PMIX_INFO_REQUIRED(&reqd);
            rc = PMIx_Spawn(&reqd, 1, &app, 1, child);
            snprintf(detail, sizeof(detail), "status=%d %s", rc, PMIx_Error_string(rc));
            say(step, PMIX_SUCCESS != rc ? "OK" : "FAIL", detail);
            PMIX_INFO_DESTRUCT(&reqd);
            PMIX_APP_DESTRUCT(&app);
            if (PMIX_SUCCESS == rc) {
                return 1;
            }
        } else if (0 == strcmp(step, "spawn-apps")) {
            int plus = -1;
            for (int k = i + 1; k < argc; k++) {
                if (0 == strcmp(argv[k], "+")) {
                    plus = k;
                    break;
                }
            }
            if (plus < i + 3 || plus + 2 >= argc) {
                say(step, "FAIL", "spawn-apps NA CMDA... + NB CMDB...");
                return 1;
            }
            int first = i + 1;
            i = argc;
            if (0 != me.rank) {
                continue;
            }
            pmix_app_t apps[2];
            pmix_info_t dirs[3];
            pmix_info_t q[2];
            pmix_nspace_t child;
            pmix_proc_t cw;
            bool yes = true;
            uint32_t one = 1;
            make_app(&apps[0], &argv[first], plus - first, "A", NULL);
            make_app(&apps[1], &argv[plus + 1], argc - plus - 1, "B", "/");
            PMIX_INFO_LOAD(&dirs[0], PMIX_MAPBY, "slot", PMIX_STRING);
            PMIX_INFO_LOAD(&dirs[1], PMIX_RANKBY, "slot", PMIX_STRING);
            PMIX_INFO_LOAD(&dirs[2], PMIX_BINDTO, "none", PMIX_STRING);
            rc = PMIx_Spawn(dirs, 3, apps, 2, child);
            if (PMIX_SUCCESS != rc) {
                snprintf(detail, sizeof(detail), "status=%d %s", rc, PMIx_Error_string(rc));
                say(step, "FAIL", detail);
                return 1;
            }
            PMIX_LOAD_PROCID(&cw, child, PMIX_RANK_WILDCARD);
            PMIX_INFO_LOAD(&q[0], PMIX_OPTIONAL, &yes, PMIX_BOOL);
            PMIX_INFO_LOAD(&q[1], PMIX_APPNUM, &one, PMIX_UINT32);
            snprintf(detail, sizeof(detail), "nspace=%s job.size=%ld app1.size=%ld", child,
                     get_num(&cw, PMIX_JOB_SIZE, q, 1), get_num(&cw, PMIX_APP_SIZE, q, 2));
            say(step, "OK", detail);
            for (int k = 0; k < 3; k++) {
                PMIX_INFO_DESTRUCT(&dirs[k]);
            }
            PMIX_INFO_DESTRUCT(&q[0]);
            PMIX_INFO_DESTRUCT(&q[1]);
            PMIX_APP_DESTRUCT(&apps[0]);
            PMIX_APP_DESTRUCT(&apps[1]);
        } else if (0 == strcmp(step, "app-all")) {
            static char line[8192];
            size_t len = 0;
            long size = get_num(&wild, PMIX_JOB_SIZE, NULL, 0);
            long napps = get_num(&wild, PMIX_JOB_NUM_APPS, NULL, 0);
            len += snprintf(line + len, sizeof(line) - len, "napps=%ld ranks=", napps);
            for (long r = 0; r < size && len < sizeof(line) - 64; r++) {
                pmix_proc_t p;
                PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t) r);
                len += snprintf(line + len, sizeof(line) - len, "%s%ld:%ld", r ? "," : "",
                                get_num(&p, PMIX_APPNUM, NULL, 0), get_num(&p, PMIX_APP_RANK, NULL, 0));
            }
            len += snprintf(line + len, sizeof(line) - len, " apps=");
            for (long a = 0; a < napps && len < sizeof(line) - 64; a++) {
                pmix_info_t q;
                uint32_t an = (uint32_t) a;
                PMIX_INFO_LOAD(&q, PMIX_APPNUM, &an, PMIX_UINT32);
                len += snprintf(line + len, sizeof(line) - len, "%s%ld@%ld", a ? "," : "",
                                get_num(&wild, PMIX_APP_SIZE, &q, 1), get_num(&wild, PMIX_APPLDR, &q, 1));
                PMIX_INFO_DESTRUCT(&q);
            }
            pmix_value_t *peers = NULL;
            if (PMIX_SUCCESS == PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &peers) && NULL != peers
                && PMIX_STRING == peers->type) {
                snprintf(line + len, sizeof(line) - len, " lpeers=%.200s", peers->data.string);
            }
            if (NULL != peers) {
                PMIX_VALUE_RELEASE(peers);
            }
            say(step, "OK", line);
        } else if (0 == strcmp(step, "app-info")) {
            char cwd[4096];
            const char *label = getenv("CS_APP");
            if (NULL == getcwd(cwd, sizeof(cwd))) {
                strcpy(cwd, "?");
            }
            snprintf(detail, sizeof(detail),
                     "appnum=%ld apprank=%ld app.size=%ld job.size=%ld app=%.32s cwd=%.300s lang=c",
                     get_num(&me, PMIX_APPNUM, NULL, 0), get_num(&me, PMIX_APP_RANK, NULL, 0),
                     get_num(&wild, PMIX_APP_SIZE, NULL, 0), get_num(&wild, PMIX_JOB_SIZE, NULL, 0),
                     NULL != label ? label : "null", cwd);
            say(step, "OK", detail);
        } else {
            fprintf(stderr, "unknown step %s\n", step);
            return 2;
        }
    }
    rc = PMIx_Finalize(NULL, 0);
    say("finalize", PMIX_SUCCESS == rc ? "OK" : "FAIL", "");
    return PMIX_SUCCESS == rc ? 0 : 1;
}
