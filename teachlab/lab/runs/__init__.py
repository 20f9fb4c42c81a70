"""Called from every process (web, sockets, CLI, jobs worker, workshop, lab workers): lanes,
run parameters, limits and costs, firing and reading runs, the app Redis."""
