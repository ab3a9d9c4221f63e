/*
 * CLua: the C face of Crescent's Lua bridge.
 *
 * This shim uses only the official API of Lua 5.4 (lua.h, lauxlib.h, lualib.h). It exists because
 * a Lua error is a longjmp, and a longjmp across Swift frames skips ARC cleanup. So:
 *
 *  - every Swift function Lua can call is entered through one trampoline (crescent_push_function);
 *    Swift reports failure by returning CRESCENT_RAISE with the error value on the stack, and the
 *    trampoline raises only after the Swift frames are gone;
 *  - every operation that may run a metamethod or raise is offered here as a protected helper
 *    (crescent_p*), returning a status instead of jumping;
 *  - the allocator enforces the VM's memory limit only while Lua code (not Swift) is running, and a
 *    limit crossed while Swift runs is raised by the trampoline once Swift has returned;
 *  - interrupts (Ctrl-C, time limits) are a flag; as lua.c does from its signal handler, the hook
 *    that raises them (in C) is installed only while one is pending, so a script's own
 *    debug.sethook, and debug.gethook() == nil, are what they are under lua5.4 (except that a
 *    script's debug.sethook cannot remove the hook while an interrupt is pending, and that the
 *    script's hook function runs in a coroutine of its own, where an interrupt can stop it).
 */
#ifndef CRESCENT_CLUA_H
#define CRESCENT_CLUA_H

/* Debian's liblua5.4-dev keeps the headers in a folder of their own; naming it here spares the
 * build pkg-config's -L of the system library folder (Package.swift, CLuaSystem). */
#include <lua5.4/lua.h>
#include <lua5.4/lauxlib.h>
#include <lua5.4/lualib.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Status a Swift function returns to the trampoline ------------------------------------ */

/** The error message is on top of the stack: raise it with the caller's position prefixed. */
#define CRESCENT_RAISE (-1)
/** The error value is on top of the stack: raise it as it is (an error object, or a message
 *  that already carries its position). */
#define CRESCENT_RERAISE (-2)
/** Yield `n` values from the top of the stack: return crescent_yield_status(n). */
static inline int crescent_yield_status(int n) { return -3 - n; }

/** A Swift function behind the trampoline. Returns a result count, CRESCENT_RAISE or a yield. */
typedef int (*crescent_swift_function)(lua_State *L, void *context);

/* ---- Interrupt reasons --------------------------------------------------------------------- */

enum {
    CRESCENT_INTERRUPT_NONE = 0,
    CRESCENT_INTERRUPT_SIGNAL = 1,   /* Ctrl-C, SIGTERM; values >= 128 name the exit status */
    CRESCENT_INTERRUPT_TIMEOUT = 2,  /* --timeout */
    CRESCENT_INTERRUPT_EXIT = 3,     /* app.exit */
};

/* ---- The VM: a lua_State plus the shim's per-VM bookkeeping --------------------------------- */

/** An interrupt flag. It is separate from the state so that another thread may still set it after
 *  the state has closed; its owner frees it when neither side uses it any more. */
typedef struct crescent_flag crescent_flag;
crescent_flag *crescent_flag_new(void);
void crescent_flag_free(crescent_flag *flag);
/** Sets the flag and arms the interrupt hook of the Lua code running now, if any: from the thread
 *  that runs it directly, from any other thread through a signal to that thread (whose handler
 *  arms the hook as lua.c's does). Code that starts later finds the flag set and arms it then. */
void crescent_flag_set(crescent_flag *flag, int reason);

/** Called by the hook, inside running Lua code, when a notice was asked for: it must not touch
 *  the Lua state. The host uses it to draw what its loop, held by that code, cannot. */
typedef void (*crescent_notice_handler)(void *context);
/** Sets the notice handler (from the thread that runs the state's Lua code). */
void crescent_flag_set_notice_handler(crescent_flag *flag, crescent_notice_handler handler, void *context);
/** From any thread: when Lua code of the state runs now, its handler is called at its next
 *  instruction (armed as an interrupt is), and the code goes on; nothing when none runs. */
void crescent_flag_notify(crescent_flag *flag);

/** Creates a state whose allocations are limited to `limit_bytes` (0: no limit), whose interrupts
 *  come from `flag`, with the standard libraries opened. NULL when out of memory. The flag must
 *  outlive the state. */
lua_State *crescent_newstate(size_t limit_bytes, crescent_flag *flag);
/** Closes the state and frees the shim's bookkeeping. Returns how many finalizers (__gc) failed
 *  while it closed (Lua only warns of those), and writes the first one's warning, "error in __gc
 *  (MESSAGE)", NUL-terminated and cut at `capacity` bytes, to `first_failure`. */
int crescent_close(lua_State *L, char *first_failure, size_t capacity);
/** How many finalizers (__gc) failed while the state ran since the last call (Lua only warns of
 *  those, and a state made by lua_newstate drops warnings), writing the first one's warning as
 *  crescent_close does; counting starts again from 0. Warnings of other kinds (a script's own
 *  `warn`) are dropped, as before. */
int crescent_take_finalizer_failures(lua_State *L, char *first_failure, size_t capacity);

size_t crescent_memory_used(lua_State *L);
size_t crescent_memory_limit(lua_State *L);
void crescent_set_memory_limit(lua_State *L, size_t limit_bytes);
/** What the memory error tells the user to raise (`[plugins] memory_limit`); NULL or "" for the
 *  default, which the caller names. Kept with the state, so errors of any of its threads say it. */
void crescent_set_memory_limit_setting(lua_State *L, const char *setting);
const char *crescent_memory_limit_setting(lua_State *L);
/** True when the last failed protected call failed because the memory limit was hit. */
int crescent_memory_limit_hit(lua_State *L);
void crescent_clear_memory_limit_hit(lua_State *L);

/** The pending interrupt reason, or CRESCENT_INTERRUPT_NONE. */
int crescent_interrupt_pending(lua_State *L);
/** Forgets the pending interrupt. Each thread the hook was armed on gets back its own hook (the
 *  script's, or none) the next time it runs. */
void crescent_clear_interrupt(lua_State *L);
/** Pushes the traceback (message first) of where the time limit first stopped the running code
 *  and returns 1, or pushes nothing and returns 0 when it has not stopped any since the last
 *  crescent_clear_interrupt. */
int crescent_push_interrupted_at(lua_State *L);
/** Removes the debug hook a script set on `thread` (a coroutine about to run other code): a hook
 *  set by one task, or one remote client, must not outlive it. */
void crescent_drop_hook(lua_State *thread);

/* ---- Functions ------------------------------------------------------------------------------ */

/** Pushes a Lua function that enters `fn(L, context)` through the trampoline. The context is not
 *  owned: its owner keeps it alive as long as the state. Raises only on out of memory. */
void crescent_push_function(lua_State *L, crescent_swift_function fn, void *context);

/** The registry field of the host's wording of error values (a Lua function of the value that
 *  returns the message), which the traceback handlers use when it is set. */
#define CRESCENT_ERROR_TEXT "crescent.errorText"
/** The message handler used by every protected call: adds a traceback to string messages. */
int crescent_traceback_handler(lua_State *L);

/* ---- Protected operations: return LUA_OK or an error status with the error on top ---------- */

/** Calls the function below `nargs` arguments with the traceback handler. */
int crescent_pcall(lua_State *L, int nargs, int nresults);
/** Calls the function below `nargs` arguments, keeping the raw error value (no traceback). */
int crescent_pcall_raw(lua_State *L, int nargs, int nresults);
/** Resumes coroutine `co` with `nargs` arguments. On error, pushes onto L the error value and
 *  then its message with a traceback of the coroutine. */
int crescent_resume(lua_State *L, lua_State *co, int nargs, int *nresults);
/** Loads a chunk; on failure the message is on top. mode: "bt", "t" or "b". */
int crescent_load(lua_State *L, const char *bytes, size_t length, const char *chunkname, const char *mode);
/** Pops a table of chunks by name ({ text, chunk name }) and the mode to load them in ("b" or
 *  "t"); pushes `load(name[, env])`, which loads one of those chunks only (scripts' `load` reads
 *  text only) and answers as `load` does. Raises only for memory, as lua_pushcclosure. */
void crescent_push_named_chunk_loader(lua_State *L);
/** t[k] with metamethods: pops k, pushes the value. */
int crescent_pgettable(lua_State *L, int idx);
/** t[k] = v with metamethods: pops k and v. */
int crescent_psettable(lua_State *L, int idx);
/** t.name with metamethods: pushes the value. */
int crescent_pgetfield(lua_State *L, int idx, const char *name);
/** t.name = v with metamethods: pops v. */
int crescent_psetfield(lua_State *L, int idx, const char *name);
/** luaL_tolstring under protection: pushes the string. */
int crescent_ptostring(lua_State *L, int idx);
/** Concatenates the `n` values on top (with __concat): pushes the result. */
int crescent_pconcat(lua_State *L, int n);
/** #v with __len: pushes the length. */
int crescent_plen(lua_State *L, int idx);
/** Compares two values with metamethods into *result; op is LUA_OPEQ, LUA_OPLT or LUA_OPLE. */
int crescent_pcompare(lua_State *L, int idx1, int idx2, int op, int *result);
/** lua_next under protection (an invalid key raises): pops key, pushes key and value, *more=0 at end. */
int crescent_pnext(lua_State *L, int idx, int *more);
/** Makes room for `n` more slots without raising; 0 when it cannot. */
int crescent_checkstack(lua_State *L, int n);

/* ---- Userdata for Swift objects --------------------------------------------------------------- */

/** The block of every Swift-object userdata. `object` is an owned reference released once. `tag`
 *  marks blocks made by crescent_push_object: with the block's size it tells ours from any other
 *  userdata (an io file, a C module's object) that a script points our metatable or `__gc` at.
 *  `type` is the identity of the metatable the block was made with, which says what `object` is
 *  even after debug.setmetatable gave the userdata another type's metatable. */
typedef struct crescent_object {
    const void *tag;
    const void *type;
    void *object;
    void (*release)(void *object);
} crescent_object;

/** Pushes a new userdata holding `object`, with `user_values` user value slots and the metatable
 *  in registry slot `metatable_ref`. */
crescent_object *crescent_push_object(lua_State *L, void *object, void (*release)(void *), int metatable_ref,
                                      int user_values);
/** The block at `idx` when the userdata really is a Swift-object block (size and tag) made with
 *  the metatable `metatable` (compared by identity, read from the block: one load, no stack
 *  traffic), else NULL. */
crescent_object *crescent_to_object(lua_State *L, int idx, const void *metatable);
/** The block at `idx` when it is a Swift-object block made by crescent_push_object, whatever its
 *  metatable, else NULL. */
crescent_object *crescent_object_block(lua_State *L, int idx);
/** A `__gc` that releases the object once and clears it, so running it twice is harmless; it
 *  ignores any userdata that is not a Swift-object block. */
int crescent_object_gc(lua_State *L);
/** An `__index` for object metatables: upvalue 1 is the methods table (raw lookup, no Swift);
 *  upvalue 2, when a function, is called as getter(obj, key) for keys the methods lack. */
int crescent_object_index(lua_State *L);
/** Pushes crescent_object_index closed over the methods table and getter on top (pops both). */
void crescent_push_object_index(lua_State *L);
/** Like crescent_push_object_index, but first looks in the object's user value (a table of cached
 *  property values), then the methods, all without entering Swift. A cached data model (a table
 *  whose metatable holds crescent_model_marker) is returned as a fresh proxy over its fields. */
void crescent_push_cached_index(lua_State *L);
/** Gives the model object userdata on top (pushed with a shared cached-index metatable and its cache
 *  table as user value 1) a metatable of its own: a copy of the shared one whose `__index` is the
 *  cache table itself, so reading a cached property is the VM's own table lookup, with no C call.
 *  A miss runs a C function that does what the shared `__index` does after its cache (cached data
 *  models in user value 2 as fresh proxies, the methods table, the getter) and copies a method it
 *  finds into the cache. The block's type tag stays the shared metatable. Leaves the stack as it was. */
void crescent_own_cached_index(lua_State *L);
/** The light userdata key that marks data model metatables. */
const void *crescent_model_marker(void);
/** Marks the metatable at `index` as one of json's shape marks (json.array, json.object): shared
 *  by every marked table, so debug.getmetatable hands out a copy of it, and setmetatable may
 *  replace it although its `__metatable` protects it from getmetatable. */
void crescent_protect_json_mark(lua_State *L, int index);
/** Turns the fields table on top into a data model proxy: pops the fields, pushes a proxy that holds
 *  them under a private light userdata key (and nothing else, so every assignment reaches
 *  `__newindex`) and whose metatable is `templates[slot]`, shared by every model of the type (the
 *  table `templates` is in registry slot `templates_ref`; a template holds its type's metamethods,
 *  name, marker and the `__index` of crescent_push_model_index). Needs 2 free stack slots. */
void crescent_push_model(lua_State *L, int templates_ref, int slot);
/** Pushes the `__index` of data model proxies: a read of the proxy's fields table, then its type's
 *  methods (through the fields table's metatable). */
void crescent_push_model_index(lua_State *L);
/** Pushes the fields table of the data model proxy at `index` and returns LUA_TTABLE; pushes
 *  nil (or what a table holds under the private key) otherwise. */
int crescent_push_model_fields(lua_State *L, int index);
/** Makes the array of data models packed in the buffer PackedModels lays out (Sources/Model): with
 *  the buffer string, the table of field names (as Lua strings, by position) and the fields
 *  tables' metatable (or nil) on top, pops them and pushes an array of proxies whose metatable is
 *  `templates[slot]` (as crescent_push_model), each alone in an array of its own when
 *  `wraps_each`; returns 1. Each proxy reads its fields from the buffer until it needs a fields
 *  table (packed.c). Returns 0 with the three popped and nothing pushed when the buffer does not
 *  fit the names (the caller pushes the models one by one). */
int crescent_push_packed_models(lua_State *L, int templates_ref, int slot, int wraps_each);
/** Pushes `next` over a data model proxy: its fields in turn (proxy, key → key, value), for
 *  `__pairs`, so the fields table itself never reaches a script. */
void crescent_push_model_next(lua_State *L);

/** Pushes the array of key strings the change helpers need; pin it once. */
void crescent_push_change_keys(lua_State *L);
/** Pushes an observer's change table: `initial`, `coalesced` and `sub` as its own fields, and
 *  `object` and `key` through the property's prototype at index `prototype`. */
void crescent_push_change(lua_State *L, int keys, int prototype, int initial, lua_Integer coalesced,
                          int subscription);

/* ---- Lua macros that do not import into Swift ------------------------------------------------- */

static inline void crescent_pop(lua_State *L, int n) { lua_pop(L, n); }
static inline void crescent_newtable(lua_State *L) { lua_newtable(L); }
static inline void crescent_pushcfunction(lua_State *L, lua_CFunction f) { lua_pushcfunction(L, f); }
static inline void crescent_pushglobaltable(lua_State *L) { lua_pushglobaltable(L); }
static inline int crescent_upvalueindex(int i) { return lua_upvalueindex(i); }
static inline int crescent_registryindex(void) { return LUA_REGISTRYINDEX; }
static inline int crescent_isnoneornil(lua_State *L, int i) { return lua_isnoneornil(L, i); }
static inline int crescent_isfunction(lua_State *L, int i) { return lua_isfunction(L, i); }
static inline int crescent_istable(lua_State *L, int i) { return lua_istable(L, i); }
static inline void crescent_insert(lua_State *L, int i) { lua_insert(L, i); }
static inline void crescent_remove(lua_State *L, int i) { lua_remove(L, i); }
static inline void crescent_replace(lua_State *L, int i) { lua_replace(L, i); }
static inline lua_Integer crescent_tointegerx(lua_State *L, int i, int *isnum) { return lua_tointegerx(L, i, isnum); }
static inline lua_Number crescent_tonumberx(lua_State *L, int i, int *isnum) { return lua_tonumberx(L, i, isnum); }
static inline void *crescent_newuserdata(lua_State *L, size_t size) { return lua_newuserdatauv(L, size, 1); }
static inline int crescent_getuservalue(lua_State *L, int i) { return lua_getiuservalue(L, i, 1); }
static inline int crescent_setuservalue(lua_State *L, int i) { return lua_setiuservalue(L, i, 1); }
static inline lua_State *crescent_tothread(lua_State *L, int i) { return lua_tothread(L, i); }
static inline int crescent_ref(lua_State *L) { return luaL_ref(L, LUA_REGISTRYINDEX); }
static inline void crescent_unref(lua_State *L, int ref) { luaL_unref(L, LUA_REGISTRYINDEX, ref); }
static inline int crescent_getref(lua_State *L, int ref) { return lua_rawgeti(L, LUA_REGISTRYINDEX, ref); }
static inline int crescent_noref(void) { return LUA_NOREF; }
static inline int crescent_refnil(void) { return LUA_REFNIL; }
static inline int crescent_yieldable(lua_State *L) { return lua_isyieldable(L); }

/* ---- Benchmark baselines: the same shapes written in plain C ---------------------------------- */

/** Registers global `bench_c_object`: a userdata whose method `get(i)` returns i + 1, looked up
 *  through the same kind of C `__index` the bridge uses. */
void crescent_bench_register_c_object(lua_State *L);
/** Calls the function at registry slot `ref` with one integer `count` times, protected, in C.
 *  Returns the sum of the integer results, or -1 on error. */
lua_Integer crescent_bench_c_callback_loop(lua_State *L, int ref, lua_Integer count);

/** Registers global `bench_c_mirror(v)`: returns a copy of `v` made with the raw C API, each
 *  string and number read out and pushed anew, tables walked with lua_next (the C counterpart of
 *  converting a value to Swift and back). */
void crescent_bench_register_c_mirror(lua_State *L);
/** Sets field `execute` of the `os` table under the top to os.execute as Lua's own, which also
 *  calls the function on top (if not nil) with the number of the signal that ended its program
 *  (shell.c); pops that function. */
void crescent_install_execute(lua_State *L);

/** Stops the collector when it runs and returns 1 (else 0): while Swift builds one big value,
 *  whose tables are all live, an incremental collection would only mark them again and again. */
int crescent_pause_collector(lua_State *L);
/** Restarts the collector crescent_pause_collector stopped, as after a completed cycle: the next
 *  cycle starts once the heap has grown by its present size (Lua's default pause), or by a quarter
 *  of the room left under the memory limit when that is less. */
void crescent_resume_collector(lua_State *L);
/** Runs a full garbage collection (frees what a value Swift dropped past the limit took). */
void crescent_collect_garbage(lua_State *L);
/** Registers global `bench_c_property`: a userdata whose C `__index` returns the integer 42 for
 *  any key, the plainest possible property getter. */
void crescent_bench_register_c_property(lua_State *L);
/** Calls the function at registry slot `ref` `count` times as handler(i, i - 1, change) with a
 *  fresh three-field change table, protected, in C: the cost of a bare delivery. */
void crescent_bench_c_deliver_loop(lua_State *L, int ref, lua_Integer count);

/* ---- Files the host opened (files.c) -------------------------------------------------------- */

/** A lua_CFunction: `(fd, mode [, pid])` -> an `io` file handle over the descriptor `fd` (which it
 *  owns from then on), opened as fdopen's `mode` says; with `pid`, the handle is a pipe to that
 *  program and closing it waits for the program and answers as `io.popen`'s close does. On
 *  failure: nil, the message and errno, as io.open answers (the descriptor closed, the program
 *  killed). */
int crescent_file_from_descriptor(lua_State *L);

#endif
