"""Project-wide plumbing every app uses: middleware, socket helpers, database threads,
rate limits, identity, measurements, and the local supervisor (devstack)."""
