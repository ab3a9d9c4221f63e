/*
 * Processor affinity for crescent-bench: Swift's Glibc module leaves out the GNU scheduling
 * calls, so the bench reads and sets a thread's processors through these (a mask of
 * crescent_affinity_size() bytes, one bit per processor). Nothing in crescent uses them.
 */
#define _GNU_SOURCE
#include <sched.h>
#include "CPlatform.h"

size_t crescent_affinity_size(void) {
    return sizeof(cpu_set_t);
}

int crescent_get_affinity(int thread, void *mask) {
    return sched_getaffinity(thread, sizeof(cpu_set_t), (cpu_set_t *)mask);
}

int crescent_set_affinity(int thread, const void *mask) {
    return sched_setaffinity(thread, sizeof(cpu_set_t), (const cpu_set_t *)mask);
}
