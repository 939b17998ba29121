# bbnest.cmake - command-line tests of bbnest
bb_cli_test(bbnest_cli bbnest_cli.sh)
bb_cli_test(bbnest_golden bbnest_golden.sh)
bb_cli_test(bbnest_truth bbnest_truth.sh)
bb_cli_test(bbnest_bound bbnest_bound.sh)
bb_cli_test(bbnest_instances bbnest_instances.sh)
bb_cli_test(bbnest_instances_mem bbnest_instances_mem.sh)
bb_cli_test(bbnest_otlp bbnest_otlp.sh)
bb_cli_test(bbnest_onehost bbnest_onehost.sh)
bb_cli_test(bbnest_refine bbnest_refine.sh)
bb_cli_test(bbnest_intervals bbnest_intervals.sh)
bb_cli_test(bbnest_anchor bbnest_anchor.sh)
bb_cli_test(bbnest_cycles bbnest_cycles.sh)
bb_cli_test(bbnest_capacity bbnest_capacity.sh)
bb_cli_test(bbnest_near bbnest_near.sh)
bb_cli_test(bbnest_settle bbnest_settle.sh)
bb_cli_test(bbnest_assumed bbnest_assumed.sh)
bb_cli_test(bbnest_cutoff bbnest_cutoff.sh)
bb_cli_test(bbnest_startcut bbnest_startcut.sh)
bb_cli_test(bbnest_budget bbnest_budget.sh)
bb_cli_test(bbnest_endcut bbnest_endcut.sh)

# bbnest_NAME: bbnest built with the nesting library's DEFINE (a shortcut turned off),
# for a test that compares its output with bbnest's.
get_target_property(_bb_nest_src bb_nesting SOURCES)
list(TRANSFORM _bb_nest_src PREPEND ${PROJECT_SOURCE_DIR}/nesting/)
function(bb_nest_variant name define)
  add_library(bb_nesting_${name} STATIC ${_bb_nest_src})
  target_compile_definitions(bb_nesting_${name} PRIVATE ${define})
  target_include_directories(bb_nesting_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(bb_nesting_${name} PUBLIC bb_viz bb_trace PRIVATE bb_flags ${MATH_LIB})
  add_executable(bbnest_${name} ${PROJECT_SOURCE_DIR}/nesting/bbnest.c)
  target_link_libraries(bbnest_${name} PRIVATE bb_nesting_${name} bb_traceio bb_flags)
endfunction()

# Every child of --global's flow found by the heap's search, none by the direct path:
# the same output (bbnest_direct.sh).
bb_nest_variant(nodirect NEST_DIRECT=0)
bb_cli_test(bbnest_direct bbnest_direct.sh)

# The count intervals' posterior weighing every change, none left out by its bound:
# the same output (bbnest_postbound.sh).
bb_nest_variant(nobound NEST_POST_BOUND=0)
bb_cli_test(bbnest_postbound bbnest_postbound.sh)

# A parent's entry found by a scan of every child's candidates, none by bisection:
# the same output (bbnest_scan.sh).
bb_nest_variant(scan NEST_ENTRY_SCAN=0x7fffffff)
bb_cli_test(bbnest_scan bbnest_scan.sh)
