"""What Dagster adds around the assets, by domain: partitions, sensors, automation, checks.

The assets themselves are not written here: ``factory.py`` builds every one from core's step table
(``interviewsim_core.pipeline.steps``). corpus: personality partitions and the registration sensor;
simulate: checks on generations and MCQ answers (held-out leaks, one row per question); evaluate:
the automation conditions (re-score on judge change) and the invalid-output-rate check.
"""
