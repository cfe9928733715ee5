"""A Confluent-compatible Schema Registry."""

__version__ = "0.1.0"
