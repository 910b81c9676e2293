/*
 * What client_bench.c and tool_bench.c print: one "BENCH <metric> <nanoseconds>" line per
 * sample, flushed at once (bin/bench-client reads the lines of every rank and tool).
 */
#ifndef PMIX_JAVA_BENCH_OUTPUT_H
#define PMIX_JAVA_BENCH_OUTPUT_H

#include <stdio.h>
#include <time.h>

/* The time of `clock` in nanoseconds. */
static inline long long now_ns(int clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One sample line. */
static inline void line(const char *metric, long long ns)
{
    printf("BENCH %s %lld\n", metric, ns);
    fflush(stdout);
}

/*
 * One sample of a burst (a line per operation, printed after the timed loop), its value twice:
 * mpirun forwards a rank's output in chunks that can end inside a line and puts the other rank's
 * between, so bin/bench-client takes such a line only when both values agree.
 */
static inline void line_checked(const char *metric, long long ns)
{
    printf("BENCH %s %lld %lld\n", metric, ns, ns);
    fflush(stdout);
}

#endif
