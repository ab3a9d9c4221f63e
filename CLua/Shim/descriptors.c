/*
 * The descriptors a script may not take. A script's files come out of the host's own descriptor
 * table, and the host's libraries need a few at every moment: libdispatch's worker monitor opens
 * /proc/<tid>/stat once a second while work is queued and traps (SIGILL) when it cannot, NIO needs
 * one per connection, SQLite up to three per store, a process three pipes. A script keeping every
 * file it opens (`files[#files + 1] = io.open(path)`) used to reach EMFILE and could take the
 * whole process down with it. So io.open, io.lines, io.tmpfile, io.popen, io.input and io.output
 * refuse, as the system's EMFILE would, when the lowest free descriptor (the one they would get)
 * lies in the reserve CDescriptors keeps for the host; a Lua plugin's handles (made from
 * descriptors the host opened, files.c) keep the same reserve.
 */
#include "vm.h"
#include "CDescriptors.h"

#include <errno.h>

/* Pushes the refusal's message for `what` (`io.open("data.txt")`) when the next descriptor lies
 * in the reserve; returns 0 and pushes nothing otherwise. */
static int push_refusal(lua_State *L, const char *what) {
    int limit = 0, reserve = 0;
    if (!crescent_next_descriptor_in_reserve(&limit, &reserve)) return 0;
    crescent_push_descriptor_refusal(L, what, limit, reserve);
    return 1;
}

void crescent_push_descriptor_refusal(lua_State *L, const char *what, int limit, int reserve) {
    if (limit < 2 * reserve) {
        /* Closing files cannot help: the host's own take what the reserve leaves. */
        lua_pushfstring(L, "%s%stoo many open files (EMFILE): the open-file limit of %d (ulimit -n) leaves scripts almost "
                           "nothing beside the %d descriptors crescent keeps for itself; raise it (ulimit -n 1024)",
                        what ? what : "", what ? ": " : "", limit, reserve);
        return;
    }
    lua_pushfstring(L, "%s%stoo many open files (EMFILE): the last %d of the %d descriptors the open-file limit allows "
                       "are kept for crescent itself; close files you no longer need (file:close()) or raise the limit (ulimit -n)",
                    what ? what : "", what ? ": " : "", reserve, limit);
}

/* Upvalues: the original function, its name, and whether it is one of io.lines, io.input and
 * io.output, which open only when given a file name and raise when they cannot (io.open,
 * io.tmpfile and io.popen always open and answer nil, message, errno). */
static int guarded_open(lua_State *L) {
    int raises = lua_toboolean(L, lua_upvalueindex(3));
    if (!raises || lua_type(L, 1) == LUA_TSTRING) {
        const char *name = lua_tostring(L, lua_upvalueindex(2));
        const char *argument = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : NULL;
        if (argument != NULL) {
            lua_pushfstring(L, "%s(\"%s\")", name, argument);
        } else {
            lua_pushstring(L, name);
        }
        if (push_refusal(L, lua_tostring(L, -1))) {
            if (raises) return lua_error(L);
            luaL_pushfail(L);
            lua_insert(L, -2);
            lua_pushinteger(L, EMFILE);
            return 3;
        }
        lua_pop(L, 1);
    }
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

static void guard(lua_State *L, const char *field, const char *name, int raises) {
    if (lua_getfield(L, -1, field) != LUA_TFUNCTION || lua_tocfunction(L, -1) == NULL) {
        lua_pop(L, 1);
        return;
    }
    lua_pushstring(L, name);
    lua_pushboolean(L, raises);
    lua_pushcclosure(L, guarded_open, 3);
    lua_setfield(L, -2, field);
}

void crescent_install_descriptor_reserve(lua_State *L) {
    if (lua_getglobal(L, "io") == LUA_TTABLE) {
        guard(L, "open", "io.open", 0);
        guard(L, "tmpfile", "io.tmpfile", 0);
        guard(L, "popen", "io.popen", 0);
        guard(L, "lines", "io.lines", 1);
        guard(L, "input", "io.input", 1);
        guard(L, "output", "io.output", 1);
    }
    lua_pop(L, 1);
}
