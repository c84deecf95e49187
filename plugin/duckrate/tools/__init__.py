"""Tools over the library: the numba warm-up, the generated reference and dbt files."""
