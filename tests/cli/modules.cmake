# modules.cmake - tests of the code's own structure, from the built objects
# No call circle between the files of one module folder (nm on the object files).
# BB_CIRCLE_STRICT lists the folders whose circles fail the test ("all": every
# one); the others print theirs as warnings.
set(BB_CIRCLE_STRICT "all" CACHE STRING
  "module folders where a call circle between files fails cli_no_import_circle ('all': every one)")
bb_cli_test(no_import_circle no_import_circle.sh)
set_property(TEST cli_no_import_circle APPEND PROPERTY ENVIRONMENT
  "BB_CIRCLE_STRICT=${BB_CIRCLE_STRICT}")
