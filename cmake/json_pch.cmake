# <nlohmann/json.hpp> parsed by few translation units (issue 35; docs/architecture.md, "The
# build"): compiler/ir/ir.hpp and most of compiler/, runtime/ and tests/ include it, and
# compiled a file at a time 182 of 279 units parse its 25,000 lines each (with the C++
# library headers it brings). One precompiled header, built once and reused by the C++
# targets (PIPEC_JSON_PCH), and with GCC unity batches (PIPEC_UNITY_BUILD). A target's
# objects are compiled with -include of the header, and clang loads cmake_pch.hxx.pch (GCC
# cmake_pch.hxx.gch) instead of parsing it. A precompiled header only serves a compile with
# the same code-generating options, so targets are grouped by their COMPILE_OPTIONS (the
# fuzz targets add -fsanitize=fuzzer) and each group reuses its own. A target opts out with
# DISABLE_PRECOMPILE_HEADERS (fmt-static: position-independent, no JSON).
#
# With clang (the ASan+UBSan and fuzz build, build-san/) every target uses it. With GCC 12
# only the tests do: for what it reads from a .gch, GCC 12 no longer knows that a location is
# in a system header, and its middle-end warnings then report libstdc++'s std::string
# internals inlined into `std::string("...") + "..."` (-Warray-bounds, -Wstringop-overflow:
# false positives that are silent without the .gch, in rules/metrics_cli.cpp and
# compiler/sema/load.cpp among others); diagnostic pragmas around the #include do not survive
# the .gch either. The product's own targets are instead compiled as unity builds with GCC
# (PIPEC_UNITY_BUILD): each target's sources in batches of 16, one translation unit a batch,
# so that a target parses the header once a batch rather than once a source (and a clean
# build takes about half the time: bench/README.md, "Build time"). A source whose file-local
# names would clash with another's in a batch is a compile error, not a silent change: give
# the helper one home, or a name of its own.
option(PIPEC_JSON_PCH "Precompile <nlohmann/json.hpp> once for every target (with GCC: the tests')" ON)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(pipec_unity_default OFF)
else()
  set(pipec_unity_default ON)
endif()
option(PIPEC_UNITY_BUILD "Compile each target's sources in batches of 16 (default with GCC)" ${pipec_unity_default})
if(PIPEC_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE 16)
endif()

function(pipec_targets_under dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    pipec_targets_under(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(pipec_json_pch)
  if(NOT PIPEC_JSON_PCH OR CMAKE_DISABLE_PRECOMPILE_HEADERS)
    return()
  endif()
  pipec_targets_under(${PROJECT_SOURCE_DIR} targets)
  set(groups)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(off ${target} DISABLE_PRECOMPILE_HEADERS)
    if(off OR NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    get_target_property(source_dir ${target} SOURCE_DIR)
    if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND NOT source_dir MATCHES "^${PROJECT_SOURCE_DIR}/tests(/|$)")
      continue()  # GCC: the tests only (above)
    endif()
    get_target_property(options ${target} COMPILE_OPTIONS)
    string(REPLACE ";" "|" key "${options}")
    list(FIND groups "${key}" index)
    if(index EQUAL -1)
      list(LENGTH groups index)
      list(APPEND groups "${key}")
      set(donor pipec_json_pch${index})
      add_library(${donor} OBJECT ${PROJECT_SOURCE_DIR}/cmake/json_pch.cpp)
      set_target_properties(${donor} PROPERTIES COMPILE_OPTIONS "${options}")
      target_link_libraries(${donor} PRIVATE nlohmann_json::nlohmann_json)
      target_precompile_headers(${donor} PRIVATE <nlohmann/json.hpp>)
      if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
        # ccache can only cache what uses a clang PCH without its time stamp (man ccache).
        target_compile_options(${donor} PRIVATE "SHELL:-Xclang -fno-pch-timestamp")
      endif()
    endif()
    target_precompile_headers(${target} REUSE_FROM pipec_json_pch${index})
  endforeach()
endfunction()
