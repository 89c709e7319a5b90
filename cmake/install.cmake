# Installation (issue 16): cmake --install build --prefix P puts
#   P/bin/ompfuse, P/lib/libompfuse.so (the OMPT tool),
#   P/lib/libompfprofile.so + P/include/ompfuse/*.h (profiles: read, write,
#   CSV/JSON/Perfetto/OTF2 export), P/lib/pkgconfig/ompfuse.pc,
#   P/lib/python3.X/dist-packages/ompfuse (the Python reader),
#   P/share/man/man1/ompfuse*.1 (from the --help texts).
# Libraries go to P/lib, not a multiarch directory: `ompfuse run` finds the
# tool as ../lib/libompfuse.so next to itself.
set(OMPF_INSTALL_LIBDIR lib CACHE STRING "library directory below the prefix")

# A shared libompfprofile for programs outside this tree (the tools inside
# link the static one): the profile library plus the exporters.
get_target_property(OMPF_PROFILE_SRCS ompfprofile SOURCES)
add_library(ompfprofile_shared SHARED ${OMPF_PROFILE_SRCS} ${OMPF_EXPORT_SOURCES})
set_target_properties(ompfprofile_shared PROPERTIES OUTPUT_NAME ompfprofile
  VERSION ${PROJECT_VERSION} SOVERSION 0)
target_link_libraries(ompfprofile_shared PRIVATE PkgConfig::ZSTD ZLIB::ZLIB m)
set(OMPF_PC_PRIVATE "-lzstd -lz -lm")
if(OMPF_HAVE_OTF2)
  target_link_libraries(ompfprofile_shared PRIVATE PkgConfig::OTF2)
  set(OMPF_PC_PRIVATE "${OMPF_PC_PRIVATE} -lopen-trace-format2")
endif()
if(NOT OMPF_SANITIZE)
  # every symbol resolved (the sanitizer runtimes come with the program)
  target_link_options(ompfprofile_shared PRIVATE -Wl,-z,defs)
endif()

install(TARGETS ompfuse RUNTIME DESTINATION bin)
install(TARGETS ompfuse_tool ompfprofile_shared LIBRARY DESTINATION ${OMPF_INSTALL_LIBDIR})
install(FILES include/ompfuse/profile.h include/ompfuse/file.h include/ompfuse/csv.h
              include/ompfuse/export.h include/ompfuse/text.h
        DESTINATION include/ompfuse)

# The Python package where Debian's /usr/bin/python3 looks below the prefix
# (P = /usr/local: found without PYTHONPATH).
set(OMPF_PYTHON_VERSION 3)
if(PYTHON3_SYSTEM)
  execute_process(COMMAND ${PYTHON3_SYSTEM} -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE OMPF_PYTHON_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
set(OMPF_PYTHON_DIR lib/python${OMPF_PYTHON_VERSION}/dist-packages CACHE STRING
    "Python package directory below the prefix")
install(DIRECTORY python/ompfuse DESTINATION ${OMPF_PYTHON_DIR}
        PATTERN __pycache__ EXCLUDE)

# Files that name the prefix are written when it is known: at install.
set(OMPF_PC_IN ${CMAKE_CURRENT_SOURCE_DIR}/cmake/ompfuse.pc.in)
install(CODE "
  set(PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(LIBDIR \"${OMPF_INSTALL_LIBDIR}\")
  set(PYDIR \"${OMPF_PYTHON_DIR}\")
  set(VERSION \"${PROJECT_VERSION}\")
  set(PRIVATE_LIBS \"${OMPF_PC_PRIVATE}\")
  set(D \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${OMPF_PC_IN}\" \"\${D}/${OMPF_INSTALL_LIBDIR}/pkgconfig/ompfuse.pc\" @ONLY)
  file(WRITE \"\${D}/${OMPF_PYTHON_DIR}/ompfuse/_install.py\"
       \"# written by cmake --install: the installed program\\nOMPFUSE = '\${CMAKE_INSTALL_PREFIX}/bin/ompfuse'\\n\")
  message(STATUS \"Installing: \${D}/${OMPF_INSTALL_LIBDIR}/pkgconfig/ompfuse.pc\")
")

# Man pages from --help, built with the program.
set(OMPF_MAN_DIR ${CMAKE_BINARY_DIR}/man)
add_custom_command(OUTPUT ${OMPF_MAN_DIR}/ompfuse.1
  COMMAND ${CMAKE_COMMAND} -DOMPFUSE=$<TARGET_FILE:ompfuse> -DOUT=${OMPF_MAN_DIR}
          -DVERSION=${PROJECT_VERSION} -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/manpages.cmake
  DEPENDS ompfuse ${CMAKE_CURRENT_SOURCE_DIR}/cmake/manpages.cmake
  COMMENT "Man pages from ompfuse --help")
add_custom_target(ompfuse_man ALL DEPENDS ${OMPF_MAN_DIR}/ompfuse.1)
install(DIRECTORY ${OMPF_MAN_DIR}/ DESTINATION share/man/man1 FILES_MATCHING PATTERN "*.1")
