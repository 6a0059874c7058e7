"""What a run will cost, shown in Dagster before anything is called (the ``plan`` asset)."""
