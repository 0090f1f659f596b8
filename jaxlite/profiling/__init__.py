"""The machinery of `jaxlite.profiler`: trace captures (`capture`), their Chrome trace
events (`trace_events`), summary tables (`summary`) and memory profiles (`memory`)."""
