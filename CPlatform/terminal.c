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
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define LEAVE_BYTES 128

static struct termios saved_mode;
static int saved_input = -1, saved_output = -1;
static char leave_bytes[LEAVE_BYTES];
static size_t leave_length;
static atomic_int armed;

/* Restores the terminal if armed, and disarms; 1 when it restored. */
static int restore_if_armed(void) {
    if (!atomic_exchange(&armed, 0)) return 0;
    size_t offset = 0;
    while (offset < leave_length) {
        ssize_t written = write(saved_output, leave_bytes + offset, leave_length - offset);
        if (written <= 0) break;                 /* EINTR or a terminal that went away: give up */
        offset += (size_t)written;
    }
    tcsetattr(saved_input, TCSANOW, &saved_mode);
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
    atomic_store(&armed, 0);
    memcpy(&saved_mode, saved, sizeof saved_mode);
    memcpy(leave_bytes, leave, length);
    leave_length = length;
    saved_input = input;
    saved_output = output;
    install_once();
    atomic_store(&armed, 1);
    return 0;
}

void crescent_terminal_disarm(void) { atomic_store(&armed, 0); }

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
    unsigned stop = atomic_load(&armed) ? atomic_fetch_add(&stops_given_back, 1) + 1 : 0;
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
