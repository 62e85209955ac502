# The .deb (CPack): `cpack -G DEB` in a build folder makes warden_<version>_<arch>.deb with
# the binaries (warden-gateway-worker in /usr/libexec/warden), man pages (gzipped), the service
# unit, the examples, the shell completions, /usr/share/doc/warden/copyright and
# /etc/warden/gateway.yaml as a conffile; Depends come from the shared
# libraries the binaries link (dpkg-shlibdeps) plus the programs Warden runs.
# docs/deploy.md; tests/deploy/package.sh installs, uses and purges it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME warden)
set(CPACK_PACKAGE_VENDOR "Warden")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Warden maintainers <root@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
	"sandbox launcher and transparent egress gateway that decides by hostname")
set(CPACK_PACKAGE_DESCRIPTION "warden run starts a program in a sandbox (network namespace, \
nftables, bubblewrap) that reaches only the names its policy allows; warden-gateway is the \
egress gateway, also as one service for every user of a shared host. Every decision is audited.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# what the binaries run rather than link: bubblewrap (bwrap), nftables (the unit's
# ExecStartPre), iproute2, passwd (the postinst's groupadd/useradd)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bubblewrap (>= 0.8), nftables, iproute2, passwd")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
	${PROJECT_SOURCE_DIR}/deploy/debian/postinst ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
	${PROJECT_SOURCE_DIR}/deploy/debian/postrm ${PROJECT_SOURCE_DIR}/deploy/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# Debian's layout: man pages gzip -9n'd in the package (deploy/package_man.cmake, run on the
# staged files); the copyright file and the completions are installed by deploy/CMakeLists.txt
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/deploy/package_man.cmake)
include(CPack)
