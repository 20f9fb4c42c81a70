"""Runs in the web server's sockets: one reader per run per process, the hubs, the run socket,
and the HTML they draw many times a second."""
