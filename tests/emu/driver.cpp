// reads spec.txt: n_in, then per input: dtype (0 f32, 1 i64, 2 bf16) ndim dims... file; n_out: dtype ndim dims... file; n_attr values...
#include "kbv.h"
#include "emu.h"
#pragma weak kbv_setup
#pragma weak kbv_teardown
static void *load(const char *f, size_t bytes)
{
    void *p; cudaMalloc(&p, bytes);
    FILE *fp = fopen(f, "rb"); if (!fp || fread(p, 1, bytes, fp) != bytes) { fprintf(stderr, "read %s\n", f); exit(2); }
    fclose(fp); return p;
}
int main(int argc, char **argv)
{
    FILE *s = fopen(argv[1], "r");
    int ni, no, na;
    kbv_tensor in[16], out[8]; char outf[8][256]; double attrs[32];
    fscanf(s, "%d", &ni);
    for (int i = 0; i < ni; i++) {
        int dt; char f[256]; fscanf(s, "%d %d", &dt, &in[i].ndim); in[i].dtype = (kbv_dtype)dt;
        for (int d = 0; d < in[i].ndim; d++) { long long v; fscanf(s, "%lld", &v); in[i].shape[d] = v; }
        fscanf(s, "%255s", f);
        in[i].data = load(f, kbv_numel(&in[i]) * (dt == 1 ? 8 : dt == 2 ? 2 : 4));
    }
    fscanf(s, "%d", &no);
    for (int i = 0; i < no; i++) {
        int dt; fscanf(s, "%d %d", &dt, &out[i].ndim); out[i].dtype = (kbv_dtype)dt;
        for (int d = 0; d < out[i].ndim; d++) { long long v; fscanf(s, "%lld", &v); out[i].shape[d] = v; }
        fscanf(s, "%255s", outf[i]);
        cudaMalloc(&out[i].data, kbv_numel(&out[i]) * (dt == 1 ? 8 : dt == 2 ? 2 : 4));  // poisoned
    }
    fscanf(s, "%d", &na);
    for (int i = 0; i < na; i++) fscanf(s, "%lf", &attrs[i]);
    kbv_call c = { in, ni, out, no, attrs, na, 0 };
    if (kbv_setup && kbv_setup(&c)) { fprintf(stderr, "setup failed\n"); return 4; }
    int rc = kbv_forward(&c);
    if (rc) { fprintf(stderr, "forward returned %d\n", rc); return 5; }
    for (int i = 0; i < no; i++) {
        FILE *fp = fopen(outf[i], "wb"); fwrite(out[i].data, 1, kbv_numel(&out[i]) * (out[i].dtype == 1 ? 8 : out[i].dtype == 2 ? 2 : 4), fp); fclose(fp);
    }
    if (kbv_teardown) kbv_teardown();
    return 0;
}
