"""Commands of ``schema-registry`` for schema repositories and CI: ``check``, ``validate``,
``register``, ``download``, ``config``, ``plan`` and ``apply``.

``registry.cli`` registers them with :func:`add_commands` and runs them with :func:`run`.
"""

from registry.cli_tools.commands import COMMANDS, add_commands, run

__all__ = ["COMMANDS", "add_commands", "run"]
