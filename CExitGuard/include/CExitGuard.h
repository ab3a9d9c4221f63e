#ifndef CRESCENT_EXIT_GUARD_H
#define CRESCENT_EXIT_GUARD_H

#include <signal.h>
#include <sys/types.h>

/*
 * What the host undoes on a way out that no Swift code sees: a signal whose default action ends
 * the process (SIGQUIT, SIGUSR1, SIGXCPU, ...) or a crash (SIGSEGV, SIGABRT, ...). A signal
 * handler may call only async-signal-safe functions, which Swift cannot promise, so this part is
 * C: the process groups the host started are kept in a fixed table of atomics, and the handler
 * kills each with kill(2) and calls the one restore hook (the terminal's), then lets the signal
 * end the process as it would have, so the exit status still names it.
 */

/** Records that `pid` leads a process group the host started. Returns 0, or -1 when the table is
 *  full (the atexit path still kills that group; only a fatal signal would miss it). */
int crescent_exit_guard_add_group(pid_t pid);

/** Forgets `pid` (before it is reaped, so its number cannot name another group by then). */
void crescent_exit_guard_remove_group(pid_t pid);

/** Marks the start of a launch on the calling thread (its child may exist before
 *  crescent_exit_guard_add_group learns its pid): blocks the signals from outside that the
 *  handler takes on this thread, saving the mask in `saved`, and counts the launch, which
 *  crescent_exit_guard_kill_groups waits for. Returns 0, or -1 (and nothing to end) once the
 *  host is ending: nothing may start then. */
int crescent_exit_guard_launch_begin(sigset_t *saved);

/** Ends what crescent_exit_guard_launch_begin started (after the group was added, or the launch
 *  failed) and restores the mask it saved. */
void crescent_exit_guard_launch_end(const sigset_t *saved);

/** Sends SIGKILL to every recorded group and forgets them; async-signal-safe. Waits (at most a
 *  second) for the launches under way, and from then on kills a group as soon as it is added:
 *  it is called only as the host ends. */
void crescent_exit_guard_kill_groups(void);

/** Sets the function a fatal signal calls after killing the groups (async-signal-safe itself),
 *  and installs the handlers. */
void crescent_exit_guard_set_restore(void (*restore)(void));

/** Installs the handlers once: on the crash signals and SIGQUIT unless ignored (chaining to the
 *  handler that was there, the Swift runtime's backtracer or the default action), on the other
 *  ending signals only while their action is the default one. */
void crescent_exit_guard_install(void);

#endif
