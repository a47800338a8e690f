# Fails when a file of the repository points outside it: at the shared
# folder that sits beside the clone on the developers' machines, or at an
# absolute machine path. The repository must stand alone (issue 13).
#
#   cmake -DROOT=<dir> -P cmake/check_paths.cmake
#
# Lists files with `git ls-files` (tracked, and untracked but not ignored)
# when ROOT is a git work tree, else every file under ROOT except .git/ and
# build/. Untracked files inside a CMake build tree (a directory holding a
# CMakeCache.txt, whatever its name: b/, out/, cmake-build-debug/) are left
# out: they are generated, with absolute paths, and the build tree holds the
# bad-file fixture of the test that proves this check can fail. The patterns
# are assembled from pieces so this script does not match itself.
cmake_policy(SET CMP0007 NEW)
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<dir> -P check_paths.cmake")
endif()
set(dotdot "..")
set(shared_pattern "${dotdot}/shared")
set(absolute_pattern "(^|[^A-Za-z0-9_.~-])/(work|root|home)/")

find_program(GIT git)
set(tracked)
set(untracked)
if(GIT AND EXISTS "${ROOT}/.git")
  execute_process(COMMAND ${GIT} -C "${ROOT}" ls-files --cached
                  OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
  execute_process(COMMAND ${GIT} -C "${ROOT}" ls-files --others --exclude-standard
                  OUTPUT_VARIABLE listed_untracked RESULT_VARIABLE rc_untracked)
  if(rc EQUAL 0 AND rc_untracked EQUAL 0)
    string(REPLACE "\n" ";" tracked "${listed}")
    string(REPLACE "\n" ";" untracked "${listed_untracked}")
  endif()
endif()
list(FILTER tracked EXCLUDE REGEX "^$")
list(FILTER untracked EXCLUDE REGEX "^$")
if(NOT tracked AND NOT untracked)
  file(GLOB_RECURSE untracked RELATIVE "${ROOT}" "${ROOT}/*")
  list(FILTER untracked EXCLUDE REGEX "^(build|\\.git)/")
endif()

# Build trees below ROOT, found by their CMakeCache.txt.
set(caches ${untracked})
list(FILTER caches INCLUDE REGEX "/CMakeCache\\.txt$")
foreach(cache IN LISTS caches)
  get_filename_component(tree "${cache}" DIRECTORY)
  string(REGEX REPLACE "([][+.*?()^$|\\])" "\\\\\\1" tree_regex "${tree}")
  list(FILTER untracked EXCLUDE REGEX "^${tree_regex}/")
endforeach()
set(files ${tracked} ${untracked})

set(offenders)
foreach(f IN LISTS files)
  if(f STREQUAL "" OR IS_DIRECTORY "${ROOT}/${f}")
    continue()
  endif()
  # Binary files (models, images) cannot hold a path a reader would follow.
  if(f MATCHES "\\.(mdl|ani|pak|pmdl_b|untold|png|jpg|bin|glb|hmesh|ktx2)$" OR f MATCHES "^fuzz/corpus/")
    continue()
  endif()
  file(STRINGS "${ROOT}/${f}" lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(FIND "${line}" "${shared_pattern}" at)
    if(NOT at EQUAL -1 OR line MATCHES "${absolute_pattern}")
      list(APPEND offenders "${f}:${n}: ${line}")
    endif()
  endforeach()
endforeach()

if(offenders)
  list(JOIN offenders "\n  " text)
  message(FATAL_ERROR "files reference paths outside the repository:\n  ${text}")
endif()
list(LENGTH files count)
message(STATUS "path check: ${count} files, none references a path outside the repository")
