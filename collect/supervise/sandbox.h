/* sandbox.h - the kernel-enforced limits a worker puts on itself before
 * anything else runs in it (DESIGN.md 5a step 7a), so that the candidate,
 * which shares the worker's process, inherits them in every thread.
 *
 * The candidate can read and write the worker's memory; what it must not
 * reach is everything outside the process that kbv trusts: the run's
 * journal and manifest, the build cache of compiled candidates, the user's
 * files, and kbv-collect itself.  Two mechanisms, each applied when the
 * kernel offers it:
 *
 * - Landlock: creating, writing, truncating, removing, renaming or linking
 *   a file is denied everywhere but beneath the worker's own scratch
 *   folder (its working directory), /dev (the device nodes the CUDA
 *   driver opens read-write) and the process's own /proc folder.  Reading stays allowed: the libraries load
 *   their modules lazily.
 * - seccomp: the system calls that reach another process's memory or
 *   descriptors (ptrace, process_vm_readv and _writev, pidfd_getfd, kcmp),
 *   io_uring (whose queued requests no seccomp filter sees), bpf,
 *   perf_event_open and userfaultfd fail with EPERM, and so does any
 *   further seccomp filter (which could fake the answers to the worker's
 *   own system calls, getrandom say) and a signal to any process but the
 *   worker itself (kbv-collect, another pair's worker).
 *
 * Both are inherited by every thread created afterwards and cannot be
 * lifted; applied before the CUDA runtime starts its threads, they hold
 * for the callbacks it runs too.  No CUDA here; no global state. */
#ifndef KBV_SANDBOX_H
#define KBV_SANDBOX_H

#include <stddef.h>

#include "err.h"

/* The rule in a sentence, for the manifest. */
#define SANDBOX_RULE                                                                                         \
    "from the worker's start: no file written outside its scratch folder, /dev and /proc/self (Landlock); ptrace, " \
    "process_vm_readv/writev, pidfd_getfd, kcmp, io_uring, bpf, perf_event_open, userfaultfd, new seccomp " \
    "filters and signals to other processes refused (seccomp)"

typedef struct {
    int landlock_abi; /* the kernel's Landlock ABI version, 0 when it has none */
    int seccomp;      /* 1 when seccomp filters can be installed */
} sandbox_support;

/* What this kernel offers (no side effects). */
void sandbox_probe(sandbox_support *s);

/* Applies what sandbox_probe finds to the calling process, which should
 * have no other thread yet: Landlock with writable_dir (a folder; NULL
 * for none) and /dev as the only places files may be written, then the
 * seccomp filter.  With require set, a kernel without either is an error;
 * otherwise what it lacks is skipped and *applied says what holds.
 * KBV_ERUNTIME with the failing step in e. */
int sandbox_apply(const char *writable_dir, int require, sandbox_support *applied, kbv_err *e);

/* sandbox_apply in a child process of the caller's, which then exits: what
 * a worker started now would hold, without limiting the caller.  The
 * child's error, if any, is copied to e. */
int sandbox_try(const char *writable_dir, int require, sandbox_support *applied, kbv_err *e);

/* A one-line description of s for records and the manifest, e.g.
 * "landlock abi 4, seccomp" or "none"; written to buf (n bytes). */
const char *sandbox_describe(const sandbox_support *s, char *buf, size_t n);

#endif
