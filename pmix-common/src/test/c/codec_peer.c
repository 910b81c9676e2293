/*
 * codec_peer: OpenPMIx's own buffer codec as a line-protocol service, so that Java tests can
 * check, value by value, that pmix-java and the C library agree on the bytes.
 *
 * Build (the Java tests do this through io.pmix.common.testing.CPrograms):
 *     gcc -O1 -o codec_peer codec_peer.c $(pkg-config --cflags --libs pmix)
 *
 * Start-up: PMIx_tool_init with PMIX_TOOL_DO_NOT_CONNECT = true (before any init,
 * PMIx_Data_pack fails with PMIX_ERR_NOT_FOUND; this is the cheapest init that needs no server).
 * The buffer type is process-wide and chosen at init from the environment, so one process serves
 * one mode: PMIX_BFROP_BUFFER_TYPE=PMIX_BFROP_BUFFER_FULLY_DESC selects fully described buffers,
 * anything else (or nothing) the default NON_DESC. The first line the peer writes says which mode
 * it really got (found by packing one INT32 and looking at the first byte) and the library version:
 *     READY NON_DESC|FULLY_DESC <PMIx_Get_version() text>
 * or, when init fails:
 *     FATAL <status> <what failed>
 *
 * Then, for every request line read from stdin, exactly one reply line (flushed at once):
 *     request:  <type code> <item count> <hex bytes>
 *     reply:    OK <hex bytes>              C unpacked <item count> items and re-packed them
 *               ERR <status> <stage>        stage: request (malformed line), unpack or pack
 *     request:  EMPTY <type code>
 *     reply:    OK <hex bytes>              what PMIx_Data_pack writes for 0 items of that type
 *               ERR <status> pack
 * The request's bytes are one pack call (count, then items; in FULLY_DESC mode with its two type
 * tags), exactly what PMIx_Data_pack produces. The peer runs PMIx_Data_unpack of up to <item count>
 * items of that type into storage of the matching C type, then PMIx_Data_pack of the items it got
 * into a fresh buffer, and answers with that buffer. Bytes left unread after the unpack are not
 * reported: they simply make the re-packed bytes differ from the request. End of input ends the
 * peer (PMIx_tool_finalize, exit status 0).
 *
 * The library may print diagnostics; stdout is moved to stderr before init so that nothing but
 * protocol lines ever appears on the protocol stream.
 *
 * Storage: each type is unpacked into an array of its public C type (bool, char *, size_t,
 * pid_t, pmix_value_t, pmix_info_t, ...). Two types on the wire have no public C type:
 * PMIX_BUFFER (26, the internal pmix_buffer_t) and PMIX_KVAL (28, the internal pmix_kval_t). For
 * those, and for codes 4.2.2 does not know, each item gets an opaque zeroed slot of OPAQUE_SLOT
 * bytes, larger than any of those structs; the library indexes the array with its own sizeof, so
 * the slots only need to be big enough, never exact.
 *
 * What 4.2.2 cannot round-trip (docs/codec.md §7); the peer does not refuse
 * these, it reports what the library does, and the Java tests know what to expect:
 *   - PMIX_DATA_TYPE, and the type field of PMIX_REGATTR: packed as an unsigned varint, unpacked as
 *     a signed one, so only 0 survives (3 comes back as 65534).
 *   - PMIX_PROC_STATS: the unpacker reads one float more than the packer writes
 *     (PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER).
 *   - PMIX_NODE_STATS with disk or net statistics: the packer sends garbage (empty lists work).
 *   - PMIX_PROC_CPUSET: only NULL and empty bitmaps can be packed (4.2.2 takes the character count
 *     hwloc's list printer returns for an error).
 *   - PMIX_TOPO: depends on the hwloc the library was built with; a NULL topology unpacks into an
 *     object that crashes the packer, so the tests send only real topologies (the golden vector).
 *   - PMIX_DATA_ARRAY whose elements are DATA_ARRAY, TOPO, REGEX, JOB_STATE, DEVTYPE, LOCTYPE,
 *     COMMAND, COMPRESSED_BYTE_OBJECT, BUFFER, KVAL, DATA_BUFFER or one of the four STOR types,
 *     non-empty: PMIX_ERR_NOMEM (the array allocator does not know them).
 *   - PMIX_VALUE holding VALUE, INFO, PDATA, APP, KVAL, BUFFER or QUERY (no room in the C union)
 *     or DATA_BUFFER (the packer reads past the value).
 *   - PMIX_REGEX without a "pmix" or "raw:" prefix crashes the packer.
 *   - PMIX_POINTER round-trips only as "a pointer was here": one sentinel byte per pack call.
 *   - A pack call of 0 items of a type coded as a flex128 varint (SIZE, PID, INT*, UINT* but the
 *     8-bit ones, STATUS, PROC_RANK, INFO_DIRECTIVES, DATA_TYPE, IOF_CHANNEL, DEVTYPE, LOCTYPE,
 *     the STOR types) fails to unpack with PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER when it ends
 *     the buffer: the varint reader wants a byte even for no items. (Packing 0 PIDs writes the
 *     count and PID's run tag, 0 POINTERs the count and the sentinel byte: "EMPTY" shows that.)
 *   - PMIX_BUFFER (26) is deprecated and has no public storage type, but works through the opaque
 *     slots above; COMPRESSED_STRING and COMPRESSED_BYTE_OBJECT are plain byte objects to the codec
 *     (nothing is decompressed on unpack).
 *
 * Memory: the peer frees its own buffers but deliberately leaks what the library allocates inside
 * unpacked items. It is a short-lived test process; after a failed unpack the items are half
 * built, which the 4.2.2 destructors are not written for (and they have defects of their own: a
 * data array of data arrays is freed only in part), and a crash there would hide the codec
 * behaviour under test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>
#include <pmix_tool.h>

/* Bytes per item for types without a public C struct; see the header comment. */
#define OPAQUE_SLOT 512

/* Largest item count a request may ask for (bounds the storage we allocate). */
#define MAX_ITEMS (1 << 20)

/* The size of one item of `type` as PMIx_Data_unpack stores it. */
static size_t item_size(pmix_data_type_t type)
{
    switch (type) {
    case PMIX_BOOL: return sizeof(bool);
    case PMIX_BYTE: return sizeof(uint8_t);
    case PMIX_STRING: return sizeof(char *);
    case PMIX_SIZE: return sizeof(size_t);
    case PMIX_PID: return sizeof(pid_t);
    case PMIX_INT: return sizeof(int);
    case PMIX_INT8: return sizeof(int8_t);
    case PMIX_INT16: return sizeof(int16_t);
    case PMIX_INT32: return sizeof(int32_t);
    case PMIX_INT64: return sizeof(int64_t);
    case PMIX_UINT: return sizeof(unsigned int);
    case PMIX_UINT8: return sizeof(uint8_t);
    case PMIX_UINT16: return sizeof(uint16_t);
    case PMIX_UINT32: return sizeof(uint32_t);
    case PMIX_UINT64: return sizeof(uint64_t);
    case PMIX_FLOAT: return sizeof(float);
    case PMIX_DOUBLE: return sizeof(double);
    case PMIX_TIMEVAL: return sizeof(struct timeval);
    case PMIX_TIME: return sizeof(time_t);
    case PMIX_STATUS: return sizeof(pmix_status_t);
    case PMIX_VALUE: return sizeof(pmix_value_t);
    case PMIX_PROC: return sizeof(pmix_proc_t);
    case PMIX_APP: return sizeof(pmix_app_t);
    case PMIX_INFO: return sizeof(pmix_info_t);
    case PMIX_PDATA: return sizeof(pmix_pdata_t);
    case PMIX_BYTE_OBJECT: return sizeof(pmix_byte_object_t);
    case PMIX_PERSIST: return sizeof(pmix_persistence_t);
    case PMIX_POINTER: return sizeof(void *);
    case PMIX_SCOPE: return sizeof(pmix_scope_t);
    case PMIX_DATA_RANGE: return sizeof(pmix_data_range_t);
    case PMIX_COMMAND: return sizeof(uint8_t); /* the internal pmix_cmd_t is a uint8_t */
    case PMIX_INFO_DIRECTIVES: return sizeof(pmix_info_directives_t);
    case PMIX_DATA_TYPE: return sizeof(pmix_data_type_t);
    case PMIX_PROC_STATE: return sizeof(pmix_proc_state_t);
    case PMIX_PROC_INFO: return sizeof(pmix_proc_info_t);
    case PMIX_DATA_ARRAY: return sizeof(pmix_data_array_t);
    case PMIX_PROC_RANK: return sizeof(pmix_rank_t);
    case PMIX_QUERY: return sizeof(pmix_query_t);
    case PMIX_COMPRESSED_STRING: return sizeof(pmix_byte_object_t);
    case PMIX_ALLOC_DIRECTIVE: return sizeof(pmix_alloc_directive_t);
    case PMIX_IOF_CHANNEL: return sizeof(pmix_iof_channel_t);
    case PMIX_ENVAR: return sizeof(pmix_envar_t);
    case PMIX_COORD: return sizeof(pmix_coord_t);
    case PMIX_REGATTR: return sizeof(pmix_regattr_t);
    case PMIX_REGEX: return sizeof(char *);
    case PMIX_JOB_STATE: return sizeof(pmix_job_state_t);
    case PMIX_LINK_STATE: return sizeof(pmix_link_state_t);
    case PMIX_PROC_CPUSET: return sizeof(pmix_cpuset_t);
    case PMIX_GEOMETRY: return sizeof(pmix_geometry_t);
    case PMIX_DEVICE_DIST: return sizeof(pmix_device_distance_t);
    case PMIX_ENDPOINT: return sizeof(pmix_endpoint_t);
    case PMIX_TOPO: return sizeof(pmix_topology_t);
    case PMIX_DEVTYPE: return sizeof(pmix_device_type_t);
    case PMIX_LOCTYPE: return sizeof(pmix_locality_t);
    case PMIX_COMPRESSED_BYTE_OBJECT: return sizeof(pmix_byte_object_t);
    case PMIX_PROC_NSPACE: return sizeof(pmix_nspace_t);
    case PMIX_PROC_STATS: return sizeof(pmix_proc_stats_t);
    case PMIX_DISK_STATS: return sizeof(pmix_disk_stats_t);
    case PMIX_NET_STATS: return sizeof(pmix_net_stats_t);
    case PMIX_NODE_STATS: return sizeof(pmix_node_stats_t);
    case PMIX_DATA_BUFFER: return sizeof(pmix_data_buffer_t);
    case PMIX_STOR_MEDIUM: return sizeof(pmix_storage_medium_t);
    case PMIX_STOR_ACCESS: return sizeof(pmix_storage_accessibility_t);
    case PMIX_STOR_PERSIST: return sizeof(pmix_storage_persistence_t);
    case PMIX_STOR_ACCESS_TYPE: return sizeof(pmix_storage_access_type_t);
    default:
        /* PMIX_BUFFER, PMIX_KVAL (internal structs), and codes the library may reject itself. */
        return OPAQUE_SLOT;
    }
}

static FILE *proto; /* the protocol stream: the original stdout */

static void reply_err(pmix_status_t rc, const char *stage)
{
    fprintf(proto, "ERR %d %s\n", (int) rc, stage);
}

static void reply_ok(const pmix_data_buffer_t *b)
{
    size_t i;

    fputs("OK ", proto);
    for (i = 0; i < b->bytes_used; i++) {
        fprintf(proto, "%02x", (unsigned char) b->base_ptr[i]);
    }
    fputc('\n', proto);
}

/* "EMPTY <type>": what C writes for a pack call of no items (some types add a tag or a byte). */
static void handle_empty(const char *arg)
{
    char *end;
    unsigned long type;
    char dummy[OPAQUE_SLOT] = {0}; /* never read for 0 items, but the packer wants non-NULL */
    pmix_data_buffer_t out;
    pmix_status_t rc;

    errno = 0;
    type = strtoul(arg, &end, 10);
    if (end == arg || '\0' != *end || errno != 0 || type > UINT16_MAX) {
        reply_err(PMIX_ERR_BAD_PARAM, "request");
        return;
    }
    PMIX_DATA_BUFFER_CONSTRUCT(&out);
    rc = PMIx_Data_pack(NULL, &out, dummy, 0, (pmix_data_type_t) type);
    if (PMIX_SUCCESS != rc) {
        reply_err(rc, "pack");
    } else {
        reply_ok(&out);
    }
    PMIX_DATA_BUFFER_DESTRUCT(&out);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Parses "<type> <count> <hex>" and answers it. `line` has no trailing newline. */
static void handle(char *line)
{
    char *p = line, *end;
    unsigned long type;
    long count;
    size_t hexlen, nbytes, i, slot;
    char *bytes;
    void *storage;
    int32_t num;
    pmix_status_t rc;
    pmix_data_buffer_t in, out;
    pmix_byte_object_t payload;

    errno = 0;
    type = strtoul(p, &end, 10);
    if (end == p || errno != 0 || type > UINT16_MAX) {
        reply_err(PMIX_ERR_BAD_PARAM, "request");
        return;
    }
    p = end;
    count = strtol(p, &end, 10);
    if (end == p || errno != 0 || count < 0 || count > MAX_ITEMS) {
        reply_err(PMIX_ERR_BAD_PARAM, "request");
        return;
    }
    p = end;
    while (*p == ' ') {
        p++;
    }
    hexlen = strlen(p);
    if (hexlen % 2 != 0) {
        reply_err(PMIX_ERR_BAD_PARAM, "request");
        return;
    }
    nbytes = hexlen / 2;
    /* PMIx_Data_load takes ownership of a malloc'd payload; keep it non-NULL even when empty. */
    bytes = malloc(nbytes > 0 ? nbytes : 1);
    if (NULL == bytes) {
        reply_err(PMIX_ERR_NOMEM, "request");
        return;
    }
    for (i = 0; i < nbytes; i++) {
        int hi = hex_digit(p[2 * i]), lo = hex_digit(p[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(bytes);
            reply_err(PMIX_ERR_BAD_PARAM, "request");
            return;
        }
        bytes[i] = (char) (hi << 4 | lo);
    }

    /* Unpack refuses a capacity of 0, so a pack call of 0 items still gets room for one. */
    num = count > 0 ? (int32_t) count : 1;
    slot = item_size((pmix_data_type_t) type);
    storage = calloc((size_t) num, slot);
    if (NULL == storage) {
        free(bytes);
        reply_err(PMIX_ERR_NOMEM, "request");
        return;
    }

    PMIX_DATA_BUFFER_CONSTRUCT(&in);
    payload.bytes = bytes;
    payload.size = nbytes;
    rc = PMIx_Data_load(&in, &payload); /* the buffer now owns `bytes` */
    if (PMIX_SUCCESS != rc) {
        free(bytes);
        free(storage);
        reply_err(rc, "request");
        return;
    }

    rc = PMIx_Data_unpack(NULL, &in, storage, &num, (pmix_data_type_t) type);
    if (PMIX_SUCCESS != rc) {
        reply_err(rc, "unpack");
    } else {
        PMIX_DATA_BUFFER_CONSTRUCT(&out);
        rc = PMIx_Data_pack(NULL, &out, storage, num, (pmix_data_type_t) type);
        if (PMIX_SUCCESS != rc) {
            reply_err(rc, "pack");
        } else {
            reply_ok(&out);
        }
        PMIX_DATA_BUFFER_DESTRUCT(&out);
    }
    PMIX_DATA_BUFFER_DESTRUCT(&in);
    free(storage); /* not the items' contents: see "Memory" above */
}

/* Which buffer type did init give us? Pack INT32 1: NON_DESC starts with the count (02),
 * FULLY_DESC with the INT32 tag (09). */
static const char *buffer_mode(void)
{
    pmix_data_buffer_t b;
    int32_t one = 1;
    const char *mode = "UNKNOWN";

    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    if (PMIX_SUCCESS == PMIx_Data_pack(NULL, &b, &one, 1, PMIX_INT32) && b.bytes_used > 0) {
        if (0x02 == (unsigned char) b.base_ptr[0]) {
            mode = "NON_DESC";
        } else if (0x09 == (unsigned char) b.base_ptr[0]) {
            mode = "FULLY_DESC";
        }
    }
    PMIX_DATA_BUFFER_DESTRUCT(&b);
    return mode;
}

int main(void)
{
    pmix_proc_t me;
    pmix_info_t info;
    bool no_connect = true;
    pmix_status_t rc;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int proto_fd;

    /* Keep the real stdout for the protocol; anything else written to fd 1 goes to stderr. */
    proto_fd = dup(STDOUT_FILENO);
    if (proto_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0
        || NULL == (proto = fdopen(proto_fd, "w"))) {
        perror("codec_peer: setting up the protocol stream");
        return 2;
    }

    PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, &no_connect, PMIX_BOOL);
    rc = PMIx_tool_init(&me, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS != rc) {
        fprintf(proto, "FATAL %d PMIx_tool_init\n", (int) rc);
        fflush(proto);
        return 1;
    }
    fprintf(proto, "READY %s %s\n", buffer_mode(), PMIx_Get_version());
    fflush(proto);

    while ((len = getline(&line, &cap, stdin)) >= 0) {
        while (len > 0 && ('\n' == line[len - 1] || '\r' == line[len - 1])) {
            line[--len] = '\0';
        }
        if (0 == len) {
            continue; /* blank lines are ignored, so they get no reply */
        }
        if (0 == strncmp(line, "EMPTY ", 6)) {
            handle_empty(line + 6);
        } else {
            handle(line);
        }
        fflush(proto);
    }
    free(line);
    PMIx_tool_finalize();
    return 0;
}
