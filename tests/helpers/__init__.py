"""Helpers shared by the test modules (``tests`` is on pytest's ``pythonpath``): ``from helpers.x import ...``."""
