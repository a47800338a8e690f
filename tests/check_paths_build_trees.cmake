# cmake/check_paths.cmake leaves out build trees whatever their name, and
# still reports a bad file outside them (issue 33). Builds a throw-away tree
# twice, as a git work tree and as a plain folder (the check's two ways of
# listing files), with CMake build directories named b/, out/ and
# cmake-build-debug/ (what IDEs choose) that hold a CMakeCache.txt and a file
# pointing at the shared folder, as a real build tree does.
#
#   cmake -DCHECK=<cmake/check_paths.cmake> -DWORK=<scratch dir> -P check_paths_build_trees.cmake
cmake_policy(SET CMP0007 NEW)
if(NOT CHECK OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DCHECK=<check_paths.cmake> -DWORK=<dir> -P check_paths_build_trees.cmake")
endif()
set(dotdot "..")
set(bad_line "see ${dotdot}/shared/spec/untold-format.md")  # in pieces, so the check does not flag this file
set(build_dirs b out cmake-build-debug)

# Runs the check on `root`; sets `rc` and `output` in the caller.
function(run_check root)
  execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${root} -P ${CHECK}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(rc ${code} PARENT_SCOPE)
  set(output "${out}${err}" PARENT_SCOPE)
endfunction()

find_program(GIT git)
set(modes plain)
if(GIT)
  list(APPEND modes git)
else()
  message(STATUS "git not found: only the plain-folder listing is tested")
endif()

foreach(mode IN LISTS modes)
  set(root ${WORK}/${mode})
  file(REMOVE_RECURSE ${root})
  file(WRITE ${root}/README.md "a clean file\n")
  foreach(dir IN LISTS build_dirs)
    file(WRITE ${root}/${dir}/CMakeCache.txt "${bad_line}\n")
    file(WRITE ${root}/${dir}/tests/path_check_bad_tree/notes.md "${bad_line}\n")
  endforeach()
  if(mode STREQUAL "git")
    execute_process(COMMAND ${GIT} -C ${root} init -q COMMAND_ERROR_IS_FATAL ANY)
    execute_process(COMMAND ${GIT} -C ${root} add README.md COMMAND_ERROR_IS_FATAL ANY)
  endif()

  # Only the build trees hold bad files: the check passes.
  run_check(${root})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[${mode}] the check reported files of build trees b/, out/, cmake-build-debug/:\n${output}")
  endif()

  # A bad file outside them (tracked in git mode, untracked as well): reported, the build trees still not.
  file(WRITE ${root}/docs/bad.md "${bad_line}\n")
  file(WRITE ${root}/notes/new.md "${bad_line}\n")
  if(mode STREQUAL "git")
    execute_process(COMMAND ${GIT} -C ${root} add docs/bad.md COMMAND_ERROR_IS_FATAL ANY)
  endif()
  run_check(${root})
  if(rc EQUAL 0)
    message(FATAL_ERROR "[${mode}] the check passed with docs/bad.md and notes/new.md:\n${output}")
  endif()
  foreach(expected "docs/bad.md:1: " "notes/new.md:1: ")
    string(FIND "${output}" "${expected}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "[${mode}] '${expected}' is not reported:\n${output}")
    endif()
  endforeach()
  foreach(dir IN LISTS build_dirs)
    if(output MATCHES "(^|[ \n])${dir}/")
      message(FATAL_ERROR "[${mode}] a file of the build tree ${dir}/ is reported:\n${output}")
    endif()
  endforeach()
  message(STATUS "[${mode}] build trees ${build_dirs} left out; docs/bad.md and notes/new.md reported")
endforeach()
