// hostile (issue 14, "GOT patch"): in kbv_setup, finds kbv-worker's
// relocation slot of cudaEventElapsedTime (dl_iterate_phdr, the dynamic
// section), makes its page writable again (mprotect: full RELRO made it
// read-only) and points it at a function that reports 0.7x of the real
// time for the call right after its own kbv_forward.  The static scan flags
// the imports (tamper-capable); the global-timer stamps around each timed
// call disagree with the events (clock-agreement): tampering.
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
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

static void patch_table(ElfW(Addr) base, const ElfW(Rela) *rel, size_t n, const ElfW(Sym) *sym, const char *str)
{
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < n; i++) {
        const char *name = str + sym[ELF64_R_SYM(rel[i].r_info)].st_name;
        if (strcmp(name, "cudaEventElapsedTime") != 0) continue;
        void **slot = (void **)(base + rel[i].r_offset);
        void *pg = (void *)((uintptr_t)slot & ~(uintptr_t)(page - 1));
        if (mprotect(pg, (size_t)page, PROT_READ | PROT_WRITE) != 0) continue;
        real_elapsed = (elapsed_fn)*slot;
        *slot = (void *)fake_elapsed;
    }
}

static int patch(struct dl_phdr_info *info, size_t, void *)
{
    if (info->dlpi_name && info->dlpi_name[0]) return 0; /* the executable comes first, unnamed */
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 1;
    const ElfW(Rela) *jmp = NULL, *rela = NULL;
    size_t jmp_sz = 0, rela_sz = 0;
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        ElfW(Addr) p = dyn->d_un.d_ptr;
        if (p && p < info->dlpi_addr) p += info->dlpi_addr;
        switch (dyn->d_tag) {
        case DT_JMPREL: jmp = (const ElfW(Rela) *)p; break;
        case DT_PLTRELSZ: jmp_sz = dyn->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)p; break;
        case DT_RELASZ: rela_sz = dyn->d_un.d_val; break;
        case DT_SYMTAB: sym = (const ElfW(Sym) *)p; break;
        case DT_STRTAB: str = (const char *)p; break;
        }
    }
    if (sym && str && jmp) patch_table(info->dlpi_addr, jmp, jmp_sz / sizeof *jmp, sym, str);
    if (sym && str && rela) patch_table(info->dlpi_addr, rela, rela_sz / sizeof *rela, sym, str);
    return 1;
}

extern "C" int kbv_setup(const kbv_call *)
{
    dl_iterate_phdr(patch, NULL);
    return 0;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, kbv_numel(&c->inputs[0]));
    just_ran = 1;
    return cudaGetLastError() != cudaSuccess;
}
