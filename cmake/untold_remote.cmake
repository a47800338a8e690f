# untold::remote - the optional remote-streaming part (docs/remote.md):
# HTTPS downloader, persistent disk cache, byte-range tiles, tile manifest.
# Header-only like the core; it adds libcurl, nlohmann-json and threads, so it
# is its own target and the core stays light. Default ON for the top-level
# project when libcurl and nlohmann-json are found; POSIX only.
set(UNTOLD_REMOTE_DEFAULT OFF)
if(UNTOLD_TOP_LEVEL AND NOT WIN32)
  find_package(CURL QUIET)
  find_package(nlohmann_json 3 QUIET)
  if(CURL_FOUND AND nlohmann_json_FOUND)
    set(UNTOLD_REMOTE_DEFAULT ON)
  endif()
endif()
option(UNTOLD_BUILD_REMOTE "Build untold::remote (libcurl HTTPS downloader, disk cache, range streaming)"
       ${UNTOLD_REMOTE_DEFAULT})

if(UNTOLD_BUILD_REMOTE)
  find_package(CURL REQUIRED)
  find_package(nlohmann_json 3 REQUIRED)
  find_package(Threads REQUIRED)
  add_library(untold_remote INTERFACE)
  add_library(untold::remote ALIAS untold_remote)
  set_target_properties(untold_remote PROPERTIES EXPORT_NAME remote)
  target_link_libraries(untold_remote INTERFACE untold CURL::libcurl nlohmann_json::nlohmann_json Threads::Threads)
endif()
