"""InterviewSim's core: prompt contracts, the LLM gateway, the step table and its runner, metrics, report.

One process-wide setting is made here, before numpy can load OpenBLAS: one BLAS thread
(``OPENBLAS_NUM_THREADS=1`` unless the user set it). Every matrix product of a run is small (a
group's questions against one personality's training questions, the hashing embedder's rows), and
OpenBLAS's worker threads spin between such calls: on a two-core machine that cost the plan 22% of
its CPU (1.07 -> 0.83 ms per planned call, ``benchmarks/bench_plan.py``) and takes cores from the
gateway's event loop during a run. A user who wants BLAS threads sets the variable themselves.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
