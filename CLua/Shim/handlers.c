/*
 * Message handlers and finalizers, made interruptible. This file uses only the official API of
 * Lua 5.4 (the host links Debian's liblua5.4, so Lua itself cannot be patched).
 *
 * Lua runs no hook on a thread while a hook runs there, and the interrupt hook raises its error
 * from inside a hook: the message handler that error calls (xpcall's) runs with hooks off, so a
 * handler that loops could never be stopped. Lua also turns hooks off while a finalizer (__gc)
 * runs. Hooks are a property of each thread, so both kinds of code get a way out:
 *
 * - xpcall's handler is wrapped: while an interrupt is pending, the script's handler is not called
 *   and the wrapper raises the interrupt again, so the xpcall ends as Lua ends any handler that
 *   fails ("error in error handling"); the interrupt stays armed on the code that called xpcall.
 *   A handler that loops before the interrupt comes runs with hooks on and is stopped as any code.
 * - a script's __gc function (a Lua function in a metatable given to setmetatable or
 *   debug.setmetatable) is wrapped to run in a coroutine of its own, where the interrupt hook can be
 *   armed; the script's own hooks are not run there (run_script_hook checks
 *   crescent_finalizer_depth), as Lua runs none in finalizers. A __gc stored into a metatable after
 *   it was set is not wrapped (Lua reads the field only when it finalizes).
 */
#include "vm.h"

_Thread_local int crescent_finalizer_depth;

/* The script's message handler (upvalue 1), unless an interrupt is pending. */
static int guarded_handler(lua_State *L) {
    if (crescent_interrupt_pending(L) != CRESCENT_INTERRUPT_NONE) return crescent_raise_interrupt(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* The standard library's function this wrapper stands for (upvalue 1), called directly in the
 * wrapper's frame so that yields across xpcall and its error messages work as under lua5.4. */
static lua_CFunction original(lua_State *L) { return lua_tocfunction(L, lua_upvalueindex(1)); }

static int guarded_xpcall(lua_State *L) {
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guarded_handler, 1);
    lua_replace(L, 2);
    return original(L)(L);
}

/* While the state closes, a finalizer's failure is what the close reports (LuaVM.close), so the
 * error on top gets where the function was defined: an interrupted one's error says only that it
 * was interrupted, and a finalizer has no caller whose line would tell. */
static void name_finalizer(lua_State *L) {
    lua_Debug ar;
    lua_pushvalue(L, lua_upvalueindex(1));          /* error function */
    lua_getinfo(L, ">S", &ar);                      /* error */
    if (crescent_interrupt_pending(L) != CRESCENT_INTERRUPT_NONE) {
        lua_pushfstring(L, "the __gc function defined at %s:%d was still running and was stopped", ar.short_src, ar.linedefined);
    } else {
        const char *message = lua_tostring(L, -1);
        lua_pushfstring(L, "%s (in the __gc function defined at %s:%d)", message ? message : "an error object that is not a string",
                        ar.short_src, ar.linedefined);
    }
    lua_replace(L, -2);                             /* named */
}

/* Runs the script's finalizer (upvalue 1) in a fresh coroutine, with the object as argument. */
static int run_finalizer(lua_State *L) {
    int nargs = lua_gettop(L);
    lua_State *co = lua_newthread(L);
    lua_sethook(co, NULL, 0, 0);                    /* inherited: hooks do not run in finalizers */
    if (!lua_checkstack(co, nargs + 1)) return luaL_error(L, "__gc: stack overflow");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_xmove(L, co, 1);
    for (int i = 1; i <= nargs; i++) lua_pushvalue(L, i);
    lua_xmove(L, co, nargs);
    int results = 0;
    crescent_finalizer_depth++;
    lua_State *previous = crescent_enter_lua(co);
    int status = lua_resume(co, L, nargs, &results);
    crescent_leave_lua(co, previous);
    crescent_finalizer_depth--;
    crescent_rearm_interrupt(L);
    if (status == LUA_OK) return 0;
    if (status == LUA_YIELD) return luaL_error(L, "attempt to yield from a finalizer (__gc)");
    lua_xmove(co, L, 1);                            /* Lua reports it as a warning, as any __gc error */
    if (vm_of(L)->closing) name_finalizer(L);
    return lua_error(L);
}

/* Wraps the Lua function in field __gc of the metatable at `index`, if there is one. */
static void guard_finalizer(lua_State *L, int index) {
    if (!lua_istable(L, index)) return;
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, index) == LUA_TFUNCTION && !lua_iscfunction(L, -1)) {
        lua_pushcclosure(L, run_finalizer, 1);
        lua_pushliteral(L, "__gc");
        lua_insert(L, -2);
        lua_rawset(L, index);
    } else {
        lua_pop(L, 1);
    }
}

/* setmetatable and debug.setmetatable: the metatable's finalizer is wrapped, then the standard
 * function runs (it drops the metatable from the stack; a refusal leaves a wrapped __gc behind,
 * which behaves as the script's own). */
static int guarded_setmetatable(lua_State *L) {
    guard_finalizer(L, 2);
    if (crescent_is_json_marked(L, 1)) {
        /* A json mark's __metatable keeps getmetatable from handing out the shared mark; the
         * table itself may still get another metatable (a class for decoded data). */
        int type = lua_type(L, 2);
        luaL_argexpected(L, type == LUA_TNIL || type == LUA_TTABLE, 2, "nil or table");
        lua_settop(L, 2);
        lua_setmetatable(L, 1);
        return 1;
    }
    return original(L)(L);
}

/* debug.setmetatable also refuses a data model: without its metatable a model's proxy would take
 * assignments (models are read-only, even to the debug library; setmetatable refuses them for
 * their protected metatable). */
static int guarded_debug_setmetatable(lua_State *L) {
    if (crescent_is_model(L, 1)) {
        return luaL_error(L, "debug.setmetatable: the metatable of a data model cannot change (it is a read-only snapshot)");
    }
    return guarded_setmetatable(L);
}

void crescent_install_handler_guards(lua_State *L) {
    lua_pushglobaltable(L);
    crescent_wrap_field(L, "xpcall", guarded_xpcall);
    crescent_wrap_field(L, "setmetatable", guarded_setmetatable);
    lua_pop(L, 1);
    if (lua_getglobal(L, "debug") == LUA_TTABLE) crescent_wrap_field(L, "setmetatable", guarded_debug_setmetatable);
    lua_pop(L, 1);
    crescent_install_metatable_guards(L);
}
