# cmake -DSOURCE_DIR=dir -DGIT=git -DOUT=file.cpp -P KaccGitRevision.cmake
# Writes OUT, which defines kacc_perf::git_revision(): the short revision of SOURCE_DIR's
# HEAD, with "-dirty" where tracked files have changes, or "unknown" without git. Run at
# every build, so the perf programs name the revision they were built from without a new
# configure; OUT is rewritten only when the revision changes, so a commit recompiles that
# one file and relinks.
set(revision unknown)
if(GIT)
  execute_process(COMMAND ${GIT} rev-parse --short HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  RESULT_VARIABLE status)
  if(status EQUAL 0 AND head)
    set(revision ${head})
    # --no-optional-locks: a build must not take the index lock from a git command the
    # user runs at the same time.
    execute_process(COMMAND ${GIT} --no-optional-locks status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE changes ERROR_QUIET)
    if(changes)
      string(APPEND revision -dirty)
    endif()
  endif()
endif()
file(WRITE ${OUT}.new
     "// Written by cmake/KaccGitRevision.cmake at build time.\n"
     "namespace kacc_perf {\n"
     "const char* git_revision() { return \"${revision}\"; }\n"
     "}  // namespace kacc_perf\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.new ${OUT})
file(REMOVE ${OUT}.new)
