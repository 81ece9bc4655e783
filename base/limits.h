/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* limits.h: sizes that several layers must agree on. */
#ifndef HMR_BASE_LIMITS_H
#define HMR_BASE_LIMITS_H

/* Devices tracked per backend (and per NIC, by the verbs registrar):
 * tables indexed by device ordinal have this many slots; a runtime
 * reporting more is clamped, with a log line, to the first 64. */
#define HMR_MAX_DEVICES 64

#endif /* HMR_BASE_LIMITS_H */
