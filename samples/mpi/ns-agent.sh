#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# ns-agent.sh: Open MPI's launcher agent (plm_rsh_agent) for "hosts" that
# are network namespaces on this machine: mpirun calls it as it would call
# ssh, "ns-agent.sh HOST COMMAND...", and it runs COMMAND in namespace
# HOST.  For mpi_rdma.c's two-hosts-in-one-machine set-up.
host=$1
shift
exec ip netns exec "$host" sh -c "$*"
