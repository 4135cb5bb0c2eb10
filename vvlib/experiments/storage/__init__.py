"""Where results live: the results store (store: paths, atomic writes, provenance) and the
training runs and evaluations cached in it (runs)."""
