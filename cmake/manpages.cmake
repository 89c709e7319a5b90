# Writes man pages from the program's own --help texts (so they cannot
# drift): ompfuse.1 (the command list) and ompfuse-<command>.1 each.
#   cmake -DOMPFUSE=path/to/ompfuse -DOUT=dir -DVERSION=x.y.z -P manpages.cmake
function(roff_page name summary text out)
  string(REPLACE "\\" "\\e" text "${text}")
  # a line starting with . or ' would be a roff request
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  string(TOUPPER "${name}" upper)
  file(WRITE "${out}" ".TH ${upper} 1 \"\" \"ompfuse ${VERSION}\" \"ompfuse manual\"\n"
                      ".SH NAME\n${name} \\- ${summary}\n.SH DESCRIPTION\n.nf\n${text}\n.fi\n"
                      ".SH SEE ALSO\nompfuse(1); the guide: docs/guide.md\n")
endfunction()

execute_process(COMMAND "${OMPFUSE}" --help OUTPUT_VARIABLE main RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OMPFUSE} --help failed")
endif()
file(MAKE_DIRECTORY "${OUT}")
roff_page(ompfuse "complete hardware-counter profiles of OpenMP programs" "${main}"
          "${OUT}/ompfuse.1")
string(REGEX MATCHALL "\n  [a-z]+ +[^\n]+" lines "${main}")
foreach(l ${lines})
  string(REGEX REPLACE "^\n  ([a-z]+) +(.*)$" "\\1" cmd "${l}")
  string(REGEX REPLACE "^\n  ([a-z]+) +(.*)$" "\\2" summary "${l}")
  execute_process(COMMAND "${OMPFUSE}" ${cmd} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${OMPFUSE} ${cmd} --help failed")
  endif()
  roff_page("ompfuse-${cmd}" "${summary}" "${text}" "${OUT}/ompfuse-${cmd}.1")
endforeach()
