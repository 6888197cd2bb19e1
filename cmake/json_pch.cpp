// The source of the targets that build the precompiled header <nlohmann/json.hpp> which
// every other target reuses (cmake/json_pch.cmake); CMake needs one source to build it with.
