/*
 * Giving the terminal back on every way out. An interactive run puts the terminal in raw mode and
 * on the alternate screen; the host undoes that when it finishes, but a crash (a Swift runtime
 * trap, a fault, abort) or exit() from a place that never reaches the host's teardown would leave
 * the person's shell without echo on a blank screen. A signal handler may only call
 * async-signal-safe functions, which Swift cannot promise, so that part lives here: the saved
 * mode and the bytes that leave the screen modes are copied in once, and restoring is a write(2)
 * and a tcsetattr(3), both async-signal-safe. Nothing here touches Lua.
 */
#include "include/CLua.h"

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

/* The signals a crash arrives by; each handler restores the terminal, then lets the handler that
 * was there before (the Swift runtime's backtracer, or the default action) see the signal. */
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE };
/* The other signals whose default action ends the process and that nothing here handles (SIGINT,
 * SIGTERM and SIGHUP are, on the loop): SIGQUIT (a person's kill -QUIT), SIGXCPU (ulimit -t),
 * SIGUSR1/2, SIGALRM, SIGVTALRM, SIGPROF, SIGXFSZ, SIGSYS. Guarded only while their action is the
 * default one, so a handler someone set is left alone; each restores, then dies of the signal. */
static const int ending_signals[] = { SIGQUIT, SIGXCPU, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXFSZ, SIGSYS };
#define ENDING_SIGNAL_COUNT (sizeof ending_signals / sizeof ending_signals[0])
#define CRASH_SIGNAL_COUNT (sizeof crash_signals / sizeof crash_signals[0])
static struct sigaction previous[CRASH_SIGNAL_COUNT];

void crescent_terminal_restore(void) {
    if (!atomic_exchange(&armed, 0)) return;
    size_t offset = 0;
    while (offset < leave_length) {
        ssize_t written = write(saved_output, leave_bytes + offset, leave_length - offset);
        if (written <= 0) break;                 /* EINTR or a terminal that went away: give up */
        offset += (size_t)written;
    }
    tcsetattr(saved_input, TCSANOW, &saved_mode);
}

static void signal_default(int signal) {
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal, &fallback, NULL);
}

static void on_crash(int signal) {
    crescent_terminal_restore();
    for (size_t i = 0; i < CRASH_SIGNAL_COUNT; i++) {
        if (crash_signals[i] == signal) sigaction(signal, &previous[i], NULL);
    }
    for (size_t i = 0; i < ENDING_SIGNAL_COUNT; i++) {
        if (ending_signals[i] == signal) signal_default(signal);
    }
    /* Blocked until this handler returns; then the previous action sees it (a fault would also
     * fault again, a raised signal would not). */
    raise(signal);
}

static void install_once(void) {
    static int installed;
    if (installed) return;
    installed = 1;
    atexit(crescent_terminal_restore);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_crash;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < CRASH_SIGNAL_COUNT; i++) sigaction(crash_signals[i], &action, &previous[i]);
    for (size_t i = 0; i < ENDING_SIGNAL_COUNT; i++) {
        struct sigaction current;
        if (sigaction(ending_signals[i], NULL, &current) == 0 && current.sa_handler == SIG_DFL
            && !(current.sa_flags & SA_SIGINFO)) {
            sigaction(ending_signals[i], &action, NULL);
        }
    }
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
