#include "nvmlx.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* NVML's types as the library's ABI defines them: results are ints, a device
 * is an opaque pointer, NVML_CLOCK_SM is 1. */
typedef void *nvml_device;
typedef int (*init_fn)(void);
typedef int (*by_pci_fn)(const char *, nvml_device *);
typedef int (*clock_fn)(nvml_device, int, unsigned *);
typedef int (*power_fn)(nvml_device, unsigned *);
typedef int (*events_fn)(nvml_device, unsigned long long *);
typedef int (*driver_fn)(char *, unsigned);
typedef int (*shutdown_fn)(void);

struct nvmlx {
    void *lib;
    nvml_device dev;
    clock_fn clock;
    clock_fn max_clock;
    power_fn power;
    events_fn events;
    driver_fn driver;
    shutdown_fn shutdown;
};

static void *sym(void *lib, const char *name)
{
    return dlsym(lib, name);
}

#define GETSYM(var, lib, name)           \
    do {                                 \
        void *s_ = sym(lib, name);       \
        memcpy(&(var), &s_, sizeof s_);  \
    } while (0)

nvmlx *nvmlx_open(const char *pci_bus_id)
{
    /* The loader's path first; then where drivers and containers put it. */
    static const char *const names[] = {"libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
                                        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                                        "/usr/lib64/libnvidia-ml.so.1", NULL};
    void *lib = NULL;
    for (int i = 0; !lib && names[i]; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) return NULL;
    init_fn init;
    by_pci_fn by_pci;
    GETSYM(init, lib, "nvmlInit_v2");
    GETSYM(by_pci, lib, "nvmlDeviceGetHandleByPciBusId_v2");
    nvmlx *n = calloc(1, sizeof *n);
    if (!n || !init || !by_pci || init() != 0) {
        free(n);
        dlclose(lib);
        return NULL;
    }
    n->lib = lib;
    GETSYM(n->clock, lib, "nvmlDeviceGetClockInfo");
    GETSYM(n->max_clock, lib, "nvmlDeviceGetMaxClockInfo");
    GETSYM(n->power, lib, "nvmlDeviceGetPowerUsage");
    /* The 12.x name first; drivers before it have only the old one. */
    GETSYM(n->events, lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!n->events) GETSYM(n->events, lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    GETSYM(n->driver, lib, "nvmlSystemGetDriverVersion");
    GETSYM(n->shutdown, lib, "nvmlShutdown");
    if (!pci_bus_id || by_pci(pci_bus_id, &n->dev) != 0) n->dev = NULL;
    return n;
}

int nvmlx_sm_mhz(nvmlx *n, unsigned *mhz)
{
    if (!n || !n->dev || !n->clock) return -1;
    return n->clock(n->dev, 1, mhz) == 0 ? 0 : -1;
}

int nvmlx_sm_max_mhz(nvmlx *n, unsigned *mhz)
{
    if (!n || !n->dev || !n->max_clock) return -1;
    return n->max_clock(n->dev, 1, mhz) == 0 ? 0 : -1;
}

int nvmlx_power_mw(nvmlx *n, unsigned *mw)
{
    if (!n || !n->dev || !n->power) return -1;
    return n->power(n->dev, mw) == 0 ? 0 : -1;
}

int nvmlx_clock_events(nvmlx *n, unsigned long long *mask)
{
    if (!n || !n->dev || !n->events) return -1;
    if (n->events(n->dev, mask) != 0) return -1;
    *mask &= ~1ULL;
    return 0;
}

int nvmlx_driver(nvmlx *n, char *buf, unsigned len)
{
    if (!n || !n->driver) return -1;
    return n->driver(buf, len) == 0 ? 0 : -1;
}

void nvmlx_close(nvmlx *n)
{
    if (!n) return;
    if (n->shutdown) n->shutdown();
    dlclose(n->lib);
    free(n);
}
