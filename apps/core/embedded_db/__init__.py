"""A PostgreSQL database backend that starts the embedded server (apps/core/embedded_postgres.py)
when a process first connects and finds it down: no command has to remember to start it, and
merely loading the settings starts nothing."""
