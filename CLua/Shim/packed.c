/*
 * Packed data models: an array of models of one schema made from one buffer in one call (a batch
 * of 100,000 placemarks), whose fields are read straight from the buffer until a script needs a
 * model's whole fields table. The buffer's layout is PackedModels' (Sources/Model); every read of
 * it is bounds-checked here, against the length Lua gives for the string that holds it.
 *
 * Each model is an ordinary data model proxy (shim.c): a table whose metatable is its type's
 * template, holding under the private fields key, instead of its fields table, the batch userdata
 * below, and under a second private key its position in the batch. The template's `__index`
 * reads a field from the buffer; anything else that needs the fields (pairs, next, rawget,
 * json.encode, inspect, conversion back to a value, a method, a misspelled name) first makes the
 * fields table (crescent_packed_materialize) and keeps it in the proxy, so from then on the model
 * is exactly one pushed from a DataModel. Uses only the official API of Lua 5.4.
 */
#include "vm.h"

#include <stdint.h>
#include <string.h>

/* The most fields a packed model may have; a schema with more is pushed model by model. */
#define PACKED_MAX_FIELDS 32
#define PACKED_HEADER 8
#define PACKED_PAYLOAD 8

/* The private key under which a packed model's proxy holds its position in the batch. */
static const char packed_row_key = 'r';

/* The batch userdata (no metatable, never handed to a script). User values: 1 the buffer string,
 * 2 the field names table (by position), 3 the fields table's metatable (or nil), 4 the Lua
 * strings made from the pool so far, by their cell's payload (offset and length): a batch repeats
 * a few thousand names over its models, and finding one there is cheaper than hashing its bytes
 * into the VM's string table on every read. `bytes` points into the buffer string, which user
 * value 1 keeps alive, and Lua never moves a string. */
typedef struct {
    const unsigned char *bytes;
    size_t length;
    size_t count;
    size_t fields;
    size_t payloads;          /* where the payloads start, after the tags */
    size_t pool;              /* where the strings start */
    const void *names[PACKED_MAX_FIELDS]; /* the field names' string objects, for a quick match */
} packed_batch;

static uint64_t read_le(const unsigned char *at, int size) {
    uint64_t value = 0;
    for (int i = size - 1; i >= 0; i--) value = value << 8 | at[i];
    return value;
}

/* Pushes the value of cell (row, field) of `batch`, the userdata at `batch_index`. */
static void push_cell(lua_State *L, const packed_batch *batch, int batch_index, size_t row, size_t field) {
    size_t cell = row * batch->fields + field;
    uint64_t payload = read_le(batch->bytes + batch->payloads + cell * PACKED_PAYLOAD, PACKED_PAYLOAD);
    switch (batch->bytes[PACKED_HEADER + cell]) {
    case 1: {
        size_t offset = (size_t)(payload & 0xFFFFFFFFu), length = (size_t)(payload >> 32);
        size_t room = batch->length - batch->pool;
        if (offset > room || length > room - offset) {
            lua_pushnil(L);
            return;
        }
        lua_getiuservalue(L, batch_index, 4);                                /* strings */
        if (lua_rawgeti(L, -1, (lua_Integer)payload) != LUA_TSTRING) {      /* strings string */
            lua_pop(L, 1);
            lua_pushlstring(L, (const char *)batch->bytes + batch->pool + offset, length);
            lua_pushvalue(L, -1);
            lua_rawseti(L, -3, (lua_Integer)payload);
        }
        lua_remove(L, -2);                                                   /* string */
        return;
    }
    case 2: lua_pushinteger(L, (lua_Integer)(int64_t)payload); return;
    case 3: {
        double number;
        memcpy(&number, &payload, sizeof number);
        lua_pushnumber(L, number);
        return;
    }
    case 4: lua_pushboolean(L, 1); return;
    case 5: lua_pushboolean(L, 0); return;
    default: lua_pushnil(L); return;
    }
}

/* The position of the proxy at `proxy` in its batch; fails (-1) for a position out of range. */
static lua_Integer packed_row(lua_State *L, int proxy, const packed_batch *batch) {
    int isnum = 0;
    lua_rawgetp(L, proxy, &packed_row_key);
    lua_Integer row = lua_tointegerx(L, -1, &isnum);
    lua_pop(L, 1);
    return isnum && row >= 0 && (size_t)row < batch->count ? row : -1;
}

int crescent_packed_field(lua_State *L, int proxy, int batch_index, int key) {
    const packed_batch *batch = lua_touserdata(L, batch_index);
    if (batch == NULL || lua_type(L, key) != LUA_TSTRING) return 0;
    /* Field names are short strings, which Lua keeps one copy of: a name read by a script is the
     * same object as the one the batch holds. A key matching none is looked up the slow way. */
    const void *name = lua_topointer(L, key);
    for (size_t field = 0; field < batch->fields; field++) {
        if (batch->names[field] != name) continue;
        lua_Integer row = packed_row(L, proxy, batch);
        if (row < 0) return 0;
        push_cell(L, batch, batch_index, (size_t)row, field);
        return 1;
    }
    return 0;
}

int crescent_packed_materialize(lua_State *L, int proxy, int batch_index) {
    proxy = lua_absindex(L, proxy);
    batch_index = lua_absindex(L, batch_index);
    const packed_batch *batch = lua_touserdata(L, batch_index);
    lua_Integer row = batch != NULL ? packed_row(L, proxy, batch) : -1;
    if (row < 0) {
        lua_pushnil(L);
        return LUA_TNIL;
    }
    luaL_checkstack(L, 6, NULL);
    int present = 0;
    for (size_t field = 0; field < batch->fields; field++) {
        if (batch->bytes[PACKED_HEADER + (size_t)row * batch->fields + field] != 0) present++;
    }
    lua_createtable(L, 0, present);                                          /* fields */
    lua_getiuservalue(L, batch_index, 2);                                    /* fields names */
    for (size_t field = 0; field < batch->fields; field++) {
        if (batch->bytes[PACKED_HEADER + (size_t)row * batch->fields + field] == 0) continue;
        lua_rawgeti(L, -1, (lua_Integer)field + 1);                          /* fields names name */
        push_cell(L, batch, batch_index, (size_t)row, field);                /* fields names name value */
        lua_rawset(L, -4);                                                   /* fields names */
    }
    lua_pop(L, 1);                                                           /* fields */
    if (lua_getiuservalue(L, batch_index, 3) == LUA_TTABLE) {
        lua_setmetatable(L, -2);
    } else {
        lua_pop(L, 1);
    }
    lua_pushvalue(L, -1);
    lua_rawsetp(L, proxy, crescent_model_fields_key());                     /* fields */
    return LUA_TTABLE;
}

int crescent_push_packed_models(lua_State *L, int templates_ref, int slot, int wraps_each) {
    /* blob names fieldsmt */
    int top = lua_gettop(L);
    int blob = top - 2, names = top - 1, fieldsmt = top;
    size_t length = 0;
    const unsigned char *bytes = (const unsigned char *)lua_tolstring(L, blob, &length);
    if (bytes == NULL || lua_type(L, names) != LUA_TTABLE || length < PACKED_HEADER || !lua_checkstack(L, 8)) {
        lua_settop(L, top - 3);
        return 0;
    }
    size_t count = (size_t)read_le(bytes, 4), fields = (size_t)read_le(bytes + 4, 4);
    /* Each cell takes a tag byte and a payload, besides the padding after the tags. */
    if (fields == 0 || fields > PACKED_MAX_FIELDS || fields != (size_t)lua_rawlen(L, names)
        || count > (length - PACKED_HEADER) / (fields * (1 + PACKED_PAYLOAD))) {
        lua_settop(L, top - 3);
        return 0;
    }
    size_t payloads = (PACKED_HEADER + count * fields + PACKED_PAYLOAD - 1) / PACKED_PAYLOAD * PACKED_PAYLOAD;
    if (payloads + count * fields * PACKED_PAYLOAD > length) {
        lua_settop(L, top - 3);
        return 0;
    }
    packed_batch *batch = lua_newuserdatauv(L, sizeof *batch, 4);            /* blob names mt batch */
    batch->bytes = bytes;
    batch->length = length;
    batch->count = count;
    batch->fields = fields;
    batch->payloads = payloads;
    batch->pool = payloads + count * fields * PACKED_PAYLOAD;
    for (size_t field = 0; field < fields; field++) {
        lua_rawgeti(L, names, (lua_Integer)field + 1);
        batch->names[field] = lua_type(L, -1) == LUA_TSTRING ? lua_topointer(L, -1) : NULL;
        lua_pop(L, 1);
    }
    lua_pushvalue(L, blob);
    lua_setiuservalue(L, -2, 1);
    lua_pushvalue(L, names);
    lua_setiuservalue(L, -2, 2);
    lua_pushvalue(L, fieldsmt);
    lua_setiuservalue(L, -2, 3);
    lua_newtable(L);
    lua_setiuservalue(L, -2, 4);
    int batch_index = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, templates_ref);                       /* ... batch templates */
    lua_rawgeti(L, -1, slot);                                               /* ... batch templates mt */
    int metatable = lua_gettop(L);
    const void *fields_key = crescent_model_fields_key();
    lua_createtable(L, (int)count, 0);                                      /* ... mt array */
    for (size_t row = 0; row < count; row++) {
        lua_createtable(L, 0, 2);                                           /* ... array proxy */
        lua_pushvalue(L, batch_index);
        lua_rawsetp(L, -2, fields_key);
        lua_pushinteger(L, (lua_Integer)row);
        lua_rawsetp(L, -2, &packed_row_key);
        lua_pushvalue(L, metatable);
        lua_setmetatable(L, -2);
        if (wraps_each) {
            lua_createtable(L, 1, 0);                                       /* ... array proxy one */
            lua_insert(L, -2);
            lua_rawseti(L, -2, 1);                                          /* ... array one */
        }
        lua_rawseti(L, -2, (lua_Integer)row + 1);                           /* ... array */
    }
    lua_replace(L, blob);                                                    /* array names mt batch templates mt */
    lua_settop(L, blob);                                                     /* array */
    return 1;
}
