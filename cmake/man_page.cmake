# Writes the man page: runs `gpulab man` (app/manual.cpp), keeps its output as OUTPUT and a
# gzip-compressed copy as OUTPUT.gz, the form Debian installs man pages in.
#   cmake -DGPULAB=<the gpulab binary> -DOUTPUT=<gpulab.1> -P man_page.cmake
execute_process(COMMAND ${GPULAB} man OUTPUT_FILE ${OUTPUT}.tmp RESULT_VARIABLE result
                ERROR_VARIABLE error)
if(NOT result EQUAL 0)
  file(REMOVE ${OUTPUT}.tmp)
  message(FATAL_ERROR "`${GPULAB} man` failed (${result}): ${error}")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
file(ARCHIVE_CREATE OUTPUT ${OUTPUT}.gz PATHS ${OUTPUT} FORMAT raw COMPRESSION GZip
     COMPRESSION_LEVEL 9)
