# `cmake --install BUILD [--prefix P]` and `cpack -G DEB` (README.md, "Installing").
#   bin/pipec, bin/pipec-launcher            the commands
#   libexec/pipec/pipec-kfp                  upload/run/completion, exec'd by pipec
#   share/pipec/                             RBAC Role and the launcher's Dockerfile
#   share/doc/pipec/                         README, docs/, examples/
#   share/man/man1, man7                     pipec(1), pipec-launcher(1), pipec-language(7)
#   share/bash-completion/completions/pipec, share/zsh/vendor-completions/_pipec
# The man pages and completion scripts are generated at build time from the programs'
# own --help and command registry (help2man, pandoc): they cannot drift from the code.

install(TARGETS pipec pipec-launcher RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS pipec-kfp RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/pipec)
install(FILES runtime/deploy/rbac.yaml runtime/Dockerfile DESTINATION ${CMAKE_INSTALL_DATADIR}/pipec)
install(FILES README.md packaging/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")
install(DIRECTORY dsl-examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples FILES_MATCHING PATTERN "*.pipe")

set(PIPEC_GEN_DIR ${CMAKE_BINARY_DIR}/generated)
set(pipec_kfp_exe $<TARGET_FILE:pipec-kfp>)

# Completion: `pipec-kfp` holds every command's options (pipec hands `completion` to it).
add_custom_command(
  OUTPUT ${PIPEC_GEN_DIR}/completion/pipec ${PIPEC_GEN_DIR}/completion/_pipec
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PIPEC_GEN_DIR}/completion
  COMMAND sh -c "\"$1\" completion bash > \"$2\" && \"$1\" completion zsh > \"$3\"" sh
          ${pipec_kfp_exe} ${PIPEC_GEN_DIR}/completion/pipec ${PIPEC_GEN_DIR}/completion/_pipec
  DEPENDS pipec-kfp
  COMMENT "Generating bash and zsh completion" VERBATIM)
set(PIPEC_GENERATED_FILES ${PIPEC_GEN_DIR}/completion/pipec ${PIPEC_GEN_DIR}/completion/_pipec)
install(FILES ${PIPEC_GEN_DIR}/completion/pipec DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${PIPEC_GEN_DIR}/completion/_pipec DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

# The changelog of a native package, compressed as policy wants (gzip -n: no time stamp).
add_custom_command(
  OUTPUT ${PIPEC_GEN_DIR}/changelog.gz
  COMMAND sh -c "gzip -9n < \"$1\" > \"$2\"" sh
          ${CMAKE_SOURCE_DIR}/packaging/debian/changelog ${PIPEC_GEN_DIR}/changelog.gz
  DEPENDS ${CMAKE_SOURCE_DIR}/packaging/debian/changelog VERBATIM)
list(APPEND PIPEC_GENERATED_FILES ${PIPEC_GEN_DIR}/changelog.gz)
install(FILES ${PIPEC_GEN_DIR}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

find_program(PIPEC_HELP2MAN help2man)
find_program(PIPEC_PANDOC pandoc)
if(PIPEC_HELP2MAN AND PIPEC_PANDOC)
  set(man ${PIPEC_GEN_DIR}/man)
  # pipec(1) from `pipec-kfp --help-all` (every command's options; its --version names pipec).
  add_custom_command(
    OUTPUT ${man}/pipec.1.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man}
    COMMAND ${PIPEC_HELP2MAN} --no-info --no-discard-stderr --help-option=--help-all
            "--name=compile typed ML pipelines to Kubeflow Pipelines and Argo Workflows"
            --include=${CMAKE_SOURCE_DIR}/packaging/man/pipec.h2m
            --output=${man}/pipec.1 ${pipec_kfp_exe}
    COMMAND sh -c "gzip -9nf \"$1\"" sh ${man}/pipec.1
    DEPENDS pipec-kfp ${CMAKE_SOURCE_DIR}/packaging/man/pipec.h2m
    COMMENT "Generating pipec(1)" VERBATIM)
  add_custom_command(
    OUTPUT ${man}/pipec-launcher.1.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man}
    COMMAND ${PIPEC_HELP2MAN} --no-info --no-discard-stderr --version-string=${PROJECT_VERSION}
            "--name=run a Kubeflow training job from a pipeline step"
            --include=${CMAKE_SOURCE_DIR}/packaging/man/pipec-launcher.h2m
            --output=${man}/pipec-launcher.1 $<TARGET_FILE:pipec-launcher>
    COMMAND sh -c "gzip -9nf \"$1\"" sh ${man}/pipec-launcher.1
    DEPENDS pipec-launcher ${CMAKE_SOURCE_DIR}/packaging/man/pipec-launcher.h2m
    COMMENT "Generating pipec-launcher(1)" VERBATIM)
  # pipec-language(7): the language reference itself.
  add_custom_command(
    OUTPUT ${man}/pipec-language.7.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man}
    COMMAND ${PIPEC_PANDOC} --standalone --from=gfm --to=man
            --metadata=title:PIPEC-LANGUAGE --metadata=section:7
            "--metadata=header:pipec ${PROJECT_VERSION}" --metadata=date:
            --include-before-body=${CMAKE_SOURCE_DIR}/packaging/man/pipec-language.name
            --output=${man}/pipec-language.7 ${CMAKE_SOURCE_DIR}/docs/language.md
    COMMAND sh -c "gzip -9nf \"$1\"" sh ${man}/pipec-language.7
    DEPENDS ${CMAKE_SOURCE_DIR}/docs/language.md ${CMAKE_SOURCE_DIR}/packaging/man/pipec-language.name
    COMMENT "Generating pipec-language(7)" VERBATIM)
  list(APPEND PIPEC_GENERATED_FILES ${man}/pipec.1.gz ${man}/pipec-launcher.1.gz ${man}/pipec-language.7.gz)
  install(FILES ${man}/pipec.1.gz ${man}/pipec-launcher.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${man}/pipec-language.7.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man7)
else()
  message(STATUS "help2man or pandoc not found: no man pages (scripts/setup.sh installs both)")
endif()
add_custom_target(pipec_generated ALL DEPENDS ${PIPEC_GENERATED_FILES})

# The Debian package: `cpack -G DEB` in the build directory (or --config BUILD/CPackConfig.cmake).
set(CPACK_PACKAGE_NAME pipec)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "pipec developers <pipec-dev@lists.pipec.dev>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "typed pipeline language compiler for Kubeflow Pipelines")
# The long description; CPack puts the summary above it as the synopsis line.
set(CPACK_PACKAGE_DESCRIPTION "pipec compiles a small typed language for machine-learning pipelines
(typed parameters, container and distributed training steps, conditions,
loops, exit handlers) into Argo Workflows packaged for Kubeflow Pipelines,
uploads them and starts runs with type-checked parameter overrides.
pipec-launcher runs the training jobs (MPIJob, TFJob, PyTorchJob) inside
the pipeline's pods.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://pipec.dev")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Depends computed from the binaries by dpkg-shlibdeps, not listed by hand.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# `pipec run --local` sandboxes its steps with bwrap (docs/local.md); a Python op's function
# is checked by python3 (docs/language.md, "Python function ops": without it, an error).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bubblewrap, python3")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_GENERATOR DEB)
include(CPack)
