/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench_machine.c: the machine a benchmark ran on, for its first line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* The first "model name" of /proc/cpuinfo, or "unknown CPU". */
static void cpu_model(char *out, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(out, len, "unknown CPU");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + (colon[1] == ' ');
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(out, len, "%s", colon);
		break;
	}
	if (f)
		fclose(f);
}

/* RTM as hmr sees it (base/host.c): the CPU's, unless HMR_RTM=off. */
static const char *rtm(void)
{
	const char *set = getenv("HMR_RTM");
	int cpu = 0;
#if defined(__x86_64__)
	unsigned a, b, c, d;

	cpu = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 11)) &&
	      !(d & (1u << 11));
#endif
	if (!cpu)
		return "no";
	return set && !strcmp(set, "off") ? "no (forced off: HMR_RTM=off)"
	                                  : "yes";
}

void bench_print_machine(void)
{
	char model[160];
	double load[3] = {-1, -1, -1};

	cpu_model(model, sizeof(model));
	if (getloadavg(load, 3) != 3)
		load[0] = load[1] = load[2] = -1;
	printf("machine: %s, %ld cores online, RTM %s, load average %.2f "
	       "%.2f %.2f at start\n",
	       model, sysconf(_SC_NPROCESSORS_ONLN), rtm(), load[0], load[1],
	       load[2]);
	fflush(stdout);
}
