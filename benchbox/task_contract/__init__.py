"""The task contract in one place: what a task is and what benchbox checks of what it returns.

- :mod:`.protocol`: :class:`~benchbox.task_contract.protocol.Task` (metadata that does the work, ``evaluate``,
  tidy results), its :class:`~benchbox.task_contract.protocol.MetricSpec`, data files and run context;
- :mod:`.options`: a task's own options (:class:`~benchbox.task_contract.options.TaskOption`, with its flag), the
  settings every task shares, and their resolution once per run;
- :mod:`.metadata`: what benchbox knows of a task by name: the installed task, else what a run recorded, else the
  conventions of old runs' items;
- :mod:`.paired_tests`: each kind of paired test declared once (the item columns it reads, its test, its common
  scale for claims);
- :mod:`.item_checks`: a task's per-item rows checked against the columns its kinds read before a run is written.

``benchbox.tasks`` (with an s) holds the tasks. ``task.py``, ``task_options.py`` and ``paired_tests.py`` at the top
of ``benchbox/`` are the old names of three of these modules, deprecated (docs/plugins.md, "Compatibility").
"""
