/*
 * Interrupts (Ctrl-C, --timeout, app.exit), the way lua.c does them: a flag, and a hook installed
 * only while one is pending, on the Lua code running at that moment. This file uses only the
 * official API of Lua 5.4.
 */
#include "vm.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Under ThreadSanitizer (make sanitize) the interrupt signal bypasses it: ThreadSanitizer holds
 * an asynchronous signal back until the thread next calls into the C library, which a Lua loop
 * (`while true do end`) never does, so the interrupt would never come. Its handler is installed
 * with the C library's own sigaction, not ThreadSanitizer's, and the handler and what it calls
 * are not instrumented: the kernel may run them inside ThreadSanitizer's runtime, which must not
 * be entered again. They touch only the hook state of the Lua thread they interrupt, on that
 * thread, and call Lua, which is not instrumented either. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CRESCENT_THREAD_SANITIZER 1
#endif
#endif
#ifdef CRESCENT_THREAD_SANITIZER
#define SIGNAL_SAFE __attribute__((disable_sanitizer_instrumentation))
#else
#define SIGNAL_SAFE
#endif

/* The Lua thread (main state or coroutine) whose code runs on this OS thread now, if any. */
static _Thread_local lua_State *running_state;

static void arm_interrupt(lua_State *L);
void crescent_arm_interrupt(lua_State *L) { arm_interrupt(L); }
lua_State *crescent_running_lua(void) { return running_state; }

/* Sent to the thread that runs Lua code when another thread interrupts it. */
static int interrupt_signal(void) { return SIGRTMIN + 2; }

SIGNAL_SAFE static void on_interrupt_signal(int signal) {
    (void)signal;
    lua_State *L = running_state;
    if (L != NULL) arm_interrupt(L);
}

typedef int (*sigaction_function)(int, const struct sigaction *, struct sigaction *);

/* The sigaction that installs the interrupt handler: the C library's own under ThreadSanitizer
 * (see above), found in libc.so.6 itself past the interceptor of the same name. */
static sigaction_function handler_installer(void) {
#ifdef CRESCENT_THREAD_SANITIZER
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    sigaction_function own = libc != NULL ? (sigaction_function)dlsym(libc, "sigaction") : NULL;
    if (own != NULL) return own;
#endif
    return sigaction;
}

static void install_signal_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_interrupt_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    handler_installer()(interrupt_signal(), &action, NULL);
}

crescent_flag *crescent_flag_new(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_signal_handler);
    crescent_flag *flag = calloc(1, sizeof *flag);
    if (flag != NULL) atomic_init(&flag->reason, CRESCENT_INTERRUPT_NONE);
    return flag;
}
void crescent_flag_free(crescent_flag *flag) { free(flag); }

/* Arms the hook of the Lua code of `flag`'s state running now, on whichever thread runs it. */
static void arm_running(crescent_flag *flag) {
    pthread_t thread = (pthread_t)atomic_load(&flag->thread);
    if (pthread_equal(thread, pthread_self())) {
        if (running_state != NULL) arm_interrupt(running_state);
    } else {
        pthread_kill(thread, interrupt_signal());
    }
}

void crescent_flag_set(crescent_flag *flag, int reason) {
    atomic_store(&flag->reason, reason);
    if (atomic_load(&flag->running) <= 0) return;        /* armed when Lua code next starts */
    arm_running(flag);
}

void crescent_flag_set_notice_handler(crescent_flag *flag, crescent_notice_handler handler, void *context) {
    flag->notice_handler = handler;
    flag->notice_context = context;
}

void crescent_flag_notify(crescent_flag *flag) {
    if (atomic_load(&flag->running) <= 0) return;        /* no code holds the thread: no notice */
    atomic_store(&flag->notice, 1);
    arm_running(flag);
}

/* Gives `L` back its own hook (the script's, or none), saved when the interrupt hook was armed. */
static void disarm_interrupt(lua_State *L) {
    crescent_vm *vm = vm_of(L);
    for (int i = 0; i < SAVED_HOOKS; i++) {
        if (vm->saved[i].thread == L) {
            saved_hook own = vm->saved[i];
            vm->saved[i].thread = NULL;
            lua_sethook(L, own.hook, own.mask, own.count);
            return;
        }
    }
    lua_sethook(L, NULL, 0, 0);
}

/*
 * Runs at every instruction of a thread it is armed on. It calls the notice handler once when a
 * notice was asked for (crescent_flag_notify). While the interrupt is pending it raises,
 * here, in C, inside Lua code, again at the next instruction if a pcall caught it, until the code
 * has ended; once the host has cleared it, it gives the thread its own hook back.
 */
static void interrupt_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    crescent_flag *flag = vm_of(L)->interrupt;
    if (atomic_exchange(&flag->notice, 0) && flag->notice_handler != NULL) flag->notice_handler(flag->notice_context);
    int reason = atomic_load_explicit(&vm_of(L)->interrupt->reason, memory_order_relaxed);
    /* Armed by the allocator (shim.c), raised only if the VM is past its limit still once its
     * garbage is collected: the hook waits while a message handler runs, so a memory error armed
     * by the handler of another one came here after the pcall had returned, the code that used
     * the memory gone, and was blamed on the host's line after the pcall. */
    if (vm_of(L)->memory_error_pending) {
        vm_of(L)->memory_error_pending = 0;
        if (crescent_past_limit_after_collection(L)) {
            if (reason == CRESCENT_INTERRUPT_NONE) disarm_interrupt(L);
            crescent_raise_memory_error(L);
            return;
        }
    }
    if (reason == CRESCENT_INTERRUPT_NONE) {
        disarm_interrupt(L);
        return;
    }
    crescent_raise_interrupt(L);
}

/* Where the time limit first stopped the code, kept in the registry under this key: the raise
 * repeats at every instruction until the code has ended (a pcall or xpcall, the prelude's
 * handlers included, cannot go on), so the error that comes out was raised in the outermost
 * frame and its traceback has lost the script's line. */
#define INTERRUPTED_AT "crescent.interruptedAt"

int crescent_raise_interrupt(lua_State *L) {
    int reason = atomic_load_explicit(&vm_of(L)->interrupt->reason, memory_order_relaxed);
    if (reason == CRESCENT_INTERRUPT_TIMEOUT) {
        if (lua_getfield(L, LUA_REGISTRYINDEX, INTERRUPTED_AT) == LUA_TNIL) {
            /* Level 0: in the hook, the function that was running (the script's loop). */
            luaL_traceback(L, L, "interrupted: time limit reached", 0);
            lua_setfield(L, LUA_REGISTRYINDEX, INTERRUPTED_AT);
        }
        lua_pop(L, 1);
        return luaL_error(L, "interrupted: time limit reached");
    }
    if (reason == CRESCENT_INTERRUPT_EXIT) return luaL_error(L, "exiting");
    return luaL_error(L, "interrupted");
}

/* Installs the interrupt hook on `L`, saving the hook it had. Safe from a signal handler on the
 * thread running `L` (lua_sethook may be called asynchronously; nothing here allocates). It calls
 * no function of ours (vm_of is spelled out, each field set alone) so that under ThreadSanitizer
 * nothing it runs is instrumented. */
SIGNAL_SAFE static void arm_interrupt(lua_State *L) {
    lua_Hook current = lua_gethook(L);
    if (current == interrupt_hook) return;
    crescent_vm *vm = *(crescent_vm **)lua_getextraspace(L);
    for (int i = 0; i < SAVED_HOOKS; i++) {
        if (vm->saved[i].thread == L) vm->saved[i].thread = NULL;      /* a hook it has since dropped */
    }
    if (current != NULL) {
        for (int i = 0; i < SAVED_HOOKS; i++) {
            saved_hook *slot = &vm->saved[i];
            if (slot->thread == NULL) {
                slot->thread = L;
                slot->hook = current;
                slot->mask = lua_gethookmask(L);
                slot->count = lua_gethookcount(L);
                break;
            }
        }
    }
    lua_sethook(L, interrupt_hook, LUA_MASKCOUNT, 1);
}

/* Marks `L` as the Lua code running on this thread (arming the hook when an interrupt is already
 * pending); returns what ran before, for crescent_leave_lua. */
lua_State *crescent_enter_lua(lua_State *L) {
    crescent_flag *flag = vm_of(L)->interrupt;
    /* A thread may have inherited a mask that blocks the signal (a process spawned from a Dispatch
     * worker does): unblock it once on each thread that runs Lua code. */
    static _Thread_local int signal_unblocked;
    if (!signal_unblocked) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, interrupt_signal());
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        signal_unblocked = 1;
    }
    lua_State *previous = running_state;
    running_state = L;
    if (atomic_fetch_add(&flag->running, 1) == 0) atomic_store(&flag->thread, (unsigned long)pthread_self());
    if (atomic_load_explicit(&flag->reason, memory_order_relaxed) != CRESCENT_INTERRUPT_NONE) arm_interrupt(L);
    return previous;
}

void crescent_leave_lua(lua_State *L, lua_State *previous) {
    atomic_fetch_sub(&vm_of(L)->interrupt->running, 1);
    running_state = previous;
}

/*
 * coroutine.resume and coroutine.wrap as the standard library defines them, with one addition:
 * the coroutine is marked as the Lua code running on this thread while it runs, so an interrupt
 * arms the hook of the coroutine that is actually looping. Both stay C functions, so tracebacks
 * and debug.getinfo read as under lua5.4.
 */
static int resume_coroutine(lua_State *L, lua_State *co, int nargs) {   /* moves results onto L */
    if (!lua_checkstack(co, nargs)) {
        lua_pushliteral(L, "too many arguments to resume");
        return -1;
    }
    lua_xmove(L, co, nargs);
    int nresults = 0;
    lua_State *previous = crescent_enter_lua(co);
    int status = lua_resume(co, L, nargs, &nresults);
    crescent_leave_lua(co, previous);
    /* An interrupt that came while the coroutine ran was armed on the coroutine only: the code
     * that resumed it runs on (a loop that makes a coroutine at each turn would never stop). */
    crescent_rearm_interrupt(L);
    if (status == LUA_OK || status == LUA_YIELD) {
        if (!lua_checkstack(L, nresults + 1)) {
            lua_pop(co, nresults);
            lua_pushliteral(L, "too many results to resume");
            return -1;
        }
        lua_xmove(co, L, nresults);
        return nresults;
    }
    lua_xmove(co, L, 1);                                        /* the error */
    return -1;
}

static int coroutine_resume(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    luaL_argexpected(L, co != NULL, 1, "thread");
    int count = resume_coroutine(L, co, lua_gettop(L) - 1);
    lua_pushboolean(L, count >= 0);
    lua_insert(L, count >= 0 ? -(count + 1) : -2);              /* ok results... | false error */
    return count >= 0 ? count + 1 : 2;
}

static int wrapped_coroutine(lua_State *L) {
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    int count = resume_coroutine(L, co, lua_gettop(L));
    if (count >= 0) return count;
    int status = lua_status(co);
    if (status != LUA_OK && status != LUA_YIELD) {              /* it died: close its variables */
        lua_resetthread(co);
        lua_xmove(co, L, 1);
        lua_replace(L, -2);
    }
    if (lua_type(L, -1) == LUA_TSTRING) {                       /* add where the call was made */
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

static int coroutine_wrap(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushcclosure(L, wrapped_coroutine, 1);
    return 1;
}

void crescent_install_coroutine_functions(lua_State *L) {
    lua_getglobal(L, "coroutine");
    lua_pushcfunction(L, coroutine_resume);
    lua_setfield(L, -2, "resume");
    lua_pushcfunction(L, coroutine_wrap);
    lua_setfield(L, -2, "wrap");
    lua_pop(L, 1);
}

int crescent_interrupt_pending(lua_State *L) { return atomic_load(&vm_of(L)->interrupt->reason); }
void crescent_rearm_interrupt(lua_State *L) {
    if (crescent_interrupt_pending(L) != CRESCENT_INTERRUPT_NONE) arm_interrupt(L);
}
void crescent_clear_interrupt(lua_State *L) {
    atomic_store(&vm_of(L)->interrupt->reason, CRESCENT_INTERRUPT_NONE);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, INTERRUPTED_AT);
}

int crescent_push_interrupted_at(lua_State *L) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, INTERRUPTED_AT) == LUA_TSTRING) return 1;
    lua_pop(L, 1);
    return 0;
}

