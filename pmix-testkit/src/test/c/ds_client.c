/*
 * ds_client.c -- a libpmix client that runs a script of publish, lookup and
 * unpublish calls given on its command line, and prints what libpmix
 * answered to each, so that tests can check the data server's rules as a
 * real C application sees them (DataServiceIT).
 *
 * Usage: ds_client [OPTIONS] STEP [[OPTIONS] STEP]...
 *   PMIx_Init happens first; steps run in order; options apply to the next
 *   step only.
 *
 * Options:
 *   --rank R          run the step on rank R only (the others skip it silently)
 *   --range R         PMIX_RANGE: session namespace global local proc-local
 *                     custom
 *   --persist P       PMIX_PERSISTENCE: proc app nspace session indef
 *                     first-read (nspace is code 5, PMIX_PERSIST_NSPACE of
 *                     later OpenPMIx releases; without --persist none is sent)
 *   --access-uid U    add U to PMIX_ACCESS_USERIDS inside
 *                     PMIX_ACCESS_PERMISSIONS (repeatable)
 *   --access-gid G    the same for PMIX_ACCESS_GRPIDS
 *   --replace         add "prte.pub.replace" (publish)
 *   --wait            PMIX_WAIT (lookup)
 *   --timeout S       PMIX_TIMEOUT seconds (lookup)
 *
 * Steps:
 *   publish:KEY=VALUE      PMIx_Publish of one string
 *   publish-size:KEY=N     PMIx_Publish of a string of N 'x' characters
 *   lookup:KEY             PMIx_Lookup of one key
 *   gone:KEY               PMIx_Lookup of one key every 10 ms until it is
 *                          NOT_FOUND (at most 60 s): waits for the effect of
 *                          something that removes it (another process's exit);
 *                          prints the last answer
 *   unpublish:KEY          PMIx_Unpublish of one key
 *   unpublish-all          PMIx_Unpublish(NULL)
 *   fence                  PMIx_Fence over the namespace
 *   sleep:MS               sleep
 *   touch:PATH             create the file PATH
 *   await:PATH             wait (at most 60 s) until PATH exists
 *   abort:STATUS           PMIx_Abort(STATUS) of the whole namespace
 *   kill                   SIGKILL itself (a crash: no finalize, no unpublish)
 *   finalize               PMIx_Finalize (otherwise the program exits
 *                          without finalizing, as a crashed process would)
 *
 * Output: "RESULT <rank> init <own nspace> 0 SUCCESS" after PMIx_Init, then
 * one line per step run,
 *   RESULT <rank> <step> <key> <status code> <status word>
 *          [<value> <publisher nspace> <publisher rank>]
 * where the status word is PMIx_Error_string's with '_' for each space, and
 * a successful lookup adds the value (a long one as "len=<N>") and its
 * publisher. Exit status 0 whatever the PMIx statuses (the test judges
 * them); 2 for a bad command line or an init failure.
 *
 * Build: gcc -O1 -g -Wall -o ds_client ds_client.c $(pkg-config --cflags --libs pmix)
 */
#include <errno.h>
#include <pmix.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_IDS 16

static pmix_proc_t me;

struct opts {
    int only_rank;
    bool has_range;
    pmix_data_range_t range;
    bool has_persist;
    pmix_persistence_t persist;
    uint32_t uids[MAX_IDS];
    size_t nuids;
    uint32_t gids[MAX_IDS];
    size_t ngids;
    bool replace;
    bool wait;
    int timeout;
};

static void reset(struct opts *o)
{
    memset(o, 0, sizeof(*o));
    o->only_rank = -1;
}

static void usage(const char *why)
{
    fprintf(stderr, "ds_client: %s (see the comment at the top of ds_client.c)\n", why);
    exit(2);
}

static pmix_data_range_t parse_range(const char *s)
{
    if (0 == strcmp(s, "session")) return PMIX_RANGE_SESSION;
    if (0 == strcmp(s, "namespace")) return PMIX_RANGE_NAMESPACE;
    if (0 == strcmp(s, "global")) return PMIX_RANGE_GLOBAL;
    if (0 == strcmp(s, "local")) return PMIX_RANGE_LOCAL;
    if (0 == strcmp(s, "proc-local")) return PMIX_RANGE_PROC_LOCAL;
    if (0 == strcmp(s, "custom")) return PMIX_RANGE_CUSTOM;
    usage("unknown range");
    return PMIX_RANGE_UNDEF;
}

static pmix_persistence_t parse_persist(const char *s)
{
    if (0 == strcmp(s, "proc")) return PMIX_PERSIST_PROC;
    if (0 == strcmp(s, "app")) return PMIX_PERSIST_APP;
    /* PMIX_PERSIST_NSPACE is 5 in OpenPMIx releases after 4.2.2, whose
     * header lacks it; the data server's default. */
    if (0 == strcmp(s, "nspace")) return (pmix_persistence_t)5;
    if (0 == strcmp(s, "session")) return PMIX_PERSIST_SESSION;
    if (0 == strcmp(s, "indef")) return PMIX_PERSIST_INDEF;
    if (0 == strcmp(s, "first-read")) return PMIX_PERSIST_FIRST_READ;
    usage("unknown persistence");
    return PMIX_PERSIST_INVALID;
}

/* Splits "KEY=VALUE" in place; VALUE is NULL without '='. */
static char *split_value(char *kv)
{
    char *eq = strchr(kv, '=');
    if (NULL == eq) return NULL;
    *eq = '\0';
    return eq + 1;
}

static void result(const char *step, const char *key, pmix_status_t rc, const pmix_pdata_t *pd)
{
    /* libpmix's status strings hold spaces ("DUPLICATE KEY"): one word here. */
    char word[64];
    snprintf(word, sizeof(word), "%s", PMIx_Error_string(rc));
    for (char *c = word; *c; c++) {
        if (' ' == *c) *c = '_';
    }
    printf("RESULT %u %s %s %d %s", me.rank, step, key ? key : "-", rc, word);
    if (NULL != pd && PMIX_SUCCESS == rc) {
        if (PMIX_STRING == pd->value.type && NULL != pd->value.data.string) {
            size_t len = strlen(pd->value.data.string);
            if (len > 64) {
                printf(" len=%zu", len);
            } else {
                printf(" %s", pd->value.data.string);
            }
        } else {
            printf(" type=%d", (int)pd->value.type);
        }
        printf(" %s %u", pd->proc.nspace, pd->proc.rank);
    }
    printf("\n");
    fflush(stdout);
}

/* The publish directives of o, after the datum itself in info[0]. */
static size_t directives(pmix_info_t *info, size_t n, const struct opts *o)
{
    if (o->has_range) {
        PMIX_INFO_LOAD(&info[n], PMIX_RANGE, &o->range, PMIX_DATA_RANGE);
        n++;
    }
    if (o->has_persist) {
        PMIX_INFO_LOAD(&info[n], PMIX_PERSISTENCE, &o->persist, PMIX_PERSIST);
        n++;
    }
    if (o->nuids > 0 || o->ngids > 0) {
        pmix_data_array_t *perms;
        pmix_info_t *pi;
        size_t k = 0;
        PMIX_DATA_ARRAY_CREATE(perms, (o->nuids > 0) + (o->ngids > 0), PMIX_INFO);
        pi = (pmix_info_t *)perms->array;
        if (o->nuids > 0) {
            pmix_data_array_t ids;
            ids.type = PMIX_UINT32;
            ids.size = o->nuids;
            ids.array = (void *)o->uids;
            PMIX_INFO_LOAD(&pi[k], PMIX_ACCESS_USERIDS, &ids, PMIX_DATA_ARRAY);
            k++;
        }
        if (o->ngids > 0) {
            pmix_data_array_t ids;
            ids.type = PMIX_UINT32;
            ids.size = o->ngids;
            ids.array = (void *)o->gids;
            PMIX_INFO_LOAD(&pi[k], PMIX_ACCESS_GRPIDS, &ids, PMIX_DATA_ARRAY);
            k++;
        }
        PMIX_INFO_LOAD(&info[n], PMIX_ACCESS_PERMISSIONS, perms, PMIX_DATA_ARRAY);
        n++;
    }
    if (o->replace) {
        PMIX_INFO_LOAD(&info[n], "prte.pub.replace", NULL, PMIX_BOOL);
        n++;
    }
    return n;
}

static void do_publish(const char *step, char *arg, const struct opts *o, bool sized)
{
    pmix_info_t info[6];
    char *val = split_value(arg);
    char *big = NULL;
    size_t n;
    pmix_status_t rc;
    if (NULL == val) usage("publish needs KEY=VALUE");
    if (sized) {
        long len = atol(val);
        if (len < 0) usage("negative size");
        big = malloc((size_t)len + 1);
        memset(big, 'x', (size_t)len);
        big[len] = '\0';
        val = big;
    }
    PMIX_INFO_LOAD(&info[0], arg, val, PMIX_STRING);
    n = directives(info, 1, o);
    rc = PMIx_Publish(info, n);
    result(step, arg, rc, NULL);
    free(big);
}

static void do_lookup(const char *arg, const struct opts *o)
{
    pmix_pdata_t pd;
    pmix_info_t info[3];
    size_t n = 0;
    pmix_status_t rc;
    bool yes = true;
    PMIX_PDATA_CONSTRUCT(&pd);
    pmix_strncpy(pd.key, arg, PMIX_MAX_KEYLEN);
    if (o->has_range) {
        PMIX_INFO_LOAD(&info[n], PMIX_RANGE, &o->range, PMIX_DATA_RANGE);
        n++;
    }
    if (o->wait) {
        PMIX_INFO_LOAD(&info[n], PMIX_WAIT, &yes, PMIX_BOOL);
        n++;
    }
    if (o->timeout > 0) {
        PMIX_INFO_LOAD(&info[n], PMIX_TIMEOUT, &o->timeout, PMIX_INT);
        n++;
    }
    rc = PMIx_Lookup(&pd, 1, n > 0 ? info : NULL, n);
    result("lookup", arg, rc, &pd);
    PMIX_PDATA_DESTRUCT(&pd);
}

static void sleep_ms(long ms);

static void do_gone(const char *arg)
{
    pmix_pdata_t pd;
    pmix_status_t rc = PMIX_SUCCESS;
    for (int i = 0; i < 6000; i++) {
        PMIX_PDATA_CONSTRUCT(&pd);
        pmix_strncpy(pd.key, arg, PMIX_MAX_KEYLEN);
        rc = PMIx_Lookup(&pd, 1, NULL, 0);
        PMIX_PDATA_DESTRUCT(&pd);
        if (PMIX_ERR_NOT_FOUND == rc) {
            break;
        }
        sleep_ms(10);
    }
    result("gone", arg, rc, NULL);
}

static void do_unpublish(const char *arg, const struct opts *o)
{
    pmix_info_t info[1];
    size_t n = 0;
    pmix_status_t rc;
    char *keys[2] = {(char *)arg, NULL};
    if (o->has_range) {
        PMIX_INFO_LOAD(&info[n], PMIX_RANGE, &o->range, PMIX_DATA_RANGE);
        n++;
    }
    rc = PMIx_Unpublish(NULL == arg ? NULL : keys, n > 0 ? info : NULL, n);
    result(NULL == arg ? "unpublish-all" : "unpublish", arg, rc, NULL);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (0 != nanosleep(&ts, &ts) && EINTR == errno) {
    }
}

static void do_await(const char *path)
{
    struct stat st;
    for (int i = 0; i < 6000; i++) {
        if (0 == stat(path, &st)) {
            result("await", path, PMIX_SUCCESS, NULL);
            return;
        }
        sleep_ms(10);
    }
    result("await", path, PMIX_ERR_TIMEOUT, NULL);
}

int main(int argc, char **argv)
{
    struct opts o;
    pmix_status_t rc;
    reset(&o);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        fprintf(stderr, "ds_client: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 2;
    }
    result("init", me.nspace, rc, NULL);
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (0 == strcmp(a, "--rank") && i + 1 < argc) {
            o.only_rank = atoi(argv[++i]);
        } else if (0 == strcmp(a, "--range") && i + 1 < argc) {
            o.has_range = true;
            o.range = parse_range(argv[++i]);
        } else if (0 == strcmp(a, "--persist") && i + 1 < argc) {
            o.has_persist = true;
            o.persist = parse_persist(argv[++i]);
        } else if (0 == strcmp(a, "--access-uid") && i + 1 < argc) {
            if (o.nuids == MAX_IDS) usage("too many uids");
            o.uids[o.nuids++] = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (0 == strcmp(a, "--access-gid") && i + 1 < argc) {
            if (o.ngids == MAX_IDS) usage("too many gids");
            o.gids[o.ngids++] = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (0 == strcmp(a, "--replace")) {
            o.replace = true;
        } else if (0 == strcmp(a, "--wait")) {
            o.wait = true;
        } else if (0 == strcmp(a, "--timeout") && i + 1 < argc) {
            o.timeout = atoi(argv[++i]);
        } else {
            /* A step. */
            char *colon = strchr(a, ':');
            char *arg = NULL;
            if (NULL != colon) {
                *colon = '\0';
                arg = colon + 1;
            }
            if (o.only_rank >= 0 && (uint32_t)o.only_rank != me.rank) {
                reset(&o);
                continue;
            }
            if (0 == strcmp(a, "publish") && arg) {
                do_publish("publish", arg, &o, false);
            } else if (0 == strcmp(a, "publish-size") && arg) {
                do_publish("publish-size", arg, &o, true);
            } else if (0 == strcmp(a, "lookup") && arg) {
                do_lookup(arg, &o);
            } else if (0 == strcmp(a, "gone") && arg) {
                do_gone(arg);
            } else if (0 == strcmp(a, "unpublish") && arg) {
                do_unpublish(arg, &o);
            } else if (0 == strcmp(a, "unpublish-all")) {
                do_unpublish(NULL, &o);
            } else if (0 == strcmp(a, "fence")) {
                result("fence", NULL, PMIx_Fence(NULL, 0, NULL, 0), NULL);
            } else if (0 == strcmp(a, "sleep") && arg) {
                sleep_ms(atol(arg));
            } else if (0 == strcmp(a, "touch") && arg) {
                FILE *f = fopen(arg, "w");
                result("touch", arg, NULL == f ? PMIX_ERROR : PMIX_SUCCESS, NULL);
                if (NULL != f) fclose(f);
            } else if (0 == strcmp(a, "await") && arg) {
                do_await(arg);
            } else if (0 == strcmp(a, "abort") && arg) {
                result("abort", NULL, PMIX_SUCCESS, NULL);
                PMIx_Abort(atoi(arg), "ds_client abort step", NULL, 0);
                sleep_ms(60000); /* the launcher kills us */
            } else if (0 == strcmp(a, "kill")) {
                result("kill", NULL, PMIX_SUCCESS, NULL);
                raise(SIGKILL);
            } else if (0 == strcmp(a, "finalize")) {
                result("finalize", NULL, PMIx_Finalize(NULL, 0), NULL);
            } else {
                usage("unknown step");
            }
            reset(&o);
        }
    }
    return 0;
}
