"""The exception users see when their input or parameters are wrong."""


class DuckrateInputError(ValueError):
    """Bad input: the message names the table, column, row key and value, and what was expected."""
