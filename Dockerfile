# The registry on its embedded SQLite store: docker run -p 8081:8081 -v registry:/data IMAGE
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md alembic.ini ./
COPY registry ./registry
COPY serdes ./serdes
COPY spark_serdes ./spark_serdes
COPY migrations ./migrations
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --system --uid 10001 --home /data registry && mkdir -p /data && chown registry /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER registry
WORKDIR /data
ENV SCHEMA_REGISTRY_HOST=0.0.0.0 \
    SCHEMA_REGISTRY_PORT=8081 \
    SCHEMA_REGISTRY_STORE=sqlite:////data/schema-registry.db
EXPOSE 8081
HEALTHCHECK --interval=10s --timeout=3s CMD python -c "import urllib.request,os; urllib.request.urlopen('http://127.0.0.1:%s/' % os.environ['SCHEMA_REGISTRY_PORT'])"
ENTRYPOINT ["schema-registry", "serve"]
