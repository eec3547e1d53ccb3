"""kernelkit.data."""
