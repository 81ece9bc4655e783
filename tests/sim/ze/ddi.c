/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ddi.c: the table getters the Level Zero loader looks up in a driver. */
#include "sim_ze.h"

#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>
#include <string.h>

/*
 * The 1.8 loader refuses a driver (zeInit: ZE_RESULT_ERROR_UNINITIALIZED)
 * unless every non-experimental getter of ze_ddi.h, zet_ddi.h and
 * zes_ddi.h is exported and succeeds; the experimental ones are optional
 * but harmless, so all are exported.  A getter may run before zeInit.
 * Tables the simulator does not implement are left all NULL.
 */

/* Getter, table type, filler (for tables with implemented slots). */
#define SIM_FILLED_TABLES(X)                                                   \
	X(zeGetGlobalProcAddrTable, ze_global_dditable_t, sim_fill_global)     \
	X(zeGetDriverProcAddrTable, ze_driver_dditable_t, sim_fill_driver)     \
	X(zeGetDeviceProcAddrTable, ze_device_dditable_t, sim_fill_device)     \
	X(zeGetContextProcAddrTable, ze_context_dditable_t, sim_fill_context)  \
	X(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t,         \
	  sim_fill_command_queue)                                              \
	X(zeGetCommandListProcAddrTable, ze_command_list_dditable_t,           \
	  sim_fill_command_list)                                               \
	X(zeGetMemProcAddrTable, ze_mem_dditable_t, sim_fill_mem_all)

#define SIM_EMPTY_TABLES(X)                                                    \
	X(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)               \
	X(zeGetImageProcAddrTable, ze_image_dditable_t)                        \
	X(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)                 \
	X(zeGetFenceProcAddrTable, ze_fence_dditable_t)                        \
	X(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t)               \
	X(zeGetEventProcAddrTable, ze_event_dditable_t)                        \
	X(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)                 \
	X(zeGetModuleProcAddrTable, ze_module_dditable_t)                      \
	X(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)    \
	X(zeGetKernelProcAddrTable, ze_kernel_dditable_t)                      \
	X(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)               \
	X(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)                    \
	X(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)           \
	X(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)             \
	X(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)  \
	X(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)      \
	X(zetGetDeviceProcAddrTable, zet_device_dditable_t)                    \
	X(zetGetContextProcAddrTable, zet_context_dditable_t)                  \
	X(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)         \
	X(zetGetModuleProcAddrTable, zet_module_dditable_t)                    \
	X(zetGetKernelProcAddrTable, zet_kernel_dditable_t)                    \
	X(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)         \
	X(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)  \
	X(zetGetMetricProcAddrTable, zet_metric_dditable_t)                    \
	X(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)   \
	X(zetGetMetricQueryPoolProcAddrTable,                                  \
	  zet_metric_query_pool_dditable_t)                                    \
	X(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)         \
	X(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)             \
	X(zetGetDebugProcAddrTable, zet_debug_dditable_t)                      \
	X(zesGetDriverProcAddrTable, zes_driver_dditable_t)                    \
	X(zesGetDeviceProcAddrTable, zes_device_dditable_t)                    \
	X(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)              \
	X(zesGetPerformanceFactorProcAddrTable,                                \
	  zes_performance_factor_dditable_t)                                   \
	X(zesGetPowerProcAddrTable, zes_power_dditable_t)                      \
	X(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)              \
	X(zesGetEngineProcAddrTable, zes_engine_dditable_t)                    \
	X(zesGetStandbyProcAddrTable, zes_standby_dditable_t)                  \
	X(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)                \
	X(zesGetMemoryProcAddrTable, zes_memory_dditable_t)                    \
	X(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)           \
	X(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)          \
	X(zesGetPsuProcAddrTable, zes_psu_dditable_t)                          \
	X(zesGetFanProcAddrTable, zes_fan_dditable_t)                          \
	X(zesGetLedProcAddrTable, zes_led_dditable_t)                          \
	X(zesGetRasProcAddrTable, zes_ras_dditable_t)                          \
	X(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)

/* The loader asks for its own API version; any 1.x gets the 1.4 table. */
static ze_result_t sim_table_check(ze_api_version_t version, const void *t)
{
	if (!t)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_1_4))
		return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
	return ZE_RESULT_SUCCESS;
}

static void sim_fill_mem_all(ze_mem_dditable_t *t)
{
	sim_fill_mem(t);
	sim_fill_ipc(t);
}

#define SIM_FILLED_GETTER(getter, type, fill)                                  \
	ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version,   \
	                                           type *pDdiTable)            \
	{                                                                      \
		ze_result_t rc = sim_table_check(version, pDdiTable);          \
		if (rc == ZE_RESULT_SUCCESS) {                                 \
			memset(pDdiTable, 0, sizeof(*pDdiTable));              \
			fill(pDdiTable);                                       \
		}                                                              \
		return rc;                                                     \
	}

#define SIM_EMPTY_GETTER(getter, type)                                         \
	ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version,   \
	                                           type *pDdiTable)            \
	{                                                                      \
		ze_result_t rc = sim_table_check(version, pDdiTable);          \
		if (rc == ZE_RESULT_SUCCESS)                                   \
			memset(pDdiTable, 0, sizeof(*pDdiTable));              \
		return rc;                                                     \
	}

SIM_FILLED_TABLES(SIM_FILLED_GETTER)
SIM_EMPTY_TABLES(SIM_EMPTY_GETTER)
