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
