import subprocess
import sys


def test_pipeline_imports_neither_dagster_nor_litellm():
    code = ("import sys, interviewsim_core.pipeline as p\n"
            "import interviewsim_core.pipeline.runner, interviewsim_core.pipeline.steps, interviewsim_core.factories\n"
            "p.run_evaluation; p.heldout_leaks; p.EvalConfig\n"
            "bad = [m for m in ('dagster', 'litellm') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
