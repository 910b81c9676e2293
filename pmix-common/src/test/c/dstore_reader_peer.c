/*
 * dstore_reader_peer.c -- the other process of DeadReaderIT: a store reader
 * that takes its lock exactly as libpmix 4.2.2's client does, so that the
 * test can SIGKILL it inside a read.
 *   ds21 (FILE is a namespace's smlockseg, SLOT a reader slot):
 *     pmix_ds21_lock_rd_get: plain pthread_mutex_lock of the "signal" mutex
 *     2*slot, then of the main mutex 2*slot+1, then the signal mutex released.
 *   ds12 (FILE is the directory's dstore_sm.lock, SLOT ignored):
 *     the pthread build's pthread_rwlock_rdlock of the rwlock at offset 0.
 *
 * Usage: dstore_reader_peer FILE SLOT   then one command per line on stdin:
 *   read     ds21: the whole read lock above, kept: "locked"
 *   signal   ds21: only the signal mutex, kept: "signalled"
 *   rdlock   ds12: the rwlock for reading, kept: "rdlocked"
 * End of input ends it. Errors: "error <code>".
 *
 * Build: gcc -O1 -g -Wall -pthread -o dstore_reader_peer dstore_reader_peer.c
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dstore_reader_peer FILE SLOT\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fd = open(argv[1], O_RDWR);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        printf("error open\n");
        return 1;
    }
    char *base = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        printf("error mmap\n");
        return 1;
    }
    /* ds21's segment header: u64 size, u32 locks, u64 spacing at 16, u64 offset at 24
       (ds12's file holds a rwlock instead: these two are only used by ds21's commands) */
    uint64_t align = 0, offs = 0;
    if (st.st_size >= 32) {
        memcpy(&align, base + 16, 8);
        memcpy(&offs, base + 24, 8);
    }
    uint64_t slot = (uint64_t) atol(argv[2]);
    if (offs + align * (2 * slot + 2) > (uint64_t) st.st_size) {
        align = offs = slot = 0; /* not a ds21 segment with that slot */
    }
    pthread_mutex_t *signal = (pthread_mutex_t *) (base + offs + align * (2 * slot));
    pthread_mutex_t *main_lock = (pthread_mutex_t *) (base + offs + align * (2 * slot + 1));
    char line[64];
    while (NULL != fgets(line, sizeof(line), stdin)) {
        int rc;
        if (0 == strncmp(line, "read", 4)) {
            if (0 != (rc = pthread_mutex_lock(signal)) || 0 != (rc = pthread_mutex_lock(main_lock))
                || 0 != (rc = pthread_mutex_unlock(signal))) {
                printf("error %d\n", rc);
            } else {
                printf("locked\n");
            }
        } else if (0 == strncmp(line, "signal", 6)) {
            if (0 != (rc = pthread_mutex_lock(signal))) {
                printf("error %d\n", rc);
            } else {
                printf("signalled\n");
            }
        } else if (0 == strncmp(line, "rdlock", 6)) {
            if (0 != (rc = pthread_rwlock_rdlock((pthread_rwlock_t *) base))) {
                printf("error %d\n", rc);
            } else {
                printf("rdlocked\n");
            }
        } else {
            printf("error command\n");
        }
    }
    return 0;
}
