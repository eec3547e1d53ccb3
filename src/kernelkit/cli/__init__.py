"""kernelkit.cli."""
