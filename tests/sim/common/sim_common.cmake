# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# tests/sim/common/sim_common.cmake: hmr_sim_common, the static library
# every simulator links (included by each tests/sim/*/CMakeLists.txt;
# the first one defines it).  Its symbols are hidden: each simulator's
# shared object keeps its own copy and exports nothing new.

if(NOT TARGET hmr_sim_common)
  find_package(Threads REQUIRED)
  add_library(hmr_sim_common STATIC
    ${CMAKE_CURRENT_LIST_DIR}/hooks.c
    ${CMAKE_CURRENT_LIST_DIR}/mem.c
    ${CMAKE_CURRENT_LIST_DIR}/table.c)
  target_include_directories(hmr_sim_common PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  # tests/udmabuf.h (header-only, shared with tests/vm/common).
  target_include_directories(hmr_sim_common PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/../..)
  target_compile_definitions(hmr_sim_common PRIVATE _GNU_SOURCE)
  target_compile_options(hmr_sim_common PRIVATE -Wall -Wextra -Wshadow
    -Wstrict-prototypes)
  target_link_libraries(hmr_sim_common PUBLIC Threads::Threads)
  set_target_properties(hmr_sim_common PROPERTIES
    C_STANDARD 11
    C_VISIBILITY_PRESET hidden
    POSITION_INDEPENDENT_CODE ON)
endif()
