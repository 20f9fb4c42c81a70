"""The run's event log: written by the workers, read by every process, stored and settled by
the monitor process (`manage.py lab monitor`)."""
