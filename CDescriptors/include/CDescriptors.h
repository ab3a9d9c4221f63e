#ifndef CRESCENT_DESCRIPTORS_H
#define CRESCENT_DESCRIPTORS_H

/*
 * The descriptors kept for the host. A script's files, a plugin's handles, remote clients, the
 * pipes of the programs a script starts and its inotify watchers all come out of the process's
 * one descriptor table, and the host's libraries need a few at every moment: libdispatch's worker
 * monitor opens /proc/<tid>/stat once a second while work is queued and traps (SIGILL) when it
 * cannot, the network event loops' first start takes 14, a store up to four. So what scripts ask
 * for stops short of the soft RLIMIT_NOFILE by a reserve, and the host's own opens never meet
 * EMFILE while a script holds all it may.
 */

/** Whether descriptor `fd` lies in the reserve: the last quarter of the soft open-file limit, at
 *  least 32 and at most 64. When it does, `limit` and `reserve` (either may be NULL) receive the
 *  limit and the reserve's size. */
int crescent_descriptor_in_reserve(int fd, int *limit, int *reserve);

/** Whether descriptor `fd` lies in the last half of the reserve, which even remote clients may
 *  not take: a script holding all it may can still be reached (`crescent eval`, `attach`), while
 *  the store, connections and libdispatch keep the rest. `limit` and `core` (either may be NULL)
 *  receive the limit and that half's size. */
int crescent_descriptor_in_core_reserve(int fd, int *limit, int *core);

/** Whether the descriptor the next open would get (the lowest free one) lies in the reserve, or
 *  none is free; `limit` and `reserve` as above. */
int crescent_next_descriptor_in_reserve(int *limit, int *reserve);

#endif
