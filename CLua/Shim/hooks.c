/*
 * A script's debug hooks, made safe for the host's interrupts. This file uses only the official
 * API of Lua 5.4.
 *
 * Lua runs no hook while a hook runs, so a hook function that loops (`debug.sethook(function()
 * while true do end end, "l")`) could not be stopped by the interrupt hook: Ctrl-C, --timeout, a
 * remote client's interrupt or hang-up would all be lost. So the script's hook function runs in a
 * coroutine of its own (kept between calls), which the interrupt hook can be armed on like any
 * code. Inside the hook, debug.getinfo with a level past the hook's own frames reads the hooked
 * thread, as under lua5.4 (level 2 is the function the hook fired in), and debug.gethook gives
 * back the script's function.
 */
#include "vm.h"

/* While a script's hook runs: its coroutine and the thread whose hook fired. One at a time per OS
 * thread (a hook's coroutine has no hook of its own, so hooks do not nest). */
static _Thread_local lua_State *hook_coroutine;
static _Thread_local lua_State *hooked_thread;

/*
 * What the debug library's hook calls in place of the script's function: runs it, with the
 * arguments the hook was given (event, line), in the coroutine kept as upvalue 2.
 */
static int run_script_hook(lua_State *L) {
    if (crescent_finalizer_depth > 0) return 0;     /* Lua runs no hook in a finalizer (handlers.c) */
    int nargs = lua_gettop(L);
    lua_State *co = NULL;
    if (lua_getiuservalue(L, lua_upvalueindex(2), 1) == LUA_TTHREAD) co = lua_tothread(L, -1);
    lua_pop(L, 1);
    if (co == NULL || lua_status(co) != LUA_OK || lua_gettop(co) != 0) {
        co = lua_newthread(L);
        lua_sethook(co, NULL, 0, 0);                /* it inherited the hook that is running */
        lua_setiuservalue(L, lua_upvalueindex(2), 1);
    }
    if (!lua_checkstack(co, nargs + 1)) return luaL_error(L, "hook: stack overflow");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_xmove(L, co, 1);
    for (int i = 1; i <= nargs; i++) lua_pushvalue(L, i);
    lua_xmove(L, co, nargs);
    lua_State *outer_coroutine = hook_coroutine, *outer_thread = hooked_thread;
    hook_coroutine = co;
    hooked_thread = L;
    int results = 0;
    lua_State *previous = crescent_enter_lua(co);
    int status = lua_resume(co, L, nargs, &results);
    crescent_leave_lua(co, previous);
    hook_coroutine = outer_coroutine;
    hooked_thread = outer_thread;
    if (status == LUA_OK) {
        lua_settop(co, 0);                          /* ready for the next call */
        return 0;
    }
    /* An error (or an interrupt) of the hook is one of the code it fired in, as under lua5.4. */
    if (status == LUA_YIELD) {
        lua_settop(co, 0);
        lua_pushliteral(L, "attempt to yield from a hook function");
    } else {
        lua_xmove(co, L, 1);
    }
    lua_pushnil(L);
    lua_setiuservalue(L, lua_upvalueindex(2), 1);   /* a dead coroutine is not reused */
    if (crescent_interrupt_pending(L) != CRESCENT_INTERRUPT_NONE) crescent_arm_interrupt(L);
    return lua_error(L);
}

/* Pushes the function the debug library keeps in place of the script's hook `index`. */
static void push_script_hook(lua_State *L, int index) {
    lua_pushvalue(L, index);
    lua_newuserdatauv(L, 0, 1);                     /* holds the coroutine, replaceable */
    lua_pushcclosure(L, run_script_hook, 2);
}

/*
 * debug.sethook as the standard library defines it (called through, after the same argument
 * checks, so its errors name 'sethook'), with two additions: the script's function runs through
 * run_script_hook, and while an interrupt is pending the interrupt hook is armed again on the
 * thread whose hook was set. The script's new hook is saved and given back once the interrupt is
 * cleared, so a script that sets or clears its hooks in a loop cannot shed an interrupt or a time
 * limit.
 */
static int debug_sethook(lua_State *L) {
    int arg = lua_isthread(L, 1) ? 1 : 0;
    lua_State *target = arg ? lua_tothread(L, 1) : L;
    if (!lua_isnoneornil(L, arg + 1)) {
        luaL_checkstring(L, arg + 2);
        luaL_checktype(L, arg + 1, LUA_TFUNCTION);
        (void)luaL_optinteger(L, arg + 3, 0);
        push_script_hook(L, arg + 1);
        lua_replace(L, arg + 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 0);
    if (crescent_interrupt_pending(L) != CRESCENT_INTERRUPT_NONE) crescent_arm_interrupt(target);
    return 0;
}

/* The standard library's function this wrapper stands for; called directly, in the wrapper's own
 * frame, so that stack levels count as if the script had called it (its functions use no upvalues). */
static lua_CFunction original(lua_State *L) { return lua_tocfunction(L, lua_upvalueindex(1)); }

/* debug.gethook, giving the script's function back rather than run_script_hook. */
static int debug_gethook(lua_State *L) {
    int count = original(L)(L);
    int first = lua_gettop(L) - count + 1;
    if (count >= 1 && lua_tocfunction(L, first) == run_script_hook) {
        lua_getupvalue(L, first, 1);
        lua_replace(L, first);
    }
    return count;
}

/*
 * debug.getinfo: inside a script's hook, a level past the hook coroutine's frames names a frame of
 * the hooked thread, as it would if the hook ran on that thread (its level 1 is the function the
 * hook fired in; level 0 there is run_script_hook).
 */
static int debug_getinfo(lua_State *L) {
    if (L == hook_coroutine && hooked_thread != NULL && lua_type(L, 1) == LUA_TNUMBER) {
        lua_Integer level = lua_tointeger(L, 1);
        lua_Debug ar;
        if (level > 0 && level < 1000000 && !lua_getstack(L, (int)level, &ar)) {
            int depth = 0;                          /* this coroutine's levels: 0 ..< depth */
            while (lua_getstack(L, depth, &ar)) depth++;
            lua_pushinteger(L, level - depth + 1);
            lua_replace(L, 1);
            if (!lua_checkstack(hooked_thread, 1)) return luaL_error(L, "getinfo: stack overflow");
            lua_pushthread(hooked_thread);
            lua_xmove(hooked_thread, L, 1);
            lua_insert(L, 1);                       /* thread level [what] */
        }
    }
    return original(L)(L);
}

void crescent_wrap_field(lua_State *L, const char *name, lua_CFunction wrapper) {
    if (lua_getfield(L, -1, name) == LUA_TFUNCTION) {
        lua_pushcclosure(L, wrapper, 1);
        lua_setfield(L, -2, name);
    } else {
        lua_pop(L, 1);
    }
}

void crescent_install_debug_functions(lua_State *L) {
    if (lua_getglobal(L, "debug") == LUA_TTABLE) {
        crescent_wrap_field(L, "sethook", debug_sethook);
        crescent_wrap_field(L, "gethook", debug_gethook);
        crescent_wrap_field(L, "getinfo", debug_getinfo);
    }
    lua_pop(L, 1);
}

void crescent_drop_hook(lua_State *thread) {
    lua_sethook(thread, NULL, 0, 0);
    if (lua_getfield(thread, LUA_REGISTRYINDEX, "_HOOKKEY") == LUA_TTABLE) {   /* the debug library's */
        lua_pushthread(thread);
        lua_pushnil(thread);
        lua_rawset(thread, -3);                     /* a removal: never allocates */
    }
    lua_pop(thread, 1);
}
