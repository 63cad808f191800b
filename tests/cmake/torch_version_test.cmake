# cmake/torch_version.cmake: one torch's headers and libraries pass, two torches' are refused
# with a message naming both. Run in script mode: cmake -DSOURCE_DIR=... -DWORK_DIR=... -P THIS
include("${SOURCE_DIR}/cmake/torch_version.cmake")

# A LibTorch laid out as PyPI's torch package is: include/, lib/ and version.py.
function(make_torch root header_version package_version)
  string(REPLACE "." ";" parts "${header_version}")
  list(GET parts 0 major)
  list(GET parts 1 minor)
  list(GET parts 2 patch)
  file(WRITE "${root}/include/torch/headeronly/version.h"
       "#define TORCH_VERSION_MAJOR ${major}\n#define TORCH_VERSION_MINOR ${minor}\n"
       "#define TORCH_VERSION_PATCH ${patch}\n")
  file(WRITE "${root}/lib/libtorch_cpu.so" "")
  file(WRITE "${root}/lib/libc10.so" "")
  file(WRITE "${root}/version.py" "__version__ = '${package_version}'\n")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
make_torch("${WORK_DIR}/new" 2.15.0 2.15.0+cu132)
make_torch("${WORK_DIR}/old" 1.13.0 1.13.0)

hlogym_check_torch("${WORK_DIR}/new/include" "${WORK_DIR}/new/lib" version)
if(NOT version STREQUAL "2.15.0+cu132")
  message(FATAL_ERROR "one torch: got version '${version}', not 2.15.0+cu132")
endif()

# The refusal is a fatal error: check it in a child cmake, which must fail and say why.
file(WRITE "${WORK_DIR}/mixed.cmake"
     "include(\"${SOURCE_DIR}/cmake/torch_version.cmake\")\n"
     "hlogym_check_torch(\"${WORK_DIR}/new/include\" \"${WORK_DIR}/old/lib\" v)\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -P "${WORK_DIR}/mixed.cmake"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "headers of torch 2.15.0 with libraries of torch 1.13.0 were accepted")
endif()
foreach(expected IN ITEMS "two torch installations" "headers   2.15.0" "libraries 1.13.0")
  string(FIND "${err}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the refusal does not say '${expected}':\n${err}")
  endif()
endforeach()
message(STATUS "torch_version_test: one torch accepted, two refused")
