"""Judgments, per-personality scores and the leaderboard; re-scored automatically when a judge changes."""
