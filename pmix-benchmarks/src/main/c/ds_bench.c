/*
 * ds_bench.c -- publish/lookup round trips through a PMIx server's data
 * service, as an application sees them (bin/bench-dataserver).
 *
 * Usage: ds_bench [--iters N] [--warmup W] [--value-bytes B]
 *
 * Each rank: PMIx_Init; W untimed publish+lookup pairs; a fence; then N
 * timed pairs, each a PMIx_Publish of one fresh key (a string of B bytes,
 * default range and persistence) followed by a PMIx_Lookup of that key,
 * whose value is checked; a fence; then N timed PMIx_Unpublish calls of those
 * keys; PMIx_Finalize. Keys carry the namespace and rank, so ranks and jobs
 * sharing one data server never collide.
 *
 * Output (one line each, stdout):
 *   BENCH pairs <rank> <N> <seconds>
 *   BENCH unpublish <rank> <N> <seconds>
 * Exit status 0, or 1 at the first PMIx call that fails (message on stderr).
 *
 * Build: gcc -O2 -o ds_bench ds_bench.c $(pkg-config --cflags --libs pmix)
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pmix_proc_t me;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, long i, pmix_status_t rc)
{
    fprintf(stderr, "ds_bench rank %u: %s #%ld: %s\n", me.rank, what, i, PMIx_Error_string(rc));
    exit(1);
}

static void key_of(char *key, const char *phase, long i)
{
    snprintf(key, PMIX_MAX_KEYLEN, "b.%s.%s.%u.%ld", phase, me.nspace, me.rank, i);
}

/* One publish of key i, then one lookup of it, value checked. */
static void pair(const char *phase, long i, char *value)
{
    pmix_info_t info;
    pmix_pdata_t pd;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_status_t rc;
    key_of(key, phase, i);
    /* A different value each time: nothing can be answered from a cache. */
    char digits[24];
    snprintf(digits, sizeof(digits), "%015ld", i);
    memcpy(value, digits, 15);
    PMIX_INFO_LOAD(&info, key, value, PMIX_STRING);
    rc = PMIx_Publish(&info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS != rc) die("publish", i, rc);
    PMIX_PDATA_CONSTRUCT(&pd);
    pmix_strncpy(pd.key, key, PMIX_MAX_KEYLEN);
    rc = PMIx_Lookup(&pd, 1, NULL, 0);
    if (PMIX_SUCCESS != rc) die("lookup", i, rc);
    if (PMIX_STRING != pd.value.type || 0 != strcmp(pd.value.data.string, value)) {
        die("lookup returned another value", i, PMIX_ERROR);
    }
    PMIX_PDATA_DESTRUCT(&pd);
}

static void unpublish(const char *phase, long i)
{
    char key[PMIX_MAX_KEYLEN + 1];
    char *keys[2] = {key, NULL};
    pmix_status_t rc;
    key_of(key, phase, i);
    rc = PMIx_Unpublish(keys, NULL, 0);
    if (PMIX_SUCCESS != rc) die("unpublish", i, rc);
}

int main(int argc, char **argv)
{
    long iters = 5000, warmup = 500, bytes = 64;
    char *value;
    double t0, t1;
    pmix_status_t rc;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "--iters")) iters = atol(argv[i + 1]);
        else if (0 == strcmp(argv[i], "--warmup")) warmup = atol(argv[i + 1]);
        else if (0 == strcmp(argv[i], "--value-bytes")) bytes = atol(argv[i + 1]);
        else {
            fprintf(stderr, "ds_bench: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (bytes < 16) bytes = 16;
    value = malloc((size_t)bytes + 1);
    memset(value, 'x', (size_t)bytes);
    value[bytes] = '\0';
    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) die("init", 0, rc);
    for (long i = 0; i < warmup; i++) {
        pair("w", i, value);
        unpublish("w", i);
    }
    if (PMIX_SUCCESS != (rc = PMIx_Fence(NULL, 0, NULL, 0))) die("fence", 0, rc);
    t0 = now();
    for (long i = 0; i < iters; i++) pair("t", i, value);
    t1 = now();
    printf("BENCH pairs %u %ld %.6f\n", me.rank, iters, t1 - t0);
    if (PMIX_SUCCESS != (rc = PMIx_Fence(NULL, 0, NULL, 0))) die("fence", 1, rc);
    t0 = now();
    for (long i = 0; i < iters; i++) unpublish("t", i);
    t1 = now();
    printf("BENCH unpublish %u %ld %.6f\n", me.rank, iters, t1 - t0);
    fflush(stdout);
    free(value);
    if (PMIX_SUCCESS != (rc = PMIx_Finalize(NULL, 0))) die("finalize", 0, rc);
    return 0;
}
