/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* reloc_dl.c: a module loaded after the monitor started; it unmaps. */
#include <stddef.h>
#include <sys/mman.h>

__attribute__((visibility("default"))) int reloc_dl_unmap(void *p, size_t len)
{
	return munmap(p, len);
}
