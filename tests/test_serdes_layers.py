"""serdes' import structure, read from its source: no import cycle between its modules (a real
client does not know its mock), nothing of the ``registry`` server, and of confluent-kafka only
the Kafka client's own surface (``confluent_kafka``, ``confluent_kafka.serialization``), never
``confluent_kafka.schema_registry`` (which needs confluent-kafka's ``[schemaregistry]`` extra)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "serdes"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module ``path`` imports (at top level or inside functions), absolute names."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            # ``from serdes import wire``: the submodule, when there is one
            out.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def test_no_import_cycle_in_serdes() -> None:
    imports = _graph()
    graph = {m: deps & set(imports) for m, deps in imports.items()}
    # Tarjan's strongly connected components: any with two modules or more is a cycle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in graph[node]:
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert cycles == []


def test_real_clients_do_not_import_their_mocks() -> None:
    graph = _graph()
    assert "serdes.mock_client" not in graph["serdes.client"]
    assert "serdes.encryption.mock_dek_client" not in graph["serdes.encryption.dek_client"]


def test_serdes_imports_only_the_kafka_clients_surface_and_nothing_of_the_server() -> None:
    offending = {
        module: sorted(
            dep
            for dep in deps
            if dep == "registry"
            or dep.startswith("registry.")
            or dep == "spark_serdes"
            or (
                dep.startswith("confluent_kafka")
                and dep not in ("confluent_kafka", "confluent_kafka.serialization")
            )
        )
        for module, deps in _graph().items()
    }
    assert {m: d for m, d in offending.items() if d} == {}


def test_mock_urls_still_choose_the_in_memory_clients() -> None:
    from serdes import SchemaRegistryClient
    from serdes.encryption import DekRegistryClient
    from serdes.encryption.mock_dek_client import MockDekRegistryClient
    from serdes.mock_client import MockSchemaRegistryClient

    assert type(SchemaRegistryClient({"url": "mock://a"})) is MockSchemaRegistryClient
    assert type(SchemaRegistryClient.new_client({"url": "mock://a"})) is MockSchemaRegistryClient
    assert type(DekRegistryClient({"url": "mock://"})) is MockDekRegistryClient
    assert type(DekRegistryClient.new_client({})) is MockDekRegistryClient
    assert type(SchemaRegistryClient({"url": "http://127.0.0.1:1"})) is SchemaRegistryClient
    assert type(DekRegistryClient({"url": "http://127.0.0.1:1"})) is DekRegistryClient
