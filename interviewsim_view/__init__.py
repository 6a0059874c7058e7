"""The results explorer: a local web application over a data root's Parquet tables
(``interviewsim view``). Kept out of ``interviewsim_core`` because it needs a web framework; core
stays importable from a notebook without one.

``store.py`` (DuckDB, paged reads), ``pages.py`` (what each page shows), ``app.py`` (Starlette routes
and templates), ``labels.py`` (the human labels CSV), ``urls.py`` (permalinks, the open command).
"""
