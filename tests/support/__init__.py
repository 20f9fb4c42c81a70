"""What the tests start and talk to, in one place: the Redis servers (`redis_server`), the web
server processes (`servers`), the HTTP client with a cookie jar (`http`), and the port helpers
they share (`ports`). `tests/stack.py` (the plugin) and the drills build on these."""
