/* sandbox.h - the kernel-enforced limits a worker puts on itself before
 * the candidate is loaded (DESIGN.md 5a step 7a), so that the candidate,
 * which shares the worker's process, is held by them in every thread.
 *
 * The candidate can read and write the worker's memory; what it must not
 * reach is everything outside the process that kbv trusts: the run's
 * journal and manifest, the build cache of compiled candidates, the user's
 * files, kbv-collect itself, and the GPU through a process of its own.
 * Two mechanisms, each applied when the kernel offers it, in two stages:
 *
 * - sandbox_enter, at the worker's start, before any thread: no_new_privs
 *   and Landlock.  Creating, writing, truncating, removing, renaming or
 *   linking a file is denied everywhere but beneath the worker's own
 *   scratch folder (its working directory), /dev (the device nodes the
 *   CUDA driver opens read-write) and the process's own /proc folder.
 *   Reading stays allowed: the libraries load their modules lazily.
 *   Landlock holds for the calling thread and the threads it starts
 *   afterwards only, hence before the CUDA runtime starts its own.
 * - sandbox_seal, once CUDA has started (the driver's initialisation may
 *   run a helper program) and before the candidate is loaded: a seccomp
 *   filter, put on every thread of the process (TSYNC).  The system calls
 *   that reach another process's memory or descriptors (ptrace,
 *   process_vm_readv and _writev, pidfd_getfd, kcmp), io_uring (whose
 *   queued requests no seccomp filter sees), bpf, perf_event_open and
 *   userfaultfd fail with EPERM, and so does any further seccomp filter
 *   (which could fake the answers to the worker's own system calls,
 *   getrandom say), a signal to any process but the worker itself
 *   (kbv-collect, another pair's worker), and the creation of any process
 *   (fork, vfork, clone without CLONE_THREAD, every exec; clone3 answers
 *   ENOSYS so that threads are made with clone, whose flags a filter can
 *   read).  A program the candidate started could otherwise open a CUDA
 *   context of its own and load the GPU while the baselines are timed.
 *   New sockets are refused for the same reason: a daemon already running
 *   (systemd over D-Bus, a container engine) could start that program on
 *   the candidate's request.
 *
 * Neither can be lifted.  No CUDA here; no global state. */
#ifndef KBV_SANDBOX_H
#define KBV_SANDBOX_H

#include <stddef.h>

#include "err.h"

/* The rule in a sentence, for the manifest. */
#define SANDBOX_RULE                                                                                         \
    "from the worker's start: no file written outside its scratch folder, /dev and /proc/self (Landlock); " \
    "from CUDA's start, before the candidate is loaded: ptrace, process_vm_readv/writev, pidfd_getfd, kcmp, " \
    "io_uring, bpf, perf_event_open, userfaultfd, new seccomp filters, signals to other processes, fork, " \
    "exec and new sockets refused (seccomp)"

typedef struct {
    int landlock_abi; /* the kernel's Landlock ABI version, 0 when it has none */
    int seccomp;      /* 1 when seccomp filters can be installed */
} sandbox_support;

/* What this kernel offers (no side effects). */
void sandbox_probe(sandbox_support *s);

/* Stage one, in a process with no other thread yet: what sandbox_probe
 * finds of no_new_privs and Landlock, with writable_dir (a folder; NULL
 * for none), /dev and /proc/self as the only places files may be written.
 * With require set, a kernel without Landlock or seccomp is an error;
 * otherwise what it lacks is skipped.  *applied says what holds (seccomp
 * 0 until sandbox_seal).  KBV_ERUNTIME with the failing step in e. */
int sandbox_enter(const char *writable_dir, int require, sandbox_support *applied, kbv_err *e);

/* Stage two, after sandbox_enter: the seccomp filter on every thread of
 * the process, when the kernel offers seccomp; applied->seccomp is then
 * 1.  KBV_ERUNTIME with the reason in e (a thread that cannot take it). */
int sandbox_seal(sandbox_support *applied, kbv_err *e);

/* sandbox_enter, then sandbox_seal: both stages at once, for a process
 * that needs nothing between them. */
int sandbox_apply(const char *writable_dir, int require, sandbox_support *applied, kbv_err *e);

/* sandbox_apply in a child process of the caller's, which then exits: what
 * a worker started now would hold, without limiting the caller.  The
 * child's error, if any, is copied to e. */
int sandbox_try(const char *writable_dir, int require, sandbox_support *applied, kbv_err *e);

/* A one-line description of s for records and the manifest, e.g.
 * "landlock abi 4, seccomp" or "none"; written to buf (n bytes). */
const char *sandbox_describe(const sandbox_support *s, char *buf, size_t n);

#endif
