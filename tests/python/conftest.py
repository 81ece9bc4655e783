# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""conftest.py: fixtures for hmr's Python tests, and CTest's skip code.

CTest runs one test function per entry (tests/python/CMakeLists.txt).  A
skipped test exits 77, which CTest reports as skipped (and CI fails on),
instead of pytest's 0.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hmr  # noqa: E402
import simcuda  # noqa: E402


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if exitstatus == 0 and reporter and reporter.stats.get("skipped"):
        session.exitstatus = 77


@pytest.fixture
def domain():
    """A software domain; the test must close every MR it opened."""
    d = hmr.Domain()
    yield d
    assert d.open_mrs == 0, "the test left MRs open"
    d.close()


@pytest.fixture(scope="session")
def cuda():
    """The simulated CUDA driver hmr loads (HMR_CUDA_LIBRARY)."""
    if not os.environ.get("HMR_CUDA_LIBRARY"):
        pytest.skip("HMR_CUDA_LIBRARY is not set: no simulated CUDA driver")
    return simcuda.Driver()


def fds():
    return len(os.listdir("/proc/self/fd"))


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
