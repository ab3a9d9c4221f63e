/*
 * Giving the terminal back on every way out. An interactive run puts the terminal in raw mode and
 * on the alternate screen; the host undoes that when it finishes, but a crash (a Swift runtime
 * trap, a fault, abort) or exit() from a place that never reaches the host's teardown would leave
 * the person's shell without echo on a blank screen. A signal handler may only call
 * async-signal-safe functions, which Swift cannot promise, so that part lives here: the saved
 * mode and the bytes that leave the screen modes are copied in once, and restoring is a write(2)
 * and a tcsetattr(3), both async-signal-safe. Nothing here touches Lua.
 *
 * Every way out goes through one guard, so the terminal is given back exactly once whichever
 * comes first: the host's teardown on the loop, an exit from the stop thread past a stop's grace
 * period, exit(), a crash signal, a stop. Its state says who may write to the terminal: while it
 * is held, a frame may be drawn (crescent_terminal_write_frame) and one restore may start; a
 * restore under way makes any other way out wait for it (an exit that came between the teardown's
 * leaving the screen and its setting the mode left the terminal raw), and once it is given back no
 * frame is written (one drawn after the restore landed on the shell's screen). A process that is
 * a background job of its terminal writes no mode: the terminal is the shell's then, and setting
 * it stopped the process (SIGTTOU) before it could end.
 */
#include "CPlatform.h"

#include <CExitGuard.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define LEAVE_BYTES 128

/* Who may write to the terminal. */
enum {
    UNARMED,    /* not held (never taken, or given back): nothing to restore, no frame drawn */
    HELD,       /* held: a frame may be drawn, a restore may start */
    DRAWING,    /* a frame is being written (by the thread with `drawing_here` set) */
    RESTORING   /* being given back (by the thread with `restoring_here` set) */
};

/* How long a way out waits for a frame or another restore under way (a terminal whose reader
 * stopped reading can hold a write for ever), in steps of a millisecond. */
#define WAIT_STEPS 2000

static struct termios saved_mode;
static int saved_input = -1, saved_output = -1;
static char leave_bytes[LEAVE_BYTES];
static size_t leave_length;
static atomic_int state;
/* Set on the thread that draws or restores: a signal handler running on that same thread cannot
 * wait for it to finish. */
static _Thread_local volatile sig_atomic_t drawing_here, restoring_here;

/* Whether this process may set the terminal's modes: it is in the terminal's foreground process
 * group, or the terminal is not its controlling one (tcgetpgrp fails). Both calls are
 * async-signal-safe. */
static int in_foreground(void) {
    pid_t group = tcgetpgrp(saved_input);
    return group == -1 || group == getpgrp();
}

static void pause_a_millisecond(void) {
    struct timespec step = { 0, 1000000 };
    nanosleep(&step, NULL);
}

/* Writes all of `bytes` to `descriptor`, waiting up to 2 s in all while a non-blocking one is
 * full; gives up at an error (a terminal that went away). */
static void write_all(int descriptor, const char *bytes, size_t length) {
    size_t offset = 0;
    int waits = 0;
    while (offset < length) {
        ssize_t written = write(descriptor, bytes + offset, length - offset);
        if (written < 0 && errno == EINTR) continue;
        if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && waits++ < 20) {
            struct pollfd writable = { descriptor, POLLOUT, 0 };
            poll(&writable, 1, 100);
            continue;
        }
        if (written <= 0) break;
        offset += (size_t)written;
    }
}

/* Gives the terminal back if it is held, once: 1 when this call did it. A restore under way on
 * another thread is waited for, so that a caller about to _exit leaves the terminal restored. */
static int restore_if_armed(void) {
    int saved_errno = errno;
    for (int step = 0;; step++) {
        int current = HELD;
        if (atomic_compare_exchange_strong(&state, &current, RESTORING)) break;
        if (current == UNARMED) {
            errno = saved_errno;
            return 0;
        }
        /* A signal on the thread that draws or restores: that work cannot go on before this
         * handler returns. A frame is abandoned; a restore finishes after the handler. */
        if (current == DRAWING && drawing_here) {
            atomic_store(&state, RESTORING);
            break;
        }
        if (current == RESTORING && restoring_here) {
            errno = saved_errno;
            return 0;
        }
        if (step >= WAIT_STEPS) {
            /* A frame that never ends (a terminal nobody reads): restore regardless. */
            if (current == DRAWING && atomic_compare_exchange_strong(&state, &current, RESTORING)) break;
            errno = saved_errno;
            return 0;
        }
        pause_a_millisecond();
    }
    restoring_here = 1;
    if (in_foreground()) {
        write_all(saved_output, leave_bytes, leave_length);
        tcsetattr(saved_input, TCSANOW, &saved_mode);
    }
    restoring_here = 0;
    atomic_store(&state, UNARMED);
    errno = saved_errno;
    return 1;
}

void crescent_terminal_restore(void) { (void)restore_if_armed(); }

static void install_once(void) {
    static int installed;
    if (installed) return;
    installed = 1;
    atexit(crescent_terminal_restore);
    /* The fatal signals (a crash, SIGQUIT, SIGXCPU, ...) restore through the exit guard's
     * handler, which also kills the programs the host started. */
    crescent_exit_guard_set_restore(crescent_terminal_restore);
}

int crescent_terminal_arm(int input, int output, const void *saved, size_t saved_size,
                          const char *leave, size_t length) {
    if (saved_size != sizeof saved_mode || length > LEAVE_BYTES) return -1;
    atomic_store(&state, UNARMED);
    memcpy(&saved_mode, saved, sizeof saved_mode);
    memcpy(leave_bytes, leave, length);
    leave_length = length;
    saved_input = input;
    saved_output = output;
    install_once();
    atomic_store(&state, HELD);
    return 0;
}

int crescent_terminal_is_held(void) { return atomic_load(&state) != UNARMED; }

void crescent_terminal_disarm(void) {
    int held = HELD;
    atomic_compare_exchange_strong(&state, &held, UNARMED);
}

int crescent_terminal_write_frame(const char *bytes, size_t length) {
    int held = HELD;
    if (!atomic_compare_exchange_strong(&state, &held, DRAWING)) return 0;
    /* What stdio holds for the terminal goes first (nothing, while output is held for it). */
    fflush(stdout);
    drawing_here = 1;
    write_all(saved_output, bytes, length);
    drawing_here = 0;
    /* A restore that took over (a signal on this thread) keeps its state. */
    int drawing = DRAWING;
    atomic_compare_exchange_strong(&state, &drawing, HELD);
    return 1;
}

/*
 * A stop gives the terminal back too. SIGTSTP from outside (`kill -TSTP`, a job-control tool)
 * stopped the process with the terminal raw, on the alternate screen, reporting the mouse: the
 * shell's prompt came up in that state, and after `fg` nothing took the terminal again. The
 * handler restores the terminal as a crash does, stops the process with SIGTSTP's default action
 * and, once continued, writes a byte on a pipe: the session takes the terminal again off the
 * handler (raw mode, the alternate screen, a whole frame), where Swift may run. The ctrl-z key
 * raises SIGTSTP and comes through here as well.
 */
/* Stops that gave the terminal back, the last one the process was continued from (taking the
 * terminal before that would race the stop itself), and the last one the terminal was taken
 * back after. */
static atomic_uint stops_given_back, stops_continued, stops_taken_back;
static atomic_int catching;
static int continued_pipe[2] = {-1, -1};

/* SIGTSTP's action: on_stop or SIG_DFL (sigaction is async-signal-safe). */
static void set_stop_action(void (*action)(int)) {
    struct sigaction stop;
    memset(&stop, 0, sizeof stop);
    stop.sa_handler = action;
    stop.sa_flags = SA_RESTART;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGTSTP, &stop, NULL);
}

static void on_stop(int signo) {
    (void)signo;
    int saved_errno = errno;
    /* Counted only when this stop gave the terminal back: one given back for good (the run's
     * end, under way on another thread) is never taken again after the continue. No frame is
     * drawn meanwhile: the guard refuses them once the terminal is given back. */
    unsigned stop = restore_if_armed() ? atomic_fetch_add(&stops_given_back, 1) + 1 : 0;
    set_stop_action(SIG_DFL);
    sigset_t tstp;
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    pthread_sigmask(SIG_UNBLOCK, &tstp, NULL);
    raise(SIGTSTP);                 /* stopped here until SIGCONT (at once in an orphaned group) */
    pthread_sigmask(SIG_BLOCK, &tstp, NULL);
    if (atomic_load(&catching)) set_stop_action(on_stop);
    if (stop != 0) atomic_store(&stops_continued, stop);
    if (stop != 0 && continued_pipe[1] >= 0) {
        char byte = 0;
        while (write(continued_pipe[1], &byte, 1) < 0 && errno == EINTR) {}
    }
    errno = saved_errno;
}

int crescent_terminal_catch_stop(void) {
    if (continued_pipe[0] < 0) {
        int ends[2];
        if (pipe(ends) == 0) {
            for (int i = 0; i < 2; i++) {
                fcntl(ends[i], F_SETFD, FD_CLOEXEC);
                fcntl(ends[i], F_SETFL, fcntl(ends[i], F_GETFL) | O_NONBLOCK);
            }
            continued_pipe[0] = ends[0];
            continued_pipe[1] = ends[1];
        }
    }
    /* A process started with SIGTSTP ignored (job control off) is never stopped by it. */
    struct sigaction current;
    if (sigaction(SIGTSTP, NULL, &current) == 0 && current.sa_handler != SIG_IGN) {
        atomic_store(&catching, 1);
        set_stop_action(on_stop);
    }
    return continued_pipe[0];
}

void crescent_terminal_release_stop(void) {
    if (atomic_exchange(&catching, 0)) set_stop_action(SIG_DFL);
}

int crescent_terminal_is_given_back(void) { return atomic_load(&stops_given_back) != atomic_load(&stops_taken_back); }

unsigned crescent_terminal_continued_stop(void) {
    unsigned continued = atomic_load(&stops_continued);
    return continued == atomic_load(&stops_given_back) && continued != atomic_load(&stops_taken_back) ? continued : 0;
}

void crescent_terminal_taken_back(unsigned stop) { atomic_store(&stops_taken_back, stop); }

void crescent_terminal_forget_stops(void) { atomic_store(&stops_taken_back, atomic_load(&stops_given_back)); }
