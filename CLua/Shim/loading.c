/*
 * Text-only loading. Lua does not verify precompiled bytecode, and a crafted binary chunk can
 * crash the VM, so every way a script can load code reads text only: `load` and `loadfile` run
 * with mode "t" whatever mode they are given, `dofile` and the `require` searcher for Lua files
 * load with mode "t" (the host's own loads pass "t" too). The one exception is the prelude's
 * loader below, which loads only the chunks the host gave it. This file uses only the official
 * API of Lua 5.4.
 */
#include "vm.h"

#include <string.h>

/* Calls the original function (upvalue 1) with argument `mode_arg` forced to "t", keeping the
 * number of arguments otherwise: `load`'s env argument counts even when nil, so none is added. */
static int call_text_only(lua_State *L, int mode_arg) {
    int given = lua_gettop(L);
    if (given >= mode_arg) {
        lua_pushliteral(L, "t");
        lua_replace(L, mode_arg);
    } else {
        lua_settop(L, mode_arg - 1);
        lua_pushliteral(L, "t");
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* `load` with a mode that does not allow text ("b"): a text chunk is refused as Lua refuses it
 * (a binary one goes on to be refused for being binary). */
static int text_load(lua_State *L) {
    const char *mode = lua_type(L, 3) == LUA_TSTRING ? lua_tostring(L, 3) : NULL;
    if (mode != NULL && strchr(mode, 't') == NULL && lua_type(L, 1) == LUA_TSTRING && lua_tostring(L, 1)[0] != LUA_SIGNATURE[0]) {
        luaL_pushfail(L);
        lua_pushfstring(L, "attempt to load a text chunk (mode is '%s')", mode);
        return 2;
    }
    return call_text_only(L, 3);
}
static int text_loadfile(lua_State *L) { return call_text_only(L, 2); }

static int dofile_continue(lua_State *L, int status, lua_KContext context) {
    (void)status;
    (void)context;
    return lua_gettop(L) - 1;
}

static int text_dofile(lua_State *L) {
    const char *name = luaL_optstring(L, 1, NULL);
    lua_settop(L, 1);
    if (luaL_loadfilex(L, name, "t") != LUA_OK) return lua_error(L);
    lua_callk(L, 0, LUA_MULTRET, 0, dofile_continue);
    return dofile_continue(L, 0, 0);
}

/* package.searchers[2]: finds the file on package.path as Lua's does, loads it as text. */
static int text_searcher(lua_State *L) {                                       /* name */
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, lua_upvalueindex(1), "searchpath");                      /* name searchpath */
    lua_pushvalue(L, 1);
    if (lua_getfield(L, lua_upvalueindex(1), "path") != LUA_TSTRING)         /* name searchpath name path */
        return luaL_error(L, "'package.path' must be a string");
    lua_call(L, 2, 2);                                                         /* name file|nil message */
    if (lua_isnil(L, -2)) return 1;                                            /* the files it tried */
    lua_pop(L, 1);
    const char *file = lua_tostring(L, -1);
    if (luaL_loadfilex(L, file, "t") != LUA_OK)                                /* name file message */
        return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, file, lua_tostring(L, -1));
    lua_insert(L, -2);                                                         /* name loader file */
    return 2;
}

static void wrap_global(lua_State *L, const char *name, lua_CFunction wrapper) {
    lua_getglobal(L, name);
    lua_pushcclosure(L, wrapper, 1);
    lua_setglobal(L, name);
}

void crescent_install_text_loaders(lua_State *L) {
    wrap_global(L, "load", text_load);
    wrap_global(L, "loadfile", text_loadfile);
    lua_pushcfunction(L, text_dofile);
    lua_setglobal(L, "dofile");
    lua_getglobal(L, "package");                                               /* package */
    if (lua_getfield(L, -1, "searchers") == LUA_TTABLE) {                      /* package searchers */
        lua_pushvalue(L, -2);
        lua_pushcclosure(L, text_searcher, 1);                                 /* package searchers searcher */
        lua_rawseti(L, -2, 2);
    }
    lua_pop(L, 2);
}

/* `load(name[, env])`: loads the chunk held under `name` in the table of upvalue 1 ({ text, chunk
 * name }) in the mode of upvalue 2, with `env` as its _ENV when given; answers as `load` does (the
 * function, or fail and the message). The prelude's modules that load on first use are loaded by
 * it from their embedded bytecode, with no Swift on the way (a load that finds no memory left is
 * a Lua error); a script that reaches it (debug.getupvalue) can load those chunks only. */
static int load_named_chunk(lua_State *L) {
    lua_settop(L, 2);                                                          /* name env */
    lua_pushvalue(L, 1);                                                       /* name env name */
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TTABLE) {                    /* name env entry */
        luaL_pushfail(L);
        lua_pushliteral(L, "no such chunk");
        return 2;
    }
    lua_rawgeti(L, 3, 1);                                                      /* name env entry text */
    lua_rawgeti(L, 3, 2);                                                      /* name env entry text chunkname */
    size_t length = 0;
    const char *text = lua_type(L, 4) == LUA_TSTRING ? lua_tolstring(L, 4, &length) : NULL;
    const char *chunkname = lua_type(L, 5) == LUA_TSTRING ? lua_tostring(L, 5) : NULL;
    if (text == NULL || chunkname == NULL) {
        luaL_pushfail(L);
        lua_pushliteral(L, "no such chunk");
        return 2;
    }
    if (luaL_loadbufferx(L, text, length, chunkname, lua_tostring(L, lua_upvalueindex(2))) != LUA_OK) {
        luaL_pushfail(L);                                                      /* ... message fail */
        lua_insert(L, -2);                                                     /* ... fail message */
        return 2;
    }                                                                          /* ... f */
    if (!lua_isnil(L, 2)) {
        lua_pushvalue(L, 2);                                                   /* ... f env */
        if (lua_setupvalue(L, -2, 1) == NULL) lua_pop(L, 1);                   /* ... f */
    }
    return 1;
}

void crescent_push_named_chunk_loader(lua_State *L) {                         /* chunks mode */
    lua_pushcclosure(L, load_named_chunk, 2);                                  /* load */
}
