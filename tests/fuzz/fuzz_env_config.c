/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fuzz_env_config.c: fuzz target: HMR_HMEM, FI_HMEM, HMR_LOG_LEVEL values. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz_util.h"

/*
 * The library reads its environment once per process (pthread_once), so
 * each input runs in a forked child: it sets the variables, starts the
 * backends (hmr_hmem_status, hmr_hmem_query) and makes a registration
 * fail, and checks what README.md promises:
 *  - HMR_HMEM, else FI_HMEM: a comma list of backends; "^list" excludes
 *    them; unset or empty selects all.  A backend the value does not
 *    select must be reported absent because of it; the host backend is
 *    always present and host memory is FI_HMEM_SYSTEM.
 *  - HMR_LOG_LEVEL none, warn (default), info, debug: "none" prints
 *    nothing for a refused registration, any other value prints a warning.
 * The parent turns a child that did not exit 0 (a check, a sanitizer
 * report, a signal) into a crash.
 *
 * Input: byte 0 says which variables are set (bit 0 HMR_HMEM, 1 FI_HMEM,
 * 2 HMR_LOG_LEVEL, 3 HMR_HMEM_DISABLE_P2P, 4 FI_HMEM_DISABLE_P2P); the
 * values follow in that order, each ended by a NUL byte (or the input).
 */

static const char *const vars[] = {
        "HMR_HMEM",
        "FI_HMEM",
        "HMR_LOG_LEVEL",
        "HMR_HMEM_DISABLE_P2P",
        "FI_HMEM_DISABLE_P2P",
};
#define NVARS   (sizeof(vars) / sizeof(vars[0]))
#define MAX_VAL 1024

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* Whether the value selects backend `name` (read whole, any length). */
static int selects(const char *name)
{
	const char *v = getenv("HMR_HMEM"), *p;
	size_t n = strlen(name);
	bool exclude, in = false;

	if (!v)
		v = getenv("FI_HMEM");
	if (!v || !*v)
		return 1;
	exclude = *v == '^';
	for (p = v + exclude; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		in = in || (len == n && memcmp(p, name, n) == 0);
		p += len + (end != NULL);
	}
	return exclude ? !in : in;
}

static void check_backends(void)
{
	struct hmr_hmem_info info;
	char why[256];
	static char host[64];
	int iface, sel;

	if (hmr_hmem_status(FI_HMEM_SYSTEM, why, sizeof(why)))
		_exit(10); /* The host backend is always there. */
	for (iface = FI_HMEM_CUDA; iface <= FI_HMEM_SYNAPSEAI; iface++) {
		int rc = hmr_hmem_status((enum fi_hmem_iface)iface, why,
		                         sizeof(why));

		sel = selects(hmr_hmem_iface_name((enum fi_hmem_iface)iface));
		if (strstr(why, "not built"))
			continue;
		if (sel == 0 && (rc == 0 || !strstr(why, "not selected")))
			_exit(11); /* Deselected but present, or absent
			            * for another reason. */
		if (sel == 1 && strstr(why, "not selected"))
			_exit(12);
	}
	if (hmr_hmem_query(host, sizeof(host), &info) ||
	    info.iface != FI_HMEM_SYSTEM)
		_exit(13);
}

/* A refused registration, with stderr caught in a memfd. */
static void check_log(void)
{
	const char *level = getenv("HMR_LOG_LEVEL");
	struct fid_domain *dom = NULL;
	struct fid_mr *mr = NULL;
	static char buf[64];
	int fd, saved;
	ssize_t got;

	if (hmr_domain_open(NULL, &dom))
		_exit(20);
	fd = memfd_create("stderr", 0);
	saved = dup(2);
	if (fd < 0 || saved < 0 || dup2(fd, 2) < 0)
		_exit(21);
	if (fi_mr_reg(dom, buf, 0, FI_REMOTE_READ, 0, 1, 0, &mr, NULL) !=
	    -FI_EINVAL)
		_exit(22);
	dup2(saved, 2);
	got = pread(fd, buf, sizeof(buf) - 1, 0);
	if (level && strcmp(level, "none") == 0 ? got != 0 : got <= 0)
		_exit(23); /* Printed at "none", or silent otherwise. */
	if (fi_close(&dom->fid))
		_exit(24);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char val[MAX_VAL + 1];
	size_t pos = 1, i, n;
	pid_t pid, got;
	int status = 0;

	if (!size)
		return 0;
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		for (i = 0; i < NVARS; i++) {
			unsetenv(vars[i]);
			if (!(data[0] & (1u << i)))
				continue;
			for (n = 0; pos < size && data[pos] && n < MAX_VAL;)
				val[n++] = (char)data[pos++];
			val[n] = '\0';
			pos++; /* The NUL (or a byte past a long value). */
			setenv(vars[i], val, 1);
		}
		check_backends();
		check_log();
		/* Leave without exit handlers: they belong to the parent. */
		_exit(0);
	}
	/* libFuzzer's -timeout alarm interrupts waitpid. */
	while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (got != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "the child failed: %s %d\n",
		        WIFEXITED(status) ? "exit" : "signal",
		        WIFEXITED(status) ? WEXITSTATUS(status)
		                          : WTERMSIG(status));
		abort();
	}
	return 0;
}
