/*
 * fcntl_peer.c -- the other process of Ds12FcntlLockIT: takes and tests POSIX
 * record locks (fcntl) on the whole of a file, as libpmix's ds12 server does
 * in builds without process-shared rwlocks, so that the test can check that
 * Java's FileChannel locks and libpmix's fcntl locks exclude each other.
 *
 * Usage: fcntl_peer FILE     then one command per line on stdin:
 *   wrlock    F_SETLKW F_WRLCK on the whole file (blocks): "locked"
 *   trywrlock F_SETLK F_WRLCK: "granted" or "busy"
 *   unlock    F_UNLCK: "unlocked"
 * End of input ends it. Errors: "error <errno>".
 *
 * Build: gcc -O1 -g -Wall -o fcntl_peer fcntl_peer.c
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int lockop(int fd, int cmd, short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof(fl));
    fl.l_type = type;
    fl.l_whence = SEEK_SET; /* l_start 0, l_len 0: the whole file, as libpmix */
    return fcntl(fd, cmd, &fl);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fcntl_peer FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) {
        printf("error %d\n", errno);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char line[64];
    while (NULL != fgets(line, sizeof(line), stdin)) {
        if (0 == strncmp(line, "wrlock", 6)) {
            if (0 == lockop(fd, F_SETLKW, F_WRLCK)) {
                printf("locked\n");
            } else {
                printf("error %d\n", errno);
            }
        } else if (0 == strncmp(line, "trywrlock", 9)) {
            if (0 == lockop(fd, F_SETLK, F_WRLCK)) {
                printf("granted\n");
            } else if (EAGAIN == errno || EACCES == errno) {
                printf("busy\n");
            } else {
                printf("error %d\n", errno);
            }
        } else if (0 == strncmp(line, "unlock", 6)) {
            if (0 == lockop(fd, F_SETLK, F_UNLCK)) {
                printf("unlocked\n");
            } else {
                printf("error %d\n", errno);
            }
        } else {
            printf("error unknown-command\n");
        }
    }
    close(fd);
    return 0;
}
