#include "CDescriptors.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <unistd.h>

/* A quarter, at least 32 (the network event loops' first start takes 14, a store up to four, the
 * monitor one) and at most 64. */
static int reserve_of(rlim_t limit) {
    rlim_t quarter = limit / 4;
    return (int)(quarter < 32 ? 32 : quarter > 64 ? 64 : quarter);
}

/* The soft limit, or 0 when there is none to keep a reserve under. */
static int soft_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > INT_MAX) return 0;
    return (int)limit.rlim_cur;
}

int crescent_descriptor_in_reserve(int fd, int *limit_out, int *reserve_out) {
    int limit = soft_limit();
    if (limit == 0) return 0;
    int reserve = reserve_of((rlim_t)limit);
    if (limit_out) *limit_out = limit;
    if (reserve_out) *reserve_out = reserve;
    return fd >= limit - reserve;
}

int crescent_descriptor_in_core_reserve(int fd, int *limit_out, int *core_out) {
    int limit = soft_limit();
    if (limit == 0) return 0;
    int core = reserve_of((rlim_t)limit) / 2;
    if (limit_out) *limit_out = limit;
    if (core_out) *core_out = core;
    return fd >= limit - core;
}

int crescent_next_descriptor_in_reserve(int *limit_out, int *reserve_out) {
    int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (probe >= 0) close(probe);
    if (probe < 0) {
        int limit = soft_limit();
        if (limit_out) *limit_out = limit;
        if (reserve_out) *reserve_out = reserve_of((rlim_t)limit);
        return 1;
    }
    return crescent_descriptor_in_reserve(probe, limit_out, reserve_out);
}
