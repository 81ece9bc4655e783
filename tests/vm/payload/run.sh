#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# run.sh: the default payload runner: rxe devices, every test program, totals.
set -euo pipefail
. /payload/vm-lib.sh
if ! vm_setup_rxe; then
	echo "CASE FAIL rxe_setup: could not set up rxe0, rxe1 and rxe2"
	echo "0 passed, 1 failed"
	exit 1
fi
vm_run_programs "$@"
vm_summary
