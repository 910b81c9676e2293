/*
 * A client for NestedIT's multi-key lookup: rank 0 publishes "mk.a" = "value-a" and "mk.b" =
 * "value-b" in one PMIx_Publish; after a fence of the whole job the last rank looks both up in
 * ONE PMIx_Lookup and prints each item ("LOOKUP <key> <value or -> <publisher rank>") and the
 * status ("LOOKUP-STATUS <status>"); a second fence keeps the data until it has looked.
 */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    pmix_proc_t me, all;
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        printf("INIT %d\n", rc);
        return 1;
    }
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *size = NULL;
    rc = PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &size);
    if (PMIX_SUCCESS != rc) {
        printf("SIZE %d\n", rc);
        return 1;
    }
    pmix_rank_t last = size->data.uint32 - 1;
    if (0 == me.rank) {
        pmix_info_t info[2];
        PMIX_INFO_LOAD(&info[0], "mk.a", "value-a", PMIX_STRING);
        PMIX_INFO_LOAD(&info[1], "mk.b", "value-b", PMIX_STRING);
        rc = PMIx_Publish(info, 2);
        printf("PUBLISH %d\n", rc);
    }
    PMIx_Fence(&all, 1, NULL, 0);
    if (last == me.rank) {
        pmix_pdata_t pd[2];
        PMIX_PDATA_CONSTRUCT(&pd[0]);
        PMIX_PDATA_CONSTRUCT(&pd[1]);
        PMIX_LOAD_KEY(pd[0].key, "mk.a");
        PMIX_LOAD_KEY(pd[1].key, "mk.b");
        rc = PMIx_Lookup(pd, 2, NULL, 0);
        printf("LOOKUP-STATUS %d\n", rc);
        for (int i = 0; i < 2; i++) {
            printf("LOOKUP %s %s %d\n", pd[i].key,
                   PMIX_STRING == pd[i].value.type ? pd[i].value.data.string : "-",
                   PMIX_STRING == pd[i].value.type ? (int) pd[i].proc.rank : -1);
        }
    }
    PMIx_Fence(&all, 1, NULL, 0);
    PMIx_Finalize(NULL, 0);
    return 0;
}
