/* nvmlx.h - the few NVML queries collect needs (SM clock, power, clock event
 * reasons, driver version),
 * through dlopen of libnvidia-ml.so.1, so that kbv builds without NVML's
 * headers and runs without NVML (the fields are then left out). */
#ifndef KBV_NVMLX_H
#define KBV_NVMLX_H

typedef struct nvmlx nvmlx;

/* Opens NVML for the device with this PCI bus id (cudaDeviceGetPCIBusId);
 * NULL when NVML or the device is not there. Caller closes. */
nvmlx *nvmlx_open(const char *pci_bus_id);
/* Current and maximum SM clock in MHz; 0 on success. */
int nvmlx_sm_mhz(nvmlx *n, unsigned *mhz);
int nvmlx_sm_max_mhz(nvmlx *n, unsigned *mhz);
/* The board's power draw in milliwatts (nvmlDeviceGetPowerUsage); 0 on
 * success. */
int nvmlx_power_mw(nvmlx *n, unsigned *mw);
/* The reasons the clocks are held below their maximum right now, NVML's
 * bitmask of clock event (formerly throttle) reasons, with the idle bit
 * (0x1) cleared; 0 on success. */
int nvmlx_clock_events(nvmlx *n, unsigned long long *mask);
/* The driver version text, e.g. "580.95.05"; 0 on success. */
int nvmlx_driver(nvmlx *n, char *buf, unsigned len);
void nvmlx_close(nvmlx *n);   /* NULL ok */

#endif
