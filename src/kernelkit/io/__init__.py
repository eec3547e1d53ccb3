"""kernelkit.io."""
