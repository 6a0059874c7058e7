"""Domain folders, each with the same file set (assets, partitions, checks, sensors, automation as needed).

corpus: personality partitions and the held-out split; references: artefacts built from held-out
answers (fact summary, atomic and MCQ items, reference Big Five); simulate: generations;
evaluate: judgments, per-personality scores and the leaderboard; premise: the premise judge;
report: the report asset (added by the report work, merged by ``definitions.py``).
"""
