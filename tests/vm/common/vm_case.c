/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* vm_case.c: the CASE lines test programs print for the VM payload runner. */
#include "vm_case.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>

static int failed;

static void line(const char *what, const char *name, const char *fmt,
                 va_list ap)
{
	printf("CASE %s %s", what, name);
	if (fmt) {
		printf(": ");
		vprintf(fmt, ap);
	}
	printf("\n");
	fflush(stdout);
}

int vm_case(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ok) {
		line("PASS", name, NULL, ap);
	} else {
		line("FAIL", name, fmt, ap);
		failed++;
	}
	va_end(ap);
	return ok;
}

void vm_case_pass(const char *name)
{
	vm_case(name, 1, "%s", "");
}

void vm_case_fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line("FAIL", name, fmt, ap);
	va_end(ap);
	failed++;
}

void vm_case_skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line("SKIP", name, fmt, ap);
	va_end(ap);
}

int vm_case_exit(void)
{
	return failed ? 1 : 0;
}

int vm_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}
