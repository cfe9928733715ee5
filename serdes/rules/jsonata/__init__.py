"""The JSONATA rule executor."""

from serdes.rules.jsonata.jsonata_executor import JsonataExecutor

__all__ = ["JsonataExecutor"]
