# Finds gpulab's dependencies; a missing one stops configuration with the package to install.

# gpulab_require(<find_package name> <Debian/Ubuntu package> [find_package args...])
macro(gpulab_require name debian_package)
  find_package(${name} ${ARGN} QUIET)
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR
      "gpulab needs ${name}: install the Debian/Ubuntu package '${debian_package}' "
      "(apt-get install ${debian_package}) or point CMAKE_PREFIX_PATH at an installation.")
  endif()
endmacro()

find_package(CUDAToolkit 13.0 REQUIRED)
# Their headers are needed to build, and where the libraries are is recorded for run time; they
# are not linked (CMakeLists.txt, gpulab_lazy_library).
if(NOT TARGET CUDA::cupti)
  message(FATAL_ERROR "gpulab needs CUPTI (libcupti) from the CUDA toolkit; it was not found "
                      "under ${CUDAToolkit_LIBRARY_ROOT}.")
endif()
if(NOT TARGET CUDA::cublas)
  message(FATAL_ERROR "gpulab needs cuBLAS (libcublas) from the CUDA toolkit; it was not found "
                      "under ${CUDAToolkit_LIBRARY_ROOT}.")
endif()

gpulab_require(fmt libfmt-dev)
gpulab_require(nlohmann_json nlohmann-json3-dev 3.10)
gpulab_require(CLI11 libcli11-dev 2.1)
if(GPULAB_BUILD_TESTS)
  gpulab_require(GTest libgtest-dev)
endif()
