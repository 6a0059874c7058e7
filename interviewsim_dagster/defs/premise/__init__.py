"""The two-pass premise-usability judge applied to fact summaries and atomic items."""
