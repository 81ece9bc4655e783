/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_neuron_faults.c: every failure of every runtime call hmr makes, walked.
 */
#include <string.h>
#include <sys/wait.h>

#include "neuron_util.h"

/*
 * One scenario (start-up, classify device and host memory, export and
 * release a dma-buf, copy to the device, register with the Neuron hint)
 * runs in a child process per injected failure: the simulator's
 * HMR_SIM_NEURON_FAIL = "<call>@<i>=<status>:1" fails the call's i-th
 * use, for every i the clean scenario makes and every status below.  The
 * child checks each step's result against doc/hmem-neuron.md and that no
 * fd was left open; a crash or a leak fails the case.
 */
#define LEN (64u << 10)

static const struct {
	int status;
	int err; /* neuron_api.h: the status as -FI_E* */
} statuses[] = {
        {NRT_FAILURE, -FI_EOPNOTSUPP},        {NRT_INVALID, -FI_EINVAL},
        {NRT_INVALID_HANDLE, -FI_EINVAL},     {NRT_RESOURCE, -FI_ENOMEM},
        {NRT_TIMEOUT, -FI_ETIMEDOUT},         {NRT_HW_ERROR, -FI_EIO},
        {NRT_UNINITIALIZED, -FI_ENODEV},      {NRT_CLOSED, -FI_ENODEV},
        {NRT_EXEC_HW_ERR_DMA_ABORT, -FI_EIO},
};
#define NSTATUS (sizeof(statuses) / sizeof(statuses[0]))

struct fault {
	const char *call; /* the call failing, NULL: none */
	long at;          /* its use that fails */
	int status, err;
};

/* The step that just ran made the call's failing use. */
static int hit(const struct fault *f, unsigned long before, unsigned long now)
{
	return f->call && f->at >= (long)before && f->at < (long)now;
}

/* How many times the call failing was used so far. */
#define NOW(f, a) ((f)->call ? (a)->calls((f)->call) : 0)

static int is(const struct fault *f, const char *call)
{
	return f->call && !strcmp(f->call, call);
}

/* nrt_get_attached_efa_bdf said "not device memory" in this step. */
static int disowned(const struct fault *f, unsigned long b, unsigned long n)
{
	return hit(f, b, n) && is(f, "nrt_get_attached_efa_bdf") &&
	       (f->status == NRT_FAILURE || f->status == NRT_UNINITIALIZED ||
	        f->status == NRT_CLOSED);
}

/*
 * The first classification of an address asks the runtime once: exact.
 * Later ones find the tensor in hmr's memtype cache and ask again when
 * the runtime disowns it (hmem/classify.c), so a failed address query
 * there ends as device or as host memory, nothing else.
 */
static void step_query(const struct fault *f, struct app *a, char *va,
                       int absent)
{
	struct hmr_hmem_info info;
	unsigned long b = NOW(f, a);
	char host[64];

	ASSERT_OK(hmr_hmem_query(va, 64, &info));
	if (absent || disowned(f, b, NOW(f, a))) {
		ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	} else {
		ASSERT_EQ(info.iface, FI_HMEM_NEURON);
		ASSERT_EQ(info.flags & ~HMR_HMEM_DEVICE_UNCHECKED,
		          hit(f, b, NOW(f, a)) ? 0 : HMR_HMEM_DEVICE_ONLY);
	}
	ASSERT_OK(hmr_hmem_query(host, sizeof(host), &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
}

static void step_dmabuf(const struct fault *f, struct app *a, char *va,
                        int absent)
{
	unsigned long b = NOW(f, a);
	uint64_t offset;
	int fd = -1, ret;

	ret = hmr_hmem_dmabuf_get(va, 64, 0, &fd, &offset);
	if (absent) {
		ASSERT_EQ(ret, -FI_EINVAL); /* Host memory has no dma-buf. */
	} else if (hit(f, b, NOW(f, a)) && is(f, "nrt_get_attached_efa_bdf")) {
		if (ret != -FI_EINVAL) /* classified as host memory */
			ASSERT_OK(ret);
	} else if (hit(f, b, NOW(f, a))) {
		ASSERT_EQ(ret, f->err); /* The export itself failed. */
	} else {
		ASSERT_OK(ret);
	}
	if (!ret)
		ASSERT_OK(hmr_hmem_dmabuf_put(va, fd));
	else
		ASSERT_EQ(fd, -1);
}

static void step_copy(const struct fault *f, struct app *a, nrt_tensor_t *t,
                      char *va)
{
	unsigned char in[64], out[64];
	unsigned long b = NOW(f, a);
	int ret;

	fill(in, sizeof(in), (unsigned)b);
	ret = hmr_hmem_copy_to(va, in, sizeof(in));
	if (hit(f, b, NOW(f, a)) && is(f, "nrt_memcpy_to_device")) {
		ASSERT_EQ(ret, f->err);
		return;
	}
	/* Absent or disowned: a host copy into the (read/write) mapping. */
	ASSERT_OK(ret);
	ASSERT_EQ(a->read(t, out, (size_t)(va - app_va(a, t)), sizeof(out)),
	          NRT_SUCCESS);
	ASSERT_EQ(memcmp(in, out, sizeof(in)), 0);
}

static void step_register(const struct fault *f, struct app *a, char *va,
                          int absent)
{
	struct fid_domain *d = hmem_domain();
	unsigned long b = NOW(f, a);
	struct fid_mr *mr;
	int ret = reg_iface(d, va, 4096, FI_HMEM_NEURON, 0, 0, &mr);

	if (absent)
		ASSERT_EQ(ret, -FI_ENOSYS);
	else if (hit(f, b, NOW(f, a)) && is(f, "nrt_get_attached_efa_bdf") &&
	         ret == -FI_EINVAL)
		; /* Disowned: "neuron given, but the memory is system". */
	else
		ASSERT_OK(ret);
	if (!ret)
		ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
}

/* The child's whole life; returns how many times f->call was used.  Each
 * step works on its own page of the tensor. */
static unsigned long scenario(const struct fault *f)
{
	struct app a = app_open();
	int absent = hmr_hmem_status(FI_HMEM_NEURON, NULL, 0) != 0;
	int fds = hmr_test_open_fds(); /* hmr's own are open from here on */
	nrt_tensor_t *t = app_alloc(&a, NRT_TENSOR_PLACEMENT_DEVICE, 0, LEN);
	char *va = app_va(&a, t);

	if (is(f, "nrt_get_total_nc_count"))
		ASSERT_EQ(absent, hit(f, 0, NOW(f, &a)));
	step_query(f, &a, va + 4096, absent);
	step_dmabuf(f, &a, va + 8192, absent);
	step_copy(f, &a, t, va + 12288);
	step_register(f, &a, va + 16384, absent);
	a.free(&t);
	ASSERT_EQ(hmr_test_open_fds(), fds);
	return NOW(f, &a);
}

/* Runs the scenario in a child with `rule` injected; its use count. */
static unsigned long run_child(const struct fault *f, const char *rule)
{
	int pipefd[2], status;
	unsigned long uses = 0;
	pid_t pid;

	ASSERT_EQ(pipe(pipefd), 0);
	fflush(NULL);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(pipefd[0]);
		if (rule)
			case_env("HMR_SIM_NEURON_FAIL", rule);
		uses = scenario(f);
		if (write(pipefd[1], &uses, sizeof(uses)) != sizeof(uses))
			exit(2);
		exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		HMR_FAIL("rule \"%s\": child %s %d", rule ? rule : "(none)",
		         WIFEXITED(status) ? "exited" : "killed by signal",
		         WIFEXITED(status) ? WEXITSTATUS(status)
		                           : WTERMSIG(status));
	ASSERT_EQ(read(pipefd[0], &uses, sizeof(uses)), sizeof(uses));
	close(pipefd[0]);
	return uses;
}

/* Every use of `call` the clean scenario makes, failed once with every
 * status. */
static void walk(const char *call)
{
	struct fault f = {call, -1, 0, 0};
	unsigned long uses, i, runs = 0;
	char rule[96];
	size_t s;

	case_env("HMR_SIM_NEURON_HOST_ACCESSIBLE", "1");
	uses = run_child(&f, NULL);
	ASSERT_GT(uses, 0);
	for (i = 0; i < uses; i++) {
		for (s = 0; s < NSTATUS; s++) {
			f.at = (long)i;
			f.status = statuses[s].status;
			f.err = statuses[s].err;
			snprintf(rule, sizeof(rule), "%s@%lu=%d:1", call, i,
			         f.status);
			run_child(&f, rule);
			runs++;
		}
	}
	printf("%s: %lu uses, %lu failures injected\n", call, uses, runs);
}

HMR_TEST(neuron_fault_core_count_ends_cleanly)
{
	walk("nrt_get_total_nc_count");
}

HMR_TEST(neuron_fault_efa_bdf_ends_cleanly)
{
	walk("nrt_get_attached_efa_bdf");
}

HMR_TEST(neuron_fault_efa_bdf_ends_cleanly_reading_maps)
{
	case_env("HMR_NEURON_MAPS", "read");
	walk("nrt_get_attached_efa_bdf");
}

HMR_TEST(neuron_fault_dmabuf_v2_ends_cleanly)
{
	walk("nrt_get_dmabuf_fd_v2");
}

HMR_TEST(neuron_fault_dmabuf_v1_ends_cleanly)
{
	case_runtime("HMR_TEST_SIM_NEURON_V1");
	walk("nrt_get_dmabuf_fd");
}

HMR_TEST(neuron_fault_memcpy_to_device_ends_cleanly)
{
	walk("nrt_memcpy_to_device");
}

HMR_TEST_MAIN()
