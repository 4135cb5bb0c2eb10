"""The book layer: chapters, their parameters' defaults, the build and its web assets (the package
docstring lists its modules)."""
