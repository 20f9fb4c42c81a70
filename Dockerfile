# One image for web, lab workers and the lab monitor; docker-compose.yml picks the command.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
EXPOSE 8000
CMD ["sh", "-c", "python manage.py migrate --noinput && python manage.py synclessons && daphne -b 0.0.0.0 -p 8000 teachlab.asgi:application"]
