/*
 * Giving the terminal back on every way out. An interactive run puts the terminal in raw mode and
 * on the alternate screen; the host undoes that when it finishes, but a crash (a Swift runtime
 * trap, a fault, abort) or exit() from a place that never reaches the host's teardown would leave
 * the person's shell without echo on a blank screen. A signal handler may only call
 * async-signal-safe functions, which Swift cannot promise, so that part lives here: the saved
 * mode and the bytes that leave the screen modes are copied in once, and restoring is a write(2)
 * and a tcsetattr(3), both async-signal-safe. Nothing here touches Lua.
 */
#include "CPlatform.h"

#include <CExitGuard.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define LEAVE_BYTES 128
/* How long a restore waits for another thread's frame or restore to end (in 1 ms steps) before it
 * goes ahead or gives up: a write to a terminal nobody reads may block for ever. */
#define WAIT_STEPS 1000

static struct termios saved_mode;
static int saved_input = -1, saved_output = -1;
static char leave_bytes[LEAVE_BYTES];
static size_t leave_length;

/*
 * Who holds the terminal now. A restore is done once, whoever asks first (the session's end on
 * the loop, the forced exit on the stop thread, a crash or stop signal on any thread), and the
 * others wait until it is complete: the forced exit of a second ctrl-c used to find the guard
 * disarmed by a teardown that had written the leave bytes but not yet set the mode, and exited
 * with the terminal raw. Frames are written under the same state, so none lands after the
 * restore (a busy note drawn by a handler that a forced exit's kill let return).
 */
enum { DISARMED = 0, ARMED = 1, RESTORING = 2, DRAWING = 3 };
static atomic_int state;
/* The thread that draws or restores now (a signal on that same thread must not wait for it). */
static atomic_uintptr_t holder;
/* Set when a stop of the run begins: no frame after it. */
static atomic_int frames_closed;

static uintptr_t this_thread(void) { return (uintptr_t)pthread_self(); }

static void pause_briefly(void) {
    struct timespec step = { 0, 1000000 };
    nanosleep(&step, NULL);
}

/* Writes all of `bytes` to `descriptor`, giving up on an error or a terminal that takes nothing
 * for a second. */
static void write_all(int descriptor, const char *bytes, size_t length) {
    size_t offset = 0;
    while (offset < length) {
        ssize_t written = write(descriptor, bytes + offset, length - offset);
        if (written > 0) {
            offset += (size_t)written;
        } else if (written < 0 && errno == EINTR) {
            continue;
        } else if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd writable = { descriptor, POLLOUT, 0 };
            if (poll(&writable, 1, 1000) <= 0) return;
        } else {
            return;
        }
    }
}

/* Writes the leave bytes and sets the saved mode, unless the process is a background job: a
 * stop gave the terminal back already and the shell owns it now (a change of its mode from the
 * background stopped the process on SIGTTOU, so `kill %1` of a suspended app never ended it).
 * SIGTTOU is blocked meanwhile, so a job moved to the background in between is not stopped. */
static void give_back(void) {
    int errno_before = errno;
    pid_t group = tcgetpgrp(saved_input);
    if (group == -1 || group == getpgrp()) {
        sigset_t ttou, before;
        sigemptyset(&ttou);
        sigaddset(&ttou, SIGTTOU);
        pthread_sigmask(SIG_BLOCK, &ttou, &before);
        write_all(saved_output, leave_bytes, leave_length);
        tcsetattr(saved_input, TCSANOW, &saved_mode);
        pthread_sigmask(SIG_SETMASK, &before, NULL);
    }
    errno = errno_before;
}

/* Restores the terminal if armed, and disarms; 1 when this call restored it. Complete before it
 * returns, whichever caller did it: a second caller waits for the first (at most a second). */
static int restore_if_armed(void) {
    uintptr_t self = this_thread();
    for (int waited = 0;; waited++) {
        int expected = ARMED;
        if (atomic_compare_exchange_strong(&state, &expected, RESTORING)) break;
        if (expected == DISARMED) return 0;
        int own = atomic_load(&holder) == self;
        if (expected == RESTORING && own) {
            /* A signal on the thread that was restoring: do it whole here, as it may not return. */
            give_back();
            return 1;
        }
        if (expected == DRAWING && (own || waited >= WAIT_STEPS)) {
            /* Interrupted in this thread's own frame, or a frame stuck on a full terminal: the
             * restore goes over it (the frame's end leaves the state alone). */
            if (atomic_compare_exchange_strong(&state, &expected, RESTORING)) break;
            continue;
        }
        if (waited >= WAIT_STEPS) return 0;
        pause_briefly();
    }
    atomic_store(&holder, self);
    give_back();
    atomic_store(&holder, 0);
    atomic_store(&state, DISARMED);
    return 1;
}

void crescent_terminal_restore(void) { (void)restore_if_armed(); }

int crescent_terminal_give_back(void) { return restore_if_armed(); }

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
    atomic_store(&state, DISARMED);
    memcpy(&saved_mode, saved, sizeof saved_mode);
    memcpy(leave_bytes, leave, length);
    leave_length = length;
    saved_input = input;
    saved_output = output;
    install_once();
    atomic_store(&frames_closed, 0);
    atomic_store(&state, ARMED);
    return 0;
}

void crescent_terminal_disarm(void) {
    int expected = ARMED;
    atomic_compare_exchange_strong(&state, &expected, DISARMED);
}

int crescent_terminal_draw(const char *bytes, size_t length) {
    if (atomic_load(&frames_closed)) return 0;
    int expected = ARMED;
    if (!atomic_compare_exchange_strong(&state, &expected, DRAWING)) return 0;
    atomic_store(&holder, this_thread());
    if (!atomic_load(&frames_closed)) write_all(saved_output, bytes, length);
    atomic_store(&holder, 0);
    expected = DRAWING;
    atomic_compare_exchange_strong(&state, &expected, ARMED);
    return 1;
}

void crescent_terminal_close_frames(void) { atomic_store(&frames_closed, 1); }

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
    /* Counted first: the host draws no frame from here until it has taken the terminal back. */
    int held = atomic_load(&state) == ARMED || atomic_load(&state) == DRAWING;
    unsigned stop = held ? atomic_fetch_add(&stops_given_back, 1) + 1 : 0;
    restore_if_armed();
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
