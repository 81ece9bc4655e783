# hmr_functions.cmake: the helpers that keep each CMakeLists.txt short.

# hmr_add_test_file(<source.c> [LIBS lib...] [ENV VAR=value...]
#                   [LABELS label...] [TIMEOUT seconds])
# Builds one executable, named after <source.c>, (plus the harness) and registers
# one CTest entry per HMR_TEST(name) found in the file, named after the
# case.  Exit code 77 means skipped (the case prints why).
function(hmr_add_test_file src)
  cmake_parse_arguments(T "" "TIMEOUT" "LIBS;ENV;LABELS;SOURCES" ${ARGN})
  get_filename_component(exe ${src} NAME_WE)
  add_executable(${exe} ${src} ${T_SOURCES})
  target_link_libraries(${exe} PRIVATE hmr ${T_LIBS})
  target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${src} lines REGEX "^HMR_TEST\\(")
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  foreach(line ${lines})
    string(REGEX REPLACE "^HMR_TEST\\(([A-Za-z0-9_]+)\\).*" "\\1" name "${line}")
    add_test(NAME ${name} COMMAND ${exe} ${name})
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77
      TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${T_ENV}" LABELS "${T_LABELS}")
  endforeach()
endfunction()

# hmr_add_backend(<name> <sources...>): a backend folder's objects, built
# into libhmr.
function(hmr_add_backend name)
  add_library(hmr_${name} OBJECT ${ARGN})
  target_link_libraries(hmr_${name} PRIVATE hmr_internal)
  set_property(GLOBAL APPEND PROPERTY HMR_BACKEND_OBJECTS
    $<TARGET_OBJECTS:hmr_${name}>)
endfunction()
