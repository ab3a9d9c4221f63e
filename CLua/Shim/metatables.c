/*
 * The host's shared metatables, kept out of scripts' reach. A data model's metatable is shared by
 * every model of its type, and json.array's and json.object's marks by every marked table; a script
 * that could change one would change what every model reads or how every `[]` encodes. Plain
 * getmetatable already answers their `__metatable` (a type name, "json.array"). Here:
 *
 * - debug.getmetatable answers a copy of such a metatable (without the host's marker keys), one
 *   copy per metatable, so a debugger reads every field and two models of a type still have equal
 *   metatables, but a write to the copy changes nothing the host uses;
 * - setmetatable and debug.setmetatable may replace a json mark (giving a decoded table a class of
 *   the script's own works as on a plain table), which the mark's `__metatable` would refuse.
 *
 * Uses only the official API of Lua 5.4.
 */
#include "vm.h"

static const char json_mark_marker = 'j';
static const char copies_key = 'c';

void crescent_protect_json_mark(lua_State *L, int index) {
    index = lua_absindex(L, index);
    lua_pushboolean(L, 1);
    lua_rawsetp(L, index, &json_mark_marker);
}

/* Whether the metatable on top of the stack holds `marker`. */
static int holds_marker(lua_State *L, const void *marker) {
    int marked = lua_rawgetp(L, -1, marker) != LUA_TNIL;
    lua_pop(L, 1);
    return marked;
}

int crescent_is_json_marked(lua_State *L, int index) {
    if (lua_type(L, index) != LUA_TTABLE || !lua_getmetatable(L, index)) return 0;
    int marked = holds_marker(L, &json_mark_marker);
    lua_pop(L, 1);
    return marked;
}

/* debug.getmetatable(value): the metatable, or for one of the host's shared metatables its copy. */
static int guarded_debug_getmetatable(lua_State *L) {
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    if (!lua_getmetatable(L, 1)) {
        lua_pushnil(L);
        return 1;
    }                                                                        /* value mt */
    if (!holds_marker(L, crescent_model_marker()) && !holds_marker(L, &json_mark_marker)) return 1;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &copies_key) != LUA_TTABLE) {      /* value mt nil */
        lua_pop(L, 1);
        lua_newtable(L);                                                     /* value mt copies */
        lua_newtable(L);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &copies_key);
    }
    lua_pushvalue(L, 2);
    if (lua_rawget(L, 3) == LUA_TTABLE) return 1;                            /* value mt copies copy */
    lua_pop(L, 1);
    lua_newtable(L);                                                         /* value mt copies copy */
    lua_pushnil(L);
    while (lua_next(L, 2)) {                                                 /* ... copy key item */
        /* The markers (light userdata keys) stay with the original: a table given the copy with
         * debug.setmetatable is not a data model, nor json-marked. */
        if (lua_type(L, -2) == LUA_TLIGHTUSERDATA) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);                                                   /* ... copy key key item */
        lua_rawset(L, 4);                                                    /* ... copy key */
    }
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 4);
    lua_rawset(L, 3);                                                        /* copies[mt] = copy */
    return 1;
}

void crescent_install_metatable_guards(lua_State *L) {
    if (lua_getglobal(L, "debug") == LUA_TTABLE) crescent_wrap_field(L, "getmetatable", guarded_debug_getmetatable);
    lua_pop(L, 1);
}
