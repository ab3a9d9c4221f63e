/*
 * The C half of Crescent's Lua bridge. This file uses only the official API of Lua 5.4.
 * See include/CLua.h for why each piece exists.
 */
#include "vm.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

/* The registry key of the preallocated out-of-memory message. */
static const char memory_error_key = 'm';
#define MEMORY_ERROR_MESSAGE "not enough memory"

/*
 * The allocator. While Lua code runs (swift_active == 0), a request past the limit fails and Lua
 * raises its memory error inside the protected call that is running. While Swift runs, failing
 * would make Lua longjmp through Swift frames, so the request succeeds and the trampoline raises
 * the error after Swift has returned. A refusal by the system allocator itself is passed on to Lua
 * as usual (and aborts through the panic handler if no protected call is running).
 */
/* How far past the limit a VM may go while its memory error is raised and handled: one granted
 * request of at most the limit, and the message and traceback. */
static size_t memory_ceiling(const crescent_vm *vm) { return 2 * vm->limit + 1024 * 1024; }

static void *crescent_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    crescent_vm *vm = ud;
    size_t old_size = ptr != NULL ? osize : 0;
    if (nsize == 0) {
        crescent_pool_realloc(&vm->pool, ptr, old_size, 0);
        vm->used -= old_size;
        return NULL;
    }
    if (vm->limit != 0 && nsize > old_size && vm->used + (nsize - old_size) > vm->limit) {
        if (vm->swift_active == 0) {
            /* Lua asks again for the same block right after the emergency collection a refusal
             * starts (only frees come between); anything else is a new request. */
            int asked_again = vm->refused && ptr == vm->refused_block && osize == vm->refused_old && nsize == vm->refused_new;
            /* The thread that runs now, if it is this VM's (a plugin's VM runs on the host's OS
             * thread): the hook is armed on it. */
            lua_State *running = crescent_running_lua();
            if (running != NULL && vm_of(running) != vm) running = NULL;
            if (!asked_again) {
                /* Lua collects its garbage and asks again; where it cannot, this is Lua's own
                 * memory error. */
                vm->refused = 1;
                vm->refused_block = ptr;
                vm->refused_old = osize;
                vm->refused_new = nsize;
                vm->limit_hit = 1;
                return NULL;
            }
            vm->refused = 0;
            if (vm->over_margin) {
                if (vm->used + (nsize - old_size) > memory_ceiling(vm)) {
                    /* Lua's own memory error now: the hook must not raise a second one later. */
                    vm->memory_error_pending = 0;
                    return NULL;
                }
            } else if (running == NULL || nsize - old_size > vm->limit || vm->closing) {
                return NULL;
            } else {
                /* Still past the limit after a collection: granted, and raised at the next
                 * instruction by the hook (nothing here reads the stack, which Lua may be moving). */
                vm->over_margin = 1;
                vm->memory_error_pending = 1;
                crescent_arm_interrupt(running);
            }
        } else {
            vm->over_limit_pending = 1;
        }
    } else if (nsize > old_size) {
        /* The collection made room: no memory error comes of the refusal. */
        if (vm->refused && ptr == vm->refused_block && osize == vm->refused_old && nsize == vm->refused_new) vm->limit_hit = 0;
        vm->refused = 0;
        if (!vm->memory_error_pending) vm->over_margin = 0;     /* back under the limit */
    }
    void *block = crescent_pool_realloc(&vm->pool, ptr, old_size, nsize);
    if (block != NULL) vm->used = vm->used - old_size + nsize;
    return block;
}

static int panic_handler(lua_State *L) {
    const char *message = lua_tostring(L, -1);
    lua_writestringerror("crescent: unprotected Lua error (%s)\n", message ? message : "?");
    return 0; /* Lua aborts */
}

/* The warnings while the state runs: an error in a finalizer ("error in __gc (MESSAGE)", its
 * pieces joined) is counted for the host to report at the end of its turn; the warning function
 * runs inside the collector, where nothing may enter Swift. Other warnings are dropped. */
static void collect_running_warning(void *ud, const char *message, int tocont) {
    crescent_vm *vm = ud;
    if (!vm->warning_continues) vm->warning_length = 0;
    vm->warning_continues = tocont;
    size_t room = sizeof vm->warning - 1 - vm->warning_length;
    size_t length = strlen(message);
    if (length > room) length = room;
    memcpy(vm->warning + vm->warning_length, message, length);
    vm->warning_length += length;
    vm->warning[vm->warning_length] = '\0';
    if (tocont || strncmp(vm->warning, "error in __gc", 13) != 0) return;
    if (vm->finalizer_failures++ == 0) memcpy(vm->first_finalizer_failure, vm->warning, vm->warning_length + 1);
}

int crescent_take_finalizer_failures(lua_State *L, char *first_failure, size_t capacity) {
    crescent_vm *vm = vm_of(L);
    int count = vm->finalizer_failures;
    if (capacity > 0) snprintf(first_failure, capacity, "%s", count > 0 ? vm->first_finalizer_failure : "");
    vm->finalizer_failures = 0;
    return count;
}

lua_State *crescent_newstate(size_t limit_bytes, crescent_flag *flag) {
    crescent_vm *vm = calloc(1, sizeof *vm);
    if (vm == NULL) return NULL;
    vm->limit = limit_bytes;
    vm->swift_active = 1; /* the host itself is Swift */
    vm->interrupt = flag;
    lua_State *L = lua_newstate(crescent_alloc, vm);
    if (L == NULL) {
        crescent_pool_release(&vm->pool);
        free(vm);
        return NULL;
    }
    *(crescent_vm **)lua_getextraspace(L) = vm;
    lua_atpanic(L, panic_handler);
    lua_setwarnf(L, collect_running_warning, vm);
    luaL_openlibs(L);
    lua_pushliteral(L, MEMORY_ERROR_MESSAGE);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &memory_error_key);
    crescent_install_coroutine_functions(L);
    crescent_install_debug_functions(L);
    crescent_install_handler_guards(L);
    crescent_install_model_guards(L);
    crescent_install_pattern_functions(L);
    crescent_install_text_loaders(L);
    crescent_install_shell(L);
    crescent_install_descriptor_reserve(L);
    return L;
}

/* The finalizers' errors while a state closes: Lua reports an error in a __gc only as a warning
 * ("error in __gc (MESSAGE)", in pieces), which a state made by lua_newstate drops. */
typedef struct close_failures {
    char *text;                /* the first failure's warning, cut at capacity */
    size_t capacity;
    size_t length;
    int count;
    int continuing;            /* the last piece said more of the same warning follows */
} close_failures;

static void collect_close_failure(void *ud, const char *message, int tocont) {
    close_failures *failures = ud;
    if (!failures->continuing) {
        failures->continuing = tocont;
        /* A control message ("@on") is a whole warning of one piece. */
        if (!tocont && message[0] == '@') return;
        failures->count++;
    } else {
        failures->continuing = tocont;
    }
    if (failures->count != 1 || failures->capacity == 0) return;
    size_t room = failures->capacity - 1 - failures->length;
    size_t length = strlen(message);
    if (length > room) length = room;
    memcpy(failures->text + failures->length, message, length);
    failures->length += length;
    failures->text[failures->length] = '\0';
}

int crescent_close(lua_State *L, char *first_failure, size_t capacity) {
    crescent_vm *vm = vm_of(L);
    vm->limit = 0; /* finalizers may allocate while closing */
    vm->closing = 1;
    close_failures failures = { first_failure, capacity, 0, 0, 0 };
    if (capacity > 0) first_failure[0] = '\0';
    lua_setwarnf(L, collect_close_failure, &failures);
    lua_close(L);
    crescent_pool_release(&vm->pool);
    free(vm);
    return failures.count;
}

size_t crescent_memory_used(lua_State *L) { return vm_of(L)->used; }
size_t crescent_memory_limit(lua_State *L) { return vm_of(L)->limit; }
void crescent_set_memory_limit(lua_State *L, size_t limit_bytes) { vm_of(L)->limit = limit_bytes; }
void crescent_set_memory_limit_setting(lua_State *L, const char *setting) {
    crescent_vm *vm = vm_of(L);
    snprintf(vm->limit_setting, sizeof vm->limit_setting, "%s", setting ? setting : "");
}
const char *crescent_memory_limit_setting(lua_State *L) {
    crescent_vm *vm = vm_of(L);
    return vm->limit_setting[0] ? vm->limit_setting : NULL;
}
int crescent_memory_limit_hit(lua_State *L) { return vm_of(L)->limit_hit; }
void crescent_clear_memory_limit_hit(lua_State *L) {
    crescent_vm *vm = vm_of(L);
    vm->limit_hit = 0;
    vm->refused = 0;
    vm->memory_error_pending = 0;
    vm->over_margin = 0;
}

int crescent_past_limit_after_collection(lua_State *L) {
    crescent_vm *vm = vm_of(L);
    if (vm->used > vm->limit) lua_gc(L, LUA_GCCOLLECT);
    if (vm->used > vm->limit) return 1;
    vm->over_margin = 0;
    return 0;
}

int crescent_raise_memory_error(lua_State *L) {
    crescent_vm *vm = vm_of(L);
    vm->limit_hit = 1;
    vm->over_margin = 1;                /* the message and the handler's traceback need memory */
    /* The first frame of the script's own code; else the first Lua frame (the host's prelude). */
    char source[LUA_IDSIZE] = "";
    int line = 0;
    lua_Debug ar;
    for (int level = 0; level < 64 && lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
        int host = strncmp(ar.short_src, "[crescent", 9) == 0;
        if (line == 0 || !host) {
            snprintf(source, sizeof source, "%s", ar.short_src);
            line = ar.currentline;
        }
        if (!host) break;
    }
    const char *setting = vm->limit_setting[0] ? vm->limit_setting : "--memory-limit";
    unsigned long mib = (unsigned long)(vm->limit / (1024 * 1024));
    if (line > 0) {
        lua_pushfstring(L, "%s:%d: not enough memory: the memory limit of %d MiB was reached (raise it with %s)",
                        source, line, (int)mib, setting);
    } else {
        lua_pushfstring(L, "not enough memory: the memory limit of %d MiB was reached (raise it with %s)", (int)mib, setting);
    }
    return lua_error(L);
}

/* ---- The trampoline ---------------------------------------------------------------------------- */

typedef struct crescent_export {
    const void *tag;
    crescent_swift_function fn;
    void *context;
} crescent_export;

/* Its address tags export blocks: debug.setupvalue can put any userdata where the export was. */
static const char export_tag = 'e';

/* Raises the memory error when Swift left the VM past its limit, else returns 0. */
static int raise_if_over_limit(lua_State *L) {
    crescent_vm *vm = vm_of(L);
    if (!vm->over_limit_pending || vm->swift_active != 0) return 0;
    vm->over_limit_pending = 0;
    if (vm->used <= vm->limit) return 0;
    lua_settop(L, 0);
    return crescent_raise_memory_error(L);
}

/* Where a Swift function that yielded (an await) carries on when resumed: the values the host
 * resumed it with are its results. The host made them in Swift, past the limit if they are too
 * big: the memory error is raised here, at the await, inside whatever pcall surrounds it. */
static int await_continue(lua_State *L, int status, lua_KContext base) {
    (void)status;
    raise_if_over_limit(L);
    return lua_gettop(L) - (int)base;
}

static int trampoline(lua_State *L) {
    const crescent_export *export = lua_touserdata(L, lua_upvalueindex(1));
    if (export == NULL || lua_rawlen(L, lua_upvalueindex(1)) != sizeof *export || export->tag != &export_tag)
        return luaL_error(L, "a Crescent function's upvalue was replaced; it can no longer be called");
    crescent_vm *vm = vm_of(L);
    /* Finalizers run by lua_close may call Swift functions whose host has already torn down. */
    if (vm->closing) return luaL_error(L, "the host has shut down: Crescent functions cannot be called while it exits");
    vm->swift_active++;
    int status = export->fn(L, export->context);
    vm->swift_active--;
    /* From here on no Swift frame of this call is on the C stack: raising is safe. */
    raise_if_over_limit(L);
    if (status >= 0) return status;
    if (status == CRESCENT_RAISE) {
        if (lua_type(L, -1) == LUA_TSTRING) {
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
        }
        return lua_error(L);
    }
    if (status == CRESCENT_RERAISE) return lua_error(L);
    int yielded = -3 - status;
    return lua_yieldk(L, yielded, (lua_KContext)(lua_gettop(L) - yielded), await_continue);
}

void crescent_push_function(lua_State *L, crescent_swift_function fn, void *context) {
    crescent_export *export = lua_newuserdatauv(L, sizeof *export, 0);
    export->tag = &export_tag;
    export->fn = fn;
    export->context = context;
    lua_pushcclosure(L, trampoline, 1);
}

/* ---- Protected calls ----------------------------------------------------------------------------- */

static const char *error_message(lua_State *L, int idx, lua_State *co);

int crescent_traceback_handler(lua_State *L) {
    luaL_traceback(L, L, error_message(L, 1, NULL), 1);
    return 1;
}

/* Runs lua_pcall with Lua (not Swift) as the running side, so the memory limit is enforced. */
static int run_pcall(lua_State *L, int nargs, int nresults, int handler) {
    crescent_vm *vm = vm_of(L);
    int saved = vm->swift_active;
    vm->swift_active = 0;
    lua_State *previous = crescent_enter_lua(L);
    int status = lua_pcall(L, nargs, nresults, handler);
    crescent_leave_lua(L, previous);
    vm->swift_active = saved;
    return status;
}

int crescent_pcall(lua_State *L, int nargs, int nresults) {
    int base = lua_gettop(L) - nargs;    /* the function */
    lua_pushcfunction(L, crescent_traceback_handler);
    lua_insert(L, base);                 /* handler f args... */
    int status = run_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    return status;
}

int crescent_pcall_raw(lua_State *L, int nargs, int nresults) {
    return run_pcall(L, nargs, nresults, 0);
}

/* A message as a C string for luaL_traceback, which stops at the first NUL: a NUL inside the
   message is written as the two characters \0 (pushed), so nothing after it is lost. */
static const char *visible(lua_State *L, const char *message, size_t length) {
    if (memchr(message, '\0', length) == NULL) return message;
    luaL_Buffer buffer;
    luaL_buffinit(L, &buffer);
    for (size_t i = 0; i < length; i++) {
        if (message[i] == '\0') luaL_addstring(&buffer, "\\0");
        else luaL_addchar(&buffer, message[i]);
    }
    luaL_pushresult(&buffer);
    return lua_tostring(L, -1);
}

/* The host's wording of an error value, when it set one: the function in the registry's
   CRESCENT_ERROR_TEXT gets the value and returns the message (a table raised with error() shown
   as inspect shows it, where Lua says only "error object is a table value", or a hint that needs
   the frame that raised, which only a message handler still has). It gets the coroutine that
   raised as its second argument when that is not L. It runs protected; when it fails or
   returns no string, the plain message stands. */
static const char *host_error_text(lua_State *L, int idx, lua_State *co) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, CRESCENT_ERROR_TEXT) != LUA_TFUNCTION) {
        lua_pop(L, 1);
        return NULL;
    }
    lua_pushvalue(L, idx);                            /* f value */
    if (co != NULL) {
        lua_pushthread(co);
        lua_xmove(co, L, 1);                          /* f value co */
    } else {
        lua_pushnil(L);                               /* f value nil */
    }
    if (lua_pcall(L, 2, 1, 0) != LUA_OK || lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 1);
        return NULL;
    }
    size_t length;
    const char *message = lua_tolstring(L, -1, &length);
    return visible(L, message, length);
}

/* The message of an error value raised in `co` (NULL: in L): the host's wording, else the
   string itself, its __tostring, or its type. */
static const char *error_message(lua_State *L, int idx, lua_State *co) {
    size_t length;
    const char *hosted = host_error_text(L, idx, co);
    if (hosted != NULL) return hosted;
    const char *message = lua_tolstring(L, idx, &length);
    if (message != NULL) return visible(L, message, length);
    if (luaL_callmeta(L, idx, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
        message = lua_tolstring(L, -1, &length);
        return visible(L, message, length);
    }
    return lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, idx));
}

static int thread_traceback(lua_State *L) {    /* co error */
    lua_State *co = lua_tothread(L, 1);
    luaL_traceback(L, co, error_message(L, 2, co), 0);
    return 1;
}

int crescent_resume(lua_State *L, lua_State *co, int nargs, int *nresults) {
    crescent_vm *vm = vm_of(L);
    int saved = vm->swift_active;
    vm->swift_active = 0;
    lua_State *previous = crescent_enter_lua(co);
    /* Resumed from the Lua code running now, when it is this VM's (a `task` started inside a
     * task): Lua counts the C calls from there, so a task that starts itself without end stops
     * with "C stack overflow" instead of running the host out of its C stack. */
    lua_State *from = (previous != NULL && vm_of(previous) == vm) ? previous : L;
    int status = lua_resume(co, from, nargs, nresults);
    crescent_leave_lua(co, previous);
    vm->swift_active = saved;
    if (status == LUA_OK || status == LUA_YIELD) return status;
    lua_xmove(co, L, 1);                              /* L: error */
    lua_pushcfunction(L, thread_traceback);           /* error f */
    lua_pushthread(co);
    lua_xmove(co, L, 1);                              /* error f co */
    lua_pushvalue(L, -3);                             /* error f co error */
    if (run_pcall(L, 2, 1, 0) != LUA_OK) {            /* error message | error failure */
        lua_pop(L, 1);
        lua_pushliteral(L, "(error while formatting an error)");
    }
    return status;                                    /* error message */
}


int crescent_load(lua_State *L, const char *bytes, size_t length, const char *chunkname, const char *mode) {
    crescent_vm *vm = vm_of(L);
    int saved = vm->swift_active;
    vm->swift_active = 0;
    int status = luaL_loadbufferx(L, bytes, length, chunkname, mode);
    vm->swift_active = saved;
    return status;
}

static int do_gettable(lua_State *L) { lua_gettable(L, 1); return 1; }       /* t k */
static int do_settable(lua_State *L) { lua_settable(L, 1); return 0; }       /* t k v */
static int do_tostring(lua_State *L) { luaL_tolstring(L, 1, NULL); return 1; }
static int do_concat(lua_State *L) { lua_concat(L, lua_gettop(L)); return 1; }
static int do_len(lua_State *L) { lua_len(L, 1); return 1; }
static int do_next(lua_State *L) {                                           /* t k */
    if (lua_next(L, 1)) return 2;
    return 0;
}
static int do_compare(lua_State *L) {                                        /* a b op */
    int op = (int)lua_tointeger(L, 3);
    lua_pushboolean(L, lua_compare(L, 1, 2, op));
    return 1;
}

int crescent_pgettable(lua_State *L, int idx) {                              /* ... k */
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, do_gettable);                                       /* ... k f */
    lua_pushvalue(L, idx);                                                   /* ... k f t */
    lua_rotate(L, -3, 2);                                                    /* ... f t k */
    return run_pcall(L, 2, 1, 0);
}

int crescent_psettable(lua_State *L, int idx) {                              /* ... k v */
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, do_settable);                                       /* ... k v f */
    lua_pushvalue(L, idx);                                                   /* ... k v f t */
    lua_rotate(L, -4, 2);                                                    /* ... f t k v */
    return run_pcall(L, 3, 0, 0);
}

int crescent_pgetfield(lua_State *L, int idx, const char *name) {
    idx = lua_absindex(L, idx);
    lua_pushstring(L, name);
    return crescent_pgettable(L, idx);
}

int crescent_psetfield(lua_State *L, int idx, const char *name) {            /* ... v */
    idx = lua_absindex(L, idx);
    lua_pushstring(L, name);                                                 /* ... v k */
    lua_insert(L, -2);                                                       /* ... k v */
    return crescent_psettable(L, idx);
}

int crescent_ptostring(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, do_tostring);
    lua_pushvalue(L, idx);
    return run_pcall(L, 1, 1, 0);
}

int crescent_pconcat(lua_State *L, int n) {
    lua_pushcfunction(L, do_concat);
    lua_insert(L, -n - 1);
    return run_pcall(L, n, 1, 0);
}

int crescent_plen(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, do_len);
    lua_pushvalue(L, idx);
    return run_pcall(L, 1, 1, 0);
}

int crescent_pcompare(lua_State *L, int idx1, int idx2, int op, int *result) {
    idx1 = lua_absindex(L, idx1);
    idx2 = lua_absindex(L, idx2);
    lua_pushcfunction(L, do_compare);
    lua_pushvalue(L, idx1);
    lua_pushvalue(L, idx2);
    lua_pushinteger(L, op);
    int status = run_pcall(L, 3, 1, 0);
    if (status == LUA_OK) {
        *result = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    return status;
}

int crescent_pnext(lua_State *L, int idx, int *more) {                      /* ... k */
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, do_next);                                           /* ... k f */
    lua_pushvalue(L, idx);                                                   /* ... k f t */
    lua_rotate(L, -3, 2);                                                    /* ... f t k */
    int top = lua_gettop(L) - 3;
    int status = run_pcall(L, 2, LUA_MULTRET, 0);
    if (status == LUA_OK) *more = lua_gettop(L) > top;
    return status;
}

int crescent_checkstack(lua_State *L, int n) {
    crescent_vm *vm = vm_of(L);
    int saved = vm->swift_active;
    vm->swift_active = 1; /* growing the stack here must not fail for the limit */
    int ok = lua_checkstack(L, n);
    vm->swift_active = saved;
    return ok;
}

/* ---- Swift-object userdata ------------------------------------------------------------------------ */

/* Its address is the tag of every Swift-object block: no script can write it into a userdata. */
static const char object_tag = 'o';

crescent_object *crescent_push_object(lua_State *L, void *object, void (*release)(void *), int metatable_ref,
                                      int user_values) {
    crescent_object *block = lua_newuserdatauv(L, sizeof *block, user_values);
    block->tag = &object_tag;
    block->object = object;
    block->release = release;
    lua_rawgeti(L, LUA_REGISTRYINDEX, metatable_ref);
    block->type = lua_topointer(L, -1);
    lua_setmetatable(L, -2);
    return block;
}

crescent_object *crescent_object_block(lua_State *L, int idx) {
    /* A full userdata of exactly our size whose first word is our tag. lua_touserdata answers
     * NULL for anything but a userdata, and lua_rawlen 0 for a light one, so the tag is read only
     * inside a block of our size. */
    crescent_object *block = lua_touserdata(L, idx);
    if (block == NULL || lua_rawlen(L, idx) != sizeof *block) return NULL;
    return block->tag == &object_tag ? block : NULL;
}

crescent_object *crescent_to_object(lua_State *L, int idx, const void *metatable) {
    crescent_object *block = crescent_object_block(L, idx);
    return block != NULL && block->type == metatable ? block : NULL;
}

int crescent_object_gc(lua_State *L) {
    crescent_object *block = crescent_object_block(L, 1);
    if (block == NULL) return 0;
    void *object = block->object;
    block->object = NULL;
    if (object != NULL && block->release != NULL) block->release(object);
    return 0;
}

int crescent_object_index(lua_State *L) {                                   /* obj key */
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;            /* obj key method */
    if (lua_type(L, lua_upvalueindex(2)) != LUA_TFUNCTION) return 1;         /* nil */
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 1);                                                       /* obj key nil value */
    return 1;
}

void crescent_push_object_index(lua_State *L) {                              /* methods getter */
    lua_pushcclosure(L, crescent_object_index, 2);
}

static const char model_marker = 'm';

const void *crescent_model_marker(void) { return &model_marker; }

/* The private key under which a data model proxy holds its fields table: a light userdata, which
 * no script can make, so no assignment or read by name reaches it. */
static const char model_fields_key = 'f';

const void *crescent_model_fields_key(void) { return &model_fields_key; }

int crescent_push_model_fields(lua_State *L, int index) {
    if (lua_type(L, index) != LUA_TTABLE) {
        lua_pushnil(L);
        return LUA_TNIL;
    }
    index = lua_absindex(L, index);
    int type = lua_rawgetp(L, index, &model_fields_key);
    /* A packed model (packed.c) makes its fields table on the first need of it. */
    if (type != LUA_TUSERDATA) return type;
    int fields = crescent_packed_materialize(L, index, -1);                  /* batch fields */
    lua_remove(L, -2);
    return fields;
}

/* `__index` of every data model proxy (the metatable is shared by all models of a type): the
 * proxy's fields (a packed model's read from its batch), then (through the fields table's own
 * metatable) its type's methods. Scripts can reach it through debug.getmetatable and call it on
 * anything, so it checks what it was given. */
static int model_index(lua_State *L) {                                      /* proxy key */
    if (lua_type(L, 1) != LUA_TTABLE) return 0;
    int type = lua_rawgetp(L, 1, &model_fields_key);                         /* proxy key fields */
    if (type == LUA_TUSERDATA) {                                             /* proxy key batch */
        if (crescent_packed_field(L, 1, 3, 2)) return 1;
        type = crescent_packed_materialize(L, 1, 3);                         /* proxy key batch fields */
    }
    if (type != LUA_TTABLE) return 0;
    lua_pushvalue(L, 2);
    lua_gettable(L, -2);                                                     /* proxy key fields value */
    return 1;
}

void crescent_push_model_index(lua_State *L) { lua_pushcfunction(L, model_index); }

/* Whether the value at `index` is a data model proxy: a table whose metatable holds the marker. */
int crescent_is_model(lua_State *L, int index) {
    if (lua_type(L, index) != LUA_TTABLE || !lua_getmetatable(L, index)) return 0;
    int marked = lua_rawgetp(L, -1, &model_marker) != LUA_TNIL;
    lua_pop(L, 2);
    return marked;
}

/* `next` over a data model proxy (proxy [key]): the next of its fields, as if they were the
 * proxy's own, so that the private key and the fields table behind it never reach a script (a
 * script holding the fields table could change what the model reads). */
static int model_next(lua_State *L) {
    lua_settop(L, 2);
    if (crescent_push_model_fields(L, 1) != LUA_TTABLE) return luaL_argerror(L, 1, "data model expected");
    lua_insert(L, 2);                                                        /* proxy fields key */
    if (lua_next(L, 2)) return 2;
    lua_pushnil(L);
    return 1;
}

void crescent_push_model_next(lua_State *L) { lua_pushcfunction(L, model_next); }

/* The type name a model's metatable gives (`placemark`), for messages. */
static const char *model_type_name(lua_State *L, int index) {
    const char *name = "record";
    if (lua_getmetatable(L, index)) {
        if (lua_getfield(L, -1, "__name") == LUA_TSTRING) name = lua_tostring(L, -1);
        lua_pop(L, 2); /* the name stays alive in the metatable, which the proxy keeps */
    }
    return name;
}

/* The standard library function a wrapper stands for (upvalue 1), called in the wrapper's frame. */
static int call_original(lua_State *L) { return lua_tocfunction(L, lua_upvalueindex(1))(L); }

/* rawset refuses a data model as the `__newindex` of every model does: models are read-only even
 * to rawset, as service objects are (those are userdata). */
static int guarded_rawset(lua_State *L) {
    if (!crescent_is_model(L, 1)) return call_original(L);
    const char *type_name = model_type_name(L, 1);
    const char *key = luaL_tolstring(L, 2, NULL);
    return luaL_error(L, "rawset: cannot set '%s.%s': a %s is read-only (it is a snapshot made by its service)",
                      type_name, key, type_name);
}

/* rawget and next read a data model's fields, as they read a plain table's. */
static int guarded_rawget(lua_State *L) {
    if (!crescent_is_model(L, 1)) return call_original(L);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    crescent_push_model_fields(L, 1);                                        /* proxy key fields */
    lua_insert(L, 2);                                                        /* proxy fields key */
    lua_rawget(L, 2);
    return 1;
}

static int guarded_next(lua_State *L) {
    if (!crescent_is_model(L, 1)) return call_original(L);
    return model_next(L);
}

void crescent_install_model_guards(lua_State *L) {
    lua_pushglobaltable(L);
    crescent_wrap_field(L, "rawset", guarded_rawset);
    crescent_wrap_field(L, "rawget", guarded_rawget);
    crescent_wrap_field(L, "next", guarded_next);
    lua_pop(L, 1);
}

/* Replaces the value on top with a fresh proxy over the same fields when it is a data model, so a
 * rawset on what one read returned never reaches the next read. */
static void fresh_model_proxy(lua_State *L) {                                /* value */
    if (lua_type(L, -1) != LUA_TTABLE || !lua_getmetatable(L, -1)) return;
    if (lua_rawgetp(L, -1, &model_marker) == LUA_TNIL) {                     /* value mt nil */
        lua_pop(L, 2);
        return;
    }
    lua_pop(L, 1);                                                           /* value mt */
    lua_createtable(L, 0, 1);                                                /* value mt proxy */
    crescent_push_model_fields(L, -3);                                       /* value mt proxy fields */
    lua_rawsetp(L, -2, &model_fields_key);                                   /* value mt proxy */
    lua_insert(L, -2);                                                       /* value proxy mt */
    lua_setmetatable(L, -2);                                                 /* value proxy */
    lua_remove(L, -2);                                                       /* proxy */
}

/* Pushes `key`'s entry in the table in user value `slot` of `obj` (a data model as a fresh proxy)
 * and returns 1; returns 0 with the stack as it was when there is none. */
static int cached_value(lua_State *L, int slot) {                            /* obj key */
    if (lua_getiuservalue(L, 1, slot) == LUA_TTABLE) {                       /* obj key cache */
        lua_pushvalue(L, 2);
        if (lua_rawget(L, -2) != LUA_TNIL) {                                 /* obj key cache value */
            fresh_model_proxy(L);
            return 1;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);                                                           /* obj key */
    return 0;
}

/* What follows a miss in the cache of plain values (upvalues: methods, getter): the cached data
 * models (user value 2), the methods, then the getter. `remember` copies a method found into the
 * cache (user value 1), so the next lookup of it is the VM's own. */
static int index_after_cache(lua_State *L, int remember) {                   /* obj key */
    if (cached_value(L, 2)) return 1;
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) {                    /* obj key method */
        if (remember && lua_getiuservalue(L, 1, 1) == LUA_TTABLE) {          /* obj key method cache */
            lua_pushvalue(L, 2);
            lua_pushvalue(L, -3);
            lua_rawset(L, -3);
        }
        lua_settop(L, 3);
        return 1;
    }
    lua_pop(L, 1);
    if (lua_type(L, lua_upvalueindex(2)) != LUA_TFUNCTION) return 0;
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_insert(L, 1);                                                        /* getter obj key */
    lua_call(L, 2, 1);
    return 1;
}

static int cached_index(lua_State *L) {                                     /* obj key */
    /* Cached property values first: a property read is one table lookup, all in C. */
    if (cached_value(L, 1)) return 1;
    return index_after_cache(L, 0);
}

/* `__index` of an object's cache table (upvalues: methods, getter, the object): a miss there. */
static int cache_miss_index(lua_State *L) {                                  /* cache key */
    lua_pushvalue(L, lua_upvalueindex(3));
    lua_replace(L, 1);                                                       /* obj key */
    return index_after_cache(L, 1);
}

void crescent_own_cached_index(lua_State *L) {                               /* ud */
    int ud = lua_gettop(L);
    if (!lua_getmetatable(L, ud)) return;                                    /* ud shared */
    if (lua_getiuservalue(L, ud, 1) != LUA_TTABLE) {                         /* ud shared cache */
        lua_pop(L, 2);
        return;
    }
    lua_createtable(L, 0, 12);                                               /* ud shared cache own */
    lua_pushnil(L);
    while (lua_next(L, ud + 1)) {                                            /* ... own key value */
        lua_pushvalue(L, -2);
        lua_insert(L, -2);                                                   /* ... own key key value */
        lua_rawset(L, ud + 3);                                               /* ... own key */
    }
    lua_createtable(L, 0, 1);                                                /* ud shared cache own cachemt */
    lua_pushliteral(L, "__index");
    lua_rawget(L, ud + 1);                                                   /* ... cachemt sharedindex */
    if (lua_getupvalue(L, -1, 1) == NULL) lua_pushnil(L);                    /* ... sharedindex methods */
    if (lua_getupvalue(L, -2, 2) == NULL) lua_pushnil(L);                    /* ... sharedindex methods getter */
    lua_pushvalue(L, ud);
    lua_pushcclosure(L, cache_miss_index, 3);                                /* ... cachemt sharedindex miss */
    lua_remove(L, -2);                                                       /* ... cachemt miss */
    lua_setfield(L, -2, "__index");                                          /* ud shared cache own cachemt */
    lua_setmetatable(L, ud + 2);                                             /* ud shared cache own */
    lua_pushvalue(L, ud + 2);
    lua_setfield(L, -2, "__index");                                          /* ud shared cache own */
    lua_setmetatable(L, ud);                                                 /* ud shared cache */
    lua_settop(L, ud);
}

void crescent_push_model(lua_State *L, int templates_ref, int slot) {       /* fields */
    lua_createtable(L, 0, 1);                                                /* fields proxy */
    lua_insert(L, -2);                                                       /* proxy fields */
    lua_rawsetp(L, -2, &model_fields_key);                                   /* proxy */
    lua_rawgeti(L, LUA_REGISTRYINDEX, templates_ref);                        /* proxy templates */
    lua_rawgeti(L, -1, slot);                                                /* proxy templates mt */
    lua_setmetatable(L, -3);                                                 /* proxy templates */
    lua_pop(L, 1);                                                           /* proxy */
}

void crescent_push_cached_index(lua_State *L) {                              /* methods getter */
    lua_pushcclosure(L, cached_index, 2);
}

/* ---- Benchmark baselines ----------------------------------------------------------------------------- */

#define BENCH_C_OBJECT "crescent.bench.CObject"

static int bench_c_get(lua_State *L) {
    luaL_checkudata(L, 1, BENCH_C_OBJECT);
    lua_Integer i = luaL_checkinteger(L, 2);
    lua_pushinteger(L, i + 1);
    return 1;
}

void crescent_bench_register_c_object(lua_State *L) {
    luaL_newmetatable(L, BENCH_C_OBJECT);                                    /* mt */
    lua_newtable(L);                                                         /* mt methods */
    lua_pushcfunction(L, bench_c_get);
    lua_setfield(L, -2, "get");
    lua_pushnil(L);                                                          /* mt methods nil */
    crescent_push_object_index(L);                                           /* mt index */
    lua_setfield(L, -2, "__index");                                          /* mt */
    lua_newuserdatauv(L, sizeof(crescent_object), 1);                        /* mt ud */
    lua_insert(L, -2);                                                       /* ud mt */
    lua_setmetatable(L, -2);                                                 /* ud */
    lua_setglobal(L, "bench_c_object");
}

lua_Integer crescent_bench_c_callback_loop(lua_State *L, int ref, lua_Integer count) {
    lua_Integer sum = 0;
    for (lua_Integer i = 0; i < count; i++) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        lua_pushinteger(L, i);
        if (crescent_pcall(L, 1, 1) != LUA_OK) {
            lua_pop(L, 1);
            return -1;
        }
        sum += lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    return sum;
}

static int bench_c_property_index(lua_State *L) {
    lua_pushinteger(L, 42);
    return 1;
}

void crescent_bench_register_c_property(lua_State *L) {
    lua_newuserdatauv(L, sizeof(crescent_object), 1);                        /* ud */
    lua_newtable(L);                                                         /* ud mt */
    lua_pushcfunction(L, bench_c_property_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);                                                 /* ud */
    lua_setglobal(L, "bench_c_property");
}

void crescent_bench_c_deliver_loop(lua_State *L, int ref, lua_Integer count) {
    for (lua_Integer i = 0; i < count; i++) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        lua_pushinteger(L, i);
        lua_pushinteger(L, i - 1);
        lua_createtable(L, 0, 3);
        lua_pushliteral(L, "value");
        lua_setfield(L, -2, "key");
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "initial");
        lua_pushinteger(L, 1);
        lua_setfield(L, -2, "coalesced");
        if (crescent_pcall(L, 3, 0) != LUA_OK) lua_pop(L, 1);
    }
}

static void bench_copy(lua_State *L, int idx, int depth) {
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) lua_pushinteger(L, lua_tointeger(L, idx));
        else lua_pushnumber(L, lua_tonumber(L, idx));
        break;
    case LUA_TSTRING: {
        size_t length;
        const char *bytes = lua_tolstring(L, idx, &length);
        lua_pushlstring(L, bytes, length);
        break;
    }
    case LUA_TBOOLEAN: lua_pushboolean(L, lua_toboolean(L, idx)); break;
    case LUA_TTABLE:
        if (depth > 100) luaL_error(L, "bench_c_mirror: too deep");
        luaL_checkstack(L, 4, NULL);
        idx = lua_absindex(L, idx);
        lua_createtable(L, (int)lua_rawlen(L, idx), 0);                      /* copy */
        lua_pushnil(L);
        while (lua_next(L, idx)) {                                           /* copy key value */
            bench_copy(L, -2, depth + 1);                                    /* copy key value key' */
            bench_copy(L, -2, depth + 1);                                    /* copy key value key' value' */
            lua_rawset(L, -5);                                               /* copy key value */
            lua_pop(L, 1);                                                   /* copy key */
        }
        break;
    default: lua_pushnil(L);
    }
}

static int bench_c_mirror(lua_State *L) {
    bench_copy(L, 1, 0);
    return 1;
}

void crescent_bench_register_c_mirror(lua_State *L) {
    lua_pushcfunction(L, bench_c_mirror);
    lua_setglobal(L, "bench_c_mirror");
}

int crescent_pause_collector(lua_State *L) {
    if (!lua_gc(L, LUA_GCISRUNNING)) return 0;
    lua_gc(L, LUA_GCSTOP);
    return 1;
}

void crescent_resume_collector(lua_State *L) {
    lua_gc(L, LUA_GCRESTART);
    /* Restarting leaves the collector no credit: the next allocation began a cycle that marked
     * every object just built, all of them live, and freed nothing. Lua's own rule after a cycle
     * (the default pause, 200%) lets the heap grow by its live size before the next one starts;
     * what was built while the collector stood is live, so it gets that credit, but never more
     * than a quarter of the room left under the memory limit, so that a small limit is still
     * kept by collecting rather than met with a memory error. A negative step only lowers the
     * debt (lapi.c, LUA_GCSTEP). */
    const crescent_vm *vm = vm_of(L);
    size_t credit = vm->used;
    if (vm->limit != 0) {
        size_t room = vm->limit > vm->used ? vm->limit - vm->used : 0;
        if (credit > room / 4) credit = room / 4;
    }
    size_t kilobytes = credit / 1024;
    if (kilobytes > 0) lua_gc(L, LUA_GCSTEP, -(int)(kilobytes < INT_MAX ? kilobytes : INT_MAX));
}

void crescent_collect_garbage(lua_State *L) { lua_gc(L, LUA_GCCOLLECT); }

void crescent_push_change_keys(lua_State *L) {
    static const char *const names[] = { "initial", "coalesced", "sub", "object", "key" };
    lua_createtable(L, 5, 0);
    for (int i = 0; i < 5; i++) {
        lua_pushstring(L, names[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

/* Keys come from the interned strings in `keys` (rawgeti: no hashing or strcmp per field). */
void crescent_push_change(lua_State *L, int keys, int prototype, int initial, lua_Integer coalesced,
                          int subscription) {
    keys = lua_absindex(L, keys);
    prototype = lua_absindex(L, prototype);
    subscription = lua_absindex(L, subscription);
    lua_createtable(L, 0, 3);
    lua_rawgeti(L, keys, 1);
    lua_pushboolean(L, initial);
    lua_rawset(L, -3);
    lua_rawgeti(L, keys, 2);
    lua_pushinteger(L, coalesced);
    lua_rawset(L, -3);
    lua_rawgeti(L, keys, 3);
    lua_pushvalue(L, subscription);
    lua_rawset(L, -3);
    lua_pushvalue(L, prototype);
    lua_setmetatable(L, -2);
}
