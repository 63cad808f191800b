# The version of a LibTorch's headers and of its libraries, read from their files, so that the
# configure step can refuse headers and libraries of two different torch installations.

# OUT := MAJOR.MINOR.PATCH from the headers under INCLUDE_DIR (torch/headeronly/version.h since
# torch 2.8, torch/csrc/api/include/torch/version.h before).
function(hlogym_torch_header_version include_dir out)
  foreach(header IN ITEMS torch/headeronly/version.h torch/csrc/api/include/torch/version.h)
    set(path "${include_dir}/${header}")
    if(NOT EXISTS "${path}")
      continue()
    endif()
    file(STRINGS "${path}" lines REGEX "^#define TORCH_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
    set(parts "")
    foreach(part IN ITEMS MAJOR MINOR PATCH)
      foreach(line IN LISTS lines)
        if(line MATCHES "^#define TORCH_VERSION_${part} +([0-9]+)")
          list(APPEND parts "${CMAKE_MATCH_1}")
        endif()
      endforeach()
    endforeach()
    list(LENGTH parts count)
    if(count EQUAL 3)
      list(JOIN parts "." version)
      set(${out} "${version}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${include_dir} holds no LibTorch headers with a version "
                      "(torch/headeronly/version.h or torch/csrc/api/include/torch/version.h)")
endfunction()

# OUT := the version of the torch whose libraries are in LIBRARY_DIR: the Python package's
# version.py beside lib/ (PyPI's torch), or build-version (a LibTorch archive).
function(hlogym_torch_library_version library_dir out)
  if(NOT EXISTS "${library_dir}/libtorch_cpu.so" OR NOT EXISTS "${library_dir}/libc10.so")
    message(FATAL_ERROR "${library_dir} has no libtorch_cpu.so and libc10.so")
  endif()
  get_filename_component(root "${library_dir}/.." ABSOLUTE)
  if(EXISTS "${root}/version.py")
    file(STRINGS "${root}/version.py" line REGEX "^__version__ *= *")
    if(line MATCHES "['\"]([^'\"]+)['\"]")
      set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
      return()
    endif()
  elseif(EXISTS "${root}/build-version")
    file(STRINGS "${root}/build-version" line LIMIT_COUNT 1)
    set(${out} "${line}" PARENT_SCOPE)
    return()
  endif()
  message(FATAL_ERROR "cannot tell which torch the libraries in ${library_dir} belong to "
                      "(no version.py or build-version in ${root})")
endfunction()

# OUT := the torch version of the LibTorch with headers in INCLUDE_DIR and libraries in
# LIBRARY_DIR; a fatal error when the two belong to different torch versions (a plugin compiled
# against one and linked with the other does not load).
function(hlogym_check_torch include_dir library_dir out)
  hlogym_torch_header_version("${include_dir}" header_version)
  hlogym_torch_library_version("${library_dir}" library_version)
  string(REGEX REPLACE "[+].*$" "" library_base "${library_version}")  # 2.15.0+cu132 -> 2.15.0
  if(NOT header_version STREQUAL library_base)
    message(FATAL_ERROR
      "LibTorch's headers and libraries come from two torch installations:\n"
      "  headers   ${header_version} (${include_dir})\n"
      "  libraries ${library_version} (${library_dir})\n"
      "A plugin built so would not load. Point HLOGYM_TORCH_INCLUDE_DIR and "
      "HLOGYM_TORCH_LIBRARY_DIR at one torch, or unset both to use the venv's (rm -rf build/).")
  endif()
  set(${out} "${library_version}" PARENT_SCOPE)
endfunction()
