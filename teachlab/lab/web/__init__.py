"""Runs in the web server's HTTP side: the lab's pages, urls, forms, exports and history."""
