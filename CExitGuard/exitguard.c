/*
 * The fatal-signal path of the host's exit: kill the process groups it started and give the
 * terminal back, from a signal handler. See include/CExitGuard.h.
 */
#include "include/CExitGuard.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

/* Live groups are a few hundred at most (each holds pipes out of the descriptor limit); a slot
 * of 0 is free. add and remove scan up to the high-water mark, the handler scans the same. */
#define GROUP_SLOTS 16384
static _Atomic pid_t groups[GROUP_SLOTS];
static atomic_int high_water;
/* Launches between crescent_exit_guard_launch_begin and _end: their child may exist before its
 * pid is in the table. */
static atomic_int launches;
/* Set once the groups are being killed (the host ends): a group added after is killed at once. */
static atomic_int closing;

/* The signals the handler takes that arrive from outside (see crash_signals and ending_signals
 * below): blocked on a thread while it launches, so the handler never runs on a thread whose
 * launch it would wait for. */
static void launch_signals(sigset_t *set) {
    sigemptyset(set);
    const int outside[] = { SIGQUIT, SIGXCPU, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXFSZ, SIGSYS };
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) sigaddset(set, outside[i]);
}

void crescent_exit_guard_launch_end(const sigset_t *saved) {
    atomic_fetch_sub(&launches, 1);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

int crescent_exit_guard_launch_begin(sigset_t *saved) {
    sigset_t block;
    launch_signals(&block);
    pthread_sigmask(SIG_BLOCK, &block, saved);
    atomic_fetch_add(&launches, 1);
    /* Counted before closing is read, as kill_groups sets closing before it reads the count:
     * either it waits for this launch, or this launch sees it and starts nothing (a child
     * started once the handler has stopped waiting would exec after the host is gone). */
    if (atomic_load(&closing)) {
        crescent_exit_guard_launch_end(saved);
        return -1;
    }
    return 0;
}

int crescent_exit_guard_add_group(pid_t pid) {
    if (pid <= 0) return -1;
    for (int i = 0; i < GROUP_SLOTS; i++) {
        pid_t empty = 0;
        if (atomic_compare_exchange_strong(&groups[i], &empty, pid)) {
            int mark = atomic_load(&high_water);
            while (mark < i + 1 && !atomic_compare_exchange_weak(&high_water, &mark, i + 1)) {}
            /* Stored before closing is read, as kill_groups sets closing before it scans: one of
             * the two sees the other, so the group is killed by at least one of them. */
            if (atomic_load(&closing)) kill(-pid, SIGKILL);
            return 0;
        }
    }
    return -1;
}

void crescent_exit_guard_remove_group(pid_t pid) {
    if (pid <= 0) return;
    int mark = atomic_load(&high_water);
    for (int i = 0; i < mark; i++) {
        pid_t expected = pid;
        if (atomic_compare_exchange_strong(&groups[i], &expected, 0)) return;
    }
}

void crescent_exit_guard_kill_groups(void) {
    atomic_store(&closing, 1);
    /* A launch under way has a child whose pid the table learns when its posix_spawn returns
     * (after the child's exec); waited for, 1 ms at a time (nanosleep is async-signal-safe), for
     * at most a second: a launch on a thread that crashed never ends. */
    for (int waited = 0; waited < 1000 && atomic_load(&launches) > 0; waited++) {
        struct timespec step = { 0, 1000000 };
        nanosleep(&step, NULL);
    }
    int mark = atomic_load(&high_water);
    for (int i = 0; i < mark; i++) {
        pid_t pid = atomic_exchange(&groups[i], 0);
        if (pid > 0) kill(-pid, SIGKILL);
    }
}

static void (*_Atomic restore_hook)(void);

/* The signals a crash arrives by, and SIGQUIT (a person's kill -QUIT, which dumps core): each
 * handler chains to the handler that was there before (the Swift runtime's backtracer takes
 * these when it is on, or the default action). Left alone when ignored (a shell's background
 * job starts with SIGQUIT ignored). */
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGQUIT };
/* The other signals whose default action ends the process and that the host does not handle
 * itself (SIGINT, SIGTERM and SIGHUP are, on the loop): SIGXCPU (ulimit -t), SIGUSR1/2, SIGALRM,
 * SIGVTALRM, SIGPROF, SIGXFSZ, SIGSYS. Guarded only while their action is the default one, so a
 * handler someone set (which may not end the process) is left alone; each dies of the signal. */
static const int ending_signals[] = { SIGXCPU, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXFSZ, SIGSYS };
#define ENDING_SIGNAL_COUNT (sizeof ending_signals / sizeof ending_signals[0])
#define CRASH_SIGNAL_COUNT (sizeof crash_signals / sizeof crash_signals[0])
static struct sigaction previous[CRASH_SIGNAL_COUNT];

static void signal_default(int signal) {
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal, &fallback, NULL);
}

static void on_fatal(int signal, siginfo_t *info, void *context) {
    crescent_exit_guard_kill_groups();
    void (*restore)(void) = atomic_load(&restore_hook);
    if (restore) restore();
    /* The previous action of a crash signal (the Swift runtime's crash report) is called here,
     * with the signal's own information: once it returns, the process dies of the signal. Handed
     * the signal by a raise instead, it reported a signal someone sent (kill -SEGV, SIGQUIT) and
     * returned, and the process, its terminal already given back, lived on without reading keys. */
    for (size_t i = 0; i < CRASH_SIGNAL_COUNT; i++) {
        if (crash_signals[i] != signal) continue;
        if (previous[i].sa_flags & SA_SIGINFO) {
            if (previous[i].sa_sigaction != NULL) previous[i].sa_sigaction(signal, info, context);
        } else if (previous[i].sa_handler != SIG_DFL && previous[i].sa_handler != SIG_IGN) {
            previous[i].sa_handler(signal);
        }
    }
    signal_default(signal);
    /* Blocked until this handler returns; then the default action ends the process (a fault
     * would also fault again). */
    raise(signal);
}

void crescent_exit_guard_install(void) {
    static atomic_int installed;
    if (atomic_exchange(&installed, 1)) return;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fatal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < CRASH_SIGNAL_COUNT; i++) {
        if (sigaction(crash_signals[i], NULL, &previous[i]) == 0 && !(previous[i].sa_handler == SIG_IGN
            && !(previous[i].sa_flags & SA_SIGINFO))) {
            sigaction(crash_signals[i], &action, NULL);
        }
    }
    for (size_t i = 0; i < ENDING_SIGNAL_COUNT; i++) {
        struct sigaction current;
        if (sigaction(ending_signals[i], NULL, &current) == 0 && current.sa_handler == SIG_DFL
            && !(current.sa_flags & SA_SIGINFO)) {
            sigaction(ending_signals[i], &action, NULL);
        }
    }
}

void crescent_exit_guard_set_restore(void (*restore)(void)) {
    atomic_store(&restore_hook, restore);
    crescent_exit_guard_install();
}
