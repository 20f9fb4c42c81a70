# One image for the web server, the lab workers, the lab monitor and the one-off migrate job;
# docker-compose.yml picks the command. Runtime requirements only: the test tools live in
# requirements-dev.txt and stay out of the image.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 TEACHLAB_DEBUG=0
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt \
 && useradd --create-home --uid 10001 --user-group teachlab
# The code belongs to root, so the server cannot rewrite it; only var/ is the app's own.
COPY . .
# Production mode insists on a strong key even to collect static files: a throwaway one here.
RUN TEACHLAB_SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')" \
    python manage.py collectstatic --noinput -v 0 \
 && mkdir -p var/logs && chown -R teachlab:teachlab var
USER teachlab
EXPOSE 8000
# /healthz answers before the host check and the HTTPS redirect, so a probe by IP works.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
# scripts/serve: gunicorn with TEACHLAB_WEB_WORKERS uvicorn processes. X-Forwarded-For is
# believed only from TEACHLAB_FORWARDED_ALLOW_IPS (scripts/serve's default: 127.0.0.1). Trusting
# every peer ("*") let a client behind an appending proxy pick the address the throttles count.
ENV TEACHLAB_HOST=0.0.0.0 TEACHLAB_PORT=8000 TEACHLAB_PYTHON=python
CMD ["scripts/serve"]
