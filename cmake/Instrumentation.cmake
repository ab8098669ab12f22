# Checked builds: sanitizers (GPULAB_SANITIZE) and libFuzzer coverage (GPULAB_FUZZ).
#
# Both apply to every target of the build, the labs' host code, gpulab and the tests included,
# not to chosen targets: a sanitizer sees only the code it instruments, and a report from
# half-instrumented code is easy to miss. That is why these are directory-wide options where
# everything else in the build is set per target.
#
#   -DGPULAB_SANITIZE=address,undefined  AddressSanitizer and UndefinedBehaviorSanitizer; every
#                                        report ends the process (no recovery)
#   -DGPULAB_FUZZ=ON                     the libFuzzer targets of tests/fuzz (needs clang)
#
# nvcc passes the sanitizer flags to its host compiler, which must then be the C++ compiler
# (-DCMAKE_CUDA_HOST_COMPILER=clang++ with clang): two compilers' sanitizer runtimes do not mix.
set(GPULAB_SANITIZE "" CACHE STRING "Sanitizers for the host code, e.g. address,undefined")
option(GPULAB_FUZZ "Build the libFuzzer targets of tests/fuzz (clang only)" OFF)

if(GPULAB_SANITIZE)
  string(REPLACE "," ";" gpulab_sanitizers "${GPULAB_SANITIZE}")
  set(gpulab_sanitize_flags -fno-sanitize-recover=all -fno-omit-frame-pointer)
  foreach(sanitizer IN LISTS gpulab_sanitizers)
    list(APPEND gpulab_sanitize_flags -fsanitize=${sanitizer})
  endforeach()
  # nvcc's -Xcompiler splits its argument at commas: one flag each.
  list(TRANSFORM gpulab_sanitize_flags PREPEND "-Xcompiler=" OUTPUT_VARIABLE gpulab_cuda_flags)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${gpulab_sanitize_flags}>"
                      "$<$<COMPILE_LANGUAGE:CUDA>:${gpulab_cuda_flags}>")
  add_link_options(${gpulab_sanitize_flags})
  message(STATUS "gpulab: host code built with -fsanitize=${GPULAB_SANITIZE}")
endif()

if(GPULAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GPULAB_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CUDA_HOST_COMPILER=clang++")
  endif()
  # Coverage for the fuzzer in all the C++ code; the fuzz targets add libFuzzer's main.
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>")
endif()
