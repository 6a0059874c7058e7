"""The paper's curation (seed 001, section 2.1 and appendix F): transcripts + manifest -> corpus.

One module per step, pure functions over typed values, no Dagster and no model call inside a step
(model steps *plan* ``PlannedCall``s and *assemble* their results, as ``pipeline/`` does, so the
gateway's cache, plan and budget gate apply):

- ``manifest``    the manifest (CSV or JSON), one row per transcript, checked all at once.
- ``ingest``      plain text / WebVTT / SRT / diarised JSON -> ordered turns; noise removed and counted.
- ``attribution`` each speaker label -> person / interviewer / other: a rule first, the model for the rest.
- ``quality``     is the transcript an interview in which the person answers questions (model).
- ``structuring`` question-answer pairs from attributed turns (the rule; raw span kept).
- ``tagging``     one thematic category per pair, one of eight categories per personality (model).
- ``corpus``      one prepared_input.json per personality + provenance, atomically.
- ``compare``     pairs found / matched / missed / extra against a reference corpus.
- ``review``      human verification decisions (review.csv), honoured by a re-run.
- ``sample_transcripts`` the synthetic sample as raw transcripts in the four formats.
- ``run``         the step functions, and ``curate_with`` composing them (``interviewsim curate``, ``plan``).
- ``step``        the curation as the graph's steps (``transcript_turns`` .. ``prepared_input``), per personality.
- ``stage``       the curation as a run's first stage: the config's switch, model and plan.
"""
