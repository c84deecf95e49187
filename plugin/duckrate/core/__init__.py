"""The core every layer stands on: input shapes, parameters, the system protocol and its registry, rating scales."""
