# One image for web, worker and beat (see docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production

WORKDIR /app

# The CPU build, pinned and installed first: sentence-transformers would otherwise pull the
# default torch with several GB of CUDA packages.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY requirements/ requirements/
RUN pip install -r requirements/prod.txt

COPY . .
RUN useradd --create-home --uid 1000 engram && mkdir -p var && chown engram var
USER engram

EXPOSE 8000
CMD ["python", "manage.py", "serve", "--host", "0.0.0.0", "--no-worker"]
