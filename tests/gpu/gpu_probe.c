/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* gpu_probe.c: is there a real CUDA driver with a device, and which? */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Exit 0 and say the driver's version and device 0 where libcuda.so.1, as
 * the loader finds it, starts and has a device; otherwise exit 1 and say
 * why (the toolkit's stub answers cuInit with 34, STUB_LIBRARY).  CMake
 * runs it at configure time to decide whether to register tests/gpu;
 * scripts/gpu-check.sh runs it first, with --any to honour
 * HMR_CUDA_LIBRARY (its trial on the simulator).
 */
int main(int argc, char **argv)
{
	const char *path = getenv("HMR_CUDA_LIBRARY");
	int (*init)(unsigned), (*count)(int *), (*version)(int *);
	int (*name)(char *, int, int);
	int n = 0, v = 0, r;
	char dev[128] = "";
	void *h;

	if (argc < 2 || strcmp(argv[1], "--any") != 0 || !path || !*path)
		path = "libcuda.so.1";
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		printf("no %s: %s", path, dlerror());
		return 1;
	}
	*(void **)&init = dlsym(h, "cuInit");
	*(void **)&count = dlsym(h, "cuDeviceGetCount");
	*(void **)&version = dlsym(h, "cuDriverGetVersion");
	*(void **)&name = dlsym(h, "cuDeviceGetName");
	if (!init || !count || !version || !name) {
		printf("%s lacks cuInit, cuDeviceGetCount, cuDriverGetVersion "
		       "or cuDeviceGetName",
		       path);
		return 1;
	}
	r = init(0);
	if (r == 0)
		r = count(&n);
	if (r != 0 || n == 0) {
		printf("%s answers %d with %d devices", path, r, n);
		return 1;
	}
	version(&v);
	name(dev, sizeof(dev), 0);
	printf("%s: CUDA driver API %d.%d, %d devices, device 0 %s", path,
	       v / 1000, v % 1000 / 10, n, dev);
	return 0;
}
