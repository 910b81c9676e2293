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
 * Lifecycle modes (docs/lifecycle.md). A "sync=<name>" line means the program waits
 * for a line on stdin (or EOF) before going on, so the test can look at the server meanwhile.
 *   clone-parent-first, clone-child-first, clone-dies
 *              after init, fork and exec this program as "clone-child": a clone using the same
 *              namespace and rank. The parent finalizes first, the clone first, or the clone
 *              exits without finalizing (sync=child_dead after the parent reaped it; the parent
 *              then commits, fences alone and finalizes). Exit status: the clone's, else ours.
 *   reinit-race
 *              finalize while keeping the old socket open (shutdown() is intercepted and the
 *              descriptor duplicated), init again (sync=reinit: the new connection exists while
 *              the old one is still open), close the old socket (sync=closed), finalize
 *   finalize-race
 *              three ranks. All put, commit and fence; rank 0 then commits test.late, finalizes,
 *              inits again, commits test.second and enters a second fence; rank 1 gets
 *              test.late (waiting for it) and test.never (rank 0 never commits it), prints
 *              late=, never=<status> and never_ms=; ranks 1 and 2 enter the second fence while
 *              rank 0 is between cycles. All print fence2_status= and second= (rank 0's value)
 *   cached-events
 *              two ranks. Rank 0 raises -31338 and -31339 for rank 1 only (PMIX_RANGE_CUSTOM)
 *              before rank 1 registers for them. Rank 1 registers for -31338 (prints
 *              cached_event=), finalizes, inits again, registers for -31339 and waits a second
 *              (prints stale_event=, 0 when none came), then both fence and finalize
 *   hold       sync=held, then finalize (the test may deregister the namespace meanwhile)
 *   dmodex     sync=ready, then put test.loc (local), test.glob (global), test.rem (remote) and
 *              commit, sync=committed, then finalize (the test asks the server for the rank's
 *              data on the host's behalf before and after the commit, or kills it at ready)
 *   bad-fence  two ranks. Each fences over the other rank only, then over ("", WILDCARD) (a
 *              namespace no process has), then connects to ("", WILDCARD), each with
 *              PMIX_TIMEOUT 5 so that a server that waits gives a status too; prints
 *              others_fence=, empty_fence=, empty_connect= (the statuses). Then both connect
 *              naming rank 1 only, rank 1 half a second late: prints connect= and rank 1
 *              called_at=, rank 0 returned_at= (CLOCK_REALTIME, ns). Then a fence over the
 *              namespace as usual: fence=
 *   cycles N [T]
 *              N times: (init,) register for event -31340, put test.cycle=<i>, commit, fence
 *              with data (PMIX_TIMEOUT T seconds if given), get test.cycle of every rank,
 *              finalize; no barrier but the fence. A
 *              rank's value must be i or i+1 (a faster peer may already have committed its next
 *              cycle; it cannot be further ahead, because that cycle's fence needs us). Prints
 *              cycles=N ahead=<how many reads saw i+1>
 *
 * Exit status 0 when every step succeeded, otherwise the number of the failed step.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
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
static volatile int event_code = 0;

/* reinit-race: libpmix closes its socket with shutdown() then close(). While hold_close is set,
 * the first shutdown() keeps the connection: the descriptor is duplicated and not shut down, so
 * the close that follows only drops libpmix's descriptor and the server sees no end of stream. */
static int hold_close = 0;
static int held_fd = -1;

int shutdown(int fd, int how)
{
    if (hold_close && held_fd < 0) {
        hold_close = 0;
        held_fd = dup(fd);
        return 0;
    }
    return (int) syscall(SYS_shutdown, fd, how);
}

/* prints sync=<name> and waits for a line on stdin (or its end) */
static void sync_point(const char *name)
{
    char buf[64];
    printf("sync=%s\n", name);
    fflush(stdout);
    if (NULL == fgets(buf, sizeof buf, stdin)) {
        return;
    }
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long) ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void code_handler(size_t evhdlr_registration_id, pmix_status_t status,
                         const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                         pmix_info_t results[], size_t nresults,
                         pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) evhdlr_registration_id;
    (void) source;
    (void) info;
    (void) ninfo;
    (void) results;
    (void) nresults;
    event_code = (int) status;
    if (NULL != cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

/* registers for one code and waits up to ms milliseconds for it; returns the code seen or 0 */
static int wait_for_event(int step, pmix_status_t code, int ms)
{
    pmix_status_t rc;
    int i;
    event_code = 0;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, code_handler, NULL, NULL);
    if (rc < 0) {
        fprintf(stderr, "rank %u: register %d failed: %d\n", me.rank, (int) code, (int) rc);
        exit(step);
    }
    for (i = 0; i < ms / 10 && 0 == event_code; i++) {
        usleep(10000);
    }
    return event_code;
}

static void notify_rank(int step, pmix_status_t code, pmix_rank_t target)
{
    pmix_info_t *iptr;
    pmix_data_array_t darray;
    pmix_proc_t tgt;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&tgt, me.nspace, target);
    darray.type = PMIX_PROC;
    darray.size = 1;
    darray.array = &tgt;
    PMIX_INFO_CREATE(iptr, 1);
    PMIX_INFO_LOAD(&iptr[0], PMIX_EVENT_CUSTOM_RANGE, &darray, PMIX_DATA_ARRAY);
    rc = PMIx_Notify_event(code, &me, PMIX_RANGE_CUSTOM, iptr, 1, NULL, NULL);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "rank %u: notify %d failed: %d\n", me.rank, (int) code, (int) rc);
        exit(step);
    }
}

static void put_u32(int step, const char *key, uint32_t value)
{
    pmix_value_t v;
    pmix_status_t rc;
    v.type = PMIX_UINT32;
    v.data.uint32 = value;
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    CHECK(step, rc, key);
    rc = PMIx_Commit();
    CHECK(step, rc, "commit");
}

static pmix_status_t get_u32(pmix_rank_t r, const char *key, uint32_t tmo, uint32_t *out)
{
    pmix_proc_t p;
    pmix_info_t info;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    PMIX_LOAD_PROCID(&p, me.nspace, r);
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &tmo, PMIX_UINT32);
    rc = PMIx_Get(&p, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS == rc) {
        *out = PMIX_UINT32 == v->type ? v->data.uint32 : 0;
        PMIX_VALUE_RELEASE(v);
    }
    return rc;
}

static pmix_status_t fence_collect(void)
{
    pmix_info_t info;
    bool yes = true;
    pmix_status_t rc;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Collectives the caller is not part of, each bounded by PMIX_TIMEOUT; then good ones. */
static int bad_fence(void)
{
    pmix_proc_t other, empty, one;
    pmix_info_t info;
    uint32_t tmo = 5;
    pmix_status_t rc;
    PMIX_LOAD_PROCID(&other, me.nspace, 1 - me.rank);
    PMIX_LOAD_PROCID(&one, me.nspace, 1);
    memset(&empty, 0, sizeof empty);
    empty.rank = PMIX_RANK_WILDCARD;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &tmo, PMIX_UINT32);
    rc = PMIx_Fence(&other, 1, &info, 1);
    printf("others_fence=%d\n", (int) rc);
    rc = PMIx_Fence(&empty, 1, &info, 1);
    printf("empty_fence=%d\n", (int) rc);
    rc = PMIx_Connect(&empty, 1, &info, 1);
    printf("empty_connect=%d\n", (int) rc);
    if (1 == me.rank) {
        usleep(500000);
        printf("called_at=%lld\n", now_ns());
    }
    rc = PMIx_Connect(&one, 1, &info, 1);
    if (0 == me.rank) {
        printf("returned_at=%lld\n", now_ns());
    }
    printf("connect=%d\n", (int) rc);
    PMIX_INFO_DESTRUCT(&info);
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    printf("fence=%d\n", (int) rc);
    rc = PMIx_Finalize(NULL, 0);
    CHECK(90, rc, "PMIx_Finalize");
    printf("done\n");
    return 0;
}

/* the clone: same namespace and rank as its parent, its own connection */
static int clone_child(const char *order, int rfd, int wfd)
{
    pmix_status_t rc;
    char c;
    rc = PMIx_Init(&me, NULL, 0);
    CHECK(20, rc, "clone PMIx_Init");
    put_u32(21, "test.clone", 4242);
    if (1 != write(wfd, "R", 1)) {
        exit(22);
    }
    if (0 == strcmp(order, "dies")) {
        if (1 != read(rfd, &c, 1)) {
            exit(23);
        }
        _exit(7); /* no finalize: an abnormal termination */
    }
    if (0 == strcmp(order, "parent-first")) {
        if (1 != read(rfd, &c, 1)) { /* the parent finalized */
            exit(24);
        }
    }
    rc = PMIx_Finalize(NULL, 0);
    CHECK(25, rc, "clone PMIx_Finalize");
    if (1 != write(wfd, "D", 1)) {
        exit(26);
    }
    return 0;
}

static int clone_parent(const char *order)
{
    int p2c[2], c2p[2], st;
    pid_t pid;
    char c, a[16], b[16];
    pmix_status_t rc;

    if (0 != pipe(p2c) || 0 != pipe(c2p)) {
        exit(30);
    }
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        exit(31);
    }
    if (0 == pid) {
        close(p2c[1]);
        close(c2p[0]);
        snprintf(a, sizeof a, "%d", p2c[0]);
        snprintf(b, sizeof b, "%d", c2p[1]);
        execl("/proc/self/exe", "server_it_client", "clone-child", order, a, b, (char *) NULL);
        _exit(99);
    }
    close(p2c[0]);
    close(c2p[1]);
    if (1 != read(c2p[0], &c, 1)) { /* the clone is initialized */
        exit(32);
    }
    printf("clone_ready\n");
    fflush(stdout);
    if (0 == strcmp(order, "parent-first")) {
        rc = PMIx_Finalize(NULL, 0);
        CHECK(33, rc, "parent PMIx_Finalize");
        printf("parent_finalized\n");
        fflush(stdout);
        if (1 != write(p2c[1], "F", 1) || 1 != read(c2p[0], &c, 1)) {
            exit(34);
        }
        waitpid(pid, &st, 0);
        printf("done\n");
        return WIFEXITED(st) ? WEXITSTATUS(st) : 35;
    }
    if (0 == strcmp(order, "child-first")) {
        if (1 != read(c2p[0], &c, 1)) {
            exit(36);
        }
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || 0 != WEXITSTATUS(st)) {
            exit(37);
        }
        put_u32(38, "test.parent", 1);
        rc = PMIx_Finalize(NULL, 0);
        CHECK(39, rc, "parent PMIx_Finalize");
        printf("done\n");
        return 0;
    }
    /* dies */
    if (1 != write(p2c[1], "G", 1)) {
        exit(40);
    }
    waitpid(pid, &st, 0);
    printf("child_status=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    sync_point("child_dead");
    put_u32(41, "test.parent", 2);
    {
        pmix_proc_t self;
        PMIX_LOAD_PROCID(&self, me.nspace, me.rank);
        rc = PMIx_Fence(&self, 1, NULL, 0);
        CHECK(42, rc, "fence with myself");
    }
    rc = PMIx_Finalize(NULL, 0);
    CHECK(43, rc, "parent PMIx_Finalize");
    printf("done\n");
    return 0;
}

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
    if (0 == strcmp(mode, "clone-child") && argc > 4) {
        return clone_child(argv[2], atoi(argv[3]), atoi(argv[4]));
    }
    rc = PMIx_Init(&me, NULL, 0);
    CHECK(10, rc, "PMIx_Init");
    printf("nspace=%s\nrank=%u\n", me.nspace, me.rank);

    if (0 == strncmp(mode, "clone-", 6)) {
        return clone_parent(mode + 6);
    }
    if (0 == strcmp(mode, "dmodex")) {
        sync_point("ready");
        put_commit(40);
        sync_point("committed");
        rc = PMIx_Finalize(NULL, 0);
        CHECK(90, rc, "PMIx_Finalize");
        printf("done\n");
        return 0;
    }
    if (0 == strcmp(mode, "hold")) {
        sync_point("held");
        rc = PMIx_Finalize(NULL, 0);
        printf("finalize=%d\n", (int) rc);
        return 0;
    }
    if (0 == strcmp(mode, "reinit-race")) {
        hold_close = 1;
        rc = PMIx_Finalize(NULL, 0);
        CHECK(11, rc, "PMIx_Finalize 1");
        if (held_fd < 0) {
            fprintf(stderr, "the socket close was not intercepted\n");
            exit(14);
        }
        rc = PMIx_Init(&me, NULL, 0);
        CHECK(12, rc, "PMIx_Init 2");
        sync_point("reinit");
        close(held_fd);
        sync_point("closed");
        rc = PMIx_Finalize(NULL, 0);
        CHECK(13, rc, "PMIx_Finalize 2");
        printf("done\n");
        return 0;
    }
    if (0 == strcmp(mode, "cached-events")) {
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(15, rc, "fence A");
        if (0 == me.rank) {
            notify_rank(16, -31338, 1);
            notify_rank(16, -31339, 1);
        }
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(17, rc, "fence B");
        if (1 == me.rank) {
            printf("cached_event=%d\n", wait_for_event(18, -31338, 5000));
            rc = PMIx_Finalize(NULL, 0);
            CHECK(19, rc, "PMIx_Finalize 1");
            rc = PMIx_Init(&me, NULL, 0);
            CHECK(20, rc, "PMIx_Init 2");
            printf("stale_event=%d\n", wait_for_event(21, -31339, 1000));
        }
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(22, rc, "fence C");
        rc = PMIx_Finalize(NULL, 0);
        CHECK(90, rc, "PMIx_Finalize");
        printf("done\n");
        return 0;
    }
    if (0 == strcmp(mode, "cycles")) {
        int n = argc > 2 ? atoi(argv[2]) : 10, i, ahead = 0;
        uint32_t tmo = argc > 3 ? (uint32_t) atoi(argv[3]) : 0;
        pmix_status_t ev = -31340;
        for (i = 0; i < n; i++) {
            uint32_t size, r, u;
            if (i > 0) {
                rc = PMIx_Init(&me, NULL, 0);
                CHECK(100, rc, "PMIx_Init");
            }
            rc = PMIx_Register_event_handler(&ev, 1, NULL, 0, code_handler, NULL, NULL);
            if (rc < 0) {
                CHECK(101, rc, "register event handler");
            }
            PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
            rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
            CHECK(102, rc, "get job size");
            size = v->data.uint32;
            PMIX_VALUE_RELEASE(v);
            put_u32(103, "test.cycle", (uint32_t) i);
            if (0 < tmo) {
                pmix_info_t fi[2];
                bool yes = true;
                PMIX_INFO_LOAD(&fi[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
                PMIX_INFO_LOAD(&fi[1], PMIX_TIMEOUT, &tmo, PMIX_UINT32);
                rc = PMIx_Fence(NULL, 0, fi, 2);
            } else {
                rc = fence_collect();
            }
            if (PMIX_SUCCESS != rc) {
                printf("cycle=%d fence_status=%d\n", i, (int) rc);
                exit(104);
            }
            for (r = 0; r < size; r++) {
                rc = get_u32(r, "test.cycle", 10, &u);
                if (PMIX_SUCCESS != rc) {
                    printf("cycle=%d get_rank=%u status=%d\n", i, r, (int) rc);
                    exit(105);
                }
                if (u != (uint32_t) i && u != (uint32_t) i + 1) {
                    printf("cycle=%d rank=%u value=%u\n", i, r, u);
                    exit(106);
                }
                ahead += u == (uint32_t) i + 1;
            }
            rc = PMIx_Finalize(NULL, 0);
            CHECK(107, rc, "PMIx_Finalize");
        }
        printf("cycles=%d\nahead=%d\n", n, ahead);
        return 0;
    }
    if (0 == strcmp(mode, "finalize-race")) {
        uint32_t u = 0;
        put_u32(30, "test.first", 100 + me.rank);
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(31, rc, "fence 1");
        if (0 == me.rank) {
            usleep(300000); /* rank 1 is waiting for test.late by now */
            put_u32(32, "test.late", 777);
            rc = PMIx_Finalize(NULL, 0);
            CHECK(33, rc, "PMIx_Finalize 1");
            usleep(200000); /* ranks 1 and 2 are in the second fence by now */
            rc = PMIx_Init(&me, NULL, 0);
            CHECK(34, rc, "PMIx_Init 2");
            put_u32(35, "test.second", 888);
        } else if (1 == me.rank) {
            long t0;
            rc = get_u32(0, "test.late", 20, &u);
            CHECK(36, rc, "get test.late");
            printf("late=%u\n", u);
            t0 = now_ms();
            rc = get_u32(0, "test.never", 20, &u);
            printf("never=%d\nnever_ms=%ld\n", (int) rc, now_ms() - t0);
        }
        rc = fence_collect();
        printf("fence2_status=%d\n", (int) rc);
        CHECK(37, rc, "fence 2");
        rc = get_u32(0, "test.second", 10, &u);
        CHECK(38, rc, "get test.second");
        printf("second=%u\n", u);
        rc = PMIx_Finalize(NULL, 0);
        CHECK(90, rc, "PMIx_Finalize");
        printf("done\n");
        return 0;
    }

    if (0 == strcmp(mode, "bad-fence")) {
        return bad_fence();
    }
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
