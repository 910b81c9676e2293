/*
 * A pmixrun client for JobControlIT: each rank makes a directory tree under argv[1], asks
 * PMIx_Job_control to remove it once the job is over (PMIX_REGISTER_CLEANUP_DIR, recursive,
 * one file ignored), then declares itself preemptible, and prints what libpmix answered to
 * each: "JCTRL <rank> <step> <status>".
 */
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    if (NULL != f) {
        fputs("x\n", f);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    pmix_proc_t me;
    pmix_info_t info[3];
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char top[4096], path[4200];
    bool yes = true;
    pmix_status_t rc;

    if (argc < 2) {
        fprintf(stderr, "usage: jctrl_client BASEDIR\n");
        return 2;
    }
    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        fprintf(stderr, "PMIx_Init: %d\n", rc);
        return 1;
    }
    snprintf(top, sizeof(top), "%s/rank%u", argv[1], me.rank);
    mkdir(top, 0700);
    snprintf(path, sizeof(path), "%s/sub", top);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/sub/file", top);
    touch(path);
    snprintf(path, sizeof(path), "%s/keep", top);
    touch(path);

    PMIX_INFO_LOAD(&info[0], PMIX_REGISTER_CLEANUP_DIR, top, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_CLEANUP_RECURSIVE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[2], PMIX_CLEANUP_IGNORE, path, PMIX_STRING);
    rc = PMIx_Job_control(NULL, 0, info, 3, &results, &nresults);
    printf("JCTRL %u cleanup %d\n", me.rank, rc);

    PMIX_INFO_LOAD(&info[0], PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    rc = PMIx_Job_control(NULL, 0, info, 1, &results, &nresults);
    printf("JCTRL %u preempt %d\n", me.rank, rc);
    fflush(stdout);

    rc = PMIx_Fence(NULL, 0, NULL, 0);
    printf("JCTRL %u fence %d\n", me.rank, rc);
    rc = PMIx_Finalize(NULL, 0);
    printf("JCTRL %u finalize %d\n", me.rank, rc);
    return 0;
}
