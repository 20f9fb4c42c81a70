"""The workshop's room fixtures, for the socket probes here."""

from tests.workshop.conftest import instructor, room  # noqa: F401
