/*
 * ds_load.c -- a publish/lookup load client for bin/load-dataserver (issue #18), written
 * against the public client API of OpenPMIx 4.2.2. Every rank of a job runs it with the same
 * arguments. Keys are "ld.<tag>.r<rank>.<i>"; the value of a key is the key, '=', then filler
 * up to --bytes. All publications: PMIX_RANGE GLOBAL (jobs of different launchers meet),
 * PMIX_PERSISTENCE INDEF (a job that ends keeps them: the verify run counts them).
 *
 *   ds_load pair TAG PARTNER KEYS BYTES TIMEOUT DELAY_MS
 *       PMIx_Init; after DELAY_MS * (rank + 1) / size ms publish KEYS keys of TAG in one call;
 *       then for every rank r of the job (the partner job has the same size) one PMIx_Lookup of
 *       PARTNER's KEYS keys of rank r with PMIX_WAIT (all of them) and PMIX_TIMEOUT; each value
 *       is checked. Prints "PUBLISHED TAG r<rank> <status>" and per partner rank
 *       "LOOKUP PARTNER r<r> OK <n>" or "LOOKUP PARTNER r<r> STATUS <status>"; exit 0 when all
 *       succeeded.
 *   ds_load verify RANKS KEYS BYTES TAG...
 *       per TAG: one lookup per key (no wait): prints "VERIFY TAG r<r> found <n> missing <m>
 *       wrong <w>" per rank (a rank's keys, published in one call, must be all there or all
 *       missing); then unpublishes every key by name and looks each up again: prints
 *       "CLEARED TAG left <n>" (n must be 0: no copy of a key left); exit 0 unless wrong or left.
 *   ds_load clear RANKS KEYS TAG
 *       the unpublish and the "CLEARED" check of verify alone.
 *   ds_load big BYTES
 *       publishes one key of BYTES; prints "BIG <status string> <status>" (and removes it).
 *   ds_load flood TAG KEYS BYTES
 *       publishes KEYS keys of BYTES (rank 0's names), one call each; then looks each up (no
 *       wait); prints "FLOOD TAG published <p> failed <f> found <n> missing <m> wrong <w>"; the
 *       keys stay (ds_load clear removes them).
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

static char *value_of(const char *key, size_t bytes)
{
    size_t klen = strlen(key), n = bytes > klen + 1 ? bytes : klen + 1;
    char *v = malloc(n + 1);
    size_t i;
    memcpy(v, key, klen);
    v[klen] = '=';
    for (i = klen + 1; i < n; i++) {
        v[i] = (char) ('a' + (i % 26));
    }
    v[n] = '\0';
    return v;
}

static void key_of(char *buf, const char *tag, unsigned rank, unsigned i)
{
    snprintf(buf, PMIX_MAX_KEYLEN + 1, "ld.%s.r%u.%u", tag, rank, i);
}

static pmix_status_t publish(const char *tag, unsigned rank, unsigned first, unsigned n,
                             size_t bytes)
{
    pmix_info_t *info;
    pmix_data_range_t range = PMIX_RANGE_GLOBAL;
    pmix_persistence_t pers = PMIX_PERSIST_INDEF;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_status_t rc;
    unsigned i;
    PMIX_INFO_CREATE(info, n + 2);
    for (i = 0; i < n; i++) {
        char *v;
        key_of(key, tag, rank, first + i);
        v = value_of(key, bytes);
        PMIX_INFO_LOAD(&info[i], key, v, PMIX_STRING);
        free(v);
    }
    PMIX_INFO_LOAD(&info[n], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    PMIX_INFO_LOAD(&info[n + 1], PMIX_PERSISTENCE, &pers, PMIX_PERSIST);
    rc = PMIx_Publish(info, n + 2);
    PMIX_INFO_FREE(info, n + 2);
    return rc;
}

/* Looks up n keys of tag's rank (wait: all of them, with timeout). Counts found values that
 * match (ok) and that do not (wrong). */
static pmix_status_t lookup(const char *tag, unsigned rank, unsigned first, unsigned n,
                            size_t bytes, int wait, int timeout, unsigned *ok, unsigned *wrong)
{
    pmix_pdata_t *pd;
    pmix_info_t info[3];
    pmix_data_range_t range = PMIX_RANGE_GLOBAL;
    size_t ninfo = 0;
    pmix_status_t rc;
    unsigned i;
    int all = 0;
    *ok = *wrong = 0;
    PMIX_PDATA_CREATE(pd, n);
    for (i = 0; i < n; i++) {
        char key[PMIX_MAX_KEYLEN + 1];
        key_of(key, tag, rank, first + i);
        PMIX_LOAD_KEY(pd[i].key, key);
    }
    PMIX_INFO_LOAD(&info[ninfo], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    ninfo++;
    if (wait) {
        PMIX_INFO_LOAD(&info[ninfo], PMIX_WAIT, &all, PMIX_INT);
        ninfo++;
        PMIX_INFO_LOAD(&info[ninfo], PMIX_TIMEOUT, &timeout, PMIX_INT);
        ninfo++;
    }
    rc = PMIx_Lookup(pd, n, info, ninfo);
    for (i = 0; i < n; i++) {
        if (PMIX_STRING == pd[i].value.type && NULL != pd[i].value.data.string) {
            char *want = value_of(pd[i].key, bytes);
            if (0 == strcmp(want, pd[i].value.data.string)) {
                (*ok)++;
            } else {
                (*wrong)++;
            }
            free(want);
        } else if (PMIX_UNDEF != pd[i].value.type) {
            (*wrong)++;
        }
    }
    for (i = 0; i < ninfo; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    PMIX_PDATA_FREE(pd, n);
    return rc;
}

static unsigned unpublish_all(const char *tag, unsigned ranks, unsigned keys)
{
    unsigned r, i, left = 0, ok, wrong;
    char **names = calloc(keys + 1, sizeof(char *));
    for (r = 0; r < ranks; r++) {
        for (i = 0; i < keys; i++) {
            names[i] = malloc(PMIX_MAX_KEYLEN + 1);
            key_of(names[i], tag, r, i);
        }
        names[keys] = NULL;
        (void) PMIx_Unpublish(names, NULL, 0);
        for (i = 0; i < keys; i++) {
            free(names[i]);
        }
        for (i = 0; i < keys; i++) {
            if (PMIX_SUCCESS == lookup(tag, r, i, 1, 0, 0, 0, &ok, &wrong) || ok || wrong) {
                left++;
            }
        }
    }
    free(names);
    return left;
}

int main(int argc, char **argv)
{
    pmix_status_t rc;
    int failed = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: ds_load pair|verify|big|flood ARGS (see the source)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("INIT %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (0 == strcmp(argv[1], "pair") && argc == 8) {
        const char *tag = argv[2], *partner = argv[3];
        unsigned keys = (unsigned) atoi(argv[4]), r, size = 1, ok, wrong;
        size_t bytes = (size_t) atol(argv[5]);
        int timeout = atoi(argv[6]), delay = atoi(argv[7]);
        pmix_value_t *val = NULL;
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
        if (PMIX_SUCCESS == PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) && NULL != val) {
            size = val->data.uint32;
            PMIX_VALUE_RELEASE(val);
        }
        usleep((useconds_t) delay * 1000u * (me.rank + 1) / size);
        rc = publish(tag, me.rank, 0, keys, bytes);
        printf("PUBLISHED %s r%u %s\n", tag, me.rank, PMIx_Error_string(rc));
        failed |= PMIX_SUCCESS != rc;
        for (r = 0; r < size; r++) {
            rc = lookup(partner, r, 0, keys, bytes, 1, timeout, &ok, &wrong);
            if (PMIX_SUCCESS == rc && ok == keys && 0 == wrong) {
                printf("LOOKUP %s r%u OK %u\n", partner, r, ok);
            } else {
                printf("LOOKUP %s r%u STATUS %s ok %u wrong %u\n", partner, r,
                       PMIx_Error_string(rc), ok, wrong);
                failed = 1;
            }
        }
    } else if (0 == strcmp(argv[1], "verify") && argc >= 6) {
        unsigned ranks = (unsigned) atoi(argv[2]), keys = (unsigned) atoi(argv[3]), r, i;
        size_t bytes = (size_t) atol(argv[4]);
        int t;
        for (t = 5; t < argc; t++) {
            const char *tag = argv[t];
            for (r = 0; r < ranks; r++) {
                unsigned found = 0, missing = 0, bad = 0, ok, wrong;
                for (i = 0; i < keys; i++) {
                    rc = lookup(tag, r, i, 1, bytes, 0, 0, &ok, &wrong);
                    found += ok;
                    bad += wrong;
                    missing += (PMIX_SUCCESS != rc && 0 == ok + wrong);
                }
                printf("VERIFY %s r%u found %u missing %u wrong %u\n", tag, r, found, missing,
                       bad);
                failed |= bad != 0 || (found != 0 && found != keys);
            }
            i = unpublish_all(tag, ranks, keys);
            printf("CLEARED %s left %u\n", tag, i);
            failed |= i != 0;
        }
    } else if (0 == strcmp(argv[1], "clear") && argc == 5) {
        unsigned left = unpublish_all(argv[4], (unsigned) atoi(argv[2]), (unsigned) atoi(argv[3]));
        printf("CLEARED %s left %u\n", argv[4], left);
        failed |= left != 0;
    } else if (0 == strcmp(argv[1], "big") && argc == 3) {
        rc = publish("big", me.rank, 0, 1, (size_t) atol(argv[2]));
        printf("BIG %s %d\n", PMIx_Error_string(rc), rc);
        if (PMIX_SUCCESS == rc) {
            (void) unpublish_all("big", me.rank + 1, 1);
        }
    } else if (0 == strcmp(argv[1], "flood") && argc == 5) {
        const char *tag = argv[2];
        unsigned keys = (unsigned) atoi(argv[3]), i, pub = 0, fail = 0, found = 0, missing = 0,
                 bad = 0, ok, wrong;
        size_t bytes = (size_t) atol(argv[4]);
        for (i = 0; i < keys; i++) {
            if (PMIX_SUCCESS == publish(tag, me.rank, i, 1, bytes)) {
                pub++;
            } else {
                fail++;
            }
        }
        for (i = 0; i < keys; i++) {
            rc = lookup(tag, me.rank, i, 1, bytes, 0, 0, &ok, &wrong);
            found += ok;
            bad += wrong;
            missing += (PMIX_SUCCESS != rc && 0 == ok + wrong);
        }
        printf("FLOOD %s published %u failed %u found %u missing %u wrong %u\n", tag, pub, fail,
               found, missing, bad);
        failed |= bad != 0;
    } else {
        fprintf(stderr, "ds_load: bad arguments\n");
        failed = 2;
    }
    PMIx_Finalize(NULL, 0);
    return failed;
}
