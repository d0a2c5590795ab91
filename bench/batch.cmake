# Aggregation at scale (issue 8): `cmake --build build --target bench-aggregate`
# makes 10,000 reports of 1,000 samples (about 0.6 GB under build/bench-aggregate)
# and times `rpxprof aggregate` on them.
add_custom_target(bench-aggregate
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_aggregate.py
          $<TARGET_FILE:rpxprof_cli> ${CMAKE_BINARY_DIR}/bench-aggregate
  DEPENDS rpxprof_cli rpxprof-demo USES_TERMINAL)
# The HTML report of a 1,000,000-call run (issue 28): `rpxprof report`'s time, the page's
# size and chromium's first paint (bench_html.py; numbers in BENCHMARKS.md).
add_custom_target(bench-html
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_html.py
          $<TARGET_FILE:rpxprof_cli> ${CMAKE_BINARY_DIR}/bench-html 50000,1000000 5
  DEPENDS rpxprof_cli rpxprof-demo USES_TERMINAL)
