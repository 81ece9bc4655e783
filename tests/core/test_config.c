/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_config.c: settings: declared, listed, from default, env or API. */
#define _GNU_SOURCE
#include "core_util.h"

static int find(const char *name, struct hmr_config_info *info)
{
	size_t i;

	for (i = 0; hmr_config_entry(i, info) == 0; i++)
		if (strcmp(info->name, name) == 0)
			return 1;
	return 0;
}

HMR_TEST(config_lists_every_layers_settings_with_help)
{
	const char *names[] = {"HMR_LOG_LEVEL", "HMR_HMEM", "FI_HMEM",
	                       "HMR_HMEM_DISABLE_P2P", "HMR_CUDA_LIBRARY"};
	struct hmr_config_info info;
	size_t i, n = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ASSERT_TRUE(find(names[i], &info));
		ASSERT_TRUE(info.help && *info.help);
	}
	while (hmr_config_entry(n, &info) == 0)
		n++;
	ASSERT_GE(n, 5);
	ASSERT_EQ(hmr_config_entry(n, &info), -FI_ENOENT);
	ASSERT_EQ(hmr_config_entry(0, NULL), -FI_EINVAL);
}

HMR_TEST(config_value_comes_from_api_then_env_then_default)
{
	struct hmr_config_info info;

	unsetenv("HMR_LOG_LEVEL");
	ASSERT_TRUE(find("HMR_LOG_LEVEL", &info));
	ASSERT_EQ(info.source, HMR_CONFIG_DEFAULT);
	ASSERT_TRUE(strcmp(info.value, "warn") == 0);
	setenv("HMR_LOG_LEVEL", "info", 1);
	ASSERT_TRUE(find("HMR_LOG_LEVEL", &info));
	ASSERT_EQ(info.source, HMR_CONFIG_ENV);
	ASSERT_TRUE(strcmp(info.value, "info") == 0);
	ASSERT_OK(hmr_config_set("HMR_LOG_LEVEL", "none"));
	ASSERT_TRUE(find("HMR_LOG_LEVEL", &info));
	ASSERT_EQ(info.source, HMR_CONFIG_API);
	ASSERT_TRUE(strcmp(info.value, "none") == 0);
	ASSERT_OK(hmr_config_set("HMR_LOG_LEVEL", NULL));
	ASSERT_TRUE(find("HMR_LOG_LEVEL", &info));
	ASSERT_EQ(info.source, HMR_CONFIG_ENV);
}

HMR_TEST(config_set_of_unknown_name_is_enoent)
{
	ASSERT_EQ(hmr_config_set("HMR_NO_SUCH_SETTING", "1"), -FI_ENOENT);
	ASSERT_EQ(hmr_config_set(NULL, "1"), -FI_EINVAL);
}

/* A program selects memory interfaces without the environment. */
HMR_TEST(config_set_before_start_selects_backends)
{
	char why[256];

	unsetenv("HMR_HMEM");
	unsetenv("FI_HMEM");
	ASSERT_OK(hmr_config_set("HMR_HMEM", "^cuda"));
	ASSERT_EQ(hmr_hmem_status(FI_HMEM_CUDA, why, sizeof(why)), -FI_ENOSYS);
	ASSERT_TRUE(strstr(why, "not selected") != NULL);
}

HMR_TEST_MAIN()
