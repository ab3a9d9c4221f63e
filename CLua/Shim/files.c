/*
 * Lua file handles over descriptors the host opened itself. A Lua plugin's `io.open`, `io.lines`,
 * `io.popen` and loaders do not let Lua's own fopen/popen name a path or a command again after the
 * host checked it (between the two, a link could be swapped): the host opens the file (beneath a
 * granted folder) or starts the program (confined) and hands the descriptor here, which makes it
 * an ordinary `io` file handle. This file uses only the official API of Lua 5.4.
 */
#define _GNU_SOURCE
#include "vm.h"
#include "CDescriptors.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* An io handle (luaL_Stream, which the io library's methods read) and the program behind it. */
typedef struct crescent_stream {
    luaL_Stream stream;
    pid_t pid;                                  /* 0: a plain file */
} crescent_stream;

static int close_file(lua_State *L) {
    crescent_stream *p = (crescent_stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
    int result = fclose(p->stream.f);
    return luaL_fileresult(L, result == 0, NULL);
}

/* As pclose: closes the pipe, then waits for the program and answers how it ended. */
static int close_process(lua_State *L) {
    crescent_stream *p = (crescent_stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
    fclose(p->stream.f);
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(p->pid, &status, 0)) < 0 && errno == EINTR) {}
    if (waited < 0) return luaL_execresult(L, -1);
    /* luaL_execresult reads a non-zero status with errno set as a failed call (as Lua's own
       pclose does, errno is cleared: an exit status of 1 is "exit", 1, not a stale errno). */
    errno = 0;
    return luaL_execresult(L, status);
}

int crescent_file_from_descriptor(lua_State *L) {                           /* fd mode [pid] */
    int fd = (int)luaL_checkinteger(L, 1);
    const char *mode = luaL_checkstring(L, 2);
    pid_t pid = (pid_t)luaL_optinteger(L, 3, 0);
    /* The handle exists (closed) before the stream does, so a memory error here leaks nothing. */
    crescent_stream *p = (crescent_stream *)lua_newuserdatauv(L, sizeof(crescent_stream), 0);
    p->stream.f = NULL;
    p->stream.closef = NULL;                   /* closed, as the io library marks one */
    p->pid = pid;
    luaL_setmetatable(L, LUA_FILEHANDLE);                                   /* fd mode [pid] file */
    /* A handle in the host's reserve is refused as the system refuses one past the limit. */
    int limit = 0, reserve = 0;
    int reserved = crescent_descriptor_in_reserve(fd, &limit, &reserve);
    p->stream.f = reserved ? NULL : fdopen(fd, mode);
    if (p->stream.f == NULL) {
        int code = reserved ? EMFILE : errno;
        close(fd);
        if (pid > 0) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        }
        if (!reserved) {
            errno = code;
            return luaL_fileresult(L, 0, NULL);
        }
        luaL_pushfail(L);
        crescent_push_descriptor_refusal(L, NULL, limit, reserve);
        lua_pushinteger(L, code);
        return 3;
    }
    p->stream.closef = pid > 0 ? close_process : close_file;
    return 1;
}
