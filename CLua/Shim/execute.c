/*
 * os.execute, telling the host which signal ended its program. While system() waits, the C library
 * ignores SIGINT and SIGQUIT in its caller, so a Ctrl-C to the terminal's process group reaches only
 * the program, and the wait status is all the host learns of it: shells and Python stop as if they
 * had got the signal, and the host does the same (ScriptRunner). The rest is Lua's own os.execute
 * (loslib.c): the same arguments, errors and results.
 */
#include "vm.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>

static int execute(lua_State *L) {
    const char *command = luaL_optstring(L, 1, NULL);
    errno = 0;
    int status = system(command);
    if (command == NULL) {
        lua_pushboolean(L, status);                     /* whether there is a shell */
        return 1;
    }
    if (status != -1 && WIFSIGNALED(status)) {
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

void crescent_install_execute(lua_State *L) {                               /* os notify */
    lua_pushcclosure(L, execute, 1);                                        /* os execute */
    lua_setfield(L, -2, "execute");                                         /* os */
}
