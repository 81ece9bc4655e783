/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* thunk.h: state shared by the files of the simulated libhl-thunk.so. */
#ifndef HMR_SIM_THUNK_H
#define HMR_SIM_THUNK_H

#include "sim_syn.h"

/* The environment, read once (thunk_config.c). */
struct sim_config {
	int ndev;            /* HMR_SIM_SYNAPSEAI_DEVICES */
	uint64_t hbm_size;   /* HMR_SIM_SYNAPSEAI_HBM_MIB, in bytes */
	int host_accessible; /* HMR_SIM_SYNAPSEAI_HOST_ACCESSIBLE */
	int dmabuf[SIM_MAX_DEVICES];
	size_t page;
};

extern struct sim_config sim_cfg;

/* Loads the configuration (once) and returns it. */
const struct sim_config *sim_config(void);

/*
 * Every hl-thunk entry point starts with SIM_ENTER(name, default): the
 * call is counted and, if HMR_SIM_SYNAPSEAI_FAIL names it, the injected
 * status is returned.
 */
#define SIM_ENTER(name, dflt)                                                  \
	do {                                                                   \
		long sim_st_;                                                  \
		if (hmr_sim_synapseai__fail(name, dflt, &sim_st_))             \
			return (int)sim_st_;                                   \
	} while (0)

#endif /* HMR_SIM_THUNK_H */
