# CLI tests for `rpxprof batch`, `rpxprof aggregate` and `rpxprof plot` (tests/cli/test_batch.py).
rpx_py_test(cli.batch cli/test_batch.py SLOW TIMEOUT 600)
# What plot, aggregate and batch may replace, and batch's jobs dying with it (tests/cli/test_outputs.py).
rpx_py_test(cli.outputs cli/test_outputs.py TIMEOUT 600)
# `rpxprof compare`: intervals against scipy, verdicts, refusals, folders with Holm.
rpx_py_test(cli.compare cli/test_compare.py)
# aggregate's intervals (CSV, Markdown, figures) against numpy/scipy; processes in the same-work check.
rpx_py_test(cli.aggregate_ci cli/test_aggregate_ci.py TIMEOUT 600)
