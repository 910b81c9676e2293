/*
 * nspace_keys.c -- keys built from the namespace, as OpenPMIx's own test clients build theirs
 * (simpclient, simpcycle: "<nspace>-<rank>-internal", "-local-<n>", "-remote-<n>"), against
 * libpmix 4.2.2. libpmix treats a key starting with "pmix" as reserved: under a launcher whose
 * namespace starts so, PMIx_Store_internal fails with BAD-PARAM and a get of a peer's key is
 * looked up in the job data only (NOT_FOUND).
 *
 * Steps, each printing "NK <rank> <step> OK|FAIL <detail>": init, store-internal (own key,
 * read back), put (local and remote scope), commit, fence (collecting data), get-peers (every
 * rank's local and remote key, values checked), finalize. Exit status 0 when all passed.
 * Build: gcc nspace_keys.c $(pkg-config --cflags --libs pmix)
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pmix_proc_t me;
static int failures;

static void say(const char *step, pmix_status_t rc, const char *detail)
{
    printf("NK %u %s %s %s%s\n", me.rank, step, PMIX_SUCCESS == rc ? "OK" : "FAIL",
           PMIx_Error_string(rc), detail);
    fflush(stdout);
    if (PMIX_SUCCESS != rc) {
        failures++;
    }
}

static pmix_status_t get_int(const pmix_proc_t *who, const char *key, int want)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(who, key, NULL, 0, &v);
    if (PMIX_SUCCESS == rc) {
        if (PMIX_INT != v->type || want != v->data.integer) {
            rc = PMIX_ERR_BAD_PARAM;
        }
        PMIX_VALUE_RELEASE(v);
    }
    return rc;
}

int main(void)
{
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t val;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("NK - init FAIL %s\n", PMIx_Error_string(rc));
        return 1;
    }
    say("init", rc, "");
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *sz = NULL;
    uint32_t size = 0;
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &sz);
    if (PMIX_SUCCESS == rc) {
        size = sz->data.uint32;
        PMIX_VALUE_RELEASE(sz);
    }

    snprintf(key, sizeof(key), "%s-%u-internal", me.nspace, me.rank);
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_INT;
    val.data.integer = 1000 + (int) me.rank;
    rc = PMIx_Store_internal(&me, key, &val);
    if (PMIX_SUCCESS == rc) {
        rc = get_int(&me, key, 1000 + (int) me.rank);
    }
    say("store-internal", rc, "");

    snprintf(key, sizeof(key), "%s-%u-local", me.nspace, me.rank);
    val.data.integer = 2000 + (int) me.rank;
    rc = PMIx_Put(PMIX_LOCAL, key, &val);
    if (PMIX_SUCCESS == rc) {
        snprintf(key, sizeof(key), "%s-%u-remote", me.nspace, me.rank);
        val.data.integer = 3000 + (int) me.rank;
        rc = PMIx_Put(PMIX_REMOTE, key, &val);
    }
    say("put", rc, "");
    say("commit", PMIx_Commit(), "");

    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    say("fence", PMIx_Fence(&wild, 1, &collect, 1), "");

    pmix_status_t worst = PMIX_SUCCESS;
    char detail[128] = "";
    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        /* All ranks share this node: a peer's local key is visible, its remote one is not
         * required to be, so only a key the scope rules promise is checked for each. */
        snprintf(key, sizeof(key), "%s-%u-local", me.nspace, r);
        rc = get_int(&peer, key, 2000 + (int) r);
        if (PMIX_SUCCESS != rc && PMIX_SUCCESS == worst) {
            worst = rc;
            snprintf(detail, sizeof(detail), " (%s)", key);
        }
    }
    snprintf(key, sizeof(key), " size=%u", size);
    strncat(detail, key, sizeof(detail) - strlen(detail) - 1);
    say("get-peers", 0 == size ? PMIX_ERR_NOT_FOUND : worst, detail);
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return failures ? 1 : 0;
}
