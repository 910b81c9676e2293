/*
 * gds_client.c -- a libpmix 4.2.2 client for DstoreReaderIT: it puts values
 * of many types in every scope, commits (twice for keys it replaces),
 * fences with data collection, then prints what PMIx_Get answers for the
 * job-level keys, its peers' rank-level keys and every key its peers put,
 * each value packed with PMIx_Data_pack (as hex), so that the test can
 * compare the Java reader's view of the shared-memory store with the C
 * client's, byte for byte. Then it waits for the test before finalizing, so
 * the segments stay in place while the test reads them.
 *
 * Usage: gds_client --ranks K --dir DIR [--bulk N] [--rounds R]
 *   Ranks >= K do not call PMIx at all: they wait like the others and exit
 *   (the test process takes such a rank's place as a reader, and its ds21
 *   lock slot). The K PMIx ranks fence among themselves.
 *   --bulk N   also put N GLOBAL keys "test.bulk.<i>" of 200 bytes each
 *              (to make the store grow beyond one data segment)
 *   --rounds R after READY, R rounds of more commits, each started by the
 *              test (the file DIR/go.<i>): rank 0 in every round, the
 *              others in even rounds only, put "test.round.<i>" = "round <i>
 *              of rank <r>", "test.grow" = 10 + 7 i times 'g' (another size:
 *              invalidated and appended) and "test.same" = "c<i>" in 4
 *              characters (the same size: overwritten in place), commit;
 *              then all fence with data collection, print the GET lines
 *              of every peer's "test.round.<j>" (j <= i, those it put),
 *              "test.grow" and "test.same", then "ROUND <rank> <i>"
 *
 * Output (stdout, one line each):
 *   ENV <rank> <NAME>=<value>        the gds variables of the environment
 *   PUT <rank> <key> <scope>         what this rank put (LOCAL GLOBAL REMOTE)
 *   GET <rank> <target> <key> <status> <hex>
 *                                    target is "wild" or a rank; hex is the
 *                                    value packed as one PMIX_VALUE ("-" if
 *                                    the get failed)
 *   READY <rank>                     all of the above printed
 * Then it waits (at most 120 s) for the file DIR/release, finalizes and
 * exits 0; any PMIx failure except a get's is exit 1.
 *
 * Build: gcc -O1 -g -Wall -o gds_client gds_client.c $(pkg-config --cflags --libs pmix)
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static int myrank;

static const char *JOB_KEYS[] = {
    PMIX_JOB_SIZE, PMIX_MAX_PROCS, PMIX_NUM_NODES, PMIX_JOB_NUM_APPS, PMIX_NSPACE,
    PMIX_JOBID, PMIX_NODE_LIST, "pmix.bfrops.mod", PMIX_NODE_SIZE, PMIX_LOCAL_PEERS,
    PMIX_LOCALLDR, PMIX_LOCAL_SIZE, PMIX_PROC_DATA, PMIX_UNIV_SIZE, PMIX_TMPDIR,
    PMIX_APP_SIZE, PMIX_APPLDR, PMIX_WDIR, PMIX_NUM_SLOTS, NULL};

static const char *RANK_KEYS[] = {
    PMIX_APPNUM, PMIX_LOCAL_RANK, PMIX_NODE_RANK, PMIX_NODEID, PMIX_HOSTNAME,
    PMIX_GLOBAL_RANK, PMIX_APP_RANK, NULL};

static void hexprint(const char *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        printf("%02x", (unsigned char) bytes[i]);
    }
}

static void print_get(const pmix_proc_t *target, const char *key)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(target, key, NULL, 0, &val);
    char who[32];
    if (PMIX_RANK_WILDCARD == target->rank) {
        snprintf(who, sizeof(who), "wild");
    } else {
        snprintf(who, sizeof(who), "%u", target->rank);
    }
    printf("GET %d %s %s %d ", myrank, who, key, rc);
    if (PMIX_SUCCESS == rc && NULL != val) {
        pmix_data_buffer_t buf;
        PMIX_DATA_BUFFER_CONSTRUCT(&buf);
        pmix_status_t prc = PMIx_Data_pack(NULL, &buf, val, 1, PMIX_VALUE);
        if (PMIX_SUCCESS == prc) {
            hexprint(buf.base_ptr, buf.bytes_used);
        } else {
            printf("pack-failed-%d", prc);
        }
        PMIX_DATA_BUFFER_DESTRUCT(&buf);
        PMIX_VALUE_RELEASE(val);
    } else {
        printf("-");
    }
    printf("\n");
}

/* The keys every rank puts: name, scope, and how to build the value. */
#define NKEYS 20
static char names[NKEYS][64];

static void put(int i, const char *name, pmix_scope_t scope, const void *data,
                pmix_data_type_t type)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    if (PMIX_SUCCESS != PMIx_Value_load(&v, data, type)) {
        fprintf(stderr, "value load %s failed\n", name);
        exit(1);
    }
    pmix_status_t rc = PMIx_Put(scope, name, &v);
    PMIX_VALUE_DESTRUCT(&v);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "put %s failed: %s\n", name, PMIx_Error_string(rc));
        exit(1);
    }
    if (i >= 0) {
        snprintf(names[i], sizeof(names[i]), "%s", name);
    }
    printf("PUT %d %s %s\n", myrank, name,
           scope == PMIX_LOCAL ? "LOCAL" : scope == PMIX_REMOTE ? "REMOTE" : "GLOBAL");
}

static void commit(void)
{
    pmix_status_t rc = PMIx_Commit();
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "commit failed: %s\n", PMIx_Error_string(rc));
        exit(1);
    }
}

static int nput;

static void put_all(int r, int bulk)
{
    char s[128];
    int k = 0;
    snprintf(s, sizeof(s), "str-%d", r);
    put(k++, "test.str", PMIX_GLOBAL, s, PMIX_STRING);
    bool b = (r % 2) == 0;
    put(k++, "test.bool", PMIX_LOCAL, &b, PMIX_BOOL);
    int8_t i8 = (int8_t) (-100 + r);
    put(k++, "test.i8", PMIX_GLOBAL, &i8, PMIX_INT8);
    int16_t i16 = (int16_t) (-30000 + r);
    put(k++, "test.i16", PMIX_LOCAL, &i16, PMIX_INT16);
    int32_t i32 = -2000000000 + r;
    put(k++, "test.i32", PMIX_GLOBAL, &i32, PMIX_INT32);
    int64_t i64 = -9000000000000000000LL + r;
    put(k++, "test.i64", PMIX_GLOBAL, &i64, PMIX_INT64);
    uint8_t u8 = (uint8_t) (250 + r);
    put(k++, "test.u8", PMIX_LOCAL, &u8, PMIX_UINT8);
    uint16_t u16 = (uint16_t) (65000 + r);
    put(k++, "test.u16", PMIX_GLOBAL, &u16, PMIX_UINT16);
    uint32_t u32 = 4000000000u + (uint32_t) r;
    put(k++, "test.u32", PMIX_REMOTE, &u32, PMIX_UINT32);
    uint64_t u64 = 18000000000000000000ULL + (uint64_t) r;
    put(k++, "test.u64", PMIX_GLOBAL, &u64, PMIX_UINT64);
    size_t sz = (size_t) 1 << 40 | (size_t) r;
    put(k++, "test.size", PMIX_LOCAL, &sz, PMIX_SIZE);
    double d = 3.25 + r;
    put(k++, "test.dbl", PMIX_GLOBAL, &d, PMIX_DOUBLE);
    float f = 1.5f + (float) r;
    put(k++, "test.flt", PMIX_REMOTE, &f, PMIX_FLOAT);
    pmix_byte_object_t bo;
    char bytes[9];
    for (int i = 0; i < 9; i++) {
        bytes[i] = (char) (i * 31 + r);
    }
    bo.bytes = bytes;
    bo.size = sizeof(bytes);
    put(k++, "test.bo", PMIX_GLOBAL, &bo, PMIX_BYTE_OBJECT);
    pmix_rank_t rk = (pmix_rank_t) r;
    put(k++, "test.rank", PMIX_GLOBAL, &rk, PMIX_PROC_RANK);
    pmix_status_t st = PMIX_ERR_TIMEOUT;
    put(k++, "test.status", PMIX_LOCAL, &st, PMIX_STATUS);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t) r);
    put(k++, "test.proc", PMIX_GLOBAL, &p, PMIX_PROC);
    uint32_t arr[3] = {1, 2, (uint32_t) r};
    pmix_data_array_t da = {.type = PMIX_UINT32, .size = 3, .array = arr};
    put(k++, "test.array", PMIX_GLOBAL, &da, PMIX_DATA_ARRAY);
    /* Replaced by a value of another size: libpmix invalidates the first record. */
    put(-1, "test.replace", PMIX_GLOBAL, "short", PMIX_STRING);
    /* Replaced by a value of the same size: libpmix overwrites it in place. */
    put(-1, "test.same", PMIX_GLOBAL, "aaaa", PMIX_STRING);
    commit();
    snprintf(s, sizeof(s), "a much longer value of rank %d", r);
    put(k++, "test.replace", PMIX_GLOBAL, s, PMIX_STRING);
    put(k++, "test.same", PMIX_GLOBAL, "bbbb", PMIX_STRING);
    nput = k;
    for (int i = 0; i < bulk; i++) {
        char name[64];
        char big[201];
        snprintf(name, sizeof(name), "test.bulk.%d", i);
        memset(big, 'a' + (i + r) % 26, 200);
        big[200] = '\0';
        put(-1, name, PMIX_GLOBAL, big, PMIX_STRING);
    }
    commit();
}

static void await_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct stat st;
    for (int i = 0; i < 12000; i++) {
        if (0 == stat(path, &st)) {
            return;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "no %s within 120 s\n", path);
    exit(1);
}

static void await_release(const char *dir)
{
    await_file(dir, "release");
}

static void fence_collecting(int ranks)
{
    pmix_proc_t *procs;
    PMIX_PROC_CREATE(procs, ranks);
    for (int r = 0; r < ranks; r++) {
        PMIX_LOAD_PROCID(&procs[r], me.nspace, (pmix_rank_t) r);
    }
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(procs, ranks, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    PMIX_PROC_FREE(procs, ranks);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "fence failed: %s\n", PMIx_Error_string(rc));
        exit(1);
    }
}

static void round_of_commits(const char *dir, int ranks, int i)
{
    char name[64], s[128], grow[128];
    snprintf(name, sizeof(name), "go.%d", i);
    await_file(dir, name);
    if (0 == myrank || 0 == i % 2) {
        snprintf(name, sizeof(name), "test.round.%d", i);
        snprintf(s, sizeof(s), "round %d of rank %d", i, myrank);
        put(-1, name, PMIX_GLOBAL, s, PMIX_STRING);
        memset(grow, 'g', 10 + 7 * i);
        grow[10 + 7 * i] = '\0';
        put(-1, "test.grow", PMIX_GLOBAL, grow, PMIX_STRING);
        snprintf(s, sizeof(s), "c%03d", i);
        put(-1, "test.same", PMIX_GLOBAL, s, PMIX_STRING);
        commit();
    }
    fence_collecting(ranks);
    for (int r = 0; r < ranks; r++) {
        if (r == myrank) {
            continue;
        }
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t) r);
        for (int j = 0; j <= i; j++) {
            if (0 != r && 0 != j % 2) {
                continue; /* never put: libpmix's get would wait for it */
            }
            snprintf(name, sizeof(name), "test.round.%d", j);
            print_get(&peer, name);
        }
        print_get(&peer, "test.grow");
        print_get(&peer, "test.same");
    }
    printf("ROUND %d %d\n", myrank, i);
}

int main(int argc, char **argv)
{
    int ranks = -1, bulk = 0, rounds = 0;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (0 == strcmp(argv[i], "--ranks") && i + 1 < argc) {
            ranks = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir = argv[++i];
        } else if (0 == strcmp(argv[i], "--bulk") && i + 1 < argc) {
            bulk = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: gds_client --ranks K --dir DIR [--bulk N] [--rounds R]\n");
            return 2;
        }
    }
    const char *rankenv = getenv("PMIX_RANK");
    if (ranks < 1 || NULL == dir || NULL == rankenv || rounds < 0 || rounds > 14) {
        fprintf(stderr, "usage: gds_client --ranks K --dir DIR [--bulk N] (under a server)\n");
        return 2;
    }
    myrank = atoi(rankenv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (myrank >= ranks) {
        /* The test reads in this rank's place. */
        await_release(dir);
        return 0;
    }
    const char *vars[] = {"PMIX_NAMESPACE", "PMIX_GDS_MODULE", "PMIX_DSTORE_21_BASE_PATH",
                          "PMIX_DSTORE_ESH_BASE_PATH", "PMIX_BFROP_BUFFER_TYPE", NULL};
    for (int i = 0; NULL != vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (NULL != v) {
            printf("ENV %d %s=%s\n", myrank, vars[i], v);
        }
    }
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    put_all(myrank, bulk);

    fence_collecting(ranks);

    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, me.nspace, PMIX_RANK_WILDCARD);
    for (int i = 0; NULL != JOB_KEYS[i]; i++) {
        print_get(&target, JOB_KEYS[i]);
    }
    for (int r = 0; r < ranks; r++) {
        PMIX_LOAD_PROCID(&target, me.nspace, (pmix_rank_t) r);
        for (int i = 0; NULL != RANK_KEYS[i]; i++) {
            print_get(&target, RANK_KEYS[i]);
        }
        for (int i = 0; i < nput; i++) {
            print_get(&target, names[i]);
        }
        for (int i = 0; i < bulk; i++) {
            char name[64];
            snprintf(name, sizeof(name), "test.bulk.%d", i);
            print_get(&target, name);
        }
    }
    printf("READY %d\n", myrank);
    for (int i = 0; i < rounds; i++) {
        round_of_commits(dir, ranks, i);
    }
    await_release(dir);
    rc = PMIx_Finalize(NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "finalize failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    return 0;
}
