"""A Django project with an agent: Django's users, its PostgreSQL database, gunicorn."""
