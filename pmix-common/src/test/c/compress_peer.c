/*
 * compress_peer: libpmix's PMIx_Data_compress / PMIx_Data_decompress as a line-protocol service,
 * so Java tests can check that the compressed strings pmix-java expands use libpmix's layout.
 *
 * Start-up: PMIx_tool_init with PMIX_TOOL_DO_NOT_CONNECT (no server needed), then "READY".
 * Requests on stdin, one per line, payload in lowercase hex:
 *     D <hex>   decompress -> "OK <hex>" or "NO"
 *     C <hex>   compress   -> "OK <hex>" or "NO"
 * An empty line or end of input ends the program.
 */
#include <pmix_tool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *unhex(const char *s, size_t *n)
{
    size_t len = strlen(s);
    uint8_t *out = malloc(len / 2 + 1);
    size_t i;
    for (i = 0; i + 1 < len; i += 2) {
        unsigned v;
        if (1 != sscanf(s + i, "%2x", &v)) {
            break;
        }
        out[i / 2] = (uint8_t) v;
    }
    *n = i / 2;
    return out;
}

static void reply(bool ok, const uint8_t *bytes, size_t n)
{
    if (!ok) {
        printf("NO\n");
    } else {
        printf("OK ");
        for (size_t i = 0; i < n; i++) {
            printf("%02x", bytes[i]);
        }
        printf("\n");
    }
    fflush(stdout);
}

int main(void)
{
    pmix_proc_t me;
    pmix_info_t info;
    bool no_connect = true;
    static char line[1 << 22];

    PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, &no_connect, PMIX_BOOL);
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS != rc) {
        printf("FATAL %d PMIx_tool_init\n", (int) rc);
        return 1;
    }
    printf("READY\n");
    fflush(stdout);
    while (NULL != fgets(line, sizeof(line), stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if ('\0' == line[0]) {
            break;
        }
        size_t n = 0, outn = 0;
        uint8_t *in = unhex(line + 2, &n);
        uint8_t *out = NULL;
        bool ok;
        if ('D' == line[0]) {
            ok = PMIx_Data_decompress(in, n, &out, &outn);
        } else {
            ok = PMIx_Data_compress(in, n, &out, &outn);
        }
        reply(ok && NULL != out, out, outn);
        free(in);
        free(out);
    }
    PMIx_tool_finalize();
    return 0;
}
