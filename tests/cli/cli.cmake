# CLI tests: Python scripts that run the real binary (tests/cli/common.py); one CTest
# entry per test class or section (rpx_py_test in tests/CMakeLists.txt). SLOW: entries
# over about 10 s on an idle machine (25 s in a -j2 run on the shared 2-core machine).
# Timing and resident-set truth tests run alone: a concurrent test (a torch
# export, a compile) on a 2-core machine would stretch the busy-waits.
rpx_py_test(cli.run cli/test_run.py SERIAL)
rpx_py_test(cli.inputs cli/test_inputs.py)
rpx_py_test(cli.validation cli/test_validation.py)
rpx_py_test(cli.readme cli/test_readme.py)
rpx_py_test(cli.library cli/test_library.py)
rpx_py_test(cli.cli_docs cli/test_cli_docs.py)
rpx_py_test(cli.cuda cli/test_cuda.py)
rpx_py_test(cli.layers cli/test_layers.py)
rpx_py_test(cli.isolation cli/test_isolation.py)
# Safe by default: stuck models, orphans, sub-20 ms timeouts, stdout, short leaks.
rpx_py_test(cli.safety cli/test_safety.py SLOW SafetyTest.11_leaks_in_short_runs)
# Samples from several processes, intervals, the stopping rule, compare --run.
rpx_py_test(cli.processes cli/test_processes.py)
# Issue 36 inside one run: intervals within the fastest and slowest call, the factors each
# worker varies for itself (its own copy of the inputs, the layout pads) and what it cannot.
rpx_py_test(cli.within_run cli/test_within_run.py)
# Placement: --cpus, --spread, the report's placement (issue 27 §3).
rpx_py_test(cli.placement cli/test_placement.py)
# The session as a unit (issue 36 §1): the session block, comparability (incomparable), aggregate.
rpx_py_test(cli.sessions cli/test_sessions.py)
# compare --run's pairs by CPU against a model 1.5x slower on one CPU and its 5 % slower twin
# (issue 27 acceptance): 20 comparisons of busy-waits, so alone; normal build only.
rpx_py_test(cli.compare_paired cli/test_compare_paired.py SERIAL)
# Where each call ran: call_records and the per-process totals against known models (issue 27).
rpx_py_test(cli.call_records cli/test_call_records.py SERIAL)
# Traces: run --trace, rpxprof trace (Chrome trace-event JSON; issue 28 §2).
rpx_py_test(cli.trace cli/test_trace.py)
# Distinct samples (--inputs repeated or a folder) and --writable-inputs.
rpx_py_test(cli.samples cli/test_samples.py)
# Inputs that vary and the audits (issue 30): inputs make --samples, --audit cache|seed,
# HTTP bodies that vary and --server-metrics (tests/cli/cache_server.py).
rpx_py_test(cli.audits cli/test_audits.py SERIAL)
# The Python target (embedded CPython, numpy-only models); timing truth inside.
rpx_py_test(cli.python cli/test_python.py SERIAL)
# --rate HZ for local targets: paced calls on absolute deadlines.
rpx_py_test(cli.paced cli/test_paced.py SERIAL)
# The HTTP API target against a real server on 127.0.0.1 (tests/cli/http_server.py).
rpx_py_test(cli.http cli/test_http.py SERIAL SLOW HttpRunTest.open_loop_load)
# Load generators (--rate: a stall must show against the schedule) run alone, as the HTTP run.
rpx_py_test(cli.http_load_plot cli/test_load_plot.py SERIAL)
# --http2 against a local HTTP/2 server (tests/cli/h2_server.py, python3-h2): h2c, ALPN, multiplexing.
rpx_py_test(cli.http2 cli/test_http2.py)
# --rate's two engines (plain sockets, curl's multi interface) on the same server.
rpx_py_test(cli.load_engines cli/test_load_engines.py SERIAL SLOW)
# A server that accepts and never answers: warmup failures, --duration and --drain bound the run.
rpx_py_test(cli.dead_server cli/test_dead_server.py SERIAL SLOW)
# The runtime examples (OpenCV DNN, libtorch, Python) on a torchvision network.
rpx_py_test(cli.examples cli/test_examples.py SERIAL SLOW TIMEOUT 1200)
# Model files as targets (issue 39 §1): the host through a stand-in runtime plugin, then
# torchvision exports through every runtime built here (tests/cli/test_model_file.py).
rpx_py_test(cli.model_file cli/test_model_file.py SLOW RealRuntimesTest TIMEOUT 1800)
# The depth-efficiency pipeline's keys in batch reports (its aggregator's stand-in), and aggregate reading the reference's reports.
rpx_py_test(cli.pipeline_format cli/test_pipeline_format.py)
# docs/batch.md's Slurm recipe on a single-node cluster (scripts/slurm-cluster.sh); skipped (77) where it cannot run.
rpx_py_test(cli.slurm cli/test_slurm.py SERIAL SLOW TIMEOUT 300)
# Why a run varied (issue 27 §2): the variance section on real runs; busy-waits, so alone.
rpx_py_test(cli.variance cli/test_variance.py SERIAL)
# --check-outputs: C (NAME_outputs), Python return values and HTTP bodies (issue 30 §3).
rpx_py_test(cli.output_checks cli/test_output_checks.py)
# Measured sections as modules: their keys, an export that does not fit (issue 35 §4).
rpx_py_test(cli.sections cli/test_sections.py)
# The HTML report (rpxprof report, --html) in Debian's chromium, headless; screenshots in test-artifacts/html.
rpx_py_test(cli.html cli/test_html.py SLOW)
# The history page (rpxprof report --history) of tests/fixtures/history/ in chromium too (issue 36 §4).
rpx_py_test(cli.history_page cli/test_history_page.py SLOW)
# The run view's layer part (issue 39 §2) from tests/fixtures/layers/ and from a --layers report
# (unit.test_layer_times writes it), in chromium too.
rpx_py_test(cli.html_layers cli/test_html_layers.py FIXTURES_REQUIRED layer_reports)
# The same on resnet18 run through ONNX Runtime with --layers (skipped without its library).
rpx_py_test(cli.html_layers_ort cli/test_html_layers_ort.py SLOW SERIAL FIXTURES_REQUIRED onnx_models)
# The run options' table read alike by the command line, manifests and Python (issue 35 §2):
# every option accepted or refused by name, bad values and combination rules in the same
# words but the spelling; nothing is measured (a few seconds).
rpx_py_test(cli.options_table cli/test_options_table.py)
# The second hostile round (issue 37): outputs that clash or would replace an input,
# --server-metrics credentials, output names, exit codes and the words of messages (items
# 1-5, 12, 13, 16); signals between processes and during audits, reads past a buffer,
# files that never end (items 6-11, 15; tests/models/hostile_models.c).
rpx_py_test(cli.hostile2 cli/test_hostile2.py)
# rpxprof's own peak memory for the report of a 2-million-call run (issue 37 item 14): slow, alone.
rpx_py_test(cli.report_bound cli/test_report_bound.py SERIAL SLOW TIMEOUT 1500)
# The history (issue 36 §2): run --history, history add/show/prune, two writers, SIGKILL,
# exit 9; the same cases on SQLite and on a PostgreSQL server the test starts and stops.
rpx_py_test(cli.history cli/test_history.py)
# compare --run of two checkouts of one Python module (issue 36 §5): each side imports its own
# file in its own workers; busy-waits of different lengths, so alone.
rpx_py_test(cli.compare_checkouts cli/test_compare_checkouts.py SERIAL)
# The capacity under an SLO (issue 40 §2) against a one-worker queue on 127.0.0.1
# (tests/cli/capacity_server.py), and the client's own send delay: timing truth, so alone.
rpx_py_test(cli.capacity cli/test_capacity.py SERIAL SLOW CapacityTest.one_worker_queue)
# rpxprof sweep (issue 40 §1, §3): scaling exponents of busy-waiting models, the points'
# processes interleaved, --vary batch, the page, refusals, a signal; busy-waits, so alone.
rpx_py_test(cli.sweep cli/test_sweep.py SERIAL)
