# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# hmr_functions.cmake: the helpers that keep each CMakeLists.txt short.

# hmr_layer(<target> <folder>...): the library's object target <target>
# may include "<folder>/name.h" for each folder named and no other internal
# header.  Its include path is a directory of its own holding one symlink
# per allowed folder, so an upward include ("core/domain.h" from hmem/, a
# backend reaching into core/ or another backend) fails to compile.  UCX's
# ucs < uct < ucp is the model.  Internal includes are always
# folder-qualified: a bare "x.h" would find the includer's own folder only.
function(hmr_layer target)
  set(view ${PROJECT_BINARY_DIR}/layers/${target})
  file(MAKE_DIRECTORY ${view})
  foreach(dir ${ARGN})
    if(NOT EXISTS ${view}/${dir})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${dir} ${view}/${dir} SYMBOLIC)
    endif()
  endforeach()
  target_include_directories(${target} PRIVATE ${view}
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
  target_compile_definitions(${target} PRIVATE HMR_BUILDING_LIBRARY
    _GNU_SOURCE)
  target_link_libraries(${target} PRIVATE Threads::Threads)
endfunction()

# hmr_add_objects(<layer target> <folders it may include> SOURCES <src...>):
# an object library of libhmr.
function(hmr_add_objects target)
  cmake_parse_arguments(O "" "" "SEES;SOURCES" ${ARGN})
  add_library(${target} OBJECT ${O_SOURCES})
  hmr_layer(${target} ${O_SEES})
  set_property(GLOBAL APPEND PROPERTY HMR_OBJECTS
    $<TARGET_OBJECTS:${target}>)
endfunction()

# hmr_add_backend(<name> <sources...>): one backend folder's objects; a
# backend sees the base layer, hmem/'s interface and its own folder only.
function(hmr_add_backend name)
  hmr_add_objects(hmr_${name} SEES base hmem ${name} SOURCES ${ARGN})
endfunction()

# hmr_add_test_file(<source.c> [LIBS lib...] [ENV VAR=value...]
#                   [LABELS label...] [TIMEOUT seconds] [SOURCES src...]
#                   [INTERNAL layer-target] [NAME exe] [PREFIX prefix])
# Builds one executable, named after <source.c> (or NAME), and registers
# one CTest entry per HMR_TEST(name) found in the file, named after the
# case (PREFIX before it: the same cases built again to run in another
# environment, ENV, keep names of their own).  Exit
# code 77 means skipped (the case prints why).  ENV applies to every case
# of the file; a case that needs another environment sets it itself.
# INTERNAL links the library statically and gives the test the include
# view of that layer (tests of internal functions).
function(hmr_add_test_file src)
  cmake_parse_arguments(T "" "TIMEOUT;INTERNAL;NAME;PREFIX"
    "LIBS;ENV;LABELS;SOURCES" ${ARGN})
  get_filename_component(exe ${src} NAME_WE)
  if(T_NAME)
    set(exe ${T_NAME})
  endif()
  add_executable(${exe} ${src} ${T_SOURCES})
  if(T_INTERNAL)
    target_link_libraries(${exe} PRIVATE hmr_static_for_tests
      Threads::Threads ${CMAKE_DL_LIBS})
    if(HMR_WITH_VERBS)
      target_link_libraries(${exe} PRIVATE ${HMR_IBVERBS_LIB})
    endif()
    target_include_directories(${exe} PRIVATE
      ${PROJECT_BINARY_DIR}/layers/${T_INTERNAL}
      ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
    target_compile_definitions(${exe} PRIVATE _GNU_SOURCE)
  else()
    target_link_libraries(${exe} PRIVATE hmr)
  endif()
  target_link_libraries(${exe} PRIVATE ${T_LIBS})
  target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  # The cases are read here, at configure time: an edit of the file
  # re-runs CMake, so a renamed or added case is never left unregistered.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
    ${CMAKE_CURRENT_SOURCE_DIR}/${src})
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${src} lines REGEX "^HMR_TEST\\(")
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  foreach(line ${lines})
    string(REGEX REPLACE "^HMR_TEST\\(([A-Za-z0-9_]+)\\).*" "\\1" name "${line}")
    add_test(NAME ${T_PREFIX}${name} COMMAND ${HMR_TEST_WRAPPER}
      $<TARGET_FILE:${exe}> ${name})
    set_tests_properties(${T_PREFIX}${name} PROPERTIES SKIP_RETURN_CODE 77
      TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${T_ENV}" LABELS "${T_LABELS}")
  endforeach()
endfunction()
