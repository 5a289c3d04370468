# Shared CMake for the language bindings. Included from bindings/python and
# bindings/node, both when they are configured on their own (pip / npm builds)
# and when a parent project has already defined the core libraries.
#
# Standalone mode (no `memtool` target yet): finds the repository root
# (AREEV_SOURCE_DIR, default: two levels above the binding), sets up the
# dependencies the core libraries expect, and adds grainstore + memtool. There,
# libsodium is linked from its static archive and fmt is used header-only.
# SQLite is linked as each module's AREEV_SQLITE_LINK property says: `shared`
# (the default; the Python extension) links the system's libsqlite3.so.0,
# `static` (the Node addon) its static archive. See "One SQLite per process".
#
# Always: defines `areev_bind_core` (bindings/core) and the function
# areev_binding_link_options(target) for extension modules.

if(NOT TARGET memtool)
  if(NOT AREEV_SOURCE_DIR)
    get_filename_component(AREEV_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
  endif()
  if(NOT EXISTS "${AREEV_SOURCE_DIR}/grainstore/CMakeLists.txt")
    message(FATAL_ERROR "areev sources not found at ${AREEV_SOURCE_DIR}; set AREEV_SOURCE_DIR")
  endif()
  set(CMAKE_CXX_STANDARD 20)
  set(CMAKE_CXX_STANDARD_REQUIRED ON)
  set(CMAKE_CXX_EXTENSIONS OFF)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  if(NOT CMAKE_BUILD_TYPE)
    set(CMAKE_BUILD_TYPE Release)
  endif()
  set(AREEV_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  include("${AREEV_SOURCE_DIR}/cmake/StandardSettings.cmake")
  find_package(PkgConfig REQUIRED)
  find_package(nlohmann_json REQUIRED)
  find_package(Threads REQUIRED)

  # One SQLite per process: SQLite tracks the POSIX advisory locks of its
  # connections per process (closing any descriptor of a file drops all the
  # process's locks on it), and only within one copy of its code. A Python
  # program that also opens the store with the sqlite3 module and closes
  # that connection would drop the locks a second, private copy holds, and
  # another process could then delete the WAL under it and lose a write
  # (sqlite.org/howtocorrupt.html, section 2.2). Python's _sqlite3 loads the
  # shared libsqlite3.so.0, so the extension links that one. Node 20 has no
  # SQLite of its own, so the addon is self-contained (static); node:sqlite
  # (Node >= 22.5) and better-sqlite3 are other copies, see docs/bindings.md.
  find_path(_areev_sqlite_inc sqlite3.h REQUIRED)
  find_library(_areev_sqlite_so NAMES sqlite3 REQUIRED)
  find_library(_areev_sqlite_a NAMES libsqlite3.a REQUIRED)
  find_library(_areev_sodium_a NAMES libsodium.a REQUIRED)
  find_library(_areev_z NAMES z)
  # Evaluated for the module being linked (the head target).
  set(_areev_sqlite_lib
    "$<IF:$<STREQUAL:$<TARGET_PROPERTY:AREEV_SQLITE_LINK>,static>,${_areev_sqlite_a},${_areev_sqlite_so}>")
  add_library(PkgConfig::SQLITE3 INTERFACE IMPORTED)
  set_target_properties(PkgConfig::SQLITE3 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_areev_sqlite_inc}"
    INTERFACE_LINK_LIBRARIES "${_areev_sqlite_lib};m;${CMAKE_DL_LIBS};Threads::Threads;$<$<BOOL:${_areev_z}>:${_areev_z}>")
  add_library(PkgConfig::SODIUM INTERFACE IMPORTED)
  set_target_properties(PkgConfig::SODIUM PROPERTIES
    INTERFACE_LINK_LIBRARIES "${_areev_sodium_a};Threads::Threads")
  # fmt header-only: no libfmt.so at run time.
  add_library(fmt::fmt INTERFACE IMPORTED)
  set_target_properties(fmt::fmt PROPERTIES INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1")

  add_subdirectory("${AREEV_SOURCE_DIR}/grainstore" "${CMAKE_BINARY_DIR}/areev-grainstore")
  add_subdirectory("${AREEV_SOURCE_DIR}/memtool" "${CMAKE_BINARY_DIR}/areev-memtool")
endif()

if(NOT TARGET areev_bind_core)
  add_library(areev_bind_core STATIC "${CMAKE_CURRENT_LIST_DIR}/../core/binding_core.cc")
  target_include_directories(areev_bind_core PUBLIC "${CMAKE_CURRENT_LIST_DIR}/../core")
  target_link_libraries(areev_bind_core PUBLIC memtool grainstore PRIVATE areev_settings)
  set_target_properties(areev_bind_core PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()

# Extension modules: export only their entry point, keep static libraries'
# symbols private, and drop shared libraries nothing uses.
function(areev_binding_link_options target)
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    PREFIX "")
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL -Wl,--as-needed)
endfunction()
