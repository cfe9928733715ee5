# The registry: docker build -t pyschemaregistry . && docker run -p 8081:8081 -v registry:/data pyschemaregistry
# Configuration: SCHEMA_REGISTRY_* environment variables (README, "Running in production").
# Build stage: install the project and its dependencies into a virtualenv; only that
# virtualenv is copied into the runtime image (no wheels, pip caches or build tools left in
# any layer of it).
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/registry
WORKDIR /src
COPY pyproject.toml README.md ./
COPY registry ./registry
COPY serdes ./serdes
COPY spark_serdes ./spark_serdes
COPY migrations ./migrations
RUN /opt/registry/bin/pip install . \
    && find /opt/registry -name '__pycache__' -prune -exec rm -rf {} + \
    && /opt/registry/bin/python -m compileall -q /opt/registry/lib

FROM python:3.11-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin registry \
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
