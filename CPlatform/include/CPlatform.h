/*
 * CPlatform: the few system calls Swift's Glibc module cannot make or that must be plain C, kept
 * apart from the Lua shim (CLua) because none of them touches Lua: output through C stdio (the
 * stream Lua's print and io.write share), the terminal given back from a signal handler, whether a
 * signal has a handler, malloc's tuning and measure, and the bench's processor affinity.
 */
#ifndef CRESCENT_CPLATFORM_H
#define CRESCENT_CPLATFORM_H

#include <stddef.h>

/* ---- Output through C stdio, so print, io.write and the host share one ordered stream ------- */

void crescent_write_stdout(const char *bytes, size_t length);
void crescent_write_stderr(const char *bytes, size_t length);
void crescent_flush_stdout(void);
/** 1 when the descriptor is a terminal. */
int crescent_isatty(int fd);

/* ---- The terminal given back on every way out (terminal.c) ------------------------------------ */

/** Remembers how to give the terminal back: the mode saved before raw mode (a `struct termios`
 *  of `saved_size` bytes, set again on `input`) and the bytes that leave the screen modes (written
 *  to `output`). From then until crescent_terminal_restore or _disarm, a crash signal (SIGSEGV,
 *  SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE) or exit() restores first. Returns 0, or -1 when the
 *  sizes do not fit. */
int crescent_terminal_arm(int input, int output, const void *saved, size_t saved_size,
                          const char *leave, size_t length);
/** Gives the terminal back now if armed, and disarms: once, whichever way out calls it first (the
 *  teardown, an exit, a crash signal, a stop); a call while another thread gives it back waits for
 *  that (up to 2 s), so a caller about to _exit leaves it restored. A background job of the
 *  terminal only disarms: its modes are the shell's. Async-signal-safe, safe to call twice. */
void crescent_terminal_restore(void);
/** Forgets the saved mode without restoring it. */
void crescent_terminal_disarm(void);
/** 1 while the terminal is armed (held by a terminal session, the REPL or a question). */
int crescent_terminal_is_held(void);
/** Writes `bytes` (a frame) to the terminal while it is armed, after what stdio holds for it;
 *  returns 0 and writes nothing once it is given back (or never taken): a frame never lands on
 *  the shell's screen. A restore from another thread waits until the frame is written. */
int crescent_terminal_write_frame(const char *bytes, size_t length);
/** Catches SIGTSTP until crescent_terminal_release_stop(): a stop (`kill -TSTP`, job control, the
 *  ctrl-z key's raise) restores the terminal first when armed, as a crash does, then stops the
 *  process as SIGTSTP's default action does. Returns the read end of a pipe (non-blocking) that
 *  gets a byte when the process continues after a stop that gave the terminal back, or -1 when
 *  no pipe could be made. Leaves SIGTSTP ignored when it was. */
int crescent_terminal_catch_stop(void);
/** SIGTSTP's default action again. */
void crescent_terminal_release_stop(void);
/** 1 while a stop has given the terminal back and it has not been taken again since. */
int crescent_terminal_is_given_back(void);
/** The stop (a number from 1) the process has been continued from, when the terminal may be taken
 *  again after it; 0 while it is not given back or the process is not continued yet. */
unsigned crescent_terminal_continued_stop(void);
/** The terminal is taken again after `stop` (crescent_terminal_continued_stop()). */
void crescent_terminal_taken_back(unsigned stop);
/** No stop so far leaves the terminal given back (the session that held it has ended). */
void crescent_terminal_forget_stops(void);

/* ---- Signals, memory and processors --------------------------------------------------------- */

/** 1 when signal `signo` has a handler (not SIG_IGN or SIG_DFL) (signals.c). */
int crescent_signal_is_caught(int signo);

/** Tunes the process's malloc for a Lua VM on a thread of its own: each heap grows and shrinks
 *  in steps of 64 MiB instead of a page at a time (glibc's M_TOP_PAD). For executables, once, at
 *  the start. */
void crescent_tune_allocator(void);
/** Keeps malloc's threshold for mapping a block on its own at its default: freed large blocks go
 * back to the system at once, as a process under a memory limit needs (its threads' stacks). */
void crescent_keep_large_blocks_mapped(void);

/** Bytes the process heap has handed out (glibc mallinfo2), for memory measurements. */
size_t crescent_heap_bytes(void);

/** The bench's processor affinity (affinity.c): the size of a mask, and a thread's mask read or
 *  set (0, or -1 with errno). */
size_t crescent_affinity_size(void);
int crescent_get_affinity(int thread, void *mask);
int crescent_set_affinity(int thread, const void *mask);

#endif
