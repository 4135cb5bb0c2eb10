"""The experiment layer: cached runs, results, tables (the package docstring lists its modules)."""
