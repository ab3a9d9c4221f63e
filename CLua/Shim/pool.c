/*
 * A VM's small blocks: see vm_pool in vm.h. Only the thread running the VM's Lua code calls
 * these (Lua's allocator is never called concurrently for one state), so nothing is locked.
 */
#include "vm.h"

#include <stdlib.h>
#include <string.h>

/*
 * Under AddressSanitizer (`make sanitize`) a block on a free list and the unused rest of a chunk
 * are poisoned, so a use of a freed Lua block is reported as it would be with malloc's own
 * blocks, though the chunk itself stays allocated.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define POOL_ASAN 1
#endif
#ifdef POOL_ASAN
#include <sanitizer/asan_interface.h>
#define POOL_POISON(address, size) ASAN_POISON_MEMORY_REGION((address), (size))
#define POOL_UNPOISON(address, size) ASAN_UNPOISON_MEMORY_REGION((address), (size))
#else
#define POOL_POISON(address, size) ((void)(address), (void)(size))
#define POOL_UNPOISON(address, size) ((void)(address), (void)(size))
#endif

/* A chunk holds about 4,000 of Lua's commonest blocks (closures, upvalues, short strings). */
#define POOL_CHUNK_SIZE (64 << 10)

/* Lua never has a block of 0 bytes; 0 is kept out of the arithmetic all the same. */
static size_t class_of(size_t size) { return size == 0 ? 0 : (size - 1) / POOL_GRAIN; }

static void *pool_alloc(vm_pool *pool, size_t size) {
    if (size > POOL_LARGEST) return malloc(size);
    size_t class = class_of(size);
    size_t rounded = (class + 1) * POOL_GRAIN;
    void *block = pool->free[class];
    if (block != NULL) {
        POOL_UNPOISON(block, rounded);
        pool->free[class] = *(void **)block;
        return block;
    }
    if ((size_t)(pool->end - pool->next) < rounded) {
        /* What is left of the current chunk (less than a block of this size) stays unused. */
        char *chunk = malloc(POOL_CHUNK_SIZE);
        if (chunk == NULL) return NULL;
        *(char **)chunk = pool->chunks;
        pool->chunks = chunk;
        /* malloc's blocks are 16-byte aligned, and so then is every block carved after the link. */
        pool->next = chunk + POOL_GRAIN;
        pool->end = chunk + POOL_CHUNK_SIZE;
        POOL_POISON(pool->next, (size_t)(pool->end - pool->next));
    }
    block = pool->next;
    pool->next += rounded;
    POOL_UNPOISON(block, rounded);
    return block;
}

static void pool_free(vm_pool *pool, void *block, size_t size) {
    if (block == NULL) return;
    if (size > POOL_LARGEST) {
        free(block);
        return;
    }
    size_t class = class_of(size);
    *(void **)block = pool->free[class];
    pool->free[class] = block;
    POOL_POISON(block, (class + 1) * POOL_GRAIN);
}

void *crescent_pool_realloc(vm_pool *pool, void *ptr, size_t osize, size_t nsize) {
    if (nsize == 0) {
        pool_free(pool, ptr, osize);
        return NULL;
    }
    if (ptr == NULL) return pool_alloc(pool, nsize);
    if (osize > POOL_LARGEST && nsize > POOL_LARGEST) return realloc(ptr, nsize);
    if (osize <= POOL_LARGEST && nsize <= POOL_LARGEST && class_of(osize) == class_of(nsize)) return ptr;
    void *block = pool_alloc(pool, nsize);
    if (block == NULL) return NULL;
    memcpy(block, ptr, osize < nsize ? osize : nsize);
    pool_free(pool, ptr, osize);
    return block;
}

void crescent_pool_release(vm_pool *pool) {
    char *chunk = pool->chunks;
    while (chunk != NULL) {
        char *previous = *(char **)chunk;
        POOL_UNPOISON(chunk, POOL_CHUNK_SIZE);
        free(chunk);
        chunk = previous;
    }
    memset(pool, 0, sizeof *pool);
}
