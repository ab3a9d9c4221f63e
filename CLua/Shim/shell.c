/*
 * The programs a script starts through the shell: io.popen and os.execute. glibc's popen and
 * system start `/bin/sh -c CMD` with posix_spawn but keep what the host ignores (SIGPIPE, and
 * whatever the host's own parent ignored) and set the two signals glibc keeps for itself (32 and
 * 33) to SIG_IGN in the child, so every program a script ran that way began differently from one
 * the process service starts. Here the shell starts as the process service starts its programs
 * (ProcessLauncher): every signal at its default action (the set filled by hand, since sigfillset
 * leaves 32 and 33 out and glibc's child reads the set's bits), an empty signal mask, and only
 * descriptors 0, 1 and 2. It stays in the host's own process group, as popen's and system's do:
 * a Ctrl-C to the terminal reaches it, and the host's forced exit kills it (ProcessTree).
 *
 * os.execute also tells the host which signal ended its program. While it waits, SIGINT and
 * SIGQUIT are ignored in the host (as system() does), so a Ctrl-C to the terminal's process group
 * reaches only the program, and the wait status is all the host learns of it: shells and Python
 * stop as if they had got the signal, and the host does the same (ScriptRunner). Not when the
 * terminal sends no such signal: a controller app on the whole terminal reads its keys raw (no
 * ISIG), so its Ctrl-C is a byte the host reads, and a SIGINT can only be a `kill` meant for the
 * host, which ignored it was lost. Arguments, errors and results are Lua's own (liolib.c,
 * loslib.c). This file uses only the official API of Lua 5.4.
 */
#define _GNU_SOURCE
#include "vm.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

extern char **environ;

/* Starts `/bin/sh -c command`. With `pipe_end` 0 or 1, that descriptor of the program is one end
 * of a new pipe and `*host_end` the other (close-on-exec); with -1 the program keeps the host's
 * standard streams. Returns the pid, or -1 with errno set. */
static pid_t start_shell(const char *command, int pipe_end, int *host_end) {
    int ends[2] = { -1, -1 };
    if (pipe_end >= 0 && pipe2(ends, O_CLOEXEC) != 0) return -1;
    /* pipe_end 1 (the program writes): it gets the write end, the host reads. */
    int theirs = pipe_end == 1 ? ends[1] : ends[0];
    int mine = pipe_end == 1 ? ends[0] : ends[1];

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    /* dup2 onto itself (a host whose fd 0 or 1 was closed) clears close-on-exec instead. */
    if (pipe_end >= 0) posix_spawn_file_actions_adddup2(&actions, theirs, pipe_end);
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults, mask;
    memset(&defaults, 0xFF, sizeof defaults);                /* every signal, 32 and 33 too */
    sigemptyset(&mask);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &mask);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

    char *argv[] = { "sh", "-c", (char *)command, NULL };
    pid_t pid = 0;
    int failed = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (pipe_end >= 0) close(theirs);
    if (failed != 0) {
        if (pipe_end >= 0) close(mine);
        errno = failed;
        return -1;
    }
    if (host_end != NULL) *host_end = mine;
    return pid;
}

/* io.popen(prog [, mode]): as Lua's (liolib.c's io_popen), the handle a file whose close waits
 * for the program and answers true or nil, "exit" or "signal", and the code (files.c). */
static int popen_program(lua_State *L) {
    const char *command = luaL_checkstring(L, 1);
    const char *mode = luaL_optstring(L, 2, "r");
    luaL_argcheck(L, (mode[0] == 'r' || mode[0] == 'w') && mode[1] == '\0', 2, "invalid mode");
    fflush(NULL);                             /* as Lua's l_popen: what was written comes first */
    int base = lua_gettop(L);
    int pipe = -1;
    errno = 0;
    pid_t pid = start_shell(command, mode[0] == 'r' ? 1 : 0, &pipe);
    if (pid < 0) return luaL_fileresult(L, 0, command);
    lua_pushcfunction(L, crescent_file_from_descriptor);
    lua_pushinteger(L, pipe);
    lua_pushstring(L, mode);
    lua_pushinteger(L, pid);
    lua_call(L, 3, LUA_MULTRET);           /* file, or nil message errno (the program killed) */
    return lua_gettop(L) - base;
}

/* How many os.execute calls wait now, under `ignoring`: the first sets SIGINT and SIGQUIT to
 * SIG_IGN, the last puts back what the host had (as glibc's system() counts its callers). */
static pthread_mutex_t ignoring = PTHREAD_MUTEX_INITIALIZER;
static int waiting = 0;
static struct sigaction saved_interrupt, saved_quit;

static void ignore_terminal_signals(void) {
    pthread_mutex_lock(&ignoring);
    if (waiting++ == 0) {
        struct sigaction ignore;
        memset(&ignore, 0, sizeof ignore);
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        sigaction(SIGINT, &ignore, &saved_interrupt);
        sigaction(SIGQUIT, &ignore, &saved_quit);
    }
    pthread_mutex_unlock(&ignoring);
}

static void restore_terminal_signals(void) {
    pthread_mutex_lock(&ignoring);
    if (--waiting == 0) {
        sigaction(SIGINT, &saved_interrupt, NULL);
        sigaction(SIGQUIT, &saved_quit, NULL);
    }
    pthread_mutex_unlock(&ignoring);
}

/* Whether a key may raise SIGINT or SIGQUIT in the foreground process group: stdin is no
 * terminal (the controlling one, if any, is unknown here) or a terminal that turns keys into
 * signals (ISIG). */
static int keys_raise_signals(void) {
    struct termios mode;
    return tcgetattr(0, &mode) != 0 || (mode.c_lflag & ISIG) != 0;
}

/* system(command)'s wait status: 127 as an exit code when the shell could not start (as glibc's
 * system answers); -1 with errno when the wait failed. */
static int run_shell(const char *command) {
    sigset_t child, before;
    sigemptyset(&child);
    sigaddset(&child, SIGCHLD);
    /* A SIGCHLD handler may not reap the program before the wait below does. */
    pthread_sigmask(SIG_BLOCK, &child, &before);
    int ignoring = keys_raise_signals();
    if (ignoring) ignore_terminal_signals();
    int status = 0;
    pid_t pid = start_shell(command, -1, NULL);
    int code = 0;
    if (pid < 0) {
        status = 127 << 8;
    } else {
        pid_t waited;
        while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {}
        if (waited < 0) {
            status = -1;
            code = errno;
        }
    }
    if (ignoring) restore_terminal_signals();
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    /* luaL_execresult reads a status other than 0 with errno set as a failed call: errno is the
     * wait's error or 0 (what posix_spawn left there is no failure of os.execute's). */
    errno = code;
    return status;
}

/* os.execute([command]), with the function in upvalue 1 (if any) called with the number of the
 * signal that ended the program. */
static int execute(lua_State *L) {
    const char *command = luaL_optstring(L, 1, NULL);
    if (command == NULL) {
        lua_pushboolean(L, access("/bin/sh", X_OK) == 0);  /* whether there is a shell */
        return 1;
    }
    errno = 0;
    int status = run_shell(command);
    if (status != -1 && WIFSIGNALED(status) && lua_isfunction(L, lua_upvalueindex(1))) {
        int saved = errno;
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_pushinteger(L, WTERMSIG(status));
        /* Never an error of os.execute's own: in a finalizer run by lua_close the host no longer
         * takes calls, and there is nothing left to stop. */
        if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1);
        errno = saved;
    }
    return luaL_execresult(L, status);
}

void crescent_install_shell(lua_State *L) {
    if (lua_getglobal(L, "io") == LUA_TTABLE) {
        lua_pushcfunction(L, popen_program);
        lua_setfield(L, -2, "popen");
    }
    lua_pop(L, 1);
    if (lua_getglobal(L, "os") == LUA_TTABLE) {
        lua_pushnil(L);                                   /* no one to tell of the signal yet */
        crescent_install_execute(L);
    }
    lua_pop(L, 1);
}

void crescent_install_execute(lua_State *L) {                               /* os notify */
    lua_pushcclosure(L, execute, 1);                                        /* os execute */
    lua_setfield(L, -2, "execute");                                         /* os */
}
