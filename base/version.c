/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* version.c: the library's version, as CMake's project() states it. */
#include <hmr/hmr.h>

unsigned hmr_version(void)
{
	return HMR_VERSION;
}

const char *hmr_version_string(void)
{
	return "hmr " HMR_VERSION_STRING;
}
