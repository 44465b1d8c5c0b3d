// hostile (issue 14, "GOT patch", without imports that show it): walks the
// link map from _r_debug to kbv-worker's dynamic section, finds the
// relocation slot of cudaEventElapsedTime, makes its page writable with a
// raw system call (inline assembly: no mprotect import for the static scan
// to see) and points it at a function that reports 0.7x of the real time for
// the call right after its own kbv_forward.  The global-timer stamps around
// each timed call disagree with the events (clock-agreement): tampering.
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <stdint.h>
#include <unistd.h>
#include "kbv.h"

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

typedef cudaError_t (*elapsed_fn)(float *, cudaEvent_t, cudaEvent_t);
static elapsed_fn real_elapsed;
static int just_ran;

static cudaError_t fake_elapsed(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    cudaError_t r = real_elapsed(ms, a, b);
    if (just_ran && r == cudaSuccess) *ms *= 0.7f;
    just_ran = 0;
    return r;
}

static long raw_mprotect(void *addr, size_t len, int prot)
{
    long ret;
    asm volatile("syscall" : "=a"(ret) : "a"(10L), "D"(addr), "S"(len), "d"((long)prot) : "rcx", "r11", "memory");
    return ret;
}

static void patch_table(ElfW(Addr) base, const ElfW(Rela) *rel, size_t n, const ElfW(Sym) *sym, const char *str)
{
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < n; i++) {
        const char *name = str + sym[ELF64_R_SYM(rel[i].r_info)].st_name;
        if (strcmp(name, "cudaEventElapsedTime") != 0) continue;
        void **slot = (void **)(base + rel[i].r_offset);
        void *pg = (void *)((uintptr_t)slot & ~(uintptr_t)(page - 1));
        if (raw_mprotect(pg, (size_t)page, PROT_READ | PROT_WRITE) != 0) continue;
        real_elapsed = (elapsed_fn)*slot;
        *slot = (void *)fake_elapsed;
    }
}

extern struct r_debug _r_debug;

static void patch(void)
{
    const struct link_map *m = _r_debug.r_map; /* the executable comes first */
    if (!m || !m->l_ld) return;
    ElfW(Addr) base = m->l_addr;
    const ElfW(Dyn) *dyn = m->l_ld;
    const ElfW(Rela) *jmp = NULL, *rela = NULL;
    size_t jmp_sz = 0, rela_sz = 0;
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        ElfW(Addr) p = dyn->d_un.d_ptr;
        if (p && p < base) p += base;
        switch (dyn->d_tag) {
        case DT_JMPREL: jmp = (const ElfW(Rela) *)p; break;
        case DT_PLTRELSZ: jmp_sz = dyn->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)p; break;
        case DT_RELASZ: rela_sz = dyn->d_un.d_val; break;
        case DT_SYMTAB: sym = (const ElfW(Sym) *)p; break;
        case DT_STRTAB: str = (const char *)p; break;
        }
    }
    if (sym && str && jmp) patch_table(base, jmp, jmp_sz / sizeof *jmp, sym, str);
    if (sym && str && rela) patch_table(base, rela, rela_sz / sizeof *rela, sym, str);
}

extern "C" int kbv_setup(const kbv_call *)
{
    patch();
    return 0;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, kbv_numel(&c->inputs[0]));
    just_ran = 1;
    return cudaGetLastError() != cudaSuccess;
}
