/*
 * What ThreadSanitizer (make sanitize's thread pass) needs from the shim; nothing here is built
 * into any other build.
 *
 * Lua raises an error with a longjmp. Debian builds liblua with _FORTIFY_SOURCE, so its
 * luaD_throw jumps through glibc's __longjmp_chk, which ThreadSanitizer does not intercept (it
 * intercepts longjmp and siglongjmp): the instrumented frames a Lua error jumps over stay on
 * ThreadSanitizer's shadow stack, a few more at every error, until after thousands of errors it
 * runs past its end and corrupts the thread's state. Defined here, in the executable, this
 * __longjmp_chk is the one Lua's static library binds to; it jumps with longjmp, which
 * ThreadSanitizer intercepts to unwind its shadow stack to the matching setjmp. (It leaves out
 * the check __longjmp_chk adds, that the jump goes up the stack: Lua's jumps always do.)
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#include <setjmp.h>

__attribute__((noreturn)) void __longjmp_chk(struct __jmp_buf_tag env[1], int value);
__attribute__((noreturn)) void __longjmp_chk(struct __jmp_buf_tag env[1], int value) { longjmp(env, value); }
#endif
#endif
