/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* libc_malloc.h: a large malloc whose free libc unmaps, in every build. */
#ifndef HMR_TESTS_LIBC_MALLOC_H
#define HMR_TESTS_LIBC_MALLOC_H

#include <stdlib.h>

/*
 * Tests of the memory hooks free a large malloc and expect libc to unmap
 * it from inside free().  Sanitizer builds replace malloc with an
 * allocator that unmaps by system call, so there big_malloc and big_free
 * are glibc's own allocator (__libc_malloc).
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HMR_TESTS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HMR_TESTS_SANITIZED 1
#endif
#endif

#ifdef HMR_TESTS_SANITIZED
void *__libc_malloc(size_t len);
void __libc_free(void *p);
#define big_malloc __libc_malloc
#define big_free   __libc_free
#else
#define big_malloc malloc
#define big_free   free
#endif

#endif /* HMR_TESTS_LIBC_MALLOC_H */
