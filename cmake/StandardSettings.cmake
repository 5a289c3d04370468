# One INTERFACE target carries the warning and sanitizer flags; every target links it
# PRIVATE (the pattern of ccache's standard_settings).
option(ENABLE_ASAN "Build with AddressSanitizer" OFF)
option(ENABLE_UBSAN "Build with UndefinedBehaviorSanitizer" OFF)
option(ENABLE_TSAN "Build with ThreadSanitizer" OFF)
option(AREEV_WERROR "Treat warnings as errors" ON)

add_library(areev_settings INTERFACE)
# Designated initializers that leave defaulted members out are intended.
target_compile_options(areev_settings INTERFACE -Wall -Wextra -Wno-missing-field-initializers)
if(AREEV_WERROR)
  target_compile_options(areev_settings INTERFACE -Werror)
endif()
# GCC 12 at -O3 (CMAKE_BUILD_TYPE=Release, Debian 12's GCC 12.2) warns that
# std::string's own inlined memcpy may overlap in plain
# `"a" + std::to_string(i)` (GCC bug 105329); with -Werror that fails the
# build.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(areev_settings INTERFACE -Wno-restrict)
endif()
target_compile_definitions(areev_settings INTERFACE $<$<CONFIG:Debug>:_GLIBCXX_ASSERTIONS>)

set(_areev_san "")
if(ENABLE_ASAN)
  list(APPEND _areev_san address)
endif()
if(ENABLE_UBSAN)
  list(APPEND _areev_san undefined)
endif()
if(ENABLE_TSAN)
  list(APPEND _areev_san thread)
endif()
if(_areev_san)
  list(JOIN _areev_san "," _areev_san_list)
  target_compile_options(areev_settings INTERFACE -fsanitize=${_areev_san_list} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(areev_settings INTERFACE -fsanitize=${_areev_san_list})
endif()
