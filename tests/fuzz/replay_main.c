/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* replay_main.c: run a fuzz target over corpus files, without libFuzzer. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

/*
 * Every build makes each fuzz target a plain program too: `<target>
 * <file or directory>...` runs LLVMFuzzerTestOneInput once per file (a
 * directory's files in name order), so CTest replays the regression
 * corpus under gcc and clang alike.  A crash or a mismatch aborts.
 */

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "cannot read %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	/* An exact-size copy, as libFuzzer hands inputs over. */
	data = malloc(size ? (size_t)size : 1);
	if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "cannot read %s\n", path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "replay %s (%ld bytes)\n", path, size);
	LLVMFuzzerTestOneInput(data, (size_t)size);
	free(data);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int run_dir(const char *dir, int *count)
{
	struct dirent **list;
	char path[4096];
	int n, i, ret = 0;

	n = scandir(dir, &list, NULL, by_name);
	if (n < 0) {
		fprintf(stderr, "cannot list %s\n", dir);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		if (list[i]->d_name[0] != '.' && !stat(path, &st) &&
		    S_ISREG(st.st_mode)) {
			ret = ret ? ret : run_file(path);
			(*count)++;
		}
		free(list[i]);
	}
	free(list);
	return ret;
}

int main(int argc, char **argv)
{
	int i, count = 0, ret = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc && !ret; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "no such file: %s\n", argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			ret = run_dir(argv[i], &count);
		} else {
			ret = run_file(argv[i]);
			count++;
		}
	}
	if (ret)
		return 1;
	printf("%d inputs replayed\n", count);
	return count ? 0 : 1;
}
