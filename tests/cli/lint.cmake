# lint.cmake - checks of the sources themselves (nothing built is used)
# func_length: no function over 120 lines in capture/, decoders/, nesting/,
# convolution/ but the exceptions listed in func_length_exceptions.txt.
find_program(BB_PYTHON3 python3)
if(BB_PYTHON3)
  add_test(NAME cli_func_length
    COMMAND ${BB_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/func_length.py --root ${PROJECT_SOURCE_DIR})
endif()
# no_getenv: the modules read no environment variable (settings are flags).
add_test(NAME cli_no_getenv COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/no_getenv.sh ${PROJECT_SOURCE_DIR})
# man_render: every man page renders without a groff warning or a control character.
bb_cli_test(man_render man_render.sh)
