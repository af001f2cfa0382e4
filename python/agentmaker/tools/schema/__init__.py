"""A Python annotation to JSON Schema, and validated JSON back to the annotated value.

``node`` holds what every kind shares (``Node``, the errors, the process's ``$defs``); ``infer``
is the entry point and maps the typing forms (unions, containers, ``Annotated``); ``scalars``,
``choices`` (``Literal``, ``Enum``), ``objects`` (dataclasses, TypedDicts, NamedTuples) and
``pydantic_models`` map one family of classes each; ``json_values`` is the other way, a Python
value as JSON (schema defaults, tool results)."""
