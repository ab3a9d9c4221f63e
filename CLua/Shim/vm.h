/*
 * The shim's private bookkeeping, shared by shim.c (the state, the allocator, the trampoline and
 * the protected calls) and interrupt.c (interrupts, the hook that raises them, and the coroutine
 * functions that say which thread runs). Not part of the module's interface.
 */
#ifndef CRESCENT_SHIM_VM_H
#define CRESCENT_SHIM_VM_H

#include "CLua.h"
#include <stdatomic.h>

/* A VM's small blocks (pool.c): Lua's objects of up to POOL_LARGEST bytes, in 16-byte size
 * classes, carved from chunks the VM owns and kept on a free list per class once freed. Lua
 * gives a block's size when it frees it, so a block needs no header. A test's host makes and
 * frees tens of thousands of them (the prelude's bytecode loaded, a spec file's declarations, the
 * VM closed); its chunks go back to the system whole when the VM closes. */
#define POOL_GRAIN 16
#define POOL_CLASSES 32
#define POOL_LARGEST (POOL_GRAIN * POOL_CLASSES)

typedef struct vm_pool {
    void *free[POOL_CLASSES];  /* per class: freed blocks, each holding the next */
    char *chunks;              /* the chunks, each starting with the previous one's address */
    char *next;                /* the current chunk's unused space */
    char *end;
} vm_pool;

/** As a lua_Alloc for blocks of `pool`'s VM: `nsize` 0 frees `ptr` (of `osize` bytes); else
 *  `ptr` (NULL, or a block of `osize` bytes) is grown or shrunk to `nsize`, NULL when the
 *  system has no memory left (and then `ptr` is kept). */
void *crescent_pool_realloc(vm_pool *pool, void *ptr, size_t osize, size_t nsize);
/** Gives every chunk back to the system: the VM is closed and none of its blocks is used. */
void crescent_pool_release(vm_pool *pool);

/* Per-VM bookkeeping, reachable from any thread of the state through its extra space. */

/* A thread's own hook, saved while the interrupt hook replaces it. */
typedef struct saved_hook {
    lua_State *thread;
    lua_Hook hook;
    int mask;
    int count;
} saved_hook;

#define SAVED_HOOKS 16

typedef struct crescent_vm {
    size_t used;
    size_t limit;              /* 0: no limit */
    int swift_active;          /* > 0 while Swift frames run on this VM: the limit is not enforced */
    int over_limit_pending;    /* the limit was crossed while Swift ran; raised when Swift returns */
    int limit_hit;             /* an allocation was refused because of the limit */
    /* The limit reached while Lua code runs: the first request past it is refused so that Lua
     * collects its garbage (an emergency collection) and asks again; asked again for the same
     * block and still past the limit, it is granted and the memory error is raised by the hook
     * at the next instruction, where the script's line and the traceback are known (Lua's own
     * memory error has neither). */
    int refused;
    void *refused_block;
    size_t refused_old, refused_new;
    int memory_error_pending;  /* the hook raises the memory error at the next instruction */
    int over_margin;           /* granted past the limit (up to crescent_memory_ceiling) until
                                * usage is back under it or the error reached the host */
    int closing;               /* lua_close runs: finalizers may not enter Swift any more */
    crescent_flag *interrupt;  /* CRESCENT_INTERRUPT_* or a signal's exit status */
    char limit_setting[64];    /* what raises the limit, for the memory error; "" for the default */
    saved_hook saved[SAVED_HOOKS];  /* the threads the interrupt hook was armed on */
    vm_pool pool;              /* the VM's small blocks */
    /* Lua reports an error in a __gc only as a warning, in pieces: the warning being assembled
     * (cut at its capacity), and the finalizers that failed since the host last took them. */
    char warning[1024];
    size_t warning_length;
    int warning_continues;
    int finalizer_failures;
    char first_finalizer_failure[1024];
} crescent_vm;

struct crescent_flag {
    atomic_int reason;
    atomic_int running;        /* > 0 while Lua code of the state runs */
    atomic_ulong thread;       /* the pthread running it (valid while running > 0) */
    atomic_int notice;         /* crescent_flag_notify asked for the notice handler */
    crescent_notice_handler notice_handler;   /* set and called on the thread that runs Lua */
    void *notice_context;
};

static inline crescent_vm *vm_of(lua_State *L) {
    return *(crescent_vm **)lua_getextraspace(L);
}

/** The Lua thread whose code runs on this OS thread now, or NULL (interrupt.c). */
lua_State *crescent_running_lua(void);
/** Raises the memory limit's error in `L`, naming the first frame of the script's own code
 *  (file:line) and the limit (shim.c). */
int crescent_raise_memory_error(lua_State *L);
/** Whether the VM is past its memory limit still after a full collection (else it is back under:
 *  the allocator's margin is closed again) (shim.c). */
int crescent_past_limit_after_collection(lua_State *L);
/** Marks `L` as the Lua code running on this thread (arming the interrupt hook when an interrupt
 *  is pending); returns what ran before, for crescent_leave_lua. */
lua_State *crescent_enter_lua(lua_State *L);
void crescent_leave_lua(lua_State *L, lua_State *previous);
/** Raises the pending interrupt's error in `L` ("interrupted", "exiting", or the time limit's),
 *  as the interrupt hook does; for C code that runs long without a hook (pattern matching). */
int crescent_raise_interrupt(lua_State *L);
/** Replaces string.find, match, gmatch and gsub with ones an interrupt stops (patterns.c). */
void crescent_install_pattern_functions(lua_State *L);
/** Installs the interrupt hook on `L` (saving the hook it had), as a pending interrupt does. */
void crescent_arm_interrupt(lua_State *L);
/** Arms the interrupt hook on `L` when an interrupt is pending: for the thread that goes on after
 *  other Lua code (a coroutine, a finalizer) ran while the interrupt came. */
void crescent_rearm_interrupt(lua_State *L);
/** Replaces xpcall, setmetatable and debug.setmetatable so that a message handler or a finalizer
 *  that loops can be interrupted (handlers.c). */
void crescent_install_handler_guards(lua_State *L);
/* rawset refuses data models; rawget and next read their fields (shim.c). */
void crescent_install_model_guards(lua_State *L);
/* Whether the value at `index` is a data model proxy. */
int crescent_is_model(lua_State *L, int index);
/** Whether the value at `index` is a table carrying json.array's or json.object's mark
 *  (metatables.c). */
int crescent_is_json_marked(lua_State *L, int index);
/** Replaces debug.getmetatable so that the host's shared metatables (data models', the json
 *  marks) are handed out as copies (metatables.c). */
void crescent_install_metatable_guards(lua_State *L);
/* The private key under which a data model proxy holds its fields table (or a packed model its
 * batch). */
const void *crescent_model_fields_key(void);
/* For the packed model proxy at `proxy` whose batch userdata is at `batch`: pushes the field named
 * by the string at `key` and returns 1, or returns 0 with nothing pushed when `key` names no field
 * (packed.c). */
int crescent_packed_field(lua_State *L, int proxy, int batch, int key);
/* Makes (and keeps in the proxy) the fields table of the packed model proxy at `proxy` whose
 * batch is at `batch`, pushes it and returns LUA_TTABLE (nil and LUA_TNIL when it has none). */
int crescent_packed_materialize(lua_State *L, int proxy, int batch);
/** Replaces function `name` of the table on top of the stack with `wrapper`, a C closure holding
 *  the original as upvalue 1 (nothing when there is no such function). */
void crescent_wrap_field(lua_State *L, const char *name, lua_CFunction wrapper);
/** > 0 while a script's finalizer runs on this thread: script hooks do not run there. */
extern _Thread_local int crescent_finalizer_depth;
/** Replaces load, loadfile, dofile and the Lua-file searcher of require with text-only ones. */
void crescent_install_text_loaders(lua_State *L);
/** Replaces io.popen and os.execute with ones that start `/bin/sh -c CMD` as the process service
 *  starts its programs: every signal at its default action, an empty mask, descriptors 0-2 only
 *  (shell.c). */
void crescent_install_shell(lua_State *L);
/** Makes io.open, io.lines, io.tmpfile, io.popen, io.input and io.output refuse a descriptor in
 *  the host's reserve (descriptors.c). */
void crescent_install_descriptor_reserve(lua_State *L);
/** Pushes the refusal of a descriptor in the reserve: "`what`: too many open files (EMFILE): …"
 *  (`what` may be NULL). */
void crescent_push_descriptor_refusal(lua_State *L, const char *what, int limit, int reserve);
/** Replaces coroutine.resume and coroutine.wrap with versions that mark the coroutine they run. */
void crescent_install_coroutine_functions(lua_State *L);
/** Replaces debug.sethook, gethook and getinfo: a script's hook runs where an interrupt can stop
 *  it, and a pending interrupt's hook stays armed (hooks.c). */
void crescent_install_debug_functions(lua_State *L);

#endif
