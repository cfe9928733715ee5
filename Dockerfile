# The registry: docker build -t pyschemaregistry . && docker run -p 8081:8081 -v registry:/data pyschemaregistry
# Configuration: SCHEMA_REGISTRY_* environment variables (README, "Running in production").
# Base: Debian bookworm (the public debian:bookworm-slim image, or the same made locally by
# scripts/container) with Debian's Python 3.11. Built and run without a Docker engine by
# tests/test_container_image.py (buildah + podman).
#
# Build stage: install the project and its dependencies into a virtualenv; only that
# virtualenv is copied into the runtime image (no wheels, pip, pip caches or build tools left
# in any layer of it).
FROM debian:bookworm-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/registry
WORKDIR /src
# the dependencies first, in their own layer: rebuilt only when pyproject.toml changes
COPY pyproject.toml ./
# (serdes' dependencies and the server extra's: a plain `pip install pyschemaregistry` is serdes alone)
RUN python3 -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; print(*p["dependencies"], *p["optional-dependencies"]["server"], sep="\n")' >requirements.txt \
    && /opt/registry/bin/pip install -r requirements.txt
COPY README.md ./
COPY registry ./registry
COPY serdes ./serdes
COPY spark_serdes ./spark_serdes
COPY migrations ./migrations
RUN /opt/registry/bin/pip install --no-deps . \
    && /opt/registry/bin/pip uninstall -y pip setuptools \
    && find /opt/registry -name '__pycache__' -prune -exec rm -rf {} + \
    && /opt/registry/bin/python -m compileall -q /opt/registry/lib

FROM debian:bookworm-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates python3 \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log \
    && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin registry \
    && mkdir /data && chown registry:registry /data
COPY --from=build /opt/registry /opt/registry
ENV PATH=/opt/registry/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    SCHEMA_REGISTRY_HOST=0.0.0.0 \
    SCHEMA_REGISTRY_PORT=8081 \
    SCHEMA_REGISTRY_STORE=sqlite:////data/schema-registry.db \
    SCHEMA_REGISTRY_LOG_FORMAT=json \
    SCHEMA_REGISTRY_SHUTDOWN_TIMEOUT=8
USER 10001:10001
WORKDIR /data
VOLUME /data
EXPOSE 8081
# /live needs no credentials and answers while the store is replayed; HTTPS when TLS is on
# (the probe trusts the server's own certificate on loopback without verifying it)
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 CMD ["python", "-c", "import os,ssl,urllib.request as u; tls=bool(os.environ.get('SCHEMA_REGISTRY_TLS_CERTFILE')); u.urlopen(('https' if tls else 'http')+'://127.0.0.1:'+os.environ['SCHEMA_REGISTRY_PORT']+'/live', timeout=2, context=ssl._create_unverified_context() if tls else None)"]
ENTRYPOINT ["schema-registry"]
CMD ["serve"]
