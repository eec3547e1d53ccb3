"""kernelkit.solvers."""
