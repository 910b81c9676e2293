/*
 * codec_bench: the C side of the codec benchmark (pmix-benchmarks, bin/bench-codec).
 *
 * Packs and unpacks the modex payload of io.pmix.benchmarks.ModexPayload with libpmix's
 * PMIx_Data_pack / PMIx_Data_unpack: one pack call of 32 pmix_info_t (11 strings of 20-38
 * chars, 11 uint32, 10 byte objects of 64 bytes; keys "pmix.test.key.NN"). The payload
 * definition must stay identical to ModexPayload.java; bin/bench-codec checks that both
 * sides pack the same bytes.
 *
 *   pack:   N times: construct a fresh pmix_data_buffer_t, pack the 32 infos, destruct it.
 *   unpack: N times: point a data buffer at the packed bytes (no copy), unpack into a fresh
 *           array of 32 infos, free the array with its strings and byte objects.
 *
 * One untimed warm-up repetition, then R timed ones (pack and unpack alternate so drift hits
 * both alike). Output, one fact per line, "key value..." (lines starting with '#' are notes):
 *   payload_bytes <n>
 *   pack rep <i> ns_per_op <x>
 *   unpack rep <i> ns_per_op <x>
 *   pack median_ns_per_op <x>
 *   unpack median_ns_per_op <x>
 *
 * Usage: codec_bench [-n ops_per_rep] [-r reps] [-x hex_out_file]
 * Build: gcc -O2 codec_bench.c $(pkg-config --cflags --libs pmix)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>
#include <pmix_tool.h>

#define NINFO 32
#define BO_LEN 64

static void die(const char *what, pmix_status_t rc)
{
    fprintf(stderr, "codec_bench: %s failed: %s (%d)\n", what, PMIx_Error_string(rc), rc);
    exit(1);
}

/* The payload; keep in step with ModexPayload.java. */
static void build_payload(pmix_info_t *infos)
{
    for (int i = 0; i < NINFO; i++) {
        char key[PMIX_MAX_KEYLEN + 1];
        snprintf(key, sizeof key, "pmix.test.key.%02d", i);
        switch (i % 3) {
        case 0: {
            char s[64];
            int len = 20 + i % 21;
            for (int j = 0; j < len; j++) {
                s[j] = (char) ('a' + (i + j) % 26);
            }
            s[len] = '\0';
            PMIx_Info_load(&infos[i], key, s, PMIX_STRING);
            break;
        }
        case 1: {
            uint32_t u = (uint32_t) (2654435761u * (uint32_t) (i + 1)) >> i;
            PMIx_Info_load(&infos[i], key, &u, PMIX_UINT32);
            break;
        }
        default: {
            char bytes[BO_LEN];
            for (int j = 0; j < BO_LEN; j++) {
                bytes[j] = (char) (uint8_t) (i * 31 + j * 7);
            }
            pmix_byte_object_t bo = {.bytes = bytes, .size = BO_LEN};
            PMIx_Info_load(&infos[i], key, &bo, PMIX_BYTE_OBJECT); /* copies the bytes */
            break;
        }
        }
    }
}

/* Checks that what unpack produced is the payload, so the timed loop does real work. */
static void check_unpacked(const pmix_info_t *want, const pmix_info_t *got, int32_t n)
{
    if (n != NINFO) {
        fprintf(stderr, "codec_bench: unpacked %d infos, expected %d\n", n, NINFO);
        exit(1);
    }
    for (int i = 0; i < NINFO; i++) {
        const pmix_value_t *a = &want[i].value, *b = &got[i].value;
        int same = 0 == strcmp(want[i].key, got[i].key) && want[i].flags == got[i].flags
                   && a->type == b->type;
        if (same) {
            switch (a->type) {
            case PMIX_STRING:
                same = 0 == strcmp(a->data.string, b->data.string);
                break;
            case PMIX_UINT32:
                same = a->data.uint32 == b->data.uint32;
                break;
            case PMIX_BYTE_OBJECT:
                same = a->data.bo.size == b->data.bo.size
                       && 0 == memcmp(a->data.bo.bytes, b->data.bo.bytes, a->data.bo.size);
                break;
            default:
                same = 0;
            }
        }
        if (!same) {
            fprintf(stderr, "codec_bench: unpacked info %d differs from the packed one\n", i);
            exit(1);
        }
    }
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static double time_pack(const pmix_info_t *infos, long n)
{
    double t0 = now_ns();
    for (long k = 0; k < n; k++) {
        pmix_data_buffer_t buf;
        PMIX_DATA_BUFFER_CONSTRUCT(&buf);
        pmix_status_t rc = PMIx_Data_pack(NULL, &buf, (void *) infos, NINFO, PMIX_INFO);
        if (PMIX_SUCCESS != rc) {
            die("PMIx_Data_pack", rc);
        }
        PMIX_DATA_BUFFER_DESTRUCT(&buf);
    }
    return (now_ns() - t0) / (double) n;
}

static double time_unpack(char *bytes, size_t len, long n)
{
    double t0 = now_ns();
    for (long k = 0; k < n; k++) {
        /* The buffer borrows the packed bytes: only the read position is reset, as the Java
         * side resets its reader index. Never destructed, since it does not own them. */
        pmix_data_buffer_t buf;
        buf.base_ptr = bytes;
        buf.pack_ptr = bytes + len;
        buf.unpack_ptr = bytes;
        buf.bytes_allocated = len;
        buf.bytes_used = len;
        pmix_info_t *out;
        PMIX_INFO_CREATE(out, NINFO);
        int32_t cnt = NINFO;
        pmix_status_t rc = PMIx_Data_unpack(NULL, &buf, out, &cnt, PMIX_INFO);
        if (PMIX_SUCCESS != rc || NINFO != cnt) {
            die("PMIx_Data_unpack", rc);
        }
        PMIX_INFO_FREE(out, NINFO);
    }
    return (now_ns() - t0) / (double) n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double *s = malloc(sizeof(double) * (size_t) n);
    memcpy(s, v, sizeof(double) * (size_t) n);
    qsort(s, (size_t) n, sizeof(double), cmp_double);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

int main(int argc, char **argv)
{
    long ops = 100000;
    int reps = 11;
    const char *hex_out = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "n:r:x:")) != -1) {
        switch (opt) {
        case 'n':
            ops = atol(optarg);
            break;
        case 'r':
            reps = atoi(optarg);
            break;
        case 'x':
            hex_out = optarg;
            break;
        default:
            fprintf(stderr, "usage: %s [-n ops_per_rep] [-r reps] [-x hex_out_file]\n", argv[0]);
            return 2;
        }
    }
    if (ops < 1 || reps < 1) {
        fprintf(stderr, "codec_bench: -n and -r must be positive\n");
        return 2;
    }

    /* PMIx_Data_pack packs nothing before an init; a tool that does not connect is enough. */
    pmix_proc_t me;
    pmix_info_t init_info;
    bool yes = true;
    PMIx_Info_load(&init_info, PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_tool_init(&me, &init_info, 1);
    if (PMIX_SUCCESS != rc) {
        die("PMIx_tool_init", rc);
    }

    pmix_info_t *infos;
    PMIX_INFO_CREATE(infos, NINFO);
    build_payload(infos);

    /* The reference bytes: packed once, checked by unpacking, optionally dumped as hex. */
    pmix_data_buffer_t ref;
    PMIX_DATA_BUFFER_CONSTRUCT(&ref);
    rc = PMIx_Data_pack(NULL, &ref, infos, NINFO, PMIX_INFO);
    if (PMIX_SUCCESS != rc) {
        die("PMIx_Data_pack", rc);
    }
    size_t len = ref.bytes_used;
    char *bytes = malloc(len);
    memcpy(bytes, ref.base_ptr, len);
    {
        pmix_info_t *out;
        PMIX_INFO_CREATE(out, NINFO);
        int32_t cnt = NINFO;
        rc = PMIx_Data_unpack(NULL, &ref, out, &cnt, PMIX_INFO);
        if (PMIX_SUCCESS != rc) {
            die("PMIx_Data_unpack", rc);
        }
        check_unpacked(infos, out, cnt);
        PMIX_INFO_FREE(out, NINFO);
    }
    PMIX_DATA_BUFFER_DESTRUCT(&ref);
    if (NULL != hex_out) {
        FILE *f = fopen(hex_out, "w");
        if (NULL == f) {
            perror(hex_out);
            return 1;
        }
        for (size_t k = 0; k < len; k++) {
            fprintf(f, "%02x", (unsigned char) bytes[k]);
        }
        fputc('\n', f);
        fclose(f);
    }

    printf("# codec_bench: libpmix %s, %d infos, %ld ops per rep, %d reps (+1 warm-up)\n",
           PMIx_Get_version(), NINFO, ops, reps);
    printf("payload_bytes %zu\n", len);
    fflush(stdout);

    (void) time_pack(infos, ops); /* warm-up */
    (void) time_unpack(bytes, len, ops);
    double *tp = malloc(sizeof(double) * (size_t) reps);
    double *tu = malloc(sizeof(double) * (size_t) reps);
    for (int r = 0; r < reps; r++) {
        tp[r] = time_pack(infos, ops);
        printf("pack rep %d ns_per_op %.1f\n", r + 1, tp[r]);
        tu[r] = time_unpack(bytes, len, ops);
        printf("unpack rep %d ns_per_op %.1f\n", r + 1, tu[r]);
        fflush(stdout);
    }
    printf("pack median_ns_per_op %.1f\n", median(tp, reps));
    printf("unpack median_ns_per_op %.1f\n", median(tu, reps));

    free(tp);
    free(tu);
    free(bytes);
    PMIX_INFO_FREE(infos, NINFO);
    PMIX_INFO_DESTRUCT(&init_info);
    PMIx_tool_finalize();
    return 0;
}
