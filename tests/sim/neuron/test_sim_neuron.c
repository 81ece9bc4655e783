/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_neuron.c: the Neuron runtime simulator, dlopened like libnrt. */
#include "harness.h"
#include "sim/neuron/nrt_decl.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * HMR_SIM_NEURON_LIB names the simulator (nrt_v2/libnrt.so.1) and
 * HMR_SIM_NEURON_V1_LIB the variant without nrt_get_dmabuf_fd_v2; without
 * them a case skips.  Each case runs in its own process, so it may set
 * the simulator's environment before loading it.
 */

/* The runtime calls every variant exports. */
#define NRT_CALLS(X)                                                           \
	X(nrt_init)                                                            \
	X(nrt_close)                                                           \
	X(nrt_get_total_nc_count)                                              \
	X(nrt_get_total_vnc_count)                                             \
	X(nrt_get_visible_nc_count)                                            \
	X(nrt_get_visible_vnc_count)                                           \
	X(nrt_tensor_allocate)                                                 \
	X(nrt_tensor_free)                                                     \
	X(nrt_tensor_read)                                                     \
	X(nrt_tensor_write)                                                    \
	X(nrt_tensor_get_size)                                                 \
	X(nrt_tensor_get_va)                                                   \
	X(nrt_get_dmabuf_fd)                                                   \
	X(nrt_get_attached_efa_bdf)                                            \
	X(nrt_memcpy_to_device)                                                \
	X(nrt_get_status_as_str)

#define NRT_FIELD(name) __typeof__(name) *name;
#define NRT_LOAD(name)  *(void **)&nrt.name = sym(#name);

static struct {
	void *dl;
	NRT_CALLS(NRT_FIELD)
	__typeof__(nrt_get_dmabuf_fd_v2) *nrt_get_dmabuf_fd_v2; /* v2 only */
	unsigned long (*calls)(const char *name);
	unsigned long long (*alloc_id)(const void *va);
} nrt;

static void *sym(const char *name)
{
	void *p = dlsym(nrt.dl, name);

	if (!p)
		HMR_FAIL("simulator lacks %s", name);
	return p;
}

static void load_lib(const char *var)
{
	const char *path = getenv(var);

	if (!path || !*path)
		HMR_SKIP("%s is not set", var);
	nrt.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!nrt.dl)
		HMR_FAIL("dlopen %s: %s", path, dlerror());
	NRT_CALLS(NRT_LOAD)
	*(void **)&nrt.nrt_get_dmabuf_fd_v2 =
	        dlsym(nrt.dl, "nrt_get_dmabuf_fd_v2");
	*(void **)&nrt.calls = sym("hmr_sim_neuron_calls");
	*(void **)&nrt.alloc_id = sym("hmr_sim_neuron_alloc_id");
}

#define NRT_OK(expr) ASSERT_EQ((expr), NRT_SUCCESS)

static void setup(void)
{
	load_lib("HMR_SIM_NEURON_LIB");
	NRT_OK(nrt.nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
}

static nrt_tensor_t *alloc(nrt_tensor_placement_t where, int nc, size_t n)
{
	nrt_tensor_t *t = NULL;

	NRT_OK(nrt.nrt_tensor_allocate(where, nc, n, "test", &t));
	ASSERT_TRUE(t != NULL);
	return t;
}

static uintptr_t va_of(const nrt_tensor_t *t)
{
	return (uintptr_t)nrt.nrt_tensor_get_va(t);
}

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static void fill(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 31 + seed);
}

/* The /proc/self/maps line holding addr: its permissions and path. */
static int maps_find(uintptr_t addr, char perms[8], char path[256])
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;

	if (!f)
		HMR_FAIL("fopen /proc/self/maps");
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int at = 0;

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms,
		           &at) < 3)
			continue;
		if (addr < lo || addr >= hi)
			continue;
		snprintf(path, 256, "%s", line + at);
		path[strcspn(path, "\n")] = '\0';
		found = 1;
	}
	fclose(f);
	return found;
}

/* A child process reads the byte at p: how did it end? */
static int child_touch(uintptr_t p)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct sigaction sa;
		struct rlimit no_core = {0, 0};

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGSEGV, &sa, NULL);
		setrlimit(RLIMIT_CORE, &no_core);
		_exit(*(volatile unsigned char *)p == 0x5a ? 0 : 3);
	}
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return status;
}

HMR_TEST(sim_neuron_init_rules)
{
	nrt_tensor_t *t = NULL;
	uint32_t n = 0;
	int fd;

	load_lib("HMR_SIM_NEURON_LIB");
	/* Before nrt_init: the counts work, nothing else does. */
	NRT_OK(nrt.nrt_get_total_nc_count(&n));
	ASSERT_EQ(n, 4);
	NRT_OK(nrt.nrt_get_visible_nc_count(&n));
	ASSERT_EQ(n, 4);
	ASSERT_EQ(nrt.nrt_get_total_nc_count(NULL), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64,
	                                  "t", &t),
	          NRT_UNINITIALIZED);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd((uintptr_t)&n, 4, &fd),
	          NRT_UNINITIALIZED);
	ASSERT_EQ(nrt.nrt_init(NRT_FRAMEWORK_TYPE_INVALID, "", ""),
	          NRT_INVALID);
	ASSERT_EQ(nrt.nrt_init((nrt_framework_type_t)6, "", ""), NRT_INVALID);

	NRT_OK(nrt.nrt_init(NRT_FRAMEWORK_TYPE_PYTORCH, "2.5", "1.0"));
	NRT_OK(nrt.nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, NULL, NULL)); /* no-op */
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64);
	ASSERT_NE(va_of(t), 0);
	nrt.nrt_close();
	/* After nrt_close: NRT_CLOSED, the tensor lost its memory. */
	ASSERT_EQ(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64,
	                                  "t", &t),
	          NRT_CLOSED);
	ASSERT_EQ(nrt.nrt_tensor_read(t, &n, 0, 1), NRT_CLOSED);
	ASSERT_EQ(va_of(t), 0);
	/* nrt_init again starts over; the old handle stays dead. */
	NRT_OK(nrt.nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
	ASSERT_EQ(nrt.nrt_tensor_read(t, &n, 0, 1), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_get_size(t), 0);
	nrt.nrt_tensor_free(&t);
	ASSERT_PTR_EQ(t, NULL);
	nrt.nrt_close();
}

HMR_TEST(sim_neuron_core_enumeration)
{
	nrt_tensor_t *t = NULL;
	uint32_t n = 0;

	setenv("HMR_SIM_NEURON_CORES", "8", 1);
	setenv("HMR_SIM_NEURON_VISIBLE_CORES", "3", 1);
	setup();
	NRT_OK(nrt.nrt_get_total_nc_count(&n));
	ASSERT_EQ(n, 8);
	NRT_OK(nrt.nrt_get_total_vnc_count(&n));
	ASSERT_EQ(n, 8);
	NRT_OK(nrt.nrt_get_visible_nc_count(&n));
	ASSERT_EQ(n, 3);
	NRT_OK(nrt.nrt_get_visible_vnc_count(&n));
	ASSERT_EQ(n, 3);
	/* Logical core ids run over the visible cores only. */
	ASSERT_EQ(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 3, 64,
	                                  "t", &t),
	          NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, -1, 64,
	                                  "t", &t),
	          NRT_INVALID);
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 2, 64);
	nrt.nrt_tensor_free(&t);
}

HMR_TEST(sim_neuron_no_cores)
{
	uint32_t n = 99;

	setenv("HMR_SIM_NEURON_CORES", "0", 1);
	load_lib("HMR_SIM_NEURON_LIB");
	/* libfabric's probe: success and 0 means "no Neuron here". */
	NRT_OK(nrt.nrt_get_total_nc_count(&n));
	ASSERT_EQ(n, 0);
	ASSERT_EQ(nrt.nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_FAILURE);
}

HMR_TEST(sim_neuron_alloc_reuses_va_with_new_id)
{
	nrt_tensor_t *a, *b, *c, *d;
	uintptr_t va_a;
	unsigned long long id_a;

	setup();
	a = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 1 << 20);
	b = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 1 << 20);
	va_a = va_of(a);
	ASSERT_EQ(va_a % page(), 0);
	ASSERT_TRUE(va_of(b) >= va_a + (1 << 20));
	ASSERT_EQ(nrt.nrt_tensor_get_size(a), 1 << 20);
	id_a = nrt.alloc_id((void *)(va_a + 100));
	ASSERT_NE(id_a, 0);
	ASSERT_NE(nrt.alloc_id((void *)va_of(b)), id_a);
	nrt.nrt_tensor_free(&a);
	ASSERT_PTR_EQ(a, NULL);
	ASSERT_EQ(nrt.alloc_id((void *)va_a), 0);
	/* First fit: a smaller tensor lands in the freed hole, new id. */
	c = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64 << 10);
	ASSERT_U64_EQ(va_of(c), va_a);
	ASSERT_NE(nrt.alloc_id((void *)va_a), id_a);
	d = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 100);
	ASSERT_U64_EQ(va_of(d), va_a + (64 << 10));
	/* Another core's window is elsewhere. */
	a = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 1, 100);
	ASSERT_TRUE(va_of(a) >= va_of(b) + (1 << 20) || va_of(a) + 100 <= va_a);
	nrt.nrt_tensor_free(&a);
	nrt.nrt_tensor_free(&b);
	nrt.nrt_tensor_free(&c);
	nrt.nrt_tensor_free(&d);
	nrt.nrt_tensor_free(&d); /* NULL: nothing to do */
}

HMR_TEST(sim_neuron_alloc_rejects_bad_arguments)
{
	nrt_tensor_t *t = NULL;

	setup();
	ASSERT_EQ(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 0,
	                                  "t", &t),
	          NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64,
	                                  "t", NULL),
	          NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_allocate((nrt_tensor_placement_t)3, 0, 64, "t",
	                                  &t),
	          NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, -1,
	                                  (4 << 20) + 1, "t", &t),
	          NRT_INVALID);
	/* More than a core's 16 GiB of HBM. */
	ASSERT_EQ(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0,
	                                  (size_t)17 << 30, "t", &t),
	          NRT_RESOURCE);
	ASSERT_PTR_EQ(t, NULL);
	t = alloc(NRT_TENSOR_PLACEMENT_HOST, -1, 4 << 20);
	nrt.nrt_tensor_free(&t);
	t = alloc(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, 64 << 20);
	nrt.nrt_tensor_free(&t);
}

HMR_TEST(sim_neuron_device_memory_faults)
{
	unsigned char v = 0x5a;
	char perms[8], path[256];
	nrt_tensor_t *t;
	int status;

	setup();
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 100);
	NRT_OK(nrt.nrt_tensor_write(t, &v, 0, 1));
	ASSERT_TRUE(maps_find(va_of(t), perms, path));
	ASSERT_EQ(strcmp(perms, "---s"), 0);
	status = child_touch(va_of(t));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGSEGV);
	nrt.nrt_tensor_free(&t);
}

HMR_TEST(sim_neuron_host_accessible)
{
	unsigned char v = 0x5a, back = 0;
	volatile unsigned char *p;
	char perms[8], path[256];
	nrt_tensor_t *t;
	int status;

	setenv("HMR_SIM_NEURON_HOST_ACCESSIBLE", "1", 1);
	setup();
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8192);
	p = (volatile unsigned char *)va_of(t);
	NRT_OK(nrt.nrt_tensor_write(t, &v, 4096, 1));
	ASSERT_EQ(p[4096], 0x5a);
	p[0] = 0x5a;
	NRT_OK(nrt.nrt_tensor_read(t, &back, 0, 1));
	ASSERT_EQ(back, 0x5a);
	ASSERT_TRUE(maps_find((uintptr_t)p, perms, path));
	ASSERT_EQ(strcmp(perms, "rw-s"), 0);
	/* As with the driver's VM_DONTCOPY, a fork child has no mapping. */
	status = child_touch((uintptr_t)p);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGSEGV);
	nrt.nrt_tensor_free(&t);
}

HMR_TEST(sim_neuron_maps_name_the_device_node)
{
	nrt_tensor_t *d0, *d1, *h, *v;
	char perms[8], path[256];
	uintptr_t freed;

	setenv("HMR_SIM_NEURON_CORES_PER_DEVICE", "2", 1);
	setup();
	d0 = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 1, 4096);
	d1 = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 2, 4096);
	h = alloc(NRT_TENSOR_PLACEMENT_HOST, -1, 4096);
	v = alloc(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, 4096);
	/* The runtime's line names the device node, "/dev/neuron<D>". */
	ASSERT_TRUE(maps_find(va_of(d0) + 10, perms, path));
	ASSERT_EQ(strcmp(path, "/memfd:/dev/neuron0 (deleted)"), 0);
	ASSERT_TRUE(maps_find(va_of(d1), perms, path));
	ASSERT_EQ(strcmp(path, "/memfd:/dev/neuron1 (deleted)"), 0);
	/* HOST placement is driver memory mapped through the node too. */
	ASSERT_TRUE(maps_find(va_of(h), perms, path));
	ASSERT_EQ(strcmp(path, "/memfd:/dev/neuron0 (deleted)"), 0);
	ASSERT_EQ(strcmp(perms, "rw-s"), 0);
	ASSERT_TRUE(maps_find(va_of(v), perms, path));
	ASSERT_TRUE(strstr(path, "neuron") == NULL);
	freed = va_of(d0);
	nrt.nrt_tensor_free(&d0);
	nrt.nrt_tensor_free(&d1);
	nrt.nrt_tensor_free(&h);
	nrt.nrt_tensor_free(&v);
	/* A freed VA is back in the anonymous PROT_NONE reservation. */
	ASSERT_TRUE(maps_find(freed, perms, path));
	ASSERT_EQ(strcmp(perms, "---p"), 0);
	ASSERT_EQ(strcmp(path, ""), 0);
}

HMR_TEST(sim_neuron_copies_round_trip)
{
	enum { N = 3 * 4096 + 123 };
	static unsigned char in[N], out[N];
	nrt_tensor_t *d, *h, *v;
	uintptr_t va;

	setup();
	fill(in, N, 7);
	d = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, N);
	h = alloc(NRT_TENSOR_PLACEMENT_HOST, -1, N);
	v = alloc(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, N);
	NRT_OK(nrt.nrt_tensor_write(d, in, 0, N));
	NRT_OK(nrt.nrt_tensor_read(d, out, 0, N));
	ASSERT_EQ(memcmp(in, out, N), 0);
	NRT_OK(nrt.nrt_tensor_read(d, out, 100, 50));
	ASSERT_EQ(memcmp(in + 100, out, 50), 0);
	/* Host placements: the VA is the memory itself. */
	NRT_OK(nrt.nrt_tensor_write(h, in, 0, N));
	ASSERT_EQ(memcmp((void *)va_of(h), in, N), 0);
	NRT_OK(nrt.nrt_tensor_write(v, in + 1, 5, 10));
	ASSERT_EQ(memcmp((unsigned char *)va_of(v) + 5, in + 1, 10), 0);

	/* nrt_memcpy_to_device writes device memory at a VA, not a tensor. */
	va = va_of(d);
	NRT_OK(nrt.nrt_memcpy_to_device((void *)(va + 4000), in, 200));
	NRT_OK(nrt.nrt_tensor_read(d, out, 4000, 200));
	ASSERT_EQ(memcmp(in, out, 200), 0);
	ASSERT_EQ(nrt.nrt_memcpy_to_device((void *)(va + N - 1), in, 2),
	          NRT_INVALID);
	ASSERT_EQ(nrt.nrt_memcpy_to_device((void *)va_of(h), in, 1),
	          NRT_INVALID);
	ASSERT_EQ(nrt.nrt_memcpy_to_device(out, in, 1), NRT_INVALID);

	/* Out of bounds, or not a tensor. */
	ASSERT_EQ(nrt.nrt_tensor_write(d, in, 1, N), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_read(d, out, N, 1), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_read(d, out, SIZE_MAX, 2), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_read(NULL, out, 0, 1), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_tensor_read((nrt_tensor_t *)in, out, 0, 1),
	          NRT_INVALID);
	NRT_OK(nrt.nrt_tensor_read(d, out, N, 0));
	nrt.nrt_tensor_free(&d);
	nrt.nrt_tensor_free(&h);
	nrt.nrt_tensor_free(&v);
}

/* Maps len bytes of fd at fd offset off and compares them with want. */
static void expect_fd_bytes(int fd, size_t off, const unsigned char *want,
                            size_t len)
{
	size_t pg = page(), start = off / pg * pg;
	unsigned char *map = mmap(NULL, off - start + len, PROT_READ,
	                          MAP_SHARED, fd, (off_t)start);

	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map + (off - start), want, len), 0);
	munmap(map, off - start + len);
}

HMR_TEST(sim_neuron_dmabuf_v1_base_only)
{
	size_t pg = page(), len = 4 * pg + 100, span = 5 * pg;
	unsigned char *in = malloc(len);
	nrt_tensor_t *t, *h;
	uintptr_t va;
	int fd = -1;

	setup();
	fill(in, len, 3);
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, len);
	va = va_of(t);
	NRT_OK(nrt.nrt_tensor_write(t, in, 0, len));
	/* The base: offset 0 of the fd is the tensor's first byte. */
	NRT_OK(nrt.nrt_get_dmabuf_fd(va, len, &fd));
	expect_fd_bytes(fd, 0, in, len);
	expect_fd_bytes(fd, pg + 7, in + pg + 7, 100);
	close(fd);
	NRT_OK(nrt.nrt_get_dmabuf_fd(va, span, &fd)); /* whole pages */
	close(fd);

	/* v1 has no offset to report: an interior VA fails, even aligned. */
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va + pg, pg, &fd), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va + 1, pg, &fd), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va, span + 1, &fd), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va, 0, &fd), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va, pg, NULL), NRT_INVALID);
	/* Host memory of any kind is not exportable. */
	h = alloc(NRT_TENSOR_PLACEMENT_HOST, -1, pg);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va_of(h), pg, &fd), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd((uintptr_t)in, pg, &fd), NRT_INVALID);
	nrt.nrt_tensor_free(&h);
	nrt.nrt_tensor_free(&t);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va, pg, &fd), NRT_INVALID);
	free(in);
}

HMR_TEST(sim_neuron_dmabuf_v2_reports_interior_offset)
{
	size_t pg = page(), len = 4 * pg + 100;
	unsigned char *in = malloc(len);
	uint64_t off = 99;
	nrt_tensor_t *t;
	uintptr_t va;
	int fd = -1;

	setup();
	ASSERT_TRUE(nrt.nrt_get_dmabuf_fd_v2 != NULL);
	fill(in, len, 5);
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, len);
	va = va_of(t);
	NRT_OK(nrt.nrt_tensor_write(t, in, 0, len));
	NRT_OK(nrt.nrt_get_dmabuf_fd_v2(va, len, &fd, &off));
	ASSERT_EQ(off, 0);
	close(fd);
	/* Unaligned interior VA: *offset says where it lies in the fd. */
	NRT_OK(nrt.nrt_get_dmabuf_fd_v2(va + pg + 13, 200, &fd, &off));
	ASSERT_EQ(off, pg + 13);
	expect_fd_bytes(fd, off, in + pg + 13, 200);
	close(fd);
	NRT_OK(nrt.nrt_get_dmabuf_fd_v2(va + len - 1, 1, &fd, &off));
	ASSERT_EQ(off, len - 1);
	close(fd);
	/* Still within one tensor's pages. */
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd_v2(va + pg, 4 * pg + 1, &fd, &off),
	          NRT_INVALID);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd_v2(va, pg, &fd, NULL), NRT_INVALID);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd_v2(va + len, 1, &fd, &off),
	          NRT_INVALID);
	nrt.nrt_tensor_free(&t);
	free(in);
}

HMR_TEST(sim_neuron_v1_variant_lacks_v2)
{
	nrt_tensor_t *t;
	int fd = -1;

	load_lib("HMR_SIM_NEURON_V1_LIB");
	ASSERT_PTR_EQ(nrt.nrt_get_dmabuf_fd_v2, NULL);
	NRT_OK(nrt.nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, page());
	NRT_OK(nrt.nrt_get_dmabuf_fd(va_of(t), page(), &fd));
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va_of(t) + 64, 64, &fd), NRT_INVALID);
	nrt.nrt_tensor_free(&t);
}

HMR_TEST(sim_neuron_dmabuf_switch_per_core)
{
	nrt_tensor_t *t0, *t1;
	uint64_t off;
	int fd = -1;

	setenv("HMR_SIM_NEURON_DMABUF", "1,0", 1);
	setup();
	t0 = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, page());
	t1 = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 1, page());
	NRT_OK(nrt.nrt_get_dmabuf_fd(va_of(t0), page(), &fd));
	close(fd);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va_of(t1), page(), &fd), NRT_FAILURE);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd_v2(va_of(t1), page(), &fd, &off),
	          NRT_FAILURE);
	nrt.nrt_tensor_free(&t0);
	nrt.nrt_tensor_free(&t1);
}

HMR_TEST(sim_neuron_dmabuf_fd_count_flat)
{
	nrt_tensor_t *t;
	uint64_t off;
	int before, fd;

	setup();
	before = hmr_test_open_fds();
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 1 << 20);
	ASSERT_EQ(hmr_test_open_fds(), before + 1); /* the tensor's memfd */
	for (int i = 0; i < 10000; i++) {
		NRT_OK(nrt.nrt_get_dmabuf_fd(va_of(t), 1 << 20, &fd));
		ASSERT_EQ(close(fd), 0);
		NRT_OK(nrt.nrt_get_dmabuf_fd_v2(va_of(t) + 4096, 4096, &fd,
		                                &off));
		ASSERT_EQ(close(fd), 0);
	}
	ASSERT_EQ(hmr_test_open_fds(), before + 1);
	nrt.nrt_tensor_free(&t);
	for (int i = 0; i < 100; i++) {
		t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, i % 4, 4096);
		nrt.nrt_tensor_free(&t);
	}
	ASSERT_EQ(hmr_test_open_fds(), before);
}

HMR_TEST(sim_neuron_efa_bdf_identifies_device_memory)
{
	char bdf[16], tiny[4];
	nrt_tensor_t *d0, *d2, *h;
	uintptr_t freed;
	size_t len;

	setup();
	d0 = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 1, 8192);
	d2 = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 2, 8192);
	h = alloc(NRT_TENSOR_PLACEMENT_HOST, -1, 4096);
	len = sizeof(bdf);
	NRT_OK(nrt.nrt_get_attached_efa_bdf((void *)(va_of(d0) + 5000), bdf,
	                                    &len));
	ASSERT_EQ(strcmp(bdf, "0000:10:00.0"), 0);
	ASSERT_EQ(len, 12);
	len = sizeof(bdf);
	NRT_OK(nrt.nrt_get_attached_efa_bdf((void *)va_of(d2), bdf, &len));
	ASSERT_EQ(strcmp(bdf, "0000:11:00.0"), 0);
	len = sizeof(tiny);
	ASSERT_EQ(nrt.nrt_get_attached_efa_bdf((void *)va_of(d2), tiny, &len),
	          NRT_RESOURCE);
	/* Not HBM: host placements, host memory, past the end, freed. */
	len = sizeof(bdf);
	ASSERT_EQ(nrt.nrt_get_attached_efa_bdf((void *)va_of(h), bdf, &len),
	          NRT_FAILURE);
	ASSERT_EQ(nrt.nrt_get_attached_efa_bdf(bdf, bdf, &len), NRT_FAILURE);
	ASSERT_EQ(nrt.nrt_get_attached_efa_bdf((void *)(va_of(d0) + 8192), bdf,
	                                       &len),
	          NRT_FAILURE);
	freed = va_of(d0);
	nrt.nrt_tensor_free(&d0);
	ASSERT_EQ(nrt.nrt_get_attached_efa_bdf((void *)freed, bdf, &len),
	          NRT_FAILURE);
	nrt.nrt_tensor_free(&d2);
	nrt.nrt_tensor_free(&h);
}

HMR_TEST(sim_neuron_device_tensor_without_va)
{
	unsigned char in[64], out[64];
	nrt_tensor_t *t;
	int fd;

	setenv("HMR_SIM_NEURON_DEVICE_VA", "0", 1);
	setup();
	fill(in, sizeof(in), 9);
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096);
	ASSERT_EQ(va_of(t), 0);
	NRT_OK(nrt.nrt_tensor_write(t, in, 0, sizeof(in)));
	NRT_OK(nrt.nrt_tensor_read(t, out, 0, sizeof(out)));
	ASSERT_EQ(memcmp(in, out, sizeof(in)), 0);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(0, 4096, &fd), NRT_INVALID);
	nrt.nrt_tensor_free(&t);
}

HMR_TEST(sim_neuron_fail_injection_nth_call)
{
	nrt_tensor_t *t[4] = {NULL};
	uint64_t off;
	int fd;

	setenv("HMR_SIM_NEURON_FAIL",
	       "nrt_tensor_allocate@2=NRT_RESOURCE:1,nrt_get_dmabuf_fd_v2,"
	       "nrt_tensor_get_va@1,nrt_tensor_free=4,bogus_call=1",
	       1);
	setup();
	NRT_OK(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096,
	                               "t", &t[0]));
	NRT_OK(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096,
	                               "t", &t[1]));
	/* The third call, and only it, fails. */
	ASSERT_EQ(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096,
	                                  "t", &t[2]),
	          NRT_RESOURCE);
	ASSERT_PTR_EQ(t[2], NULL);
	NRT_OK(nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096,
	                               "t", &t[3]));
	/* No status given: NRT_FAILURE, every call. */
	ASSERT_NE(va_of(t[0]), 0);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(va_of(t[1]), 0); /* get_va fails after one call */
		ASSERT_EQ(nrt.nrt_get_dmabuf_fd_v2(0x1000, 4096, &fd, &off),
		          NRT_FAILURE);
	}
	/* A void call cannot fail: the tensor is freed all the same. */
	nrt.nrt_tensor_free(&t[0]);
	ASSERT_PTR_EQ(t[0], NULL);
	nrt.nrt_tensor_free(&t[1]);
	nrt.nrt_tensor_free(&t[3]);
	ASSERT_EQ(nrt.calls("nrt_tensor_allocate"), 4);
	ASSERT_EQ(nrt.calls("nrt_get_dmabuf_fd_v2"), 3);
}

HMR_TEST(sim_neuron_call_counters)
{
	nrt_tensor_t *t;
	uint32_t n;
	int fd;

	load_lib("HMR_SIM_NEURON_LIB");
	ASSERT_EQ(nrt.calls("nrt_init"), 0);
	NRT_OK(nrt.nrt_get_total_nc_count(&n));
	NRT_OK(nrt.nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096);
	NRT_OK(nrt.nrt_get_dmabuf_fd(va_of(t), 4096, &fd));
	close(fd);
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va_of(t) + 1, 1, &fd), NRT_INVALID);
	nrt.nrt_tensor_free(&t);
	nrt.nrt_close();
	ASSERT_EQ(nrt.calls("nrt_get_total_nc_count"), 1);
	ASSERT_EQ(nrt.calls("nrt_init"), 1);
	ASSERT_EQ(nrt.calls("nrt_tensor_allocate"), 1);
	ASSERT_EQ(nrt.calls("nrt_tensor_get_va"), 2);
	ASSERT_EQ(nrt.calls("nrt_get_dmabuf_fd"), 2); /* failures count */
	ASSERT_EQ(nrt.calls("nrt_tensor_free"), 1);
	ASSERT_EQ(nrt.calls("nrt_close"), 1);
	ASSERT_EQ(nrt.calls("nrt_get_dmabuf_fd_v2"), 0);
	ASSERT_EQ(nrt.calls("nrt_no_such_call"), 0);
	ASSERT_EQ(nrt.calls(NULL), 0);
}

HMR_TEST(sim_neuron_close_releases_memory)
{
	char perms[8], path[256];
	nrt_tensor_t *t, *u;
	uintptr_t va;
	int before, fd;

	setup();
	before = hmr_test_open_fds();
	t = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096);
	u = alloc(NRT_TENSOR_PLACEMENT_HOST, -1, 4096);
	va = va_of(t);
	nrt.nrt_close();
	ASSERT_EQ(hmr_test_open_fds(), before);
	ASSERT_TRUE(maps_find(va, perms, path));
	ASSERT_TRUE(strstr(path, "neuron") == NULL);
	NRT_OK(nrt.nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));
	ASSERT_EQ(nrt.nrt_get_dmabuf_fd(va, 4096, &fd), NRT_INVALID);
	ASSERT_EQ(nrt.alloc_id((void *)va), 0);
	nrt.nrt_tensor_free(&t);
	nrt.nrt_tensor_free(&u);
	ASSERT_PTR_EQ(u, NULL);
}

HMR_TEST(sim_neuron_status_strings)
{
	load_lib("HMR_SIM_NEURON_LIB");
	ASSERT_EQ(
	        strcmp(nrt.nrt_get_status_as_str(NRT_RESOURCE), "NRT_RESOURCE"),
	        0);
	ASSERT_EQ(strcmp(nrt.nrt_get_status_as_str(NRT_CLOSED), "NRT_CLOSED"),
	          0);
	ASSERT_TRUE(nrt.nrt_get_status_as_str((NRT_STATUS)12345) != NULL);
}

static void *thread_work(void *arg)
{
	int nc = (int)(intptr_t)arg;
	unsigned char v = (unsigned char)nc, back = 0;
	nrt_tensor_t *t;
	uint64_t off;
	int fd;

	for (int i = 0; i < 200; i++) {
		size_t n = (size_t)(i % 7 + 1) * 4096;

		if (nrt.nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, nc % 4,
		                            n, "thr", &t) != NRT_SUCCESS)
			return "alloc";
		if (nrt.nrt_tensor_write(t, &v, n - 1, 1) ||
		    nrt.nrt_tensor_read(t, &back, n - 1, 1) || back != v)
			return "copy";
		if (nrt.nrt_get_dmabuf_fd_v2(va_of(t) + 1, 1, &fd, &off) ||
		    off != 1)
			return "dmabuf";
		close(fd);
		nrt.nrt_tensor_free(&t);
	}
	return NULL;
}

HMR_TEST(sim_neuron_threads)
{
	pthread_t th[8];

	setup();
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, thread_work,
		                         (void *)(intptr_t)i),
		          0);
	for (int i = 0; i < 8; i++) {
		void *err;

		ASSERT_EQ(pthread_join(th[i], &err), 0);
		if (err)
			HMR_FAIL("thread %d: %s", i, (char *)err);
	}
	ASSERT_EQ(nrt.calls("nrt_tensor_allocate"), 1600);
}

HMR_TEST_MAIN()
