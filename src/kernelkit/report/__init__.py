"""Reports of the command line: plots and tables."""
