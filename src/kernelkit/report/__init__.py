"""kernelkit.report."""
