# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# hmr_package.cmake: the Debian packages `cpack -G DEB` makes, Debian's split:
#   libhmr<N>   libhmr.so.N (install component runtime)
#   libhmr-dev  headers, libhmr.so, hmr.pc, the CMake package, the samples
#               as examples (component dev, and any install rule without a
#               component, so that none is left out of every package)
#   hmr-utils   hmr_info (component utils)
# The version is project(VERSION)'s, dependencies come from dpkg-shlibdeps,
# and libhmr<N> ships a shlibs file so that packages built on it get theirs.
# Configure with -DCMAKE_INSTALL_PREFIX=/usr so that GNUInstallDirs picks
# Debian's multiarch library directory (scripts/check-deb.sh does).
# Included at the end of the top-level CMakeLists.txt, after every install
# rule: CPack lists the install components that exist when it is included.

set(hmr_lib_pkg libhmr${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(hmr_deb_version ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})

# /usr/share/doc/<package>/copyright in each package, as Debian requires;
# EXCLUDE_FROM_ALL keeps them out of a plain `cmake --install`.
foreach(hmr_pair runtime:${hmr_lib_pkg} dev:libhmr-dev utils:hmr-utils)
  string(REPLACE ":" ";" hmr_pair ${hmr_pair})
  list(GET hmr_pair 0 hmr_component)
  list(GET hmr_pair 1 hmr_package)
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${hmr_package}
    RENAME copyright COMPONENT ${hmr_component} EXCLUDE_FROM_ALL)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/samples/
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/libhmr-dev/examples
  COMPONENT dev EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hmr)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "hmr developers <dev@hmr.invalid>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Where dpkg-shlibdeps finds libhmr.so.N for hmr_info; it has no shlibs
# file yet, so hmr-utils names its dependency on libhmr<N> itself.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR})
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# Stripped binaries, their debug information in <package>-dbgsym .ddebs.
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)

# One package per group; an install rule without a component ("Unspecified")
# joins the dev group.
set(CPACK_COMPONENT_RUNTIME_GROUP runtime)
set(CPACK_COMPONENT_DEV_GROUP dev)
set(CPACK_COMPONENT_UNSPECIFIED_GROUP dev)
set(CPACK_COMPONENT_UTILS_GROUP utils)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)

# Each package's first line is its synopsis; CPack would put
# CPACK_PACKAGE_DESCRIPTION_SUMMARY before it, so that is left unset.
set(hmr_deb_summary "host and accelerator memory registration (fi_mr(3))")
set(hmr_deb_about "hmr registers host and GPU/accelerator memory for RDMA \
and for software transports, behind libfabric's fi_mr(3) calls, without \
linking libfabric.  GPU runtimes (CUDA, ROCr, Level Zero, ...) are loaded at \
run time when present.\n\n")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${hmr_lib_pkg})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "${hmr_deb_summary}\n${hmr_deb_about}\
This package has the shared library.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libhmr-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${hmr_lib_pkg} (= ${hmr_deb_version})")
set(CPACK_DEBIAN_DEV_DESCRIPTION "${hmr_deb_summary} - development files\n\
${hmr_deb_about}This package has the headers, the pkg-config file, the \
CMake package (find_package(hmr)) and the samples as examples.")

set(CPACK_DEBIAN_UTILS_PACKAGE_NAME hmr-utils)
set(CPACK_DEBIAN_UTILS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_UTILS_PACKAGE_DEPENDS "${hmr_lib_pkg} (= ${hmr_deb_version})")
set(CPACK_DEBIAN_UTILS_DESCRIPTION "${hmr_deb_summary} - tools\n\
${hmr_deb_about}This package has hmr_info, which says what registration \
will work on this machine before anything is registered.")

include(CPack)
