# One image for web, worker and beat (see docker-compose.yml).

# The graph page's JavaScript (frontend/, from the npm registry) is bundled in a Node stage;
# only the bundle reaches the image.
FROM node:20-slim AS frontend
WORKDIR /build/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY frontend/ ./
RUN node build.mjs

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production

WORKDIR /app

# The CPU build, pinned as in requirements/constraints.txt and installed first: sentence-transformers
# would otherwise pull the default torch with several GB of CUDA packages.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY requirements/ requirements/
RUN pip install -c requirements/constraints.txt -r requirements/prod.txt

# Notebook cells (Thoughtbox) run with node, which the image leaves out unless built with
# --build-arg NOTEBOOKS=true; execution also needs ENGRAM_NOTEBOOK_EXECUTION=true (see README, "Notebooks").
ARG NOTEBOOKS=false
RUN if [ "$NOTEBOOKS" = "true" ]; then \
      apt-get update && apt-get install -y --no-install-recommends nodejs npm util-linux \
      && rm -rf /var/lib/apt/lists/*; \
    fi

COPY . .
COPY --from=frontend /build/static/graph/ static/graph/
COPY --from=frontend /build/frontend/node_modules/@esbuild/ frontend/node_modules/@esbuild/
COPY --from=frontend /build/frontend/node_modules/esbuild/ frontend/node_modules/esbuild/
ENV ENGRAM_NOTEBOOK_ESBUILD=/app/frontend/node_modules/esbuild/bin/esbuild
RUN useradd --create-home --uid 1000 engram && mkdir -p var && chown engram var
USER engram

EXPOSE 8000
CMD ["python", "manage.py", "serve", "--host", "0.0.0.0", "--no-worker"]
