# Turns the ptxas -v logs that cmake/ptxas_log.sh left beside the lab objects into the table
# behind labs/harness/ptxas_table.hpp: one row per kernel compiled for ARCH.
#
#   cmake -DOBJECTS=<object>|<object>... -DARCH=sm_90 -DTEMPLATE=<ptxas_table.cpp.in>
#         -DOUTPUT=<ptxas_table.cpp> -P ptxas_table.cmake
#
# ptxas reports, per architecture and per entry function:
#   ptxas info    : Compiling entry function '<mangled>' for 'sm_90'
#   ptxas info    : Function properties for <mangled>
#       256 bytes stack frame, 120 bytes spill stores, 120 bytes spill loads
#   ptxas info    : Used 40 registers, used 0 barriers, ...
# Device functions that were not inlined get "Function properties" of their own, outside any
# entry; they are not kernels and are left out.

string(REPLACE "|" ";" objects "${OBJECTS}")

set(names "")
set(cuda_objects 0)
foreach(obj IN LISTS objects)
  if(NOT obj MATCHES "\\.cu\\.o(bj)?$")
    continue()  # a C++ object: ptxas never saw it
  endif()
  math(EXPR cuda_objects "${cuda_objects} + 1")
  if(NOT EXISTS "${obj}.ptxas")
    message(FATAL_ERROR "No ptxas log beside ${obj}: it was compiled without cmake/ptxas_log.sh "
                        "as its CUDA compiler launcher.")
  endif()
  file(STRINGS "${obj}.ptxas" lines)
  set(entry "")
  set(arch "")
  set(properties_of "")
  set(frame "")
  foreach(line IN LISTS lines)
    if(line MATCHES "Compiling entry function '([^']+)' for '([^']+)'")
      set(entry "${CMAKE_MATCH_1}")
      set(arch "${CMAKE_MATCH_2}")
      set(frame "")
    elseif(line MATCHES "Function properties for (.+)$")
      set(properties_of "${CMAKE_MATCH_1}")
    elseif(line MATCHES "([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads")
      if(properties_of STREQUAL entry)
        set(frame "${CMAKE_MATCH_1}, ${CMAKE_MATCH_2}, ${CMAKE_MATCH_3}")
      endif()
    elseif(line MATCHES "Used ([0-9]+) registers")
      # A template kernel instantiated by several labs has one name and one body: first wins.
      if(entry AND arch STREQUAL ARCH AND NOT frame STREQUAL "" AND NOT DEFINED row_${entry})
        list(APPEND names "${entry}")
        set(row_${entry} "{${CMAKE_MATCH_1}, ${frame}}")
      endif()
      set(entry "")
    endif()
  endforeach()
endforeach()

if(cuda_objects GREATER 0 AND names STREQUAL "")
  message(WARNING "ptxas reported no ${ARCH} kernels for the labs: spill and stack frame figures "
                  "will be missing from reports.")
endif()

# Sorted so that the generated file does not change with the order of the objects.
list(SORT names)
set(PTXAS_ARCH "${ARCH}")
set(PTXAS_ROWS "")
foreach(name IN LISTS names)
  string(APPEND PTXAS_ROWS "      {\"${name}\", ${row_${name}}},\n")
endforeach()
# Rewritten only when the table changes, so that a rebuilt C++ lab object does not recompile and
# relink everything that links the table. (A rebuilt CUDA object does change it: nvcc names an
# anonymous namespace anew on every compile, consistently within that compile.)
configure_file("${TEMPLATE}" "${OUTPUT}" @ONLY)
