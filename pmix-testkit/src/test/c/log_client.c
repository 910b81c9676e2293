/*
 * A pmixrun client for PmixRunLogIT: PMIx_Log of each argument in turn and prints what libpmix
 * answered: "LOG <rank> <arg> <status>". An argument is a channel key, optionally prefixed by
 * '!' (the entry is flagged required), '1' (with PMIX_LOG_ONCE) or '+' (two entries, stderr
 * then stdout, with PMIX_LOG_ONCE), or "agg:KEY" (pmix.log.stderr with PMIX_LOG_KEY KEY and
 * PMIX_LOG_VAL "topic", as Open MPI 5's show_help sends). The logged text is
 * "<channel> from rank <rank>" ("help KEY from rank <rank>" for agg:KEY); a fence after the logs orders them before the exit.
 */
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    pmix_proc_t me;
    pmix_info_t data[2], dirs[3];
    char text[2][256];
    bool yes = true;
    pmix_status_t rc;

    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        fprintf(stderr, "PMIx_Init: %d\n", rc);
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *key = argv[i];
        size_t ndata = 1, ndirs = 0;
        bool required = false;
        if ('!' == key[0]) {
            required = true;
            key++;
        } else if ('1' == key[0]) {
            PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_LOG_ONCE, &yes, PMIX_BOOL);
            key++;
        } else if ('+' == key[0]) {
            PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_LOG_ONCE, &yes, PMIX_BOOL);
            ndata = 2;
            key = PMIX_LOG_STDERR;
        }
        snprintf(text[0], sizeof(text[0]), "%s from rank %u", key, me.rank);
        if (0 == strncmp(key, "agg:", 4)) {
            PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_LOG_AGG, &yes, PMIX_BOOL);
            PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_LOG_KEY, key + 4, PMIX_STRING);
            PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_LOG_VAL, "topic", PMIX_STRING);
            snprintf(text[0], sizeof(text[0]), "help %s from rank %u", key + 4, me.rank);
            key = PMIX_LOG_STDERR;
        }
        PMIX_INFO_LOAD(&data[0], key, text[0], PMIX_STRING);
        if (required) {
            PMIX_INFO_REQUIRED(&data[0]);
        }
        if (2 == ndata) {
            snprintf(text[1], sizeof(text[1]), "%s from rank %u", PMIX_LOG_STDOUT, me.rank);
            PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDOUT, text[1], PMIX_STRING);
        }
        rc = PMIx_Log(data, ndata, 0 < ndirs ? dirs : NULL, ndirs);
        printf("LOG %u %s %d\n", me.rank, argv[i], rc);
        fflush(stdout);
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    printf("LOG %u fence %d\n", me.rank, rc);
    PMIx_Finalize(NULL, 0);
    return 0;
}
