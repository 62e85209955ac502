# package_man.cmake - CPack's pre-build script (deploy/package.cmake): the man pages staged for
# the .deb are compressed as Debian's policy asks (gzip -9n: best, no name or time stamp, so
# the package is the same from one build to the next). A plain `cmake --install` keeps them
# as they are.
file(GLOB_RECURSE wd_man LIST_DIRECTORIES false
	"${CPACK_TEMPORARY_DIRECTORY}/*/share/man/man*/*.[0-9]")
if(NOT wd_man)
	message(FATAL_ERROR "package_man.cmake: no man page staged under ${CPACK_TEMPORARY_DIRECTORY}")
endif()
foreach(page ${wd_man})
	execute_process(COMMAND gzip -9nf "${page}" RESULT_VARIABLE wd_rc)
	if(NOT wd_rc EQUAL 0)
		message(FATAL_ERROR "package_man.cmake: gzip -9n ${page} failed (${wd_rc})")
	endif()
endforeach()
