"""Checks on the simulated answers (generations, MCQ answers): held-out leaks, one generation per question."""
