/*
 * glibc malloc's tuning and measure: mallopt and mallinfo2 are not in Swift's Glibc module.
 */
#include "CPlatform.h"

#include <malloc.h>

/* A VM running on the host loop's thread allocates from a glibc arena of that thread, which grows
 * by mprotect one page past what each request needs: building 100,000 tables made 31,000 such
 * calls, about a tenth of the time. With the pad at a heap's full size (64 MiB) an arena's heap
 * is opened once; untouched pages of it cost no memory, and up to the pad of freed memory stays
 * with the process instead of going back to the system. */
void crescent_tune_allocator(void) {
    mallopt(M_TOP_PAD, 64 << 20);
}

void crescent_keep_large_blocks_mapped(void) {
    /* Setting it turns off glibc's raising of the threshold after a large block is freed, which
     * left the blocks a script freed in the heap, never returned. */
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
}

size_t crescent_heap_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
