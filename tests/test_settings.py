"""The settings object: environment variables, flags winning over them, derived URLs."""

from __future__ import annotations

import pytest

from registry.api.forwarding import advertised_url
from registry.settings import Settings


def test_environment_values_are_converted_and_flags_win() -> None:
    env = {
        "SCHEMA_REGISTRY_PORT": "9000",
        "SCHEMA_REGISTRY_MODE_MUTABILITY": "false",
        "SCHEMA_REGISTRY_POLL_INTERVAL": "0.5",
    }
    settings = Settings.from_env(env, port=9100)
    assert (settings.port, settings.mode_mutability, settings.poll_interval) == (9100, False, 0.5)


@pytest.mark.parametrize("raw", ["eighty", "8.5"])
def test_bad_numbers_name_the_variable(raw: str) -> None:
    with pytest.raises(ValueError, match="SCHEMA_REGISTRY_PORT"):
        Settings.from_env({"SCHEMA_REGISTRY_PORT": raw})


def test_advertised_url_comes_from_settings_or_the_listener() -> None:
    assert advertised_url(Settings(host="10.1.2.3", port=8081)) == "http://10.1.2.3:8081"
    tls = Settings(host="127.0.0.1", port=8443, tls_certfile="server.pem")
    assert advertised_url(tls) == "https://127.0.0.1:8443"
    explicit = Settings.from_env({"SCHEMA_REGISTRY_ADVERTISED_URL": "http://registry-1:8081/"})
    assert advertised_url(explicit) == "http://registry-1:8081"
    assert advertised_url(Settings(host="::1", port=1)) == "http://[::1]:1"
