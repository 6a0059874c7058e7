"""Human validation of the judges and the upstream builders: the paper's study protocol (issue 32).

``study``: sampling, storage and the review/adjudication state of a study; ``figures``: the report's
human validation figures computed from it. Pure functions over tables and files; no Dagster.
"""

from .figures import FIGURE_COLUMNS, validation_figures, wilson
from .study import (
    KINDS,
    Label,
    Study,
    Task,
    add_label,
    adjudication_queue,
    create_study,
    labels_csv,
    list_studies,
    load_labels,
    load_study,
    queue_for,
    reviewer_view,
    sample_tasks,
    task_states,
)

__all__ = ["FIGURE_COLUMNS", "KINDS", "Label", "Study", "Task", "add_label", "adjudication_queue", "create_study",
           "labels_csv", "list_studies", "load_labels", "load_study", "queue_for", "reviewer_view", "sample_tasks",
           "task_states", "validation_figures", "wilson"]
