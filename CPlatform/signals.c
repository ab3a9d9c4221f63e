/*
 * Whether a signal has a handler: Dispatch installs its handler for a signal source on its own
 * thread some time after the source is resumed, and until then a signal set to SIG_IGN is lost.
 * Swift cannot compare the handler with SIG_IGN, so the check is here.
 */
#include <signal.h>
#include "CPlatform.h"

int crescent_signal_is_caught(int signo) {
    struct sigaction action;
    if (sigaction(signo, NULL, &action) != 0) return 0;
    if (action.sa_flags & SA_SIGINFO) return action.sa_sigaction != NULL;
    return action.sa_handler != SIG_IGN && action.sa_handler != SIG_DFL;
}
