"""The cost planner's machinery (``interviewsim_core.plan`` is its public face).

* ``walk``: plans a run personality by personality through the step table's own ``plan`` /
  ``replan`` / ``assemble`` functions, without any model and without holding the corpus;
* ``answers``: the stand-in answers that let a downstream step build its prompts (the cached real
  answer when there is one);
* ``tokens``: prompt tokens per call, memoised per line, and which counts are exact; the expected
  completion tokens of a call;
* ``lines``: a plan's priced lines (``PlanLine``, ``RunPlan``, ``plan_line``), which the curation's planner
  (``curation/plan.py``) builds too: it sits below the step table, which lists the curation's steps;
* ``corpus``: the corpus read one document at a time.
"""
